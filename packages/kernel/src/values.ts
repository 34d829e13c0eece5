/**
 * Small readings of values that every part of the kernel makes: whether something from outside
 * is a plain record, the text of a message's content, and a delay a timer can really wait.
 * One definition each, exported so that the other packages need no copies of their own.
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
