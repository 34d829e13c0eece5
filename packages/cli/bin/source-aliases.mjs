// The repository's workspace packages as jiti aliases to their TypeScript sources: each
// package's `mypi-source` export condition (the dev bin and bench/run.mjs use this; an installed
// mypi resolves the packages' compiled dist/ instead).
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** `{ "@mypi/kernel": "<repo>/packages/kernel/src/index.ts", "@mypi/extension-api/testing": … }` */
export function sourceAliases(repo) {
  const alias = {};
  for (const dir of JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).workspaces) {
    const pkg = JSON.parse(readFileSync(join(repo, dir, "package.json"), "utf8"));
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      const source = typeof target === "object" ? target["mypi-source"] : undefined;
      if (source) alias[pkg.name + subpath.slice(1)] = join(repo, dir, source);
    }
  }
  return alias;
}
