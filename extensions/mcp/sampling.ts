/**
 * `sampling/createMessage`: a server asks mypi's model for a completion. Only a server whose
 * entry says `"sampling": true` may (the capability is declared to it alone; any other is
 * refused with a message naming the key). The request goes through the host (`pi.complete`):
 * the server's messages pass the `tool_result` slot as the result of `<server>__sampling` —
 * they are a server's words, like a tool's output — then the `context` slot, then the session's
 * model with no tools, so redaction and guard policies apply to it as to every model call.
 *
 * What is not offered: the server's tools in the request (`sampling.tools` is not declared),
 * `includeContext` other than `"none"` (`sampling.context` is not declared), and model
 * preferences (the session has one model; the answer names it).
 */
import type { CompleteRequest, CompleteResult, Content } from "@mypi/extension-api";
import { mcpToolName } from "./naming.ts";

/** A sampling request's parameters, as the SDK's schema let them through. */
export interface SamplingParams {
  messages: { role: "user" | "assistant"; content: SamplingBlock | SamplingBlock[] }[];
  systemPrompt?: string;
  maxTokens: number;
}
type SamplingBlock = { type: string; text?: string; data?: string; mimeType?: string };

interface SamplingAnswer {
  role: "assistant";
  content: { type: "text"; text: string };
  model: string;
  stopReason: "endTurn" | "maxTokens";
  [key: string]: unknown;
}

/** A refusal the server gets as a JSON-RPC error (code -1, what the spec uses for a refused request). */
export class SamplingRefused extends Error {
  readonly code = -1;
}

/** The name a server's sampling content goes by in the `tool_result` slot. */
function samplingSource(server: string): string {
  return mcpToolName(server, "sampling");
}

export async function sample(options: {
  server: string;
  params: SamplingParams;
  complete: (request: CompleteRequest) => Promise<CompleteResult>;
  signal: AbortSignal;
}): Promise<SamplingAnswer> {
  const { params } = options;
  const messages = params.messages.map((m, i) => {
    const content = (Array.isArray(m.content) ? m.content : [m.content]).map((block) => toContent(block, i));
    return m.role === "user"
      ? { role: "user" as const, content, timestamp: Date.now() }
      : {
          role: "assistant" as const,
          content: content.filter((c) => c.type === "text"),
          stopReason: "stop" as const,
          usage: NO_USAGE,
          model: "mcp",
          timestamp: Date.now(),
        };
  });
  const result = await options.complete({
    messages,
    maxTokens: params.maxTokens,
    signal: options.signal,
    from: samplingSource(options.server),
    ...(params.systemPrompt !== undefined && { systemPrompt: params.systemPrompt }),
  });
  if (!result.ok) throw new SamplingRefused(`mypi could not complete the sampling request: ${result.error}`);
  const text = result.message.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
  return {
    role: "assistant",
    content: { type: "text", text },
    model: result.message.model,
    stopReason: result.message.stopReason === "length" ? "maxTokens" : "endTurn",
  };
}

const NO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };

/** One block of a server's message as model content; what a model call cannot carry is refused. */
function toContent(block: SamplingBlock, index: number): Content {
  if (block.type === "text") return { type: "text", text: block.text ?? "" };
  if (block.type === "image") return { type: "image", data: block.data ?? "", mimeType: block.mimeType ?? "image/png" };
  if (block.type === "audio")
    return { type: "text", text: `[audio (${block.mimeType ?? "unknown type"}) that mypi cannot pass to the model]` };
  throw new SamplingRefused(
    `message ${index + 1} holds a "${block.type}" block; mypi offers sampling without tools (sampling.tools is not declared)`,
  );
}
