/**
 * MCP prompts as slash commands: the prompt `review` of the server `docs` is `/docs:review`.
 * Arguments are given in the prompt's order (`/docs:review README.md security`) or by name
 * (`focus=security`), quoted when they hold spaces (`"two words"`, `key="two words"`). The
 * command asks the server for the prompt (`prompts/get`) and sends its messages as the user's
 * next message (`sendUserMessage`: it goes through the `input` slot like anything typed).
 */
import type { CommandContext, ExtensionAPI } from "@mypi/extension-api";
import { type Content, errorMessage, isRecord } from "@mypi/kernel";
import type { McpConnection } from "./connection.ts";
import { toToolResult } from "./convert.ts";
import { listPages } from "./paging.ts";

export interface McpPromptInfo {
  name: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** A server's prompts, read item by item (one without a name is skipped); [] when it has none or the listing fails. */
export async function listPrompts(server: McpConnection): Promise<{ prompts: McpPromptInfo[]; notes: string[] }> {
  if (server.state !== "connected" || !isRecord(server.capabilities?.prompts)) return { prompts: [], notes: [] };
  try {
    const timeoutMs = server.config.connectTimeoutMs;
    const page = (cursor: string | undefined) =>
      server.request("prompts/list", cursor !== undefined ? { cursor } : undefined, { timeoutMs });
    const { items, notes } = await listPages(page, "prompts/list", "prompts");
    const prompts: McpPromptInfo[] = [];
    for (const item of items) {
      if (!isRecord(item) || typeof item.name !== "string" || item.name === "") continue;
      const args = Array.isArray(item.arguments)
        ? item.arguments.filter(isRecord).filter((a) => typeof a.name === "string" && a.name !== "")
        : [];
      prompts.push({
        name: item.name,
        ...(typeof item.description === "string" && item.description !== "" && { description: item.description }),
        arguments: args.map((a) => ({
          name: a.name as string,
          required: a.required === true,
          ...(typeof a.description === "string" && { description: a.description }),
        })),
      });
    }
    return { prompts, notes };
  } catch (error) {
    return { prompts: [], notes: [`prompts/list failed: ${server.describeCallError(error)}`] };
  }
}

/** `docs:review`: the command name, its characters fitted to what a command name may hold. */
export function promptCommandName(server: string, prompt: string): string {
  const name = `${server}:${prompt}`.replace(/[^a-zA-Z0-9_:.-]/g, "_");
  return /^[a-zA-Z0-9]/.test(name) ? name : `mcp${name}`;
}

/** `file [focus]`: the arguments as `/help` shows them (optional ones in brackets). */
export function argumentHint(prompt: McpPromptInfo): string {
  return prompt.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(" ");
}

/**
 * The typed arguments mapped onto the prompt's: `key=value` by name (a known name only), the
 * others in order onto the arguments not named. Errors say what to type instead.
 */
export function mapArguments(
  prompt: McpPromptInfo,
  typed: string,
): { ok: true; args: Record<string, string> } | { ok: false; message: string } {
  const words = splitWords(typed);
  if (!words.ok) return words;
  const known = new Set(prompt.arguments.map((a) => a.name));
  const args: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of words.words) {
    const named = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(word.text);
    if (named && !word.quoted && known.has(named[1]!)) args[named[1]!] = named[2]!;
    else positional.push(word.text);
  }
  const open = prompt.arguments.filter((a) => !(a.name in args));
  if (positional.length > open.length) {
    return {
      ok: false,
      message: `too many arguments: ${positional.length} given in order, but only ${open.map((a) => a.name).join(", ") || "none"} ${open.length === 1 ? "is" : "are"} left to fill`,
    };
  }
  for (const [i, value] of positional.entries()) args[open[i]!.name] = value;
  const missing = prompt.arguments.filter((a) => a.required && !(a.name in args)).map((a) => a.name);
  if (missing.length) return { ok: false, message: `missing ${missing.join(", ")}` };
  return { ok: true, args };
}

/** Words split on spaces; `"…"` and `'…'` keep spaces (also after `key=`); `\` escapes the next character. */
function splitWords(
  text: string,
): { ok: true; words: { text: string; quoted: boolean }[] } | { ok: false; message: string } {
  const words: { text: string; quoted: boolean }[] = [];
  let current: string | undefined;
  let quoted = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\" && i + 1 < text.length) {
      current = (current ?? "") + text[++i];
    } else if (quote) {
      if (ch === quote) quote = undefined;
      else current = (current ?? "") + ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      // A quote at the start of a word makes it positional even if it looks like key=value.
      if (current === undefined) quoted = true;
      current ??= "";
    } else if (/\s/.test(ch)) {
      if (current !== undefined) words.push({ text: current, quoted });
      current = undefined;
      quoted = false;
    } else current = (current ?? "") + ch;
  }
  if (quote) return { ok: false, message: `a quote (${quote}) is not closed` };
  if (current !== undefined) words.push({ text: current, quoted });
  return { ok: true, words };
}

/**
 * A `prompts/get` answer as one user message: each message's content converted like a tool
 * result (text, images, embedded resources as text). With more than one message, each is headed
 * by its role, so the model sees the conversation the server wrote.
 */
export function promptContent(server: string, prompt: string, answer: Record<string, unknown>): Content[] {
  const messages = Array.isArray(answer.messages) ? answer.messages.filter(isRecord) : [];
  const several = messages.length > 1;
  const content: Content[] = [];
  for (const m of messages) {
    const converted = toToolResult({ content: [m.content] }, { server, tool: prompt }).content;
    const role = typeof m.role === "string" ? m.role : "user";
    if (several) content.push({ type: "text", text: `[${role}]` });
    content.push(...converted);
  }
  // Adjacent texts become one, so the message reads as written.
  const merged: Content[] = [];
  for (const c of content) {
    const last = merged[merged.length - 1];
    if (c.type === "text" && last?.type === "text")
      merged[merged.length - 1] = { type: "text", text: `${last.text}\n\n${c.text}` };
    else merged.push(c);
  }
  return merged;
}

interface PromptCommandOptions {
  pi: Pick<ExtensionAPI, "registerCommand" | "sendUserMessage">;
  server: McpConnection;
  prompts: readonly McpPromptInfo[];
  /** The server as it is when the command runs (it may have been restarted or removed). */
  lookup: () => McpConnection | undefined;
  /** Where a command's complaint goes without a UI (print and JSON modes: stderr). */
  log: (line: string) => void;
}

/** Register a server's prompts as commands. Returns the names registered and what could not be. */
export function registerPrompts({ pi, server, prompts, lookup, log }: PromptCommandOptions): {
  commands: string[];
  problems: string[];
} {
  const commands: string[] = [];
  const problems: string[] = [];
  for (const prompt of prompts) {
    const name = promptCommandName(server.name, prompt.name);
    const hint = argumentHint(prompt);
    const description = `${prompt.description ?? `Prompt "${prompt.name}" of the MCP server "${server.name}"`}${hint ? ` — /${name} ${hint}` : ""}`;
    try {
      pi.registerCommand(name, {
        description,
        handler: (args, ctx) => {
          const say = (message: string, type: "error" | "warning") =>
            ctx.hasUI ? ctx.ui.notify(`/${name}: ${message}`, type) : log(`mypi: /${name}: ${message}`);
          return runPrompt({ pi, lookup, prompt, name, typed: args, ctx, say });
        },
      });
      commands.push(name);
    } catch (error) {
      problems.push(`prompt ${JSON.stringify(prompt.name)} is not a command: ${errorMessage(error)}`);
    }
  }
  return { commands, problems };
}

interface PromptRun {
  pi: Pick<ExtensionAPI, "sendUserMessage">;
  lookup: () => McpConnection | undefined;
  prompt: McpPromptInfo;
  name: string;
  typed: string;
  ctx: CommandContext;
  say: (message: string, type: "error" | "warning") => void;
}

async function runPrompt({ pi, lookup, prompt, name, typed, ctx, say }: PromptRun): Promise<void> {
  const server = lookup();
  if (server?.state !== "connected") {
    return say(
      `the MCP server is not available (${server ? `it is ${server.state}${server.error ? `: ${server.error}` : ""}` : "it was removed"}).`,
      "error",
    );
  }
  const mapped = mapArguments(prompt, typed);
  if (!mapped.ok)
    return say(`${mapped.message}. Usage: /${name} ${argumentHint(prompt)} (in order, or name=value)`, "error");
  let answer: Record<string, unknown>;
  try {
    answer = await server.request(
      "prompts/get",
      { name: prompt.name, arguments: mapped.args },
      { signal: ctx.signal, timeoutMs: server.config.timeoutMs },
    );
  } catch (error) {
    if (ctx.signal.aborted) return;
    return say(
      `the MCP server "${server.name}" could not give the prompt: ${server.describeCallError(error)}`,
      "error",
    );
  }
  const content = promptContent(server.name, prompt.name, answer);
  if (content.length === 0) return say(`the MCP server "${server.name}" sent an empty prompt.`, "warning");
  pi.sendUserMessage(content);
}
