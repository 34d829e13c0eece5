// How much of a long session's input Anthropic's prompt cache would serve, given the breakpoints
// the Anthropic client places: a scripted 20-turn coding session (tool calls every turn, the
// requests exactly as the client builds them) replayed through a cache that follows the
// documented prefix rules (bench/anthropic-cache-sim.ts). Reported against, in the same run:
// one breakpoint at the history's end (system + tools + the last message: what a client with a
// single moving breakpoint gets) and the ceiling (every request reads all of the previous one).
// Two sessions: one or two calls a turn, and one where every fourth turn fans out into 12
// parallel calls (24 blocks: past the 20-block lookback).
// Run: node bench/run.mjs anthropic-cache
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import { buildAnthropicRequest } from "../packages/kernel/src/models/anthropic-request.ts";
import { anthropicTraits } from "../packages/kernel/src/models/thinking.ts";
import type { AssistantMessage, ModelMessage, ToolResultMessage, ToolSchema } from "../packages/kernel/src/types.ts";
import { PromptCache, promptBlocks } from "./anthropic-cache-sim.ts";

const MODEL = "claude-sonnet-4-5";
const TURNS = 20;
/** Model time plus tool time between two requests. */
const SECONDS_BETWEEN_REQUESTS = 20;

/** Deterministic filler of about `tokens` tokens (4 characters each). */
function text(seed: number, tokens: number): string {
  const words = ["const", "value", "return", "function", "import", "export", "await", "result", "error", "file"];
  let out = "";
  let x = seed * 2654435761;
  while (out.length < tokens * 4) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += `${words[x % words.length]} `;
  }
  return out;
}

const TOOLS: ToolSchema[] = ["read", "write", "edit", "bash", "grep", "find", "ls", "todo"].map((name, i) => ({
  name,
  description: text(100 + i, 80),
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: text(200 + i, 40) }, arg: { type: "string" } },
    required: ["path"],
  },
}));
const SYSTEM_PROMPT = text(1, 2500);

function session(fanOutEvery: number | undefined): ModelMessage[][] {
  const history: ModelMessage[] = [{ role: "user", content: text(2, 60), timestamp: 0 }];
  const requests: ModelMessage[][] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    requests.push([...history]);
    const calls = fanOutEvery !== undefined && turn % fanOutEvery === 0 ? 12 : 1 + (turn % 2);
    const assistant: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: text(300 + turn, 150), signature: `sig-${turn}-${"x".repeat(200)}` },
        { type: "text", text: text(400 + turn, 40) },
        ...Array.from({ length: calls }, (_, c) => ({
          type: "toolCall" as const,
          id: `toolu_${turn}_${c}`,
          name: "read",
          arguments: { path: `src/file-${turn}-${c}.ts` },
        })),
      ],
      stopReason: "toolUse",
      usage: { input: 0, output: 0 },
      model: `anthropic:${MODEL}`,
      api: "anthropic-messages",
      provider: "anthropic",
      timestamp: turn,
    };
    history.push(assistant);
    for (let c = 0; c < calls; c++) {
      const size = 200 + ((turn * 7 + c * 13) % 10) * 250; // 200 … 2 450 tokens
      const result: ToolResultMessage = {
        role: "toolResult",
        toolCallId: `toolu_${turn}_${c}`,
        toolName: "read",
        content: [{ type: "text", text: text(500 + turn * 31 + c, size) }],
        isError: false,
        timestamp: turn,
      };
      history.push(result);
    }
  }
  return requests;
}

function build(messages: ModelMessage[]): MessageCreateParamsStreaming {
  return buildAnthropicRequest({
    model: MODEL,
    request: { systemPrompt: SYSTEM_PROMPT, messages, tools: TOOLS, thinking: "medium" },
    client: { id: `anthropic:${MODEL}`, api: "anthropic-messages", provider: "anthropic" },
    traits: anthropicTraits(MODEL),
    maxTokens: 64_000,
    cache: true,
    reasoning: true,
  });
}

/** The same request with only the last of the history's breakpoints. */
function oneHistoryBreakpoint(body: MessageCreateParamsStreaming): MessageCreateParamsStreaming {
  const copy = structuredClone(body);
  let kept = false;
  for (let i = copy.messages.length - 1; i >= 0; i--) {
    const content = copy.messages[i]!.content;
    if (typeof content === "string") continue;
    for (let j = content.length - 1; j >= 0; j--) {
      const block = content[j] as { cache_control?: unknown };
      if (block.cache_control === undefined) continue;
      if (kept) delete block.cache_control;
      kept = true;
    }
  }
  return copy;
}

function share(requests: MessageCreateParamsStreaming[]): {
  share: number;
  read: number;
  write: number;
  total: number;
} {
  const cache = new PromptCache();
  let read = 0;
  let write = 0;
  let total = 0;
  requests.forEach((body, i) => {
    const outcome = cache.request(body, i * SECONDS_BETWEEN_REQUESTS * 1000);
    read += outcome.cacheRead;
    write += outcome.cacheWrite;
    total += outcome.total;
  });
  return { share: read / total, read, write, total };
}

/** Every request reads all of the previous request's prompt: the most any breakpoints could give. */
function ceiling(requests: MessageCreateParamsStreaming[]): number {
  const sizes = requests.map((body) => promptBlocks(body).reduce((sum, block) => sum + block.tokens, 0));
  const read = sizes.slice(0, -1).reduce((sum, size) => sum + size, 0);
  return read / sizes.reduce((sum, size) => sum + size, 0);
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
for (const [name, fanOut] of [
  ["1–2 calls a turn", undefined],
  ["12 parallel calls every 4th turn", 4],
] as const) {
  const requests = session(fanOut).map(build);
  const mine = share(requests);
  const single = share(requests.map(oneHistoryBreakpoint));
  const top = ceiling(requests);
  console.log(`${name}: ${TURNS} requests, ${mine.total.toLocaleString("en")} input tokens in all`);
  console.log(
    `  served from cache, mypi's breakpoints:      ${pct(mine.share)}  (cache writes ${pct(mine.write / mine.total)})`,
  );
  console.log(
    `  served from cache, one history breakpoint:  ${pct(single.share)}  (ratio mypi / one: ${(mine.share / single.share).toFixed(2)})`,
  );
  console.log(
    `  ceiling (all of the previous request):      ${pct(top)}  (mypi reaches ${((100 * mine.share) / top).toFixed(1)}% of it)`,
  );
}
