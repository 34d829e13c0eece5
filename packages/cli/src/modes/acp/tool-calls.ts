/**
 * How a mypi tool call looks to an ACP client: its kind (the icon), title, the files it touches
 * (`locations`, so the editor can follow along), its content — the result's text and images,
 * and for `write` / `edit` a diff — and the raw input and output.
 *
 * The builtin tools are known by name; any other tool (an extension's, an MCP server's
 * `server__tool`) gets its kind from words in its name, else `other`, and its name as title.
 */
import { errnoCode } from "@mypi/kernel";
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { ToolResult } from "@mypi/kernel";

/** Files larger than this are not read to show a diff (the editor would not want the whole of them either). */
const MAX_DIFF_BYTES = 256 * 1024;

const BUILTIN_KINDS: Record<string, ToolKind> = {
  read: "read",
  ls: "read",
  write: "edit",
  edit: "edit",
  bash: "execute",
  grep: "search",
  find: "search",
};

/** Words in an extension's tool name that say what it does, first match wins. */
const NAME_KINDS: [RegExp, ToolKind][] = [
  [/(^|[_-])(delete|remove|rm|unlink)([_-]|$)/i, "delete"],
  [/(^|[_-])(move|rename|mv)([_-]|$)/i, "move"],
  [/fetch|http|web|url|download|browse/i, "fetch"],
  [/search|grep|find|glob|query/i, "search"],
  [/think|plan|todo/i, "think"],
  [/(^|[_-])(read|get|list|view|cat|open)([_-]|$)/i, "read"],
  [/(^|[_-])(write|edit|patch|replace|create|update)([_-]|$)/i, "edit"],
  [/exec|run|shell|bash|command|terminal/i, "execute"],
];

export function toolKind(name: string): ToolKind {
  if (Object.hasOwn(BUILTIN_KINDS, name)) return BUILTIN_KINDS[name]!;
  // An MCP tool is `server__tool`: its own name says what it does.
  const own = name.includes("__") ? name.slice(name.lastIndexOf("__") + 2) : name;
  return NAME_KINDS.find(([pattern]) => pattern.test(own))?.[1] ?? "other";
}

type Args = Record<string, unknown>;

const str = (args: Args, key: string): string | undefined =>
  typeof args[key] === "string" ? (args[key] as string) : undefined;
const num = (args: Args, key: string): number | undefined =>
  typeof args[key] === "number" ? (args[key] as number) : undefined;

function argsOf(input: unknown): Args {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Args) : {};
}

/** One line, at most 80 characters. */
function short(text: string): string {
  const line = text.split("\n")[0]!.trim();
  const cut = line.length > 80 ? `${line.slice(0, 79)}…` : line;
  return text.includes("\n") ? `${cut} …` : cut;
}

export function toolTitle(name: string, input: unknown): string {
  const args = argsOf(input);
  const path = str(args, "path");
  switch (name) {
    case "read": {
      const offset = num(args, "offset");
      const limit = num(args, "limit");
      const lines =
        offset !== undefined || limit !== undefined
          ? ` (lines ${offset ?? 1}${limit !== undefined ? `-${(offset ?? 1) + limit - 1}` : "-"})`
          : "";
      return `Read ${path ?? "?"}${lines}`;
    }
    case "write":
      return `Write ${path ?? "?"}`;
    case "edit":
      return `Edit ${path ?? "?"}`;
    case "ls":
      return `List ${path ?? "."}`;
    case "bash":
      return `Run \`${short(str(args, "command") ?? "")}\``;
    case "grep":
      return `Search for ${JSON.stringify(str(args, "pattern") ?? "")} in ${path ?? "."}`;
    case "find":
      return `Find ${str(args, "pattern") ?? "?"} in ${path ?? "."}`;
    default:
      return name;
  }
}

/** The files a call reads or changes, absolute (`path` arguments, which every builtin file tool takes). */
export function toolLocations(name: string, input: unknown, cwd: string): ToolCallLocation[] {
  const args = argsOf(input);
  const path = str(args, "path");
  if (path === undefined || path === "") return [];
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  const line = name === "read" ? num(args, "offset") : undefined;
  return [{ path: abs, ...(line !== undefined && { line }) }];
}

/** The absolute path a `write` or `edit` changes; undefined for other tools. */
export function changedFile(name: string, input: unknown, cwd: string): string | undefined {
  if (name !== "write" && name !== "edit") return undefined;
  const path = str(argsOf(input), "path");
  return path === undefined ? undefined : isAbsolute(path) ? path : resolve(cwd, path);
}

/** A text file's content as it is now: null when it does not exist, undefined when it cannot be shown (too large, unreadable). */
export function fileText(abs: string): string | null | undefined {
  try {
    const info = statSync(abs);
    if (!info.isFile() || info.size > MAX_DIFF_BYTES) return undefined;
    return readFileSync(abs, "utf8");
  } catch (error) {
    return errnoCode(error) === "ENOENT" ? null : undefined;
  }
}

/**
 * What a pending `write` or `edit` is about to change, for the client to show before it runs
 * (and while it asks permission): the whole new file of a write, the replaced text of an edit.
 */
export function proposedDiff(name: string, input: unknown, cwd: string): ToolCallContent[] {
  const path = changedFile(name, input, cwd);
  if (path === undefined) return [];
  const args = argsOf(input);
  if (name === "write") {
    const newText = str(args, "content");
    const oldText = fileText(path);
    return newText === undefined || oldText === undefined ? [] : [{ type: "diff", path, oldText, newText }];
  }
  const oldText = str(args, "oldText");
  const newText = str(args, "newText");
  return oldText === undefined || newText === undefined ? [] : [{ type: "diff", path, oldText, newText }];
}

/** A result's text and images as tool call content. */
export function resultContent(result: Pick<ToolResult, "content"> | undefined): ToolCallContent[] {
  const content = Array.isArray(result?.content) ? result.content : [];
  return content.flatMap((block): ToolCallContent[] => {
    if (block.type === "text")
      return block.text === "" ? [] : [{ type: "content", content: { type: "text", text: block.text } }];
    if (block.type === "image")
      return [{ type: "content", content: { type: "image", data: block.data, mimeType: block.mimeType } }];
    return [];
  });
}

/** A result as `rawOutput`: what the model read, and the details it never sees. */
export function rawOutput(result: ToolResult | undefined): unknown {
  if (!result) return undefined;
  const text = result.content
    .flatMap((block) => (block.type === "text" ? [block.text] : [`[${block.type}]`]))
    .join("\n");
  return { output: text, ...(result.details !== undefined && { details: result.details }) };
}
