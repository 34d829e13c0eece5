/**
 * A model client's last word (`done` or `error`), checked before it enters history. The loop
 * trusts that message for what the model said, not for its shape (docs/architecture.md#messages, docs/models.md): one the
 * history could not hold — no content array, a block without its fields, a tool call without an
 * id or a name — is refused with the reason, and the turn ends in `error` with what was streamed.
 * Tool-call arguments that are not an object are kept the way unparseable ones are kept (docs/architecture.md#messages)
 * (`arguments: {}`, the text in `rawArguments`), so the call gets an error the model can act on.
 * A well-formed message is returned as it is: no copy.
 */
import { exceedsDepth, tooDeepText } from "../limits.ts";
import type { AssistantContent, AssistantMessage, ToolCall } from "../types.ts";
import { parsedArguments } from "./partial.ts";

/** Why a message cannot enter history, in words that fit after "malformed message: ". */
export class MalformedMessage {
  constructor(readonly problem: string) {}
}

export function checkModelMessage(message: unknown): AssistantMessage | MalformedMessage {
  if (typeof message !== "object" || message === null) return new MalformedMessage("the message is not an object");
  const m = message as AssistantMessage;
  if (m.role !== "assistant") return new MalformedMessage(`the role is ${shown(m.role)}, not "assistant"`);
  const content: unknown = m.content;
  if (!Array.isArray(content)) return new MalformedMessage("content is not an array");
  let settled: AssistantContent[] | undefined;
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    const problem = blockProblem(block, i);
    if (problem !== undefined) return new MalformedMessage(problem);
    if ((block as AssistantContent).type !== "toolCall") continue;
    const call = withObjectArguments(block as ToolCall);
    if (call !== block) (settled ??= content.slice())[i] = call;
  }
  return settled ? { ...m, content: settled } : m;
}

/** What is wrong with `content[i]`; the words are built only when something is (this runs for every block). */
function blockProblem(block: unknown, i: number): string | undefined {
  if (typeof block !== "object" || block === null) return `content[${i}] is not a content block`;
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? undefined : `content[${i}] is a text block without a string text`;
    case "thinking":
      return typeof b.thinking === "string" ? undefined : `content[${i}] is a thinking block without a string thinking`;
    case "toolCall":
      if (typeof b.id !== "string" || b.id === "") return `content[${i}] is a tool call without an id`;
      if (typeof b.name !== "string") return `content[${i}] is a tool call without a name`;
      return undefined;
    default:
      return `content[${i}] has an unknown type ${shown(b.type)}`;
  }
}

/** The call with an object as `arguments` and `rawArguments` a string or absent; itself when it already is. */
function withObjectArguments(call: ToolCall): ToolCall {
  const args: unknown = call.arguments;
  const raw: unknown = call.rawArguments;
  const isObject = typeof args === "object" && args !== null && !Array.isArray(args);
  if (isObject && exceedsDepth(args)) {
    // Kept as text (limits.ts): validation tells the model; history never holds the deep object.
    return {
      type: "toolCall",
      id: call.id,
      name: call.name,
      arguments: {},
      rawArguments: jsonText(args, TOO_DEEP_ARGUMENTS),
    };
  }
  if (isObject && (raw === undefined || typeof raw === "string")) return call;
  const fixed: ToolCall = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
  if (isObject)
    fixed.arguments = args as Record<string, unknown>; // a raw text that is not text is dropped
  else if (typeof args === "string") Object.assign(fixed, parsedArguments(args));
  else if (args !== undefined && args !== null) fixed.rawArguments = jsonText(args);
  return fixed;
}

/** What stands for arguments too deep even to write as JSON: not JSON, so validation refuses it. */
const TOO_DEEP_ARGUMENTS = `(${tooDeepText("the arguments object")})`;

function jsonText(value: unknown, fallback = String(value)): string {
  try {
    return JSON.stringify(value) ?? fallback;
  } catch {
    return fallback;
  }
}

/** A value as it appears in a problem: strings quoted (and cut short), other values by kind. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}
