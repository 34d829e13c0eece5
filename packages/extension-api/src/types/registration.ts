/**
 * What an extension registers through `pi` and how the registered things are listed: tools (mypi's
 * and Pi's shape), `/name` commands with the ctx they run with, flags, and redactors. Apart from the
 * `pi` interface (`types.ts`) because the manager, the host and the CLI read these shapes without
 * the rest of the API.
 */
import type { Content, JSONSchema, SessionManager } from "@mypi/kernel";
import type { ExtensionContext } from "./context.ts";
import type { Awaitable } from "../events.ts";

/** The schema of a tool as `getAllTools()` reports it. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: JSONSchema;
  /** The extension that registered it (`builtin-tools` for the builtins). */
  source?: string;
}

/**
 * Returns `value` with what must not be written masked: a string, or any JSON-like value (objects,
 * arrays) with the strings inside it masked: a copy, or the value itself when nothing changed;
 * never change it in place.
 */
export type Redactor = <T>(value: T) => T;

/** A Pi-style tool definition; `registerTool` adapts it to a kernel `Tool`. */
// biome-ignore lint/suspicious/noExplicitAny: Pi's own default, so that a list of tools with different parameters is one type
export interface PiToolDefinition<Params = any, Details = unknown> {
  name: string;
  label?: string;
  description: string;
  /** A TypeBox schema or plain JSON Schema object. */
  parameters: JSONSchema;
  execute(
    toolCallId: string,
    params: Params,
    signal: AbortSignal | undefined,
    onUpdate: ((partial: { content: Content[]; details?: Details }) => void) | undefined,
    ctx: ExtensionContext,
  ): Promise<{
    content: Content[];
    details?: Details;
    isError?: boolean /** End the run after this batch of calls. */;
    terminate?: boolean;
  }>;
  promptSnippet?: string;
  promptGuidelines?: string[];
  /** Pi 1.x: `parallel` lets calls of it run together with other parallel-safe calls (default `sequential`). */
  executionMode?: "sequential" | "parallel";
  /** Pi 1.x: adapt the arguments the model sent before they are validated against `parameters`. */
  prepareArguments?: (args: unknown) => unknown;
}

export interface CommandContext extends ExtensionContext {
  /** Resolves when the agent is idle (never call it from an event handler: that deadlocks). */
  waitForIdle(): Promise<void>;
  /** Reload every extension (docs/architecture.md#loading). The calling handler keeps running in the old instance. */
  reload(): Promise<void>;
  /** Move the session leaf; `session_before_fork` may cancel. */
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  /**
   * Start a new, empty session (Pi's `/new`): `session_before_switch` may cancel; the extensions
   * are loaded again for it (this ctx belongs to the old session from then on: continue in
   * `withSession`). `{cancelled: true}` where the host cannot replace its session.
   */
  newSession(options?: NewSessionOptions): Promise<{ cancelled: boolean }>;
}

/** Pi's `ctx.newSession(options)`. */
export interface NewSessionOptions {
  /** The session file the new one continues (its header's `parentSession`). */
  parentSession?: string;
  /** Called with the new session before the agent reads it: append what it should start with. */
  setup?: (session: SessionManager) => Awaitable<void>;
  /** Called once the new session runs, with this extension's command ctx in it. */
  withSession?: (ctx: CommandContext) => Awaitable<void>;
}

export interface CommandDefinition {
  description?: string;
  handler(args: string, ctx: CommandContext): Awaitable<void>;
}
/**
 * A `/name` command: an extension's (`registerCommand`), a prompt template's (`/review`), or a
 * skill's (`/skill:name`). The host gives the last two to the manager (`setResourceCommands`).
 */
export interface CommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  /** The extension that registered it (source `extension`). */
  extension?: string;
  /** The extension's file, or the template's / `SKILL.md` file. */
  path?: string;
  /** Templates: what the arguments are (`argument-hint` frontmatter). */
  argumentHint?: string;
  /** Pi's metadata: where the file was found (`source: "inline"` for an in-process extension). */
  sourceInfo?: {
    path: string;
    source: "local" | "inline";
    scope: "user" | "project" | "temporary";
    origin: "top-level";
  };
}

export interface FlagDefinition {
  description?: string;
  type: "boolean" | "string";
  default?: boolean | string;
}
export interface FlagInfo extends FlagDefinition {
  name: string;
  extension: string;
}
