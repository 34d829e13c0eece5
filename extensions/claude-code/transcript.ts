/**
 * The transcript a hook reads at `transcript_path`: the session's current branch in Claude Code's
 * JSONL shape (`type: "user" | "assistant"`, Anthropic message content with `tool_use` and
 * `tool_result` blocks under Claude Code's tool names, `uuid` / `parentUuid`), brought up to date
 * before every hook runs — appended when the branch grew, written again when it moved (a fork,
 * `/tree`, a compaction). It sits beside the session file (`<session>.claude.jsonl`, a name
 * `--continue` never picks), or in a temporary folder for a session that is not written to disk.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Content, Message, SessionEntry } from "@mypi/kernel";
import { redactDeep } from "../redact-secrets/index.ts";
import { claudeToolInput, claudeToolName, claudeToolResponse, type ToolContext } from "./tools.ts";

/** Beside the session file (`<name>.claude.jsonl`), or in a temporary folder for a session kept in memory. */
export function transcriptPath(sessionFile: string | undefined, sessionId: string): string {
  if (sessionFile !== undefined) return sessionFile.replace(/\.jsonl$/, "") + ".claude.jsonl";
  return join(tmpdir(), `mypi-claude-code-${process.getuid?.() ?? "user"}`, `${sessionId}.jsonl`);
}

interface TranscriptSource {
  sessionId: string;
  cwd: string;
  branch(): readonly SessionEntry[];
  /** A child agent's transcript (`agent_transcript_path`): its lines say `isSidechain: true` and carry its id. */
  agentId?: string;
}

export class Transcript {
  /** The entry ids written, in file order. */
  private written: string[] = [];
  /** The tool calls seen, by id: a tool result's `toolUseResult` needs its call's input. */
  private readonly calls = new Map<string, { name: string; input: Record<string, unknown> }>();

  constructor(
    readonly path: string,
    private readonly tools: ToolContext,
  ) {}

  /** Bring the file up to the session's branch now. Never throws: a hook still runs without it. */
  sync(source: TranscriptSource): void {
    try {
      const branch = source.branch();
      const grew = this.written.length <= branch.length && this.written.every((id, i) => branch[i]?.id === id);
      const fresh = grew ? branch.slice(this.written.length) : branch;
      if (!grew) this.written = [];
      let lines = "";
      let parent = this.written.at(-1) ?? null;
      for (const entry of fresh) {
        const line = this.line(entry, parent, source);
        this.written.push(entry.id);
        if (line === undefined) continue;
        // On disk beside the session: masked as the tracer masks what it writes.
        lines += `${JSON.stringify(redactDeep(line))}\n`;
        parent = entry.id;
      }
      mkdirSync(dirname(this.path), { recursive: true });
      if (!grew || this.written.length === fresh.length) writeFileSync(this.path, lines);
      else if (lines !== "") appendFileSync(this.path, lines);
    } catch {
      // A full disk or a vanished folder: the hook gets a transcript as current as it could be.
    }
  }

  private line(
    entry: SessionEntry,
    parentUuid: string | null,
    source: TranscriptSource,
  ): Record<string, unknown> | undefined {
    const base = {
      parentUuid,
      isSidechain: source.agentId !== undefined,
      ...(source.agentId !== undefined && { agentId: source.agentId }),
      userType: "external",
      cwd: source.cwd,
      sessionId: source.sessionId,
      version: "mypi",
      uuid: entry.id,
      timestamp: entry.timestamp,
    };
    if (entry.type === "compaction") {
      return { ...base, type: "user", isCompactSummary: true, message: { role: "user", content: entry.summary } };
    }
    if (entry.type !== "message") return undefined;
    return { ...base, ...this.message(entry.message) };
  }

  private message(m: Message): Record<string, unknown> {
    switch (m.role) {
      case "user":
        // A typed prompt is a plain string in Claude Code's transcripts (scripts read it as one).
        return {
          type: "user",
          message: {
            role: "user",
            content: typeof m.content === "string" ? m.content : (onlyText(m.content) ?? blocks(m.content)),
          },
        };
      case "custom":
        return {
          type: "user",
          isMeta: true,
          message: { role: "user", content: typeof m.content === "string" ? m.content : blocks(m.content) },
        };
      case "toolResult": {
        const call = this.calls.get(m.toolCallId);
        const input = call?.input ?? {};
        return {
          type: "user",
          message: {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: m.toolCallId, content: blocks(m.content), is_error: m.isError },
            ],
          },
          toolUseResult: m.isError
            ? `Error: ${m.content.map((c) => (c.type === "text" ? c.text : "")).join("")}`
            : claudeToolResponse(m.toolName, input, m.content, m.details, this.tools),
        };
      }
      case "assistant": {
        const content = m.content.map((block) => {
          if (block.type === "text") return { type: "text", text: block.text };
          if (block.type === "thinking") return { type: "thinking", thinking: block.thinking };
          this.calls.set(block.id, { name: block.name, input: block.arguments });
          return {
            type: "tool_use",
            id: block.id,
            name: claudeToolName(block.name, this.tools),
            input: claudeToolInput(block.name, block.arguments, this.tools),
          };
        });
        const stop = m.stopReason === "toolUse" ? "tool_use" : m.stopReason === "length" ? "max_tokens" : "end_turn";
        return {
          type: "assistant",
          message: {
            id: `msg_${m.timestamp}`,
            type: "message",
            role: "assistant",
            model: m.model,
            content,
            stop_reason: stop,
            stop_sequence: null,
            usage: { input_tokens: m.usage.input, output_tokens: m.usage.output },
          },
        };
      }
    }
  }
}

function onlyText(content: readonly Content[]): string | undefined {
  return content.length === 1 && content[0]!.type === "text" ? content[0]!.text : undefined;
}

function blocks(content: readonly Content[]): Record<string, unknown>[] {
  return content.map((c) =>
    c.type === "text"
      ? { type: "text", text: c.text }
      : { type: "image", source: { type: "base64", media_type: c.mimeType, data: c.data } },
  );
}
