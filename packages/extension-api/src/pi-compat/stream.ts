/**
 * Pi's `message_update.assistantMessageEvent`, built from mypi's `delta` and partial message:
 * the delta's own fields, `partial` (the message so far) and `contentIndex` — the position in
 * `partial.content` of the block the update is about. Pi extensions find the block with
 * `partial.content[contentIndex]` (a tool call forming, its name known from `toolcall_start`).
 *
 * mypi's stream has no `*_start`/`*_end` events for text and thinking, and its `toolcall_*`
 * events number calls among the message's tool calls (`index`), not among its blocks. So:
 * a text or thinking delta is about the last block (deltas extend it); a tool-call event is
 * about the `index`-th tool call. `contentIndex` is worked out when first read, so an observer
 * that never reads it costs nothing, however long the message grows.
 */

interface Update {
  delta: { type: string; index?: number };
  message: { content: readonly { type: string }[] };
}

export function assistantMessageEvent(update: Update): Record<string, unknown> {
  const { delta, message } = update;
  let contentIndex: number | undefined;
  const event = { ...delta, partial: message };
  Object.defineProperty(event, "contentIndex", {
    enumerable: true,
    get: () => (contentIndex ??= blockOf(delta, message.content)),
  });
  return Object.freeze(event);
}

function blockOf(delta: Update["delta"], content: readonly { type: string }[]): number {
  if (!delta.type.startsWith("toolcall_") || delta.index === undefined) return content.length - 1;
  let calls = -1;
  for (let i = 0; i < content.length; i++) {
    if (content[i]!.type === "toolCall" && ++calls === delta.index) return i;
  }
  return content.length - 1;
}
