/// <reference types="node" preserve="true" />
/**
 * @mypi/builtin-tools — read, write, edit, bash, grep, find, ls, shipped as an extension:
 *
 *   const builtins = createBuiltinTools({ root: process.cwd() });
 *   await builtins(pi);   // pi.registerTool(...) once per tool
 *
 * Every path goes through `safePath(root, p)`; `write` and `edit` share one `FileMutationQueue`.
 */
import { resolve } from "node:path";
import type { FileMutationQueue, Tool } from "@mypi/kernel";
import { createBashTool } from "./bash.ts";
import type { SandboxOptions } from "./sandbox.ts";
import type { EscapeApprovals } from "./sandbox-escape.ts";
import type { FileAccess } from "./write.ts";
import { createEditTool } from "./edit.ts";
import { createLsTool } from "./ls.ts";
import { createReadTool } from "./read.ts";
import { createFindTool, createGrepTool } from "./search.ts";
import { createWriteTool } from "./write.ts";

export {
  createBashTool,
  DEFAULT_TIMEOUT_SECONDS,
  KILL_GRACE_MS,
  type BashArgs,
  type BashDetails,
  type BashToolOptions,
} from "./bash.ts";
export { destructiveReason } from "./bash-guard.ts";
export { createEscapeApprovals, sandboxStop, type EscapeApprovals } from "./sandbox-escape.ts";
export {
  planSandbox,
  probeSandbox,
  unavailableMessage,
  writablePaths,
  type SandboxOptions,
  type SandboxPlan,
  type SandboxProbe,
} from "./sandbox.ts";
export { DEFAULT_HIDDEN_PATHS, DEFAULT_HOME_READABLE, HIDDEN_SYSTEM_PATHS } from "./sandbox-view.ts";
export { sandboxEnvironment, SANDBOX_ENV, SANDBOX_NETWORK_ENV } from "./sandbox-env.ts";
export { AGENT_FOLDERS, frozenPaths, GIT_FROZEN, type FrozenPath } from "./frozen-paths.ts";
export { createEditTool, type EditArgs, type EditDetails } from "./edit.ts";
export { defaultMutationQueue, FileMutationQueue } from "@mypi/kernel";
export { createLsTool, MAX_LS_ENTRIES, type LsArgs } from "./ls.ts";
export { createReadTool, MAX_IMAGE_BYTES, type ReadArgs, type ReadDetails } from "./read.ts";
export { displayPath, safePath, ToolInputError } from "./safe-path.ts";
export { createFindTool, createGrepTool, SEARCH_TIMEOUT_MS } from "./search.ts";
export {
  DEFAULT_GREP_LIMIT,
  MAX_FIND_RESULTS,
  type FindArgs,
  type GrepArgs,
  type GrepDetails,
} from "./search-worker.ts";
export { MAX_BYTES, MAX_LINES } from "./truncate.ts";
export { createWriteTool, type FileAccess, type FileToolOptions, type WriteArgs, type WriteDetails } from "./write.ts";

export const builtinToolNames = ["read", "write", "edit", "bash", "grep", "find", "ls"] as const;
export type BuiltinToolName = (typeof builtinToolNames)[number];

export interface BuiltinToolsOptions {
  /** The workspace: every path must lead inside it, and bash runs in it. */
  root: string;
  /** Only these tools (default: all seven). */
  tools?: readonly BuiltinToolName[];
  /** The lock for write and edit (default: one shared by the whole process). */
  queue?: FileMutationQueue;
  /** Run bash's commands in the bubblewrap sandbox, and keep write and edit out of what it freezes (docs/builtin-tools.md, "Sandbox"). */
  sandbox?: SandboxOptions;
  /** With `sandbox`: bash takes `unsandboxed: true` and runs such a call outside the sandbox once approved here (by the permission gate). */
  escapes?: EscapeApprovals;
  /** read, write and edit take text from and give it to the host instead of the disk (an editor's buffers: `FileAccess`). */
  files?: FileAccess;
}

/**
 * The only part of `ExtensionAPI` this extension uses. Typed here so the package does not depend
 * on the shape of the rest of the API.
 */
export interface ToolRegistrar {
  registerTool(tool: Tool): void;
}

/** The seven tools for `root`, in `builtinToolNames` order. */
export function createBuiltinToolList(options: BuiltinToolsOptions): Tool[] {
  const root = resolve(options.root);
  const queue = options.queue;
  const fileOptions = {
    ...(options.sandbox && { sandbox: options.sandbox }),
    ...(options.files && { files: options.files }),
  };
  const factories: Record<BuiltinToolName, () => Tool> = {
    read: () => createReadTool(root, options.files),
    write: () => createWriteTool(root, queue, fileOptions),
    edit: () => createEditTool(root, queue, fileOptions),
    bash: () =>
      createBashTool(
        root,
        options.sandbox ? { sandbox: options.sandbox, ...(options.escapes && { escapes: options.escapes }) } : {},
      ),
    grep: () => createGrepTool(root),
    find: () => createFindTool(root),
    ls: () => createLsTool(root),
  };
  return (options.tools ?? builtinToolNames).map((name) => factories[name]());
}

/** The extension: registers the builtin tools for `root`. */
export function createBuiltinTools(options: BuiltinToolsOptions): (pi: ToolRegistrar) => void {
  return (pi) => {
    for (const tool of createBuiltinToolList(options)) pi.registerTool(tool);
  };
}
