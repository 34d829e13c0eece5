/**
 * `session/load`: the current branch of a mypi session told again as `session/update`s, oldest
 * first, so the editor shows the conversation as it was: the user's messages
 * (`user_message_chunk`: text and images), the answers (`agent_thought_chunk`,
 * `agent_message_chunk`), each tool call (`tool_call` with its kind, title, locations and raw
 * input) followed by its result (`tool_call_update`, `completed` or `failed`). A compaction's
 * summary stands in for what it replaced; extension state and labels are not part of the
 * conversation and are not sent.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionEntry } from "@mypi/kernel";
import { rawOutput, resultContent, toolKind, toolLocations, toolTitle } from "./tool-calls.ts";

export function replayUpdates(branch: readonly SessionEntry[], cwd: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const entry of branch) {
    if (entry.type === "compaction") {
      updates.push({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: `[Earlier conversation, compacted]\n\n${entry.summary}` },
      });
      continue;
    }
    if (entry.type !== "message") continue;
    const message = entry.message;
    switch (message.role) {
      case "user": {
        const content =
          typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
        for (const block of content) {
          if (block.type === "text")
            updates.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: block.text } });
          else
            updates.push({
              sessionUpdate: "user_message_chunk",
              content: { type: "image", data: block.data, mimeType: block.mimeType },
            });
        }
        break;
      }
      case "assistant":
        for (const block of message.content) {
          if (block.type === "thinking" && block.thinking !== "")
            updates.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: block.thinking } });
          else if (block.type === "text" && block.text !== "")
            updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: block.text } });
          else if (block.type === "toolCall") {
            const locations = toolLocations(block.name, block.arguments, cwd);
            updates.push({
              sessionUpdate: "tool_call",
              toolCallId: block.id,
              name: block.name,
              title: toolTitle(block.name, block.arguments),
              kind: toolKind(block.name),
              status: "pending",
              rawInput: block.arguments,
              ...(locations.length > 0 && { locations }),
            });
          }
        }
        break;
      case "toolResult":
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: message.toolCallId,
          status: message.isError ? "failed" : "completed",
          content: resultContent(message),
          rawOutput: rawOutput(message),
        });
        break;
      default:
        // An extension's custom message is its own display matter (Pi renders it with the extension's renderer): not replayed.
        break;
    }
  }
  return updates;
}
