/**
 * The helper functions of `@earendil-works/pi-coding-agent` that Pi extensions call at run time
 * and that mypi can honour with its own machinery: the per-file mutation queue, the message
 * conversion for a model, the summarizer's text form of a conversation, the event bus, token
 * estimates. Each keeps Pi's signature (docs/extensions.md of Pi 1.6); none imports Pi code.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  defaultMutationQueue,
  estimateMessageTokens,
  serializeConversation,
  type Content,
  type Message,
} from "@mypi/kernel";
import { parseFrontmatter, stripFrontmatter } from "../frontmatter.ts";

/** The key of a file: its real path, or its folder's real path and its name (a file not written yet). */
function fileKey(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

/**
 * Pi's `withFileMutationQueue(path, fn)`: `fn` runs once every earlier mutation of the same file
 * has settled — the extensions' and mypi's own `write` and `edit` tools' alike (one queue for the
 * process), so two read-change-write cycles of one file do not lose each other's change.
 * Resolves or rejects as `fn` does; a failed `fn` does not stop the ones queued after it.
 */
export function withFileMutationQueue<T>(filePath: string, fn: () => Promise<T> | T): Promise<T> {
  return defaultMutationQueue.run(fileKey(filePath), fn);
}

type PiMessage = { role?: unknown; [key: string]: unknown };

const asContent = (content: unknown): Content[] =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
      ? (content as Content[])
      : [];

/**
 * Pi's `convertToLlm(messages)`: the messages a model is sent. User, assistant and tool-result
 * messages pass as they are; an extension's custom message becomes a user message (as mypi
 * sends it); Pi's own message kinds (`bashExecution`, `compactionSummary`, `branchSummary`)
 * become user messages with their text; anything else is left out.
 */
export function convertToLlm(messages: readonly PiMessage[]): Message[] {
  const out: Message[] = [];
  const user = (text: string, timestamp: unknown): Message => ({
    role: "user",
    content: [{ type: "text", text }],
    timestamp: Number(timestamp) || Date.now(),
  });
  for (const m of Array.isArray(messages) ? messages : []) {
    switch (m?.role) {
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m as unknown as Message);
        break;
      case "custom":
        out.push({ role: "user", content: asContent(m.content), timestamp: Number(m.timestamp) || Date.now() });
        break;
      case "bashExecution":
        if (m.excludeFromContext === true) break;
        out.push(user(`Ran \`${String(m.command ?? "")}\`\n\`\`\`\n${String(m.output ?? "")}\n\`\`\``, m.timestamp));
        break;
      case "compactionSummary":
      case "branchSummary":
        out.push(user(`Summary of the earlier conversation:\n\n${String(m.summary ?? "")}`, m.timestamp));
        break;
    }
  }
  return out;
}

/** Pi's `createEventBus()`: channels with `emit(channel, data)` and `on(channel, handler)` → unsubscribe. */
export function createEventBus(): {
  emit(channel: string, data: unknown): void;
  on(channel: string, handler: (data: unknown) => void): () => void;
  clear(): void;
} {
  const handlers = new Map<string, Set<(data: unknown) => void>>();
  return {
    emit(channel, data) {
      for (const handler of [...(handlers.get(channel) ?? [])]) handler(data);
    },
    on(channel, handler) {
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      return () => void set.delete(handler);
    },
    clear: () => handlers.clear(),
  };
}

/** The values of pi-coding-agent that are helpers mypi implements (merged into the module). */
export function codingAgentHelpers(): Record<string, unknown> {
  return {
    withFileMutationQueue,
    parseFrontmatter,
    stripFrontmatter,
    convertToLlm,
    serializeConversation: (messages: readonly PiMessage[]) => serializeConversation(convertForSummary(messages)),
    createEventBus,
    estimateTokens: (message: PiMessage) =>
      estimateMessageTokens(convertForSummary([message])[0] ?? { role: "user", content: "", timestamp: 0 }),
    calculateContextTokens: (usage: {
      totalTokens?: number;
      input?: number;
      output?: number;
      cacheRead?: number;
      cacheWrite?: number;
    }) =>
      usage?.totalTokens ??
      (usage?.input ?? 0) + (usage?.output ?? 0) + (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0),
  };
}

/** Pi's messages as mypi's kernel reads them: its own kinds as user text, custom messages kept. */
function convertForSummary(messages: readonly PiMessage[]): Message[] {
  return (Array.isArray(messages) ? messages : []).flatMap((m) =>
    m?.role === "custom" ? [m as unknown as Message] : convertToLlm([m]),
  );
}
