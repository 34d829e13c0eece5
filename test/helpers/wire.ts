/**
 * A JSON/RPC client's view of a streaming message, as docs/cli.md tells clients to rebuild it:
 * from `message_start` and the delta-only `message_update` lines, never a snapshot.
 */
type Line = Record<string, any>;
type Block = Record<string, any>;

/** The content of every assistant message the lines streamed, rebuilt from deltas, in order. */
export function rebuildFromWire(lines: readonly Line[]): Block[][] {
  const messages: Block[][] = [];
  let content: Block[] | undefined;
  for (const line of lines) {
    if (line.type === "message_start" && line.message.role === "assistant") messages.push((content = [...line.message.content]));
    else if (line.type === "message_end") content = undefined;
    else if (line.type === "message_update" && content) applyUpdate(content, line);
  }
  return messages;
}

/** One `message_update` folded into `content` (changed in place). */
export function applyUpdate(content: Block[], update: Line): void {
  const { delta, contentIndex: at } = update;
  if (!Number.isInteger(at) || at < 0 || at > content.length) throw new Error(`contentIndex ${at} is outside the message (${content.length} blocks)`);
  const block = content[at];
  switch (delta.type) {
    case "text_delta":
      content[at] = { type: "text", text: (block?.text ?? "") + delta.delta };
      return;
    case "thinking_delta":
      content[at] = { type: "thinking", thinking: (block?.thinking ?? "") + delta.delta };
      return;
    case "toolcall_start":
      content[at] = { type: "toolCall", id: delta.id, name: delta.name, arguments: {}, rawArguments: "" };
      return;
    case "toolcall_delta":
      if (block?.type !== "toolCall") throw new Error(`toolcall_delta for block ${at}, which is ${block?.type ?? "missing"}`);
      content[at] = { ...block, rawArguments: block.rawArguments + delta.delta };
      return;
    default:
      throw new Error(`unknown delta ${delta.type}`);
  }
}
