/** Small message builders for the session tests; timestamps are explicit so traces are exact. */
import type { AssistantMessage, CustomMessage, Message, ToolResultMessage, UserMessage } from "../../src/types.ts";

export function user(text: string, timestamp = 0): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

export function custom(text: string, timestamp = 0): CustomMessage {
  return { role: "custom", customType: "note", content: text, timestamp };
}

/** An assistant message calling `ids` (tool name `t_<id>`), or answering with text. */
export function assistant(
  ids: string[],
  options: { text?: string; timestamp?: number; usage?: AssistantMessage["usage"] } = {},
): AssistantMessage {
  return {
    role: "assistant",
    content: [
      ...(options.text !== undefined ? [{ type: "text" as const, text: options.text }] : []),
      ...ids.map((id) => ({ type: "toolCall" as const, id, name: `t_${id}`, arguments: {} })),
    ],
    stopReason: ids.length > 0 ? "toolUse" : "stop",
    usage: options.usage ?? { input: 0, output: 0 },
    model: "test",
    timestamp: options.timestamp ?? 0,
  };
}

export function result(id: string, text = `result ${id}`, timestamp = 0): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: `t_${id}`,
    content: [{ type: "text", text }],
    isError: false,
    timestamp,
  };
}

export function interrupted(id: string, timestamp = 0): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: id,
    toolName: `t_${id}`,
    content: [{ type: "text", text: "Tool call interrupted by user" }],
    isError: true,
    timestamp,
  };
}

/** A compact trace of a history, for whole-trace assertions: `A(x,y)`, `R(x:text)`, `U(text)`. */
export function trace(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    switch (m.role) {
      case "user":
        return `U(${textOf(m.content)})`;
      case "custom":
        return `C(${textOf(m.content)})`;
      case "assistant": {
        const ids = m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
        const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        return ids.length > 0 ? `A(${ids.join(",")})` : `A:${text}`;
      }
      case "toolResult":
        return `R(${m.toolCallId}:${textOf(m.content)})`;
    }
  });
}

function textOf(content: string | readonly { type: string; text?: string }[]): string {
  return typeof content === "string" ? content : content.map((b) => b.text ?? `[${b.type}]`).join("");
}
