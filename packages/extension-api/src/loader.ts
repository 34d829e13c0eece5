/**
 * Finding and importing extension files through jiti (docs/architecture.md#loading), and turning every kind of
 * load failure into a `LoadFailure` with path, line and message.
 *
 * - fs cache at `jitiCacheDir()` (@mypi/kernel): `MYPI_JITI_CACHE`, else the user's cache folder;
 * - no module cache, so `reload()` re-evaluates the files;
 * - `@mypi/extension-api` and `@mypi/kernel` are the host's own modules (`virtualModules`): an
 *   extension's `defineTool` or `ExtensionError` is the host's, and extensions anywhere resolve them;
 * - files the host names as compiled JavaScript of its own (`nativeImport`, the shipped
 *   extensions of an installed mypi) are imported by Node itself: jiti is for users' files.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { jitiCacheDir } from "@mypi/kernel";
import type { Jiti } from "jiti";
import { ExtensionError, errorMessage, type ExtensionErrorCode } from "./errors.ts";
import type { ExtensionFactory, LoadFailure } from "./types.ts";

interface ResolvedEntry {
  /** The file to import. */
  file: string;
  /** Its real path, used to load a file once. */
  realPath: string;
  /** File name without extension, or the folder's name for `dir/index.ts`. */
  name: string;
}

const INDEX_FILES = ["index.ts", "index.js", "index.mts", "index.mjs"];

/**
 * An extension's name (docs/architecture.md#extensions): its file name without the extension, or its folder's name for
 * an index file — whether the folder or `dir/index.ts` itself was given.
 */
/**
 * The modules handed to extensions as the host's own, later layers winning. Copied by
 * descriptor, not spread: the Pi layer's TypeBox entries are getters that load on first import.
 */
export function hostModules(...layers: (object | undefined)[]): Record<string, unknown> {
  return Object.defineProperties(
    {},
    Object.assign({}, ...layers.map((l) => Object.getOwnPropertyDescriptors(l ?? {}))),
  );
}

export function extensionName(file: string): string {
  const base = basename(file);
  return INDEX_FILES.includes(base) ? basename(dirname(file)) : basename(file, extname(file));
}

/** A file, or a folder with an index file. */
export function resolveEntry(path: string, baseDir: string): ResolvedEntry | LoadFailure {
  const absolute = isAbsolute(path) ? path : resolve(baseDir, path);
  if (!existsSync(absolute)) {
    return failure(
      absolute,
      extensionName(absolute),
      "MYPI_NOT_FOUND",
      "no such file or folder; check the path given to -e or the extensions folder",
    );
  }
  let file = absolute;
  if (statSync(absolute).isDirectory()) {
    const index = INDEX_FILES.map((f) => join(absolute, f)).find((f) => existsSync(f));
    if (!index) {
      return failure(
        absolute,
        basename(absolute),
        "MYPI_NOT_FOUND",
        `a folder extension needs an index file (${INDEX_FILES.join(", ")})`,
      );
    }
    file = index;
  }
  return { file, realPath: realpathSync(file), name: extensionName(file) };
}

/** Imports extension modules; one instance per manager. */
export class ExtensionLoader {
  private jiti: Promise<Jiti> | undefined;

  /**
   * `virtualModules`: the modules handed to extensions as the host's own. `nativeImport`: files
   * imported by Node rather than jiti (compiled JavaScript the host ships; no `reload` re-run).
   */
  constructor(
    private readonly virtualModules: () => Promise<Record<string, unknown>>,
    private readonly nativeImport: (file: string) => boolean = () => false,
  ) {}

  /** Import `file` and return its default export, or a LoadFailure saying what went wrong and where. */
  async import(entry: ResolvedEntry): Promise<ExtensionFactory | LoadFailure> {
    let exported: unknown;
    try {
      if (this.nativeImport(entry.file)) {
        const mod = (await import(pathToFileURL(entry.file).href)) as { default?: unknown };
        exported = mod.default;
      } else {
        // Loaded on the first user file: a run with only shipped extensions never starts jiti.
        this.jiti ??= Promise.all([import("jiti"), this.virtualModules()]).then(([{ createJiti }, virtualModules]) =>
          createJiti(import.meta.url, { fsCache: jitiCacheDir(), moduleCache: false, virtualModules }),
        );
        exported = await (await this.jiti).import(entry.file, { default: true });
      }
    } catch (error) {
      return describeLoadError(error, entry.file, entry.name);
    }
    if (typeof exported !== "function") {
      const line = findLine(entry.file, /export\s+default\b|module\.exports\b/);
      const got =
        exported === undefined
          ? "no default export"
          : `a default export of type ${Array.isArray(exported) ? "array" : typeof exported}`;
      return failure(
        entry.file,
        entry.name,
        "MYPI_BAD_EXPORT",
        `found ${got}; an extension's default export must be a function: export default function (pi: ExtensionAPI) { … }`,
        line,
      );
    }
    return exported as ExtensionFactory;
  }
}

/** Classify anything thrown while importing or running an extension's factory. */
export function describeLoadError(error: unknown, file: string, name: string): LoadFailure {
  const message = errorMessage(error);
  if (error instanceof ExtensionError) {
    return failure(file, name, error.code, message.slice(error.code.length + 2), ...frameIn(error, file));
  }
  // jiti: "ParseError: Unexpected token, expected \",\"  \n /abs/file.ts:3:17"
  const parse = /^(?:\w*Error: )?([^\n]*?)\s*\n\s*(\S+):(\d+):(\d+)\s*$/.exec(message);
  if (parse && /ParseError|SyntaxError|Unexpected|Expected|expected/.test(message)) {
    const [, raw, where, line, column] = parse as unknown as [string, string, string, string, string];
    const text = raw.replace(/^ParseError: /, "");
    if (where === file)
      return failure(file, name, "MYPI_SYNTAX_ERROR", `syntax error: ${text}`, Number(line), Number(column));
    // In a file the extension imports: the line and column are that file's, so they go with its path.
    return failure(file, name, "MYPI_SYNTAX_ERROR", `syntax error in ${where}:${line}:${column}: ${text}`);
  }
  if (error instanceof SyntaxError)
    return failure(file, name, "MYPI_SYNTAX_ERROR", `syntax error: ${message}`, ...frameIn(error, file));
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(message);
  if (missing) {
    const specifier = missing[1]!;
    const escaped = specifier.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const importLine = (importer: string) => findLine(importer, new RegExp(`["'\`]${escaped}["'\`]`));
    const hint =
      specifier.startsWith(".") || isAbsolute(specifier)
        ? "check the relative path"
        : `install it where the extension can resolve it (npm install ${specifier}) or remove the import`;
    // Node names the importing file first in `requireStack`; when that is not the extension itself, say which file it is.
    const importer = (error as { requireStack?: unknown }).requireStack;
    const by =
      Array.isArray(importer) && typeof importer[0] === "string" && importer[0] !== file ? importer[0] : undefined;
    if (by === undefined)
      return failure(
        file,
        name,
        "MYPI_MISSING_DEPENDENCY",
        `cannot find module '${specifier}'; ${hint}`,
        importLine(file),
      );
    const at = importLine(by);
    return failure(
      file,
      name,
      "MYPI_MISSING_DEPENDENCY",
      `cannot find module '${specifier}' (imported by ${by}${at === undefined ? "" : `:${at}`}); ${hint}`,
    );
  }
  return failure(file, name, "MYPI_LOAD_FAILED", message, ...frameIn(error, file));
}

export function formatLoadFailure(f: LoadFailure): string {
  const where = f.line === undefined ? f.path : `${f.path}:${f.line}${f.column === undefined ? "" : `:${f.column}`}`;
  return `${where}: ${f.code}: ${f.message}`;
}

export function isLoadFailure(value: unknown): value is LoadFailure {
  return typeof value === "object" && value !== null && "code" in value && "message" in value && "path" in value;
}

function failure(
  path: string,
  name: string,
  code: ExtensionErrorCode,
  message: string,
  line?: number,
  column?: number,
): LoadFailure {
  const f: LoadFailure = { path, name, code, message };
  if (line !== undefined) f.line = line;
  if (column !== undefined) f.column = column;
  return f;
}

/** The first stack frame inside the extension's file (or its folder, for `dir/index.ts`). */
function frameIn(error: unknown, file: string): [number?, number?] {
  let stack: string;
  try {
    stack = error instanceof Error ? String(error.stack ?? "") : "";
  } catch {
    return []; // a stack getter that throws: no line, the message still says what happened
  }
  const folder = basename(file).startsWith("index.") ? dirname(file) + sep : undefined;
  for (const match of stack.matchAll(/\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/gm)) {
    const where = match[1]!.startsWith("file://") ? fileURLToPath(match[1]!) : match[1]!;
    if (where === file || (folder && where.startsWith(folder))) return [Number(match[2]), Number(match[3])];
  }
  return [];
}

function findLine(file: string, pattern: RegExp): number | undefined {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const index = source.split("\n").findIndex((line) => pattern.test(line));
  return index < 0 ? undefined : index + 1;
}
