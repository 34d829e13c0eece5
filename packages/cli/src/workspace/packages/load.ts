import { dirname, join, relative, sep } from "node:path";
import type { LoadFailure } from "@mypi/extension-api";
import picomatch from "picomatch";
import { hasIndexFile, manifestExtensionPaths, outsideFailure, packageExtensionNames } from "../discovery.ts";
import type { LoadedSettings, PackageEntry } from "../settings.ts";
import { entrySource } from "../settings-write.ts";
import { findInstalled } from "./install.ts";
import { insideRoot, isPackageDir, readPackageManifest, type PackageManifest } from "./manifest.ts";
import { parseSource } from "./source.ts";
import { isDirectory } from "../files.ts";

export interface PackageResources {
  /**
   * Extension entries in declaration order, each with the declaration it came from (for `mypi
   * extensions`) and the name it loads under (after its package: `packageExtensionNames`).
   */
  extensions: { path: string; note: string; name?: string }[];
  skills: string[];
  prompts: string[];
  failures: LoadFailure[];
}

/** The package folder of a scope: `$MYPI_HOME/packages`, or `<cwd>/.mypi/packages` for the workspace's settings file. */
function packagesDirOf(settingsFile: string): string {
  return join(dirname(settingsFile), "packages");
}

/** The resources of `declared`, in order; packages whose identity is in `skip` are left out (they load from another declaration). */
export function packageResources(
  declared: LoadedSettings["packages"],
  skip: ReadonlySet<string> = new Set(),
): PackageResources {
  const out: PackageResources = { extensions: [], skills: [], prompts: [], failures: [] };
  for (const { entry, file } of declared) {
    const text = entrySource(entry);
    const fail = (code: string, message: string) =>
      out.failures.push({ path: file.path, name: text, code, message: `package ${text}: ${message}` });
    const source = parseSource(text, dirname(file.path));
    if (typeof source === "string") {
      fail("MYPI_BAD_PACKAGE", source);
      continue;
    }
    if (skip.has(source.identity)) continue;
    const installed = findInstalled(source, packagesDirOf(file.path));
    if (!installed) {
      fail(
        "MYPI_NOT_FOUND",
        source.kind === "local"
          ? `${source.path} does not exist`
          : "not installed; run `mypi update` (or `mypi install` it again)",
      );
      continue;
    }
    const resources = resourcesAt(installed.root);
    if (typeof resources === "string") {
      fail("MYPI_BAD_PACKAGE", resources);
      continue;
    }
    for (const path of resources.outside) {
      const refused = outsideFailure(installed.root, path, text);
      out.failures.push({ ...refused, message: `package ${text}: ${refused.message}` });
    }
    const note = `package ${source.declaration}`;
    const paths = narrow(resources.extensions, entry, "extensions", installed.root);
    const names = resources.name === undefined ? [] : packageExtensionNames(resources.name, resources.extensions);
    for (const path of paths) {
      const name = names[resources.extensions.indexOf(path)];
      out.extensions.push({ path, note, ...(name !== undefined && { name }) });
    }
    out.skills.push(...narrow(resources.skills, entry, "skills", installed.root));
    out.prompts.push(...narrow(resources.prompts, entry, "prompts", installed.root));
  }
  return out;
}

/** The identities a list declares. */
export function identities(declared: LoadedSettings["packages"]): Set<string> {
  const out = new Set<string>();
  for (const { entry, file } of declared) {
    const source = parseSource(entrySource(entry), dirname(file.path));
    if (typeof source !== "string") out.add(source.identity);
  }
  return out;
}

/** Checked before an install is moved into place: the package must offer something mypi loads. */
export function checkPackage(root: string): string | undefined {
  const resources = resourcesAt(root);
  if (typeof resources === "string") return resources;
  if (resources.extensions.length + resources.skills.length + resources.prompts.length > 0) return undefined;
  return `${root} offers no extensions, skills or prompts: declare them under "mypi" (or Pi's "pi") in its package.json, or add an extensions/ folder`;
}

type Resources = Pick<PackageManifest, "extensions" | "skills" | "prompts" | "outside" | "name">;

/** What a package root offers: a file is one extension; a folder without package.json is a folder extension or the conventional folders. */
function resourcesAt(root: string): Resources | string {
  if (!isDirectory(root)) return { extensions: [root], skills: [], prompts: [], outside: [] };
  if (isPackageDir(root)) {
    const manifest = readPackageManifest(root);
    if (typeof manifest === "string") return manifest;
    const { paths, outside } = manifestExtensionPaths(manifest);
    return {
      extensions: paths,
      skills: manifest.skills,
      prompts: manifest.prompts,
      outside,
      ...(manifest.name !== undefined && { name: manifest.name }),
    };
  }
  if (hasIndexFile(root)) return { extensions: [root], skills: [], prompts: [], outside: [] };
  // A folder without package.json: its conventional folders, read as a manifest without a key reads them.
  const folders = conventional(root);
  const { paths, outside } = manifestExtensionPaths({ root, declaredBy: "folders", ...folders });
  return { extensions: paths, skills: folders.skills, prompts: folders.prompts, outside };
}

/**
 * The object form's filter for one kind: absent keeps everything; `[]` nothing; otherwise the
 * paths (relative to the package root) matching a pattern, `!pattern` dropping matches. It only
 * narrows what the package offers.
 */
function narrow(
  paths: readonly string[],
  entry: PackageEntry,
  kind: "extensions" | "skills" | "prompts",
  root: string,
): string[] {
  const filter = typeof entry === "string" ? undefined : entry[kind];
  if (filter === undefined) return [...paths];
  const rel = (p: string) => relative(root, p).split(sep).join("/");
  return paths.filter((p) => {
    let keep = false;
    for (const raw of filter) {
      const exclude = raw.startsWith("!");
      const pattern = (exclude ? raw.slice(1) : raw).replace(/^\.\//, "");
      if (picomatch(pattern)(rel(p))) keep = !exclude;
    }
    return keep;
  });
}

/** The conventional folders of `root` that exist and stay inside it (links out go to `outside`). */
function conventional(root: string): Pick<PackageManifest, "extensions" | "skills" | "prompts" | "outside"> {
  const out: Pick<PackageManifest, "extensions" | "skills" | "prompts" | "outside"> = {
    extensions: [],
    skills: [],
    prompts: [],
    outside: [],
  };
  for (const kind of ["extensions", "skills", "prompts"] as const) {
    const folder = join(root, kind);
    if (isDirectory(folder)) (insideRoot(root, folder) ? out[kind] : out.outside).push(folder);
  }
  return out;
}
