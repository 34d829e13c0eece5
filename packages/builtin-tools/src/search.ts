/**
 * The `grep` and `find` tool definitions. Their work happens in `search-worker.ts`, run by the
 * kernel's worker pool; `data.root` hands the workspace root across the thread boundary.
 */
import { z } from "zod";
import { defineTool, type Tool } from "@mypi/kernel";
import {
  DEFAULT_GREP_LIMIT,
  type FindArgs,
  type GrepArgs,
  MAX_FIND_RESULTS,
  type SearchData,
} from "./search-worker.ts";

// The sources in the repository, the compiled file in an installed copy.
const WORKER_MODULE = new URL(
  import.meta.url.endsWith(".ts") ? "./search-worker.ts" : "./search-worker.js",
  import.meta.url,
).href;

/**
 * A search still running after a minute is stopped (the kernel terminates its worker). A regular
 * expression with nested quantifiers, `(a+)+$`, can backtrack for years on one line of sixty
 * characters, and nothing inside the worker can interrupt a running match.
 */
export const SEARCH_TIMEOUT_MS = 60_000;

const grepParameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      `JavaScript regular expression, matched against each line. Avoid nested quantifiers like (a+)+: a search still running after ${SEARCH_TIMEOUT_MS / 1000} s is stopped.`,
    ),
  path: z.string().optional().describe("File or folder to search, relative to the workspace root (default: the root)."),
  glob: z
    .string()
    .optional()
    .describe(
      'Only files matching this glob, e.g. "*.ts" (matched against the name) or "src/**/*.ts" (against the path in the searched folder).',
    ),
  ignoreCase: z.boolean().optional().describe("Match letters in either case."),
  limit: z.number().int().min(1).optional().describe(`Most matching lines to return (default ${DEFAULT_GREP_LIMIT}).`),
});

const findParameters = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('Glob for names ("*.test.ts") or, with a "/", for paths in the searched folder ("src/**/index.ts").'),
  path: z.string().optional().describe("Folder to search, relative to the workspace root (default: the root)."),
});

export function createGrepTool(root: string): Tool<GrepArgs> {
  return defineTool({
    name: "grep",
    description:
      "Search file contents for a regular expression; prints path:line:text, relative to the workspace root. " +
      "Respects .gitignore, skips binary files, .git and node_modules. " +
      `At most ${DEFAULT_GREP_LIMIT} matches unless limit is given.`,
    parameters: grepParameters,
    parallelSafe: true,
    rerunnable: true,
    timeoutMs: SEARCH_TIMEOUT_MS,
    worker: { module: WORKER_MODULE, export: "grep", data: { root } satisfies SearchData },
  });
}

export function createFindTool(root: string): Tool<FindArgs> {
  return defineTool({
    name: "find",
    description:
      "Find files and folders by glob; folders end with /. Respects .gitignore, skips .git and node_modules. " +
      `At most ${MAX_FIND_RESULTS} results.`,
    parameters: findParameters,
    parallelSafe: true,
    rerunnable: true,
    timeoutMs: SEARCH_TIMEOUT_MS,
    worker: { module: WORKER_MODULE, export: "find", data: { root } satisfies SearchData },
  });
}
