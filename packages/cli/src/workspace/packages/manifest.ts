/**
 * What a package offers mypi: its extensions, skills and prompt templates, as absolute paths.
 *
 * A package is a folder with a `package.json`. It declares its resources under the `mypi` key —
 * or Pi's `pi` key, so Pi packages work unchanged — each a list of paths relative to the package
 * root: files, folders, or glob patterns (`extensions/*.ts`), with `!pattern` excluding what an
 * earlier entry matched:
 *
 *   "mypi": { "extensions": ["./src/index.ts"], "skills": ["./skills"], "prompts": ["./prompts/*.md"] }
 *
 * Without either key, the conventional folders `extensions/`, `skills/` and `prompts/` are used
 * where they exist; without those either, the package's `main` (or `exports["."]`) is its one
 * extension, as Pi loads it. Paths may not leave the package root: a declared path, a conventional
 * folder or an entry of one that is a link to something outside the package is not used, and
 * listed in `outside` so the loader can say so. When both keys are present, `mypi` wins.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import picomatch from "picomatch";
import { errorMessage, isRecord } from "@mypi/kernel";

type ResourceKind = "extensions" | "skills" | "prompts";
const RESOURCE_KINDS: readonly ResourceKind[] = ["extensions", "skills", "prompts"];

export interface PackageManifest {
  /** The package's root folder (absolute). */
  root: string;
  name?: string;
  version?: string;
  /**
   * Which key declared the resources: `mypi`, `pi`, none (the conventional folders), or none and
   * no folder either (`entry`: the package's `main` / `exports` is its one extension).
   */
  declaredBy: "mypi" | "pi" | "folders" | "entry";
  extensions: string[];
  skills: string[];
  prompts: string[];
  /** Declared paths (or conventional folders) that are links leading out of the package: not used. */
  outside: string[];
}

/** Is `dir` a package: a folder holding a package.json? */
export function isPackageDir(dir: string): boolean {
  return existsSync(join(dir, "package.json"));
}

/** Read the manifest of the package at `root`; a string is the error, naming the file and key. */
export function readPackageManifest(root: string): PackageManifest | string {
  const file = join(root, "package.json");
  let pkg: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return `${file}: not a JSON object`;
    pkg = parsed as Record<string, unknown>;
  } catch (error) {
    return `${file}: ${errorMessage(error)}`;
  }
  const key = isRecord(pkg.mypi) ? "mypi" : isRecord(pkg.pi) ? "pi" : undefined;
  const manifest: PackageManifest = {
    root,
    ...(typeof pkg.name === "string" && { name: pkg.name }),
    ...(typeof pkg.version === "string" && { version: pkg.version }),
    declaredBy: key ?? "folders",
    extensions: [],
    skills: [],
    prompts: [],
    outside: [],
  };
  for (const kind of RESOURCE_KINDS) {
    if (key === undefined) {
      const folder = join(root, kind);
      if (existsSync(folder)) (insideRoot(root, folder) ? manifest[kind] : manifest.outside).push(folder);
      continue;
    }
    const declared = (pkg[key] as Record<string, unknown>)[kind];
    if (declared === undefined) continue;
    if (!Array.isArray(declared) || !declared.every((p) => typeof p === "string")) {
      return `${file}: "${key}.${kind}" must be a list of paths`;
    }
    const paths = expandPatterns(root, declared as string[], manifest.outside);
    if (typeof paths === "string") return `${file}: "${key}.${kind}": ${paths}`;
    manifest[kind] = paths;
  }
  // Neither key nor a conventional folder: the package's own entry point is its extension, as Pi
  // loads it (Pi 1.6 reads `main`; mypi also takes `exports["."]`).
  if (key === undefined && RESOURCE_KINDS.every((kind) => manifest[kind].length === 0)) {
    const entry = packageEntryPoint(root, pkg);
    if (entry !== undefined) {
      manifest.extensions = [entry];
      manifest.declaredBy = "entry";
    }
  }
  return manifest;
}

/**
 * The file `main` names (or `exports["."]`: a string, or its `import` / `default` condition),
 * with Node's extensions tried when it names none. Undefined when the package names neither, or
 * it points outside the package.
 */
function packageEntryPoint(root: string, pkg: Record<string, unknown>): string | undefined {
  // `exports` is a path, a map of subpaths (".", "./x"), or the conditions of "." itself.
  const exported = pkg.exports;
  const dot = isRecord(exported) && Object.keys(exported).some((k) => k.startsWith(".")) ? exported["."] : exported;
  const conditional = isRecord(dot) ? (dot.import ?? dot.default ?? dot.node) : dot;
  const named =
    typeof pkg.main === "string" && pkg.main !== ""
      ? pkg.main
      : typeof conditional === "string"
        ? conditional
        : undefined;
  if (named === undefined) return undefined;
  const base = resolve(root, named);
  if (base !== resolve(root) && !base.startsWith(resolve(root) + sep)) return undefined;
  const found = [base, ...[".js", ".ts", ".mjs", ".cjs"].map((ext) => base + ext)].find((f) => existsSync(f)) ?? base;
  // A link out of the package is not its entry (as for the declared paths).
  return insideRoot(root, found) ? found : undefined;
}
/** Paths and globs relative to `root`, in the order given, `!pattern` removing earlier matches; links out go to `outside`. */
function expandPatterns(root: string, patterns: readonly string[], outside: string[]): string[] | string {
  const out: string[] = [];
  let files: string[] | undefined; // every file under root, listed once when a glob needs it
  for (const raw of patterns) {
    const exclude = raw.startsWith("!");
    const pattern = (exclude ? raw.slice(1) : raw).replace(/^\.\//, "");
    if (isAbsolute(pattern) || pattern.split(/[\\/]/).includes("..")) return `${raw} leaves the package`;
    const matches = picomatch.scan(pattern).isGlob
      ? matchGlob(root, pattern, (files ??= listFiles(root)))
      : [join(root, pattern)];
    if (exclude) {
      const drop = new Set(matches);
      for (let i = out.length - 1; i >= 0; i--) if (drop.has(out[i]!)) out.splice(i, 1);
    } else {
      for (const m of matches) {
        if (out.includes(m)) continue;
        if (insideRoot(root, m)) out.push(m);
        else if (!outside.includes(m)) outside.push(m);
      }
    }
  }
  return out;
}

function matchGlob(root: string, pattern: string, files: readonly string[]): string[] {
  const isMatch = picomatch(pattern, { dot: false });
  return files.filter((f) => isMatch(relative(root, f).split(sep).join("/")));
}

/** Files and folders under `root`, sorted, without node_modules and dot entries. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 8) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const full = join(dir, name);
      out.push(full);
      try {
        if (statSync(full).isDirectory()) walk(full, depth + 1);
      } catch {
        // a dangling link: listed, never entered
      }
    }
  };
  walk(root, 0);
  return out;
}

/** A declared path may be a link, but what it names must stay inside the package. */
export function insideRoot(root: string, path: string): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return true; // missing: kept, so loading it reports the path
  }
  const base = realpathSync(root);
  return real === base || real.startsWith(base + sep);
}

/**
 * The folder of npm package `name` as Node would find it from `cwd`: `node_modules/<name>` in
 * `cwd` or the nearest folder above it that has one. Undefined when it is not installed.
 */
export function findInstalledPackage(name: string, cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; ) {
    const candidate = join(dir, "node_modules", ...name.split("/"));
    if (isPackageDir(candidate)) return candidate;
    const parent = resolve(dir, "..");
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** npm's rule for a package name: `name` or `@scope/name`, lower case, URL-safe. */
export function isPackageName(spec: string): boolean {
  return /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(spec);
}
