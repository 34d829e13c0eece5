#!/usr/bin/env node
// Build step: each model SDK the kernel loads (`openai`, `@anthropic-ai/sdk`) bundled into a few
// files under dist/vendor/<name>/, which the compiled kernel imports instead of the package
// (src/models/sdk-modules.ts). Node then resolves and links a handful of modules instead of
// hundreds (openai ≈ 150, the Anthropic SDK ≈ 280 with OpenTelemetry's API): that loading was
// most of what a one-turn run waited for (`npm run bench startup`). The SDKs stay dependencies
// (their types, and the sources' imports); their licenses are copied beside each bundle.
//
// Skips an SDK whose bundle was made from the installed version by this script as it is now
// (a stamp file), so the build stays incremental.
//
//   node packages/kernel/scripts/vendor-sdks.mjs
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const kernel = join(dirname(fileURLToPath(import.meta.url)), "..");
const script = readFileSync(fileURLToPath(import.meta.url));

/** The vendored SDKs: the file name under dist/vendor/ and the package. */
const SDKS = [
  { name: "openai", pkg: "openai" },
  { name: "anthropic", pkg: "@anthropic-ai/sdk" },
];

for (const { name, pkg } of SDKS) {
  // The ES module entry Node would load for the kernel, and the package folder above it.
  const entry = fileURLToPath(import.meta.resolve(pkg));
  let root = dirname(entry);
  while (!isPackageRoot(root, pkg)) root = dirname(root);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const out = join(kernel, "dist", "vendor", name);
  const stamp = join(out, ".stamp");
  const wanted = `${manifest.version} ${createHash("sha256").update(script).digest("hex")}`;
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === wanted) continue;

  // Imported only when a bundle is to be made: a build with nothing to do loads no bundler.
  const { rolldown } = await import("rolldown");
  rmSync(out, { recursive: true, force: true });
  const bundle = await rolldown({
    input: { index: entry },
    platform: "node",
    logLevel: "warn",
  });
  await bundle.write({
    dir: out,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    banner: `// ${pkg} ${manifest.version} (${manifest.license}), bundled for mypi's kernel; see LICENSE beside this file.`,
  });
  await bundle.close();
  for (const file of ["LICENSE", "LICENSE.md"]) {
    if (existsSync(join(root, file))) copyFileSync(join(root, file), join(out, file));
  }
  mkdirSync(out, { recursive: true });
  writeFileSync(stamp, wanted);
  process.stderr.write(`vendor-sdks: bundled ${pkg} ${manifest.version} into dist/vendor/${name}/\n`);
}

function isPackageRoot(dir, pkg) {
  if (dir === dirname(dir)) throw new Error(`vendor-sdks: no package.json of ${pkg} above its entry`);
  const file = join(dir, "package.json");
  return existsSync(file) && JSON.parse(readFileSync(file, "utf8")).name === pkg;
}
