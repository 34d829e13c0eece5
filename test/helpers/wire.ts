import type { JsonObject } from "./json.ts";
/**
 * A JSON/RPC client's view of a streaming message, as docs/cli.md tells clients to rebuild it:
 * from `message_start` and the delta-only `message_update` lines, never a snapshot.
 */
type Line = JsonObject;
type Block = JsonObject;

/** The content of every assistant message the lines streamed, rebuilt from deltas, in order. */
export function rebuildFromWire(lines: readonly Line[]): Block[][] {
  const messages: Block[][] = [];
  let content: Block[] | undefined;
  for (const line of lines) {
    if (line.type === "message_start" && line.message.role === "assistant")
      messages.push((content = [...line.message.content]));
    else if (line.type === "message_end") content = undefined;
    // A line with only Pi's assistantMessageEvent (a block's start or end) has no mypi delta.
    else if (line.type === "message_update" && content && line.delta) applyUpdate(content, line);
  }
  return messages;
}

/** One `message_update` folded into `content` (changed in place). */
export function applyUpdate(content: Block[], update: Line): void {
  const { delta, contentIndex: at } = update;
  if (!Number.isInteger(at) || at < 0 || at > content.length)
    throw new Error(`contentIndex ${at} is outside the message (${content.length} blocks)`);
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
      if (block?.type !== "toolCall")
        throw new Error(`toolcall_delta for block ${at}, which is ${block?.type ?? "missing"}`);
      content[at] = { ...block, rawArguments: block.rawArguments + delta.delta };
      return;
    default:
      throw new Error(`unknown delta ${delta.type}`);
  }
}

/**
 * A Pi client's fold of one `message_update.assistantMessageEvent` into `content` (changed in
 * place), as Pi's docs/json.md tells its clients: blocks open with `*_start`, grow with
 * `*_delta`, and take the finished content from `*_end`. Throws on what such a client cannot
 * take: a delta for a block never started, a block started twice, an end for a block of another kind.
 */
export function applyPiEvent(content: Block[], event: Line, seen: { started: Set<number>; ended: Set<number> }): void {
  const at = event.contentIndex;
  if (!Number.isInteger(at) || at < 0 || at > content.length)
    throw new Error(`contentIndex ${at} is outside the message (${content.length} blocks)`);
  const start = (block: Block) => {
    if (seen.started.has(at)) throw new Error(`block ${at} started twice`);
    seen.started.add(at);
    content[at] = block;
  };
  const block = content[at];
  const must = (type: string) => {
    if (block?.type !== type) throw new Error(`${event.type} for block ${at}, which is ${block?.type ?? "missing"}`);
  };
  const end = () => {
    if (seen.ended.has(at)) throw new Error(`block ${at} ended twice`);
    seen.ended.add(at);
  };
  switch (event.type) {
    case "text_start":
      return start({ type: "text", text: "" });
    case "thinking_start":
      return start({ type: "thinking", thinking: "" });
    case "toolcall_start":
      return start({ type: "toolCall", id: event.id, name: event.toolName, arguments: {}, partialJson: "" });
    case "text_delta":
      must("text");
      content[at] = { ...block, text: block!.text + event.delta };
      return;
    case "thinking_delta":
      must("thinking");
      content[at] = { ...block, thinking: block!.thinking + event.delta };
      return;
    case "toolcall_delta":
      must("toolCall");
      content[at] = { ...block, partialJson: block!.partialJson + event.delta };
      return;
    case "text_end":
      must("text");
      end();
      content[at] = { type: "text", text: event.content };
      return;
    case "thinking_end":
      must("thinking");
      end();
      content[at] = { type: "thinking", thinking: event.content };
      return;
    case "toolcall_end":
      must("toolCall");
      end();
      content[at] = event.toolCall;
      return;
    default:
      throw new Error(`unknown assistantMessageEvent ${event.type}`);
  }
}
