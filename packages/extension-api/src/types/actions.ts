/**
 * What the actions of `pi` take and answer: running a program (`exec`), logging (`log`), the bus
 * shared by all extensions (`events`), sending messages, and one model call outside the
 * conversation (`complete`). Apart from the `pi` interface (`types.ts`) because the host's runtime
 * (`types/host.ts`) carries out the same actions with the same shapes.
 */
import type { AssistantMessage, UserMessage } from "@mypi/kernel";
import type { Awaitable } from "../events.ts";

export interface ExecOptions {
  cwd?: string;
  /** Milliseconds; the process group is killed when it passes. */
  timeout?: number;
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. */
  input?: string;
}
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The exit code; 127 when the command could not be started, -1 when killed by a signal. */
  code: number;
  /** Killed by the timeout or the signal. */
  killed: boolean;
}

/**
 * An extension's log (`pi.log`): values are formatted as `console.log` does (`util.format`).
 * Interactive mode shows a line in the conversation, above the editor; print mode writes it to
 * stderr; JSON and RPC modes write an `extension_log` event line. Use it instead of `console.*`,
 * whose output the terminal UI can only catch as unattributed text.
 */
export interface ExtensionLogger {
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
}

/** A bus shared by all extensions. A listener that throws is reported and cannot break another. */
export interface EventBus {
  emit(channel: string, data?: unknown): void;
  on(channel: string, handler: (data: unknown) => Awaitable<void>): () => void;
}

// ─── Messages from extensions ────────────────────────────────────────────────────────────────

export interface SendMessageOptions {
  /** While idle: start a run with this message. */
  triggerTurn?: boolean;
  /** While a run is in progress (default `steer`); `nextTurn` waits for the next prompt. */
  deliverAs?: "steer" | "followUp" | "nextTurn";
}
export interface SendUserMessageOptions {
  /** While a run is in progress (default `followUp`). While idle the message starts a run. */
  deliverAs?: "steer" | "followUp";
}

// ─── One model call ──────────────────────────────────────────────────────────────────────────

/**
 * One model call an extension makes through the host, outside the agent's conversation (an
 * MCP server's sampling request). It goes where the agent's own calls go: the session's model,
 * and the policies of the `context` slot on everything the model reads — the messages, and the
 * system prompt as a first custom message of type `system_prompt` — so that what a redaction or
 * guard extension does to every model call it does to this one.
 */
export interface CompleteRequest {
  /** Passes `context` (and with `from`, `tool_result` as `<from>:system`) like the messages. */
  systemPrompt?: string;
  /** The conversation to complete: user and assistant messages, no tool calls. */
  messages: (UserMessage | AssistantMessage)[];
  maxTokens?: number;
  /** Abort the call (the model stream stops; the result is `{ ok: false }`). */
  signal?: AbortSignal;
  /**
   * The messages came from a tool, not from the user: the name their content is attributed to
   * (`docs__sampling`). Each message's content, and the system prompt, then first pass the
   * `tool_result` slot as a result of that name, as anything a tool brings in does, so a policy that redacts or
   * withholds tool output sees it; a withheld or error-marked one refuses the call.
   */
  from?: string;
}

/** The model's answer, or why there is none (a policy refused it, the model failed, an abort). Never a throw. */
export type CompleteResult = { ok: true; message: AssistantMessage } | { ok: false; error: string };
