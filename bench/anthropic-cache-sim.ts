// A prompt cache that follows Anthropic's documented prefix rules, for judging where a client
// puts its breakpoints (bench/anthropic-cache.bench.ts, and the Anthropic client's tests).
//
// The rules modelled (Anthropic's prompt-caching documentation):
// - The prompt is one sequence of blocks in the order tools → system → messages; a cache entry
//   is the exact prefix up to and including a block that carries `cache_control`.
// - A request reads the longest cached prefix it can find: at each of its breakpoints the API
//   checks that prefix, then each earlier block boundary, up to about 20 blocks back.
// - A request writes an entry at each of its breakpoints; what it writes beyond what it read is
//   billed as cache writes, the rest of the prompt as plain input.
// - An entry lives 5 minutes, renewed each time it is read; prefixes shorter than the model's
//   minimum (1 024 tokens for Sonnet and Opus) are never cached.
// Tokens are estimated as characters / 4 of each block's JSON (without its cache_control).
import { createHash } from "node:crypto";
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";

export interface CacheRules {
  lookbackBlocks: number;
  ttlMs: number;
  minTokens: number;
}

export const ANTHROPIC_RULES: CacheRules = { lookbackBlocks: 20, ttlMs: 5 * 60_000, minTokens: 1024 };

export interface CacheOutcome {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  /** The whole prompt: input + cacheRead + cacheWrite. */
  total: number;
}

/** The prompt as the cache sees it: each block's tokens and whether it carries a breakpoint. */
export function promptBlocks(
  body: MessageCreateParamsStreaming,
): { json: string; tokens: number; breakpoint: boolean }[] {
  const blocks: Record<string, unknown>[] = [];
  for (const tool of body.tools ?? []) blocks.push(tool as unknown as Record<string, unknown>);
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
  for (const block of system) blocks.push(block as unknown as Record<string, unknown>);
  for (const message of body.messages) {
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    // The role is part of what a block means: the same text from the user and from the assistant differ.
    for (const block of content) blocks.push({ role: message.role, ...(block as unknown as Record<string, unknown>) });
  }
  return blocks.map((block) => {
    const { cache_control, ...rest } = block;
    const json = JSON.stringify(rest);
    return {
      json,
      tokens: Math.ceil(json.length / 4),
      breakpoint: cache_control !== undefined && cache_control !== null,
    };
  });
}

export class PromptCache {
  private readonly entries = new Map<string, number>();

  constructor(private readonly rules: CacheRules = ANTHROPIC_RULES) {}

  /** One request at time `now` (ms): what it reads, writes and pays as plain input. */
  request(body: MessageCreateParamsStreaming, now: number): CacheOutcome {
    const blocks = promptBlocks(body);
    const hashes: string[] = [];
    const sums: number[] = [];
    const hash = createHash("sha256");
    let sum = 0;
    for (const block of blocks) {
      hash.update(block.json).update("\u0000");
      hashes.push(hash.copy().digest("hex"));
      sum += block.tokens;
      sums.push(sum);
    }
    const total = sum;
    const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));

    let read = 0;
    let readAt = -1;
    for (const p of breakpoints) {
      for (let j = p; j >= 0 && j >= p - this.rules.lookbackBlocks; j--) {
        const expires = this.entries.get(hashes[j]!);
        if (expires !== undefined && expires > now) {
          if (sums[j]! > read) {
            read = sums[j]!;
            readAt = j;
          }
          break;
        }
      }
    }
    if (readAt >= 0) this.entries.set(hashes[readAt]!, now + this.rules.ttlMs);
    let written = read;
    for (const p of breakpoints) {
      if (sums[p]! < this.rules.minTokens) continue;
      this.entries.set(hashes[p]!, now + this.rules.ttlMs);
      written = Math.max(written, sums[p]!);
    }
    const cacheWrite = written - read;
    return { input: total - read - cacheWrite, cacheRead: read, cacheWrite, total };
  }
}
