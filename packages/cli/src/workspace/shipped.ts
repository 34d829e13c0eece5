/**
 * The extensions shipped with mypi, in the `@mypi/extensions` package: where each one's entry
 * file is, and which files Node may import itself. Run from the repository's sources (the tests,
 * `npm start`), an entry is `extensions/<name>/index.ts` and goes through jiti like a user's
 * file; in an installed mypi it is compiled JavaScript, `dist/<name>/index.js`, imported natively.
 */
import { createRequire } from "node:module";
import { realpathSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";

export const SHIPPED_EXTENSIONS = [
  "permission-gate",
  "protected-paths",
  "redact-secrets",
  "tracer",
  "mcp",
  "subagents",
  "claude-code",
] as const;
type ShippedExtension = (typeof SHIPPED_EXTENSIONS)[number];

const FROM_SOURCE = import.meta.url.endsWith(".ts");
export const PACKAGE_DIR = dirname(createRequire(import.meta.url).resolve("@mypi/extensions/package.json"));
const COMPILED_DIR = join(PACKAGE_DIR, "dist") + sep;

export function isShippedName(name: string): name is ShippedExtension {
  return (SHIPPED_EXTENSIONS as readonly string[]).includes(name);
}

/** The entry file of a shipped extension. */
export function shippedExtensionPath(name: ShippedExtension): string {
  return FROM_SOURCE ? join(PACKAGE_DIR, name, "index.ts") : join(COMPILED_DIR, name, "index.js");
}

/** The extension manager's `nativeImport`: the shipped package's compiled files. */
export function isShippedCompiled(file: string): boolean {
  return !FROM_SOURCE && file.startsWith(COMPILED_DIR);
}

/**
 * Which shipped extension `path` is the entry of, in either form — the sources
 * (`extensions/<name>`, its `index.ts`) or the compiled files (`dist/<name>`, its `index.js`) —
 * so that an `-e` path written against one form is known under a bin that runs the other.
 */
export function shippedNameOf(path: string): ShippedExtension | undefined {
  const real = realOrSame(resolve(path));
  return SHIPPED_EXTENSIONS.find((name) =>
    [
      join(PACKAGE_DIR, name),
      join(PACKAGE_DIR, name, "index.ts"),
      join(COMPILED_DIR, name),
      join(COMPILED_DIR, name, "index.js"),
    ].some((form) => realOrSame(form) === real),
  );
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
