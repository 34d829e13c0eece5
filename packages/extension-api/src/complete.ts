/**
 * `pi.complete`: one model call an extension makes through the host, outside the conversation.
 * It passes the slots a tool's output and the agent's own model calls pass — `tool_result` for
 * content that came from a tool (`from`), then `context` — so a redaction or guard extension
 * applies to it as to everything else, then streams the session's model with no tools.
 * Nothing here throws: every failure is `{ ok: false, error }`.
 */
import { toModelMessages, type AssistantMessage, type Content, type Message, type ModelClient } from "@mypi/kernel";
import type { ChainCall } from "./chain.ts";
import type { ExtensionManager } from "./manager.ts";
import type { CompleteRequest, CompleteResult } from "./types.ts";

export interface CompleteDeps {
  manager: Pick<ExtensionManager, "runSlot">;
  /** The session's model at the time of the call (it can be switched). */
  model(): ModelClient;
  call(signal: AbortSignal): ChainCall;
}

const NEVER = new AbortController().signal;

export async function completeThroughSlots(deps: CompleteDeps, request: CompleteRequest): Promise<CompleteResult> {
  const signal = request.signal ?? NEVER;
  const call = deps.call(signal);
  let messages: Message[] = request.messages.map((m) => ({ ...m }));
  try {
    if (request.from !== undefined) {
      const passed = await passToolResult(deps, call, request.from, messages);
      if (!passed.ok) return passed;
      messages = passed.messages;
    }
    const decided = await deps.manager.runSlot("context", { messages }, call);
    messages = decided?.messages ?? messages;
  } catch (error) {
    return { ok: false, error: `a policy stopped the call: ${errorText(error)}` };
  }
  if (signal.aborted) return { ok: false, error: "aborted" };
  return streamOnce(deps.model(), {
    messages,
    signal,
    ...(request.systemPrompt !== undefined && { systemPrompt: request.systemPrompt }),
    ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
  });
}

/** Each message's content through `tool_result` as a result of `from`; a withhold or error mark refuses. */
async function passToolResult(
  deps: CompleteDeps,
  call: ChainCall,
  from: string,
  messages: Message[],
): Promise<{ ok: true; messages: Message[] } | { ok: false; error: string }> {
  const out: Message[] = [];
  for (const [i, message] of messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") {
      out.push(message);
      continue;
    }
    const content = contentOf(message);
    const event = { toolCallId: `${from}:${i}`, toolName: from, input: {}, content, details: undefined, isError: false };
    const patch = await deps.manager.runSlot("tool_result", event, call);
    if (patch?.isError) {
      const why = (patch.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join(" ") || "marked as an error";
      return { ok: false, error: `a tool_result policy refused message ${i + 1}: ${why}` };
    }
    const next = patch?.content ?? content;
    // An assistant message carries text only; a patch that adds an image to one drops the image.
    out.push(message.role === "user" ? { ...message, content: next } : { ...message, content: next.filter((c) => c.type === "text") });
  }
  return { ok: true, messages: out };
}

/** A message's text and images (an assistant's thinking and tool calls are not passed on). */
function contentOf(message: Message & { role: "user" | "assistant" }): Content[] {
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  return (message.content as { type: string }[]).filter((c): c is Content => c.type === "text" || c.type === "image");
}

async function streamOnce(
  model: ModelClient,
  options: { messages: Message[]; signal: AbortSignal; systemPrompt?: string; maxTokens?: number },
): Promise<CompleteResult> {
  try {
    const stream = model.stream(
      {
        messages: toModelMessages(options.messages),
        tools: [],
        ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
        ...(options.maxTokens !== undefined && { maxTokens: options.maxTokens }),
      },
      options.signal,
    );
    for await (const event of stream) {
      if (event.type === "error") return { ok: false, error: event.message.errorMessage ?? event.message.stopReason };
      if (event.type === "done") return options.signal.aborted ? { ok: false, error: "aborted" } : { ok: true, message: event.message as AssistantMessage };
    }
    return { ok: false, error: options.signal.aborted ? "aborted" : "the model's stream ended without an answer" };
  } catch (error) {
    return { ok: false, error: `the model failed: ${errorText(error)}` };
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
