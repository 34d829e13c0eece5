/**
 * `pi.complete`: one model call an extension makes through the host, outside the conversation.
 * Everything of the request the model reads passes the slots a tool's output and the agent's own
 * model calls pass — `tool_result` for content that came from a tool (`from`: the messages and
 * the system prompt, which are that source's words alike), then `context` — so a redaction or
 * guard extension applies to it as to everything else, then streams the session's model with no
 * tools. In `context` the system prompt travels as the first message, a custom message of type
 * `SYSTEM_PROMPT_MESSAGE`, and is taken out again after the chain (a policy that drops it drops
 * the system prompt). Nothing here throws: every failure is `{ ok: false, error }`.
 */
import {
  errorMessage,
  toModelMessages,
  type AssistantMessage,
  type Content,
  type Message,
  type ModelClient,
} from "@mypi/kernel";
import type { ChainCall } from "../dispatch/chain.ts";
import type { ExtensionManager } from "../manager.ts";
import type { CompleteRequest, CompleteResult } from "../types.ts";

interface CompleteDeps {
  manager: Pick<ExtensionManager, "runSlot">;
  /** The session's model at the time of the call (it can be switched). */
  model(): ModelClient;
  call(signal: AbortSignal): ChainCall;
}

const NEVER = new AbortController().signal;

/** The `customType` of the message that carries a `pi.complete` request's system prompt through `context`. */
const SYSTEM_PROMPT_MESSAGE = "system_prompt";

export async function completeThroughSlots(deps: CompleteDeps, request: CompleteRequest): Promise<CompleteResult> {
  const signal = request.signal ?? NEVER;
  const call = deps.call(signal);
  let messages: Message[] = request.messages.map((m) => ({ ...m }));
  let systemPrompt = request.systemPrompt;
  try {
    if (request.from !== undefined) {
      const passed = await passToolResult(deps, call, request.from, messages);
      if (!passed.ok) return passed;
      messages = passed.messages;
      if (systemPrompt !== undefined) {
        const prompt = await passSystemPrompt(deps, call, request.from, systemPrompt);
        if (!prompt.ok) return prompt;
        systemPrompt = prompt.text;
      }
    }
    const sent = systemPrompt === undefined ? messages : [systemPromptMessage(systemPrompt), ...messages];
    const decided = await deps.manager.runSlot("context", { messages: sent }, call);
    ({ messages, systemPrompt } = takeSystemPrompt(decided?.messages ?? sent));
  } catch (error) {
    return { ok: false, error: `a policy stopped the call: ${errorMessage(error)}` };
  }
  if (signal.aborted) return { ok: false, error: "aborted" };
  return streamOnce(deps.model(), {
    messages,
    signal,
    ...(systemPrompt !== undefined && { systemPrompt }),
    ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
  });
}

function systemPromptMessage(text: string): Message {
  return { role: "custom", customType: SYSTEM_PROMPT_MESSAGE, content: text, display: false, timestamp: Date.now() };
}

/** The system prompt back out of the messages `context` decided on: the first such message's text; the rest are the conversation. */
function takeSystemPrompt(messages: readonly Message[]): { messages: Message[]; systemPrompt: string | undefined } {
  let systemPrompt: string | undefined;
  const rest: Message[] = [];
  for (const m of messages) {
    if (m.role !== "custom" || m.customType !== SYSTEM_PROMPT_MESSAGE) rest.push(m);
    else
      systemPrompt ??=
        typeof m.content === "string"
          ? m.content
          : m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
  }
  return { messages: rest, systemPrompt };
}

/** The system prompt of a request from a tool, through `tool_result` as one more result of `from`. */
async function passSystemPrompt(
  deps: CompleteDeps,
  call: ChainCall,
  from: string,
  text: string,
): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  const content: Content[] = [{ type: "text", text }];
  const patch = await deps.manager.runSlot(
    "tool_result",
    { toolCallId: `${from}:system`, toolName: from, input: {}, content, details: undefined, isError: false },
    call,
  );
  if (patch?.isError)
    return { ok: false, error: `a tool_result policy refused the system prompt: ${refusal(patch.content)}` };
  return { ok: true, text: (patch?.content ?? content).flatMap((c) => (c.type === "text" ? [c.text] : [])).join("") };
}

function refusal(content: readonly Content[] | undefined): string {
  return (content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join(" ") || "marked as an error";
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
    const event = {
      toolCallId: `${from}:${i}`,
      toolName: from,
      input: {},
      content,
      details: undefined,
      isError: false,
    };
    const patch = await deps.manager.runSlot("tool_result", event, call);
    if (patch?.isError)
      return { ok: false, error: `a tool_result policy refused message ${i + 1}: ${refusal(patch.content)}` };
    const next = patch?.content ?? content;
    // An assistant message carries text only; a patch that adds an image to one drops the image.
    out.push(
      message.role === "user"
        ? { ...message, content: next }
        : { ...message, content: next.filter((c) => c.type === "text") },
    );
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
      if (event.type === "done")
        return options.signal.aborted
          ? { ok: false, error: "aborted" }
          : { ok: true, message: event.message as AssistantMessage };
    }
    return { ok: false, error: options.signal.aborted ? "aborted" : "the model's stream ended without an answer" };
  } catch (error) {
    return { ok: false, error: `the model failed: ${errorMessage(error)}` };
  }
}
