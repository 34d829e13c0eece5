/**
 * Claude Code's transcripts (`~/.claude/projects/<dir>/<session>.jsonl`) as a recording. Each
 * line is an event of a tree (`uuid`, `parentUuid`): `user` lines carry a person's text or, as
 * `tool_result` blocks, the answers to calls; `assistant` lines carry the model's text, thinking
 * and `tool_use` blocks — one API answer is often written as several lines with the same
 * `message.id`, which become one answer again here. Other lines (summaries, snapshots, progress,
 * system events) are no part of a conversation. Lines of a subagent (`isSidechain`) form their
 * own branch.
 *
 * Claude Code's tools are mapped onto mypi's builtin ones, their inputs onto mypi's parameter
 * names (`tools.ts` of each builtin): what has no counterpart is named in the notes, never guessed.
 * A tool without a mypi counterpart (WebFetch, Task, an MCP tool …) keeps its name in the history,
 * its calls are not asked about (no `tool_call` step), and its results still pass `tool_result`:
 * a redaction policy cares what any tool brought in.
 *
 * Claude Code records no verdicts; a call it did not run says so in its result (`BLOCKED_TEXTS`).
 */
import type { AssistantMessage, Content, Message, StopReason, ToolCall } from "@mypi/kernel";
import { NoteCounter, readJsonLines, SessionBuilder } from "./builder.ts";
import { emptyRecording, type Recording, type RecordedBlock } from "./recording.ts";

type Input = Record<string, unknown>;
type Mapped = { name: string; input: Input; dropped: string[] } | { unmappable: string };

/** Copy `from[key]` to `to[as]` when present. */
function take(from: Input, to: Input, key: string, as = key): void {
  if (from[key] !== undefined) to[as] = from[key];
}

/** The keys of `input` a mapping did not use (and that matter to what the call does). */
function rest(input: Input, used: readonly string[]): string[] {
  return Object.keys(input).filter((k) => !used.includes(k));
}

/** Claude Code's tool → mypi's, with its input renamed. */
export const CLAUDE_CODE_TOOLS: Readonly<Record<string, (input: Input) => Mapped>> = {
  Bash: (input) => {
    const out: Input = {};
    take(input, out, "command");
    // Claude Code's timeout is in milliseconds, mypi's in seconds.
    if (typeof input.timeout === "number") out.timeout = Math.ceil(input.timeout / 1000);
    // `description` is a note for the person watching, not part of what runs.
    return { name: "bash", input: out, dropped: rest(input, ["command", "timeout", "description"]) };
  },
  Read: (input) => {
    const out: Input = {};
    take(input, out, "file_path", "path");
    take(input, out, "offset");
    take(input, out, "limit");
    return { name: "read", input: out, dropped: rest(input, ["file_path", "offset", "limit"]) };
  },
  Write: (input) => {
    const out: Input = {};
    take(input, out, "file_path", "path");
    take(input, out, "content");
    return { name: "write", input: out, dropped: rest(input, ["file_path", "content"]) };
  },
  Edit: (input) => {
    const out: Input = {};
    take(input, out, "file_path", "path");
    take(input, out, "old_string", "oldText");
    take(input, out, "new_string", "newText");
    // mypi's edit replaces one unique occurrence; replace_all: false says the same.
    return {
      name: "edit",
      input: out,
      dropped: rest(input, [
        "file_path",
        "old_string",
        "new_string",
        ...(input.replace_all === true ? [] : ["replace_all"]),
      ]),
    };
  },
  MultiEdit: (input) => {
    const edits = Array.isArray(input.edits) ? (input.edits as Input[]) : [];
    if (edits.length !== 1)
      return { unmappable: `MultiEdit with ${edits.length} edits (mypi's edit makes one replacement per call)` };
    return CLAUDE_CODE_TOOLS.Edit!({ file_path: input.file_path, ...edits[0] });
  },
  Grep: (input) => {
    const out: Input = {};
    take(input, out, "pattern");
    take(input, out, "path");
    take(input, out, "glob");
    take(input, out, "-i", "ignoreCase");
    take(input, out, "head_limit", "limit");
    // output_mode "content" is what mypi's grep prints; the others change only the output's shape.
    return {
      name: "grep",
      input: out,
      dropped: rest(input, [
        "pattern",
        "path",
        "glob",
        "-i",
        "head_limit",
        ...(input.output_mode === "content" ? ["output_mode"] : []),
      ]),
    };
  },
  Glob: (input) => {
    const out: Input = {};
    take(input, out, "pattern");
    take(input, out, "path");
    return { name: "find", input: out, dropped: rest(input, ["pattern", "path"]) };
  },
  LS: (input) => {
    const out: Input = {};
    take(input, out, "path");
    return { name: "ls", input: out, dropped: rest(input, ["path"]) };
  },
};

/**
 * Results that say the call did not run because of a decision (not a failure of the tool):
 * the person declined it, or nobody was there to allow it, or a deny rule refused it.
 */
const BLOCKED_TEXTS: readonly { test: RegExp; ask: boolean }[] = [
  { test: /^The user doesn't want to proceed with this tool use/, ask: true },
  { test: /^Claude requested permissions to use .+, but you haven't granted it yet/, ask: true },
  { test: /^Permission to use \S+ has been denied/, ask: false },
];
/** Results given before the call was judged: no such tool, input that did not validate. */
const NEVER_JUDGED = /^<tool_use_error>(?:InputValidationError|Error: No such tool available)/;

const STOP_REASONS: Record<string, StopReason> = {
  tool_use: "toolUse",
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  refusal: "stop",
  pause_turn: "stop",
};

interface Line {
  line: number;
  value: Record<string, unknown>;
}

export function readClaudeCodeTranscript(file: string): Recording {
  const notes: string[] = [];
  const lines = readJsonLines(file, notes);
  const first = lines.find((l) => typeof l.value.cwd === "string")?.value;
  const cwd = first?.cwd as string | undefined;
  const builder = new SessionBuilder(cwd ?? process.cwd());
  const recording = emptyRecording(file, "claude-code", builder.session, cwd);
  const sessionId = lines.find((l) => typeof l.value.sessionId === "string")?.value.sessionId;
  if (typeof sessionId === "string") recording.id = sessionId;
  recording.notes.push(...notes);
  const counted = new NoteCounter();
  /** tool_use id → the name the call has in the history (mypi's, or Claude Code's when unmapped). */
  const callNames = new Map<string, string>();
  /** tool_use ids whose calls could not be mapped. */
  const unmapped = new Set<string>();

  // One API answer may be spread over consecutive lines sharing `message.id`: gathered, then appended once.
  let group: { lines: Line[]; message: Record<string, unknown> } | undefined;
  let waiting: [string, string | null][] = [];
  const flush = () => {
    if (group) appendAssistant(group.lines);
    group = undefined;
    for (const [id, parent] of waiting) builder.skip(id, parent);
    waiting = [];
  };

  const appendAssistant = (group: Line[]) => {
    const head = group[0]!.value;
    const last = group.at(-1)!.value;
    const message = last.message as Record<string, unknown>;
    const content: AssistantMessage["content"] = [];
    for (const l of group)
      for (const block of blocksOf((l.value.message as Record<string, unknown>).content)) {
        const b = block as Record<string, unknown>;
        if (b.type === "text" && typeof b.text === "string") content.push({ type: "text", text: b.text });
        else if (b.type === "thinking" && typeof b.thinking === "string")
          content.push({ type: "thinking", thinking: b.thinking });
        else if (b.type === "tool_use") content.push(toolCall(b));
        else counted.add(`assistant blocks of type ${JSON.stringify(b.type)}: left out of the history`);
      }
    const usage = (message.usage ?? {}) as Record<string, unknown>;
    const stopReason = typeof message.stop_reason === "string" ? STOP_REASONS[message.stop_reason] : undefined;
    const answer: AssistantMessage = {
      role: "assistant",
      content,
      stopReason:
        last.isApiErrorMessage === true
          ? "error"
          : (stopReason ?? (content.some((c) => c.type === "toolCall") ? "toolUse" : "stop")),
      usage: {
        input: num(usage.input_tokens),
        output: num(usage.output_tokens),
        cacheRead: num(usage.cache_read_input_tokens),
        cacheWrite: num(usage.cache_creation_input_tokens),
      },
      model: typeof message.model === "string" ? message.model : "claude-code",
      timestamp: time(last.timestamp),
    };
    const made = builder.message(String(head.uuid), parentOf(head), answer);
    if ("problem" in made) recording.notes.push(`${file}:${group[0]!.line}: ${made.problem}, skipped`);
    // Every line of the answer stands for the one entry: later lines name any of them as parent.
    for (const l of group.slice(1)) builder.skip(String(l.value.uuid), String(head.uuid));
  };

  const toolCall = (b: Record<string, unknown>): ToolCall => {
    const id = String(b.id);
    const name = String(b.name);
    const input = (typeof b.input === "object" && b.input !== null ? b.input : {}) as Input;
    const map = CLAUDE_CODE_TOOLS[name];
    const mapped: Mapped = map ? map(input) : { unmappable: `${name}: no mypi tool does what it does` };
    if ("unmappable" in mapped) {
      unmapped.add(id);
      callNames.set(id, name);
      counted.add(
        `${mapped.unmappable}; its calls are not replayed through tool_call (their results are, through tool_result)`,
      );
      return { type: "toolCall", id, name, arguments: input };
    }
    for (const key of mapped.dropped)
      counted.add(`${name}: "${key}" has no counterpart in mypi's ${mapped.name} and was left out`);
    callNames.set(id, mapped.name);
    return { type: "toolCall", id, name: mapped.name, arguments: mapped.input };
  };

  const appendUser = ({ line, value }: Line) => {
    const message = value.message as Record<string, unknown>;
    const uuid = String(value.uuid);
    let parent = parentOf(value);
    const content = message.content;
    if (value.isMeta === true) {
      builder.skip(uuid, parent);
      counted.add("notes Claude Code added to the conversation (isMeta): not replayed");
      return;
    }
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : blocksOf(content);
    const results = blocks.filter((b) => (b as Record<string, unknown>).type === "tool_result") as Record<
      string,
      unknown
    >[];
    const person = blocks.filter((b) => (b as Record<string, unknown>).type !== "tool_result");
    let last: string | undefined;
    for (const r of results) {
      const made = builder.message(
        uuid,
        parent,
        toolResult(r, results.length === 1 ? value.toolUseResult : undefined, value.timestamp),
      );
      if ("problem" in made) {
        recording.notes.push(`${file}:${line}: ${made.problem}, skipped`);
        continue;
      }
      last = made.entryId;
      parent = uuid; // the next block's result follows this one
      const useId = String(r.tool_use_id);
      if (unmapped.has(useId)) recording.unjudged.add(made.entryId);
      const text = textOfBlocks(r.content);
      const block = r.is_error === true ? blockedBy(text) : undefined;
      if (block) recording.blocked.set(made.entryId, block);
      else if (r.is_error === true && NEVER_JUDGED.test(text)) recording.unjudged.add(made.entryId);
    }
    if (person.length === 0) return;
    const userContent: Content[] = [];
    for (const b of person as Record<string, unknown>[]) {
      if (b.type === "text" && typeof b.text === "string") userContent.push({ type: "text", text: b.text });
      else if (b.type === "image") {
        const image = imageOf(b);
        if (image) userContent.push(image);
      }
    }
    const made = builder.message(uuid, parent, {
      role: "user",
      content: userContent,
      timestamp: time(value.timestamp),
    });
    if ("problem" in made) {
      recording.notes.push(`${file}:${line}: ${made.problem}, skipped`);
      return;
    }
    last = made.entryId;
    const text = userContent.map((c) => (c.type === "text" ? c.text : "")).join("");
    // A summary of the conversation before a compaction, a local command's output, an interruption mark: no person typed them.
    if (value.isCompactSummary === true || /^<local-command-stdout>|^\[Request interrupted by user/.test(text))
      recording.notInput.add(last);
  };

  const toolResult = (r: Record<string, unknown>, details: unknown, timestamp: unknown): Message => {
    const useId = String(r.tool_use_id);
    const content: Content[] =
      typeof r.content === "string"
        ? [{ type: "text", text: r.content }]
        : blocksOf(r.content).flatMap((b): Content[] => {
            const block = b as Record<string, unknown>;
            if (block.type === "text" && typeof block.text === "string") return [{ type: "text", text: block.text }];
            const image = block.type === "image" ? imageOf(block) : undefined;
            return image ? [image] : [];
          });
    return {
      role: "toolResult",
      toolCallId: useId,
      toolName: callNames.get(useId) ?? "unknown",
      content,
      isError: r.is_error === true,
      ...(details !== undefined && { details }),
      timestamp: time(timestamp),
    };
  };

  for (const l of lines) {
    const v = l.value;
    const uuid = typeof v.uuid === "string" ? v.uuid : undefined;
    if (v.type === "assistant" && uuid !== undefined && typeof v.message === "object" && v.message !== null) {
      const messageId = (v.message as Record<string, unknown>).id;
      if (group && messageId !== undefined && (group.message as Record<string, unknown>).id === messageId) {
        group.lines.push(l);
        continue;
      }
      flush();
      group = { lines: [l], message: v.message as Record<string, unknown> };
      continue;
    }
    if (v.type === "user" && uuid !== undefined && typeof v.message === "object" && v.message !== null) {
      flush();
      appendUser(l);
      continue;
    }
    // Not a conversation line: its children hang under its parent (once an answer in progress is appended).
    if (uuid !== undefined) waiting.push([uuid, parentOf(v)]);
    if (!group) flush();
  }
  flush();
  if (lines.some((l) => l.value.isSidechain === true))
    counted.add("a subagent's conversation (isSidechain) is replayed as a branch of its own");
  counted.flush(recording.notes);
  return recording;
}

function blockedBy(text: string): RecordedBlock | undefined {
  const hit = BLOCKED_TEXTS.find((b) => b.test.test(text));
  return hit ? { by: "claude-code", reason: text, ...(hit.ask && { ask: true }) } : undefined;
}

function parentOf(value: Record<string, unknown>): string | null {
  return typeof value.parentUuid === "string" ? value.parentUuid : null;
}

function blocksOf(content: unknown): unknown[] {
  return Array.isArray(content) ? content.filter((b) => typeof b === "object" && b !== null) : [];
}

function textOfBlocks(content: unknown): string {
  if (typeof content === "string") return content;
  return blocksOf(content)
    .map((b) => ((b as Record<string, unknown>).type === "text" ? String((b as Record<string, unknown>).text) : ""))
    .join("");
}

/** Anthropic's `{type: "image", source: {type: "base64", media_type, data}}` as mypi's image block. */
function imageOf(block: Record<string, unknown>): Content | undefined {
  const source = block.source as Record<string, unknown> | undefined;
  if (source?.type !== "base64" || typeof source.data !== "string" || typeof source.media_type !== "string")
    return undefined;
  return { type: "image", data: source.data, mimeType: source.media_type };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function time(value: unknown): number {
  return typeof value === "string" ? Date.parse(value) || 0 : typeof value === "number" ? value : 0;
}
