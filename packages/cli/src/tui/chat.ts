/**
 * The conversation on screen, built from the event stream: the user's lines, the model's text as
 * markdown (wrapped at word boundaries, code blocks highlighted), its thinking dimmed, one
 * `ToolBlock` per tool call, and notices (aborted, blocked, errors, compaction, extension
 * failures). A custom message a Pi extension registered a renderer for is drawn by it.
 *
 * The blocks are pi-tui components in one `Container`: the TUI diffs the whole frame, so a block
 * that changes (streamed text, a tool's end) rewrites only its own lines.
 */
import { Container, Markdown, Text, type Component, type MarkdownTheme } from "@mariozechner/pi-tui";
import type { AgentEndEvent, ToolResult } from "@mypi/kernel";
import { childEventOf, type ExtensionStreamEvent } from "@mypi/extension-api";
import { formatCount, summarizeProgress, textOf } from "../render/renderer.ts";
import { oneLine, printable, printableLines } from "../render/text.ts";
import type { Palette } from "./theme.ts";
import { LiveTools, ToolBlock, type ToolRenderers } from "./tool-block.ts";

/** The most status lines of child agents shown under one running call. */
const MAX_CHILD_LINES = 8;

interface ChatOptions {
  p: Palette;
  markdown: MarkdownTheme;
  /** A Pi tool's own renderers, when it has them. */
  toolRenderers?: (toolName: string, toolCallId: string) => ToolRenderers | undefined;
  /** A Pi extension's renderer for custom messages of `customType`. */
  messageRenderer?: (
    message: { customType: string; content: unknown; display?: boolean; details?: unknown },
    expanded: boolean,
  ) => Component | undefined;
}

/** One assistant message: its thinking, then its text. */
class AssistantBlock extends Container {
  #thinking = "";
  #text = "";
  readonly #thinkingView: Text;
  readonly #textView: Markdown;

  constructor(
    private readonly p: Palette,
    markdown: MarkdownTheme,
  ) {
    super();
    this.#thinkingView = new Text("", 0, 0);
    this.#textView = new Markdown("", 0, 0, markdown);
    this.addChild(this.#thinkingView);
    this.addChild(this.#textView);
  }

  get empty(): boolean {
    return this.#thinking === "" && this.#text === "";
  }

  append(kind: "text" | "thinking", delta: string): void {
    if (kind === "thinking") {
      this.#thinking += delta;
      this.#thinkingView.setText(this.p.italic(this.p.gray(`✻ ${this.#thinking.trim()}`)));
    } else {
      this.#text += delta;
      this.#textView.setText(this.#text.trim());
    }
  }
}

export class Chat extends Container {
  #expanded = false;
  #current: AssistantBlock | undefined;
  readonly #tools = new Map<string, ToolBlock>();
  readonly live: LiveTools;

  constructor(private readonly options: ChatOptions) {
    super();
    this.live = new LiveTools(() => [...this.#tools.values()].filter((t) => !t.done), options.p);
  }

  get expanded(): boolean {
    return this.#expanded;
  }

  /** Expand or collapse every tool block's output. */
  setExpanded(expanded: boolean): void {
    this.#expanded = expanded;
    this.invalidate();
  }

  get runningTools(): number {
    return [...this.#tools.values()].filter((t) => !t.done).length;
  }

  /** A line of our own (already styled; text from elsewhere goes through `printable` first). */
  say(text: string): void {
    this.#current = undefined;
    this.addChild(new Text(text, 0, 0));
  }

  /** A block for the user's own `!cmd`, finished with `finish()` when the command ends. */
  shellBlock(id: string, command: string, now = Date.now()): ToolBlock {
    this.#current = undefined;
    const block = new ToolBlock({
      toolCallId: id,
      toolName: "!",
      args: { command },
      startedAt: now,
      p: this.options.p,
      expanded: () => this.#expanded,
      summary: oneLine(command, 72),
    });
    this.#tools.set(id, block);
    this.addChild(block);
    return block;
  }

  /** A dialog opened (`true`) or closed: time in it is not the running tools' time. */
  pause(paused: boolean, now = Date.now()): void {
    const live = this.live;
    if (paused && live.pausedSince === undefined) live.pausedSince = now;
    if (!paused && live.pausedSince !== undefined) {
      for (const t of this.#tools.values()) if (!t.done) t.pausedMs += now - live.pausedSince;
      live.pausedSince = undefined;
    }
  }

  onEvent(event: ExtensionStreamEvent): void {
    const p = this.options.p;
    switch (event.type) {
      case "message_start": {
        const message = event.message;
        if (message.role === "custom" && typeof message.customType === "string") this.#custom(message);
        return;
      }
      case "message_update": {
        const delta = event.delta;
        if ((delta?.type !== "text_delta" && delta?.type !== "thinking_delta") || !delta.delta) return;
        const text = printable(delta.delta);
        if (text) this.#assistant().append(delta.type === "text_delta" ? "text" : "thinking", text);
        return;
      }
      case "message_end": {
        const message = event.message;
        if (message.role !== "assistant") return;
        // The model client sent no deltas: the finished text is shown at once.
        if (!this.#current || this.#current.empty) {
          const text = printable(textOf(message.content) ?? "");
          if (text.trim()) this.#assistant().append("text", text);
        }
        this.#current = undefined;
        return;
      }
      case "tool_execution_start": {
        this.#current = undefined;
        const renderers = this.options.toolRenderers?.(event.toolName, event.toolCallId);
        const block = new ToolBlock({
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          args: event.args,
          startedAt: event.timestamp,
          p,
          expanded: () => this.#expanded,
          ...(renderers && { renderers }),
        });
        this.#tools.set(block.toolCallId, block);
        this.addChild(block);
        return;
      }
      case "tool_execution_update": {
        // A child agent's event: the call's progress is every running descendant's status, nested under it.
        const child = childEventOf(event.partialResult) && textOf((event.partialResult as ToolResult).content);
        const progress = child ? undefined : summarizeProgress(event.partialResult);
        if (child)
          this.live.children.set(event.toolCallId, printableLines(child).split("\n").slice(0, MAX_CHILD_LINES));
        if (progress !== undefined) this.live.progress.set(event.toolCallId, progress);
        this.#tools.get(event.toolCallId)?.update(event.partialResult);
        return;
      }
      case "tool_execution_end": {
        const block = this.#tools.get(event.toolCallId);
        this.live.progress.delete(event.toolCallId);
        this.live.children.delete(event.toolCallId);
        block?.finish(event.result, event.isError === true, event.timestamp);
        return;
      }
      case "hook_decision":
        // A rewrite of a call's input that handlers before it judged without seeing (chain.ts).
        if (event.outcome === "rewrite" && event.reason)
          this.say(p.yellow(`⚠ ${oneLine(event.extension, 60)} ${oneLine(event.reason, 200)}`));
        return;
      case "extension_log": {
        const color = event.level === "error" ? p.red : event.level === "warn" ? p.yellow : p.dim;
        const level = event.level === "info" ? "" : `${event.level === "warn" ? "warning" : "error"}: `;
        return this.say(color(`[${oneLine(event.extension, 40)}] ${level}${printable(event.message)}`));
      }
      case "extension_error": {
        return this.say(
          p.yellow(
            `⚠ extension ${oneLine(event.extension, 60)} failed in ${oneLine(event.slot, 60)}: ${oneLine(event.error, 160)}`,
          ),
        );
      }
      case "context_compacted":
        return this.say(
          p.dim(`⋯ context compacted: ${formatCount(event.tokensBefore)} → ${formatCount(event.tokensAfter)} tokens`),
        );
      case "agent_end":
        return this.#end(event);
      default:
    }
  }

  #assistant(): AssistantBlock {
    if (!this.#current) {
      this.#current = new AssistantBlock(this.options.p, this.options.markdown);
      this.addChild(this.#current);
    }
    return this.#current;
  }

  #custom(message: { customType: string; content: unknown; display?: boolean; details?: unknown }): void {
    this.#current = undefined;
    let own: Component | undefined;
    try {
      own = this.options.messageRenderer?.(message, this.#expanded);
    } catch {
      // The extension's renderer failed: the message is shown as text below.
    }
    if (own) return this.addChild(own);
    // Pi shows a custom message only when it asked to be shown (`display: true`).
    const text = message.display === true ? printable(textOf(message.content) ?? "") : "";
    if (text.trim())
      this.addChild(new Text(`${this.options.p.magenta(`[${oneLine(message.customType, 40)}]`)} ${text.trim()}`, 0, 0));
  }

  #end(end: AgentEndEvent): void {
    const p = this.options.p;
    const e = end as { stopReason: string; error?: string; reason?: string; by?: string };
    this.#current = undefined;
    switch (e.stopReason) {
      case "aborted":
        return this.say(p.yellow("⏹ aborted"));
      case "error":
        return this.say(p.red(`✗ ${oneLine(e.error ?? "the run failed", 200)}`));
      case "blocked":
        return this.say(
          p.yellow(
            `⛔ blocked${e.by === undefined ? "" : ` by ${oneLine(e.by, 60)}`}: ${oneLine(e.reason ?? "", 200)}`,
          ),
        );
      case "max_turns":
        return this.say(p.yellow("⏹ stopped: the maximum number of turns was reached"));
      default:
    }
  }
}
