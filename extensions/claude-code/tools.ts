/**
 * mypi's tools as Claude Code's hooks know them, both ways: names (`bash` ↔ `Bash`, `find` ↔
 * `Glob`, an MCP tool `docs__search` ↔ `mcp__docs__search`), inputs (absolute `file_path`,
 * `old_string`/`new_string`, milliseconds), `tool_response` in each tool's shape, and a hook's
 * `updatedInput` / `updatedToolOutput` mapped back. A tool mypi does not know keeps its name and
 * input as they are.
 */
import { isAbsolute, resolve } from "node:path";
import { isRecord, textOf, type Content } from "@mypi/kernel";

/** Claude Code's names of mypi's builtin tools. */
const CLAUDE_NAMES: Record<string, string> = {
  bash: "Bash",
  read: "Read",
  write: "Write",
  edit: "Edit",
  grep: "Grep",
  find: "Glob",
  ls: "LS",
};

export interface ToolContext {
  cwd: string;
  /** Which extension registered a tool (`mcp` for MCP tools); `undefined` when unknown. */
  sourceOf(name: string): string | undefined;
}

/** The name a hook sees (and its matcher is tested on). */
export function claudeToolName(name: string, ctx: ToolContext): string {
  if (Object.hasOwn(CLAUDE_NAMES, name) && ctx.sourceOf(name) === "builtin-tools") return CLAUDE_NAMES[name]!;
  // The subagents extension's tool is Claude Code's Agent tool: same parameters (description, prompt, subagent_type).
  if (name === "agent" && ctx.sourceOf(name) === "subagents") return "Agent";
  if (ctx.sourceOf(name) === "mcp") return `mcp__${name}`;
  return name;
}

/** What a tool event's matchers are tested on: Claude Code's name, mypi's, and `Task` (the Agent tool's former name, which older matchers use). */
export function matcherValues(claudeName: string, mypiName: string): string[] {
  return claudeName === "Agent" ? [claudeName, mypiName, "Task"] : [claudeName, mypiName];
}

const abs = (path: unknown, cwd: string): unknown =>
  typeof path === "string" ? (isAbsolute(path) ? path : resolve(cwd, path)) : path;

/** The input a hook sees: Claude Code's field names, paths absolute. */
export function claudeToolInput(
  name: string,
  input: Record<string, unknown>,
  ctx: ToolContext,
): Record<string, unknown> {
  switch (claudeToolName(name, ctx)) {
    case "Bash": {
      const out: Record<string, unknown> = { command: input.command };
      if (typeof input.timeout === "number") out.timeout = input.timeout * 1000;
      return out;
    }
    case "Read":
      return defined({ file_path: abs(input.path, ctx.cwd), offset: input.offset, limit: input.limit });
    case "Write":
      return { file_path: abs(input.path, ctx.cwd), content: input.content };
    case "Edit":
      return {
        file_path: abs(input.path, ctx.cwd),
        old_string: input.oldText,
        new_string: input.newText,
        replace_all: false,
      };
    case "Grep":
      return defined({
        pattern: input.pattern,
        path: input.path === undefined ? undefined : abs(input.path, ctx.cwd),
        glob: input.glob,
        output_mode: "content",
        "-i": input.ignoreCase,
        head_limit: input.limit,
      });
    case "Glob":
      return defined({ pattern: input.pattern, path: input.path === undefined ? undefined : abs(input.path, ctx.cwd) });
    case "LS":
      return { path: abs(input.path ?? ".", ctx.cwd) };
    default:
      return input;
  }
}

/**
 * A hook's `updatedInput` as mypi's tool takes it (the kernel validates it again); a string says
 * why it cannot be (a Claude Code field mypi's tool has no equivalent for).
 */
export function mypiToolInput(
  name: string,
  updated: Record<string, unknown>,
  original: Record<string, unknown>,
  ctx: ToolContext,
): Record<string, unknown> | string {
  const samePath = (claudePath: unknown): unknown =>
    claudePath === abs(original.path, ctx.cwd) ? original.path : claudePath;
  switch (claudeToolName(name, ctx)) {
    case "Bash": {
      if (updated.run_in_background === true) return "run_in_background is not supported by mypi's bash tool";
      const out: Record<string, unknown> = { command: updated.command };
      if (typeof updated.timeout === "number") out.timeout = Math.max(1, Math.ceil(updated.timeout / 1000));
      return out;
    }
    case "Read":
      return defined({ path: samePath(updated.file_path), offset: updated.offset, limit: updated.limit });
    case "Write":
      return { path: samePath(updated.file_path), content: updated.content };
    case "Edit":
      if (updated.replace_all === true)
        return "replace_all is not supported by mypi's edit tool (it replaces one occurrence)";
      return { path: samePath(updated.file_path), oldText: updated.old_string, newText: updated.new_string };
    case "Grep":
      return defined({
        pattern: updated.pattern,
        path: updated.path === undefined ? undefined : samePath(updated.path),
        glob: updated.glob,
        ignoreCase: updated["-i"],
        limit: updated.head_limit,
      });
    case "Glob":
      return defined({
        pattern: updated.pattern,
        path: updated.path === undefined ? undefined : samePath(updated.path),
      });
    case "LS":
      return { path: samePath(updated.path) };
    default:
      return updated;
  }
}

/** What a tool returned, in the shape Claude Code gives `tool_response` for that tool. */
export function claudeToolResponse(
  name: string,
  input: Record<string, unknown>,
  content: readonly Content[],
  details: unknown,
  ctx: ToolContext,
): unknown {
  const text = textOf(content as Content[]);
  const d = isRecord(details) ? details : {};
  const path = abs(input.path, ctx.cwd);
  switch (claudeToolName(name, ctx)) {
    case "Bash":
      return { stdout: text, stderr: "", interrupted: false, isImage: false };
    case "Read":
      return {
        type: "text",
        file: {
          filePath: path,
          content: text,
          numLines: text === "" ? 0 : text.split("\n").length,
          startLine: d.startLine ?? 1,
          totalLines: d.totalLines ?? 0,
        },
      };
    case "Write":
      return {
        type: d.created === true ? "create" : "update",
        filePath: path,
        content: input.content,
        success: true,
        structuredPatch: [],
        originalFile: null,
      };
    case "Edit":
      return {
        filePath: path,
        oldString: input.oldText,
        newString: input.newText,
        replaceAll: false,
        userModified: false,
        structuredPatch: [],
        originalFile: null,
      };
    case "Grep":
      return {
        mode: "content",
        content: text,
        numLines: text === "" ? 0 : text.split("\n").length,
        numFiles: 0,
        filenames: [],
      };
    case "Glob": {
      const filenames = text === "" ? [] : text.split("\n").filter((l) => l !== "" && !l.startsWith("["));
      return {
        filenames,
        numFiles: filenames.length,
        truncated: /\[.*(more|cut|limit).*\]/i.test(text),
        durationMs: 0,
      };
    }
    case "LS":
      return text;
    default:
      return content.length === 1 && content[0]!.type === "text" && ctx.sourceOf(name) !== "mcp" ? text : content;
  }
}

/**
 * A hook's `updatedToolOutput` as the content the model reads; a string says why it does not
 * fit the tool's output shape (the original is then kept, as Claude Code keeps it).
 */
export function mypiToolOutput(name: string, value: unknown, ctx: ToolContext): Content[] | string {
  if (typeof value === "string") return [{ type: "text", text: value }];
  if (Array.isArray(value) && value.every(isContentBlock)) return value as Content[];
  if (isRecord(value)) {
    const claude = claudeToolName(name, ctx);
    if (claude === "Bash" && typeof value.stdout === "string") {
      const stderr = typeof value.stderr === "string" && value.stderr !== "" ? `\n${value.stderr}` : "";
      return [{ type: "text", text: `${value.stdout}${stderr}` }];
    }
    if (isRecord(value.file) && typeof value.file.content === "string")
      return [{ type: "text", text: value.file.content }];
    if (typeof value.content === "string") return [{ type: "text", text: value.content }];
    if (Array.isArray(value.content) && value.content.every(isContentBlock)) return value.content as Content[];
    if (claude === name || claude.startsWith("mcp__")) return [{ type: "text", text: JSON.stringify(value) }];
  }
  return `it does not match the output of ${claudeToolName(name, ctx)}`;
}

function isContentBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  if (block.type === "text") return typeof block.text === "string";
  return block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string";
}

function defined(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(object)) if (v !== undefined) out[k] = v;
  return out;
}
