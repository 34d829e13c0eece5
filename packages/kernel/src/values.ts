/**
 * Small readings of values that every part of the kernel makes: whether something from outside
 * is a plain record, the text of a message's content, a delay a timer can really wait, and the
 * text and errno code of a thrown value. One definition each, exported so that the other
 * packages need no copies of their own.
 */
import type { AssistantContent, Content } from "./types.ts";

/** An object that is not null and not an array: the shape JSON objects from outside are checked for. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The text blocks of a message's content, joined (a string content is its own text). */
export function textOf(content: string | readonly (Content | AssistantContent)[]): string {
  if (typeof content === "string") return content;
  let text = "";
  for (const block of content) if (block.type === "text") text += block.text;
  return text;
}

/**
 * The longest delay `setTimeout` can wait (2^31−1 ms, about 24.8 days). Node fires a longer one
 * after 1 ms, so every timer armed from a user's number must be kept at or under this.
 */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** A delay as a timer can take it: longer ones (Infinity included) clamped to MAX_TIMER_DELAY_MS; NaN and less than zero are 0. */
export function timerDelay(ms: number): number {
  return ms > 0 ? Math.min(ms, MAX_TIMER_DELAY_MS) : 0;
}

/**
 * The text of anything thrown, as one readable line: an Error's message (`TypeError without a
 * message` when it is empty), a thrown string itself, the `message` of an error-shaped object
 * (a JSON-RPC error, an Error from another realm), else a short description of the value. Never
 * throws, not even for an Error whose `message` getter throws, because a report of a failure
 * must not fail in turn.
 */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return error.message || `${error.name || "Error"} without a message`;
    if (typeof error === "string") return error;
    const message = (error as { message?: unknown } | null | undefined)?.message;
    if (typeof message === "string" && message !== "") return message;
    return `a non-Error value was thrown: ${describeValue(error)}`;
  } catch {
    return "an error was thrown whose message cannot be read";
  }
}

/** The `code` of a failed system call (`"ENOENT"`, `"EACCES"` …), or undefined when the value carries none. */
export function errnoCode(error: unknown): string | undefined {
  try {
    const code = (error as { code?: unknown } | null | undefined)?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/** A short, single-line rendering of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    let text: string;
    try {
      text = JSON.stringify(value) ?? "an object";
    } catch {
      text = "an object";
    }
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  }
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
