/**
 * The vocabulary of tools: what a tool is (`Tool`, built with `defineTool`), what it receives
 * (`ToolContext`, or `WorkerToolContext` in a worker thread), what it returns, and its schema as
 * the model sees it.
 *
 * Apart because a tool author needs these and nothing of the loop or the models.
 */
import type { Content } from "./messages.ts";

// ─── JSON ────────────────────────────────────────────────────────────────────────────────────

/** A JSON Schema object, as sent to the model and validated with ajv. */
export type JSONSchema = { [key: string]: unknown };

// ─── Tools ───────────────────────────────────────────────────────────────────────────────────

/** What a tool returns. `details` is for UIs and logs; `terminate` ends the run after this batch. */
export interface ToolResult {
  content: Content[];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/** Anything `execute` may return: a string → text; `Content[]`; a `ToolResult`; nullish → empty. */
export type ToolReturn = string | Content[] | ToolResult | null | undefined | void;

export interface ToolContext {
  toolCallId: string;
  /** Aborted on user abort and on this call's timeout; `signal.reason` tells which. */
  signal: AbortSignal;
  /** Progress for UIs: becomes `tool_execution_update`. Ignored after the tool finished. */
  onUpdate(partial: unknown): void;
  /** The agent's workspace. */
  cwd: string;
  /**
   * What the host attached to the agent for its tools (`AgentOptions.toolContext`), the same
   * object for every call; absent when it attached nothing. The extension host says here which
   * agent of a tree of agents runs the call (docs/subagents.md).
   */
  readonly context?: Readonly<Record<string, unknown>>;
}

/**
 * A CPU-bound tool runs in a worker thread: `module` is a file URL (`.ts` is loaded through jiti)
 * and `export` names a function `(args, { progress }) => ToolReturn` in it.
 */
export interface WorkerSpec {
  module: string | URL;
  export: string;
  /** Structured-cloneable data handed to the worker function with each call (e.g. the tool's root). */
  data?: unknown;
}

/** What a worker function receives besides the validated arguments. */
export interface WorkerToolContext {
  cwd: string;
  data: unknown;
  /** Progress, posted across threads; becomes `tool_execution_update`. */
  progress(partial: unknown): void;
}

/** The zod-like surface the kernel relies on; checked by shape, never `instanceof`. */
export interface ZodLikeSchema<T = unknown> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
}

/** A tool as the kernel runs it. Build one with `defineTool`. */
// biome-ignore lint/suspicious/noExplicitAny: the default lets a registry hold tools of different argument types (`Tool` alone); a tool's own code sees `Args`
export interface Tool<Args = any> {
  readonly name: string;
  readonly description: string;
  /** A `z.strictObject`; its input JSON Schema is what the model sees. */
  readonly parameters?: ZodLikeSchema<Args>;
  /** Alternative to `parameters` for MCP / Pi / hand-written schemas, validated with ajv. */
  readonly jsonSchema?: JSONSchema;
  readonly execute?: (args: Args, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>;
  /** All calls of a message parallel-safe → they run concurrently. */
  readonly parallelSafe?: boolean;
  /** Covers `execute`; aborts the tool's signal and answers at once. No default. */
  readonly timeoutMs?: number;
  readonly worker?: WorkerSpec;
  /** Optional per-call timeout, in ms, read from validated args (bash's `timeout` in seconds maps here). */
  readonly callTimeoutMs?: (args: Args) => number | undefined;
  /**
   * Adapts the arguments as the model sent them (after JSON parsing) before validation: a tool
   * that renamed a parameter accepts the old spelling. A throw is an error result for the call.
   */
  readonly prepareArguments?: (args: unknown) => unknown;
  /**
   * Safe to run again when a run is resumed after a crash cut a call of it off (docs/resume.md):
   * reading tools are; a tool with effects (a command, a write) is not, and its interrupted call
   * gets an error result instead. Default false.
   */
  readonly rerunnable?: boolean;
}

/** The schema of one tool as given to the model. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JSONSchema;
}
