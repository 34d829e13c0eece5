/**
 * Pi's `message_update.assistantMessageEvent`, built from mypi's update: the delta's own fields,
 * `partial` (the message so far) and `contentIndex` — the position in `partial.content` of the
 * block the update is about, as the kernel's event gives it. Pi extensions find the block with
 * `partial.content[contentIndex]` (a tool call forming, its name known from `toolcall_start`).
 *
 * mypi's stream has no `*_start`/`*_end` events for text and thinking, and its `toolcall_*`
 * events number calls among the message's tool calls (`index`), not among its blocks; the
 * kernel's `contentIndex` is the block's place either way.
 */

interface Update {
  delta: { type: string };
  message: unknown;
  contentIndex: number;
}

export function assistantMessageEvent(update: Update): Record<string, unknown> {
  return Object.freeze({ ...update.delta, partial: update.message, contentIndex: update.contentIndex });
}
