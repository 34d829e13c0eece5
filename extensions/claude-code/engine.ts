/**
 * Runs Claude Code hooks for the handlers mypi's chains call. One occurrence of an event (one
 * tool call's `PreToolUse`, one prompt's `UserPromptSubmit`) starts every hook that matches it
 * at once — Claude Code runs them in parallel — and each hook's handler, reached in chain order,
 * awaits its own hook's answer. The first handler to arrive starts them all; a handler that
 * arrives at an occurrence it already saw starts the next one (so an occurrence a blocked chain
 * left half-read is never joined again).
 *
 * Also here: the stdin every hook gets (the common fields), its environment (`CLAUDE_PROJECT_DIR`,
 * a plugin's `CLAUDE_PLUGIN_ROOT`…, withheld model keys stay withheld), the transcript brought up
 * to date before a hook runs, and the notices Claude Code shows the user (a hook's error, its
 * timeout, its `systemMessage`).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { toolEnvironment } from "@mypi/kernel";
import type { ExtensionAPI, ExtensionContext } from "@mypi/extension-api";
import { redactText } from "../redact-secrets/index.ts";
import type { KnownChildren } from "./children.ts";
import { TOOL_EVENTS, hookLabel, type ClaudeEvent, type HookDefinition } from "./config.ts";
import { compileMatcher, ifMatches, parseIfRule, type IfRule, type Matcher } from "./matcher.ts";
import { readAnswer, type HookAnswer } from "./protocol.ts";
import { runHook, type RunningHook } from "./runner.ts";
import type { ToolContext } from "./tools.ts";
import { Transcript, transcriptPath } from "./transcript.ts";

/** Claude Code's default timeouts, in seconds (hooks reference, "Common fields"). */
const DEFAULT_TIMEOUT_S = 600;
const EVENT_TIMEOUT_S: Partial<Record<ClaudeEvent, number>> = { UserPromptSubmit: 30, SessionEnd: 1.5 };
/** Strings that reach the model or the user are capped here; the full text goes to a file. */
const OUTPUT_CAP = 10_000;
/** Events whose `systemMessage` Claude Code discards. */
const NO_SYSTEM_MESSAGE = new Set<ClaudeEvent>([
  "Notification",
  "PreCompact",
  "PostCompact",
  "SessionEnd",
  "StopFailure",
]);

interface CompiledHook {
  readonly id: number;
  readonly def: HookDefinition;
  readonly label: string;
  readonly match: Matcher;
  readonly ifRule: IfRule | undefined;
  readonly timeoutS: number;
}

/** What an occurrence of an event is: the value matchers test, the tool call, the event's stdin fields. */
export interface OccurrenceInput {
  /** Tool events: Claude Code's tool name and mypi's (a matcher may name either); others: the matcher's field. */
  values: readonly string[];
  tool?: { name: string; input: Record<string, unknown> };
  fields: Record<string, unknown>;
}

export interface Answered {
  hook: CompiledHook;
  answer: HookAnswer;
}

export interface Entry {
  readonly hook: CompiledHook;
  /** A skill's hook (owned by the skill-hooks handler). */
  readonly dynamic: boolean;
  readonly running: RunningHook;
  readonly answer: Promise<HookAnswer>;
}

export class Occurrence {
  readonly entries = new Map<number, Entry>();
  readonly joined = new Set<string>();
  private allAnswers: Promise<Answered[]> | undefined;
  private memo = new Map<string, Promise<unknown>>();

  /** Every started hook's answer (for a decision that must see its siblings' first: an ask). */
  all(): Promise<Answered[]> {
    return (this.allAnswers ??= Promise.all(
      [...this.entries.values()].map(async (e) => ({ hook: e.hook, answer: await e.answer })),
    ));
  }

  /** `work` once for this occurrence, whoever asks first (one dialog for several asking hooks). */
  once<T>(key: string, work: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) this.memo.set(key, (p = work()));
    return p;
  }
}

interface EngineOptions {
  pi: ExtensionAPI;
  hooks: readonly HookDefinition[];
  /** `CLAUDE_PROJECT_DIR`: the workspace. */
  projectDir: string;
  tools: ToolContext;
  shortPath(file: string): string;
  /** A line for the user (interactive: above the editor; RPC: a notify; print and JSON: stderr). */
  say(ctx: ExtensionContext, level: "info" | "warning" | "error", text: string): void;
  /** Child agents as hooks describe them: a hook that runs for a child is told `agent_id` and `agent_type`. */
  children?: KnownChildren;
}

export class HookEngine {
  readonly hooks: CompiledHook[] = [];
  /** Hooks of skills invoked this session (front matter `hooks`), run with the configured ones. */
  private dynamic: CompiledHook[] = [];
  private nextId = 0;
  private readonly occurrences = new Map<string, Occurrence>();
  private transcript: Transcript | undefined;
  /** `CLAUDE_ENV_FILE` of SessionStart hooks (env-file.ts reads it back). */
  envFile: string | undefined;
  /** The permission mode hooks are told (`permission_mode`), in Claude Code's spelling: the permission gate's, else "default". */
  permissionMode = "default";
  /** Problems found while compiling (an invalid matcher): said once at load. */
  readonly problems: { file: string; message: string }[] = [];
  /** Events skills' front matter has hooks for (skill-scan.ts): only these get a skill-hooks handler. */
  skillEvents = new Set<ClaudeEvent>();
  private readonly unawaited = new Set<Promise<void>>();
  /** Background hooks still running, killed when the session ends. */
  readonly background = new Set<AbortController>();

  constructor(private readonly options: EngineOptions) {
    for (const def of options.hooks) {
      const compiled = this.compile(def);
      if (compiled) this.hooks.push(compiled);
    }
  }

  compile(def: HookDefinition): CompiledHook | undefined {
    const match = compileMatcher(def.matcher, def.event);
    if (typeof match === "string") {
      this.problems.push({ file: def.source.file, message: `${def.position}: ${match}` });
      return undefined;
    }
    let ifRule: IfRule | undefined;
    if (def.hook.if !== undefined) {
      const parsed = parseIfRule(def.hook.if);
      if (typeof parsed === "string") {
        this.problems.push({ file: def.source.file, message: `${def.position}: ${parsed}` });
        return undefined;
      }
      ifRule = parsed;
    }
    const timeoutS = def.hook.timeout ?? EVENT_TIMEOUT_S[def.event] ?? DEFAULT_TIMEOUT_S;
    return { id: this.nextId++, def, label: hookLabel(def, this.options.shortPath), match, ifRule, timeoutS };
  }

  /** The configured hooks of one event, in declaration order (one handler each). */
  of(event: ClaudeEvent): CompiledHook[] {
    return this.hooks.filter((h) => h.def.event === event);
  }

  /** Skills' hooks join from now on (Claude Code: once the skill is invoked, for the rest of the session). */
  addDynamic(defs: readonly HookDefinition[]): void {
    for (const def of defs) {
      const compiled = this.compile(def);
      if (compiled) this.dynamic.push(compiled);
    }
  }

  hasDynamic(event: ClaudeEvent): boolean {
    return this.dynamic.some((h) => h.def.event === event);
  }

  /** Dynamic hooks of an occurrence (the skill-hooks handler owns them). */
  dynamicEntries(occurrence: Occurrence): Entry[] {
    return [...occurrence.entries.values()].filter((e) => e.dynamic);
  }

  /**
   * The occurrence `handler` is part of: the current one of `event` and `key` (a tool call's id;
   * `""` for events that happen one at a time), or a new one — started with every matching hook
   * — when there is none or `handler` already took part in it.
   */
  join(
    event: ClaudeEvent,
    key: string,
    handler: string,
    ctx: ExtensionContext,
    build: () => OccurrenceInput,
  ): Occurrence {
    const id = `${event}\u0000${key}`;
    let occurrence = this.occurrences.get(id);
    if (!occurrence || occurrence.joined.has(handler)) {
      occurrence = this.start(event, ctx, build());
      this.occurrences.set(id, occurrence);
    }
    occurrence.joined.add(handler);
    return occurrence;
  }

  /** The occurrence is decided (a block stops the chain; the last handler read it): forget it. */
  leave(event: ClaudeEvent, key: string, occurrence: Occurrence): void {
    const id = `${event}\u0000${key}`;
    if (this.occurrences.get(id) === occurrence) this.occurrences.delete(id);
  }

  /** Forget every occurrence (the run ended: a tool call's occurrence a block left behind). */
  clear(): void {
    this.occurrences.clear();
  }

  /** Run an event's matching hooks outside any chain (observers, PermissionRequest, Notification) and await them all. */
  runAll(event: ClaudeEvent, ctx: ExtensionContext, input: OccurrenceInput, signal?: AbortSignal): Promise<Answered[]> {
    const occurrence = this.start(event, ctx, input);
    if (signal) for (const e of occurrence.entries.values()) e.running.follow(signal);
    return occurrence.all();
  }

  /** Hooks nobody waits for (Notification): run, and waited for when the session ends. */
  fire(event: ClaudeEvent, ctx: ExtensionContext, input: OccurrenceInput): void {
    const done = this.runAll(event, ctx, input).then(() => void this.unawaited.delete(done));
    this.unawaited.add(done);
  }

  /** Until what `fire` started has finished (each hook is bounded by its own timeout). */
  async settle(): Promise<void> {
    while (this.unawaited.size > 0) await Promise.allSettled([...this.unawaited]);
  }

  /** Start every hook of `event` (configured and dynamic) that `input` matches. */
  private start(event: ClaudeEvent, ctx: ExtensionContext, input: OccurrenceInput): Occurrence {
    const occurrence = new Occurrence();
    const candidates = [...this.hooks, ...this.dynamic].filter(
      (h) => h.def.event === event && this.matches(h, input, ctx.cwd),
    );
    if (candidates.length === 0) return occurrence;
    const stdin = this.stdin(event, ctx, input.fields);
    for (const hook of candidates) {
      const dynamic = this.dynamic.includes(hook);
      if (hook.def.hook.once) this.dynamic = this.dynamic.filter((h) => h !== hook);
      if (hook.def.hook.async || hook.def.hook.asyncRewake) {
        this.startInBackground(hook, ctx, stdin);
        continue;
      }
      const running = runHook({
        hook: hook.def.hook,
        input: stdin,
        env: this.environment(hook, event),
        cwd: ctx.cwd,
        timeoutMs: hook.timeoutS * 1000,
        placeholders: this.placeholders(hook),
      });
      const answer = running.done.then((outcome) => {
        const answer = readAnswer(event, outcome, hook.timeoutS);
        this.report(hook, answer, ctx);
        return answer;
      });
      occurrence.entries.set(hook.id, { hook, dynamic, running, answer });
    }
    return occurrence;
  }

  private matches(hook: CompiledHook, input: OccurrenceInput, cwd: string): boolean {
    if (!input.values.some((v) => hook.match(v)) && !(input.values.length === 0 && hook.match(""))) return false;
    if (hook.ifRule === undefined) return true;
    // Claude Code: `if` is read on tool events only; elsewhere a hook with `if` never runs.
    if (!TOOL_EVENTS.has(hook.def.event) || !input.tool) return false;
    return ifMatches(hook.ifRule, input.tool.name, input.tool.input, cwd);
  }

  /**
   * Claude Code's common input fields, then the event's own. For a child agent's decision, also
   * `agent_id` and `agent_type` (the transcript stays the main session's, as in Claude Code).
   */
  private stdin(event: ClaudeEvent, ctx: ExtensionContext, fields: Record<string, unknown>): Record<string, unknown> {
    const session = ctx.sessionManager;
    const transcript = this.syncTranscript(ctx);
    return {
      session_id: session.id,
      transcript_path: transcript,
      cwd: ctx.cwd,
      permission_mode: this.permissionMode,
      hook_event_name: event,
      ...this.childIdentity(ctx),
      ...fields,
    };
  }

  /** `agent_id` and `agent_type` when `ctx` decides for a child agent. */
  childIdentity(ctx: ExtensionContext): { agent_id: string; agent_type: string } | undefined {
    return this.options.children?.identity(ctx.agentPath ?? ["root"]);
  }

  /** A child agent's transcript in Claude Code's shape, current (`agent_transcript_path`); `undefined` when unknown. */
  childTranscript(ctx: ExtensionContext): string | undefined {
    return this.options.children?.transcript(ctx.agentPath, ctx.sessionManager.id, ctx.cwd);
  }

  /** The transcript's path, brought up to date with the session's branch first. */
  syncTranscript(ctx: ExtensionContext): string {
    const session = ctx.sessionManager;
    const path = transcriptPath(session.file, session.id);
    if (this.transcript?.path !== path) this.transcript = new Transcript(path, this.options.tools);
    this.transcript.sync({ sessionId: session.id, cwd: ctx.cwd, branch: () => session.getBranch() });
    return path;
  }

  private environment(hook: CompiledHook, event: ClaudeEvent): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...toolEnvironment(), ...this.placeholders(hook) };
    if (event === "SessionStart" && this.envFile !== undefined) env.CLAUDE_ENV_FILE = this.envFile;
    return env;
  }

  private placeholders(hook: CompiledHook): Record<string, string> {
    const out: Record<string, string> = { CLAUDE_PROJECT_DIR: this.options.projectDir };
    const plugin = hook.def.source.plugin;
    if (plugin) {
      out.CLAUDE_PLUGIN_ROOT = plugin.root;
      out.CLAUDE_PLUGIN_DATA = plugin.data;
    }
    return out;
  }

  /** What Claude Code shows the user of any hook's answer: its error, its timeout, its `systemMessage`. */
  private report(hook: CompiledHook, answer: HookAnswer, ctx: ExtensionContext): void {
    const name = `${hook.def.event} hook (${hook.label})`;
    if (answer.kind === "error") this.options.say(ctx, "warning", `${name} error: ${answer.message}`);
    else if (answer.kind === "timeout")
      this.options.say(ctx, "warning", `${name} timed out after ${answer.seconds} s; it decided nothing.`);
    else if (
      (answer.kind === "ok" || answer.kind === "block") &&
      answer.json?.systemMessage !== undefined &&
      !NO_SYSTEM_MESSAGE.has(hook.def.event)
    ) {
      this.options.say(ctx, "info", this.cap(answer.json.systemMessage, ctx));
    }
  }

  /**
   * `async` hooks: started, not awaited; what they answer (`additionalContext`, `systemMessage`)
   * reaches the model with the next turn. `asyncRewake`: an exit 2 wakes the agent with its stderr.
   */
  private startInBackground(hook: CompiledHook, ctx: ExtensionContext, stdin: Record<string, unknown>): void {
    const controller = new AbortController();
    this.background.add(controller);
    const running = runHook({
      hook: hook.def.hook,
      input: stdin,
      env: this.environment(hook, hook.def.event),
      cwd: ctx.cwd,
      timeoutMs: hook.timeoutS * 1000,
      placeholders: this.placeholders(hook),
    });
    running.follow(controller.signal);
    void running.done.then((outcome) => {
      this.background.delete(controller);
      if (outcome.aborted) return;
      const answer = readAnswer(hook.def.event, outcome, hook.timeoutS);
      if (answer.kind === "error" || answer.kind === "timeout") return this.report(hook, answer, ctx);
      const parts: string[] = [];
      if (answer.kind === "ok" || answer.kind === "block") {
        const extra = answer.json?.hookSpecificOutput?.additionalContext;
        if (typeof extra === "string") parts.push(extra);
        if (answer.json?.systemMessage) parts.push(answer.json.systemMessage);
      }
      const rewake = hook.def.hook.asyncRewake === true && answer.kind === "block";
      if (rewake) parts.push(answer.stderr || outcome.stdout);
      if (parts.length === 0) return;
      const content = this.cap(
        `${hook.def.event} hook (${hook.label}) finished in the background:\n${parts.join("\n")}`,
        ctx,
      );
      try {
        this.options.pi.sendMessage(
          { customType: "claude-code-hook", content, display: false },
          rewake ? { triggerTurn: true, deliverAs: "steer" } : { deliverAs: "steer" },
        );
      } catch {
        // The session ended meanwhile.
      }
    });
  }

  /** Claude Code's 10 000-character cap: a longer text is saved to a file and passed as a preview with its path. */
  cap(text: string, ctx: ExtensionContext): string {
    if (text.length <= OUTPUT_CAP) return text;
    const file = join(
      dirname(transcriptPath(ctx.sessionManager.file, ctx.sessionManager.id)),
      `hook-output-${Date.now()}-${this.nextId++}.txt`,
    );
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, redactText(text));
      return `${text.slice(0, 2000)}\n… [${text.length} characters in all; the whole output is in ${file}]`;
    } catch {
      return `${text.slice(0, OUTPUT_CAP)}\n… [${text.length - OUTPUT_CAP} more characters cut]`;
    }
  }

  /** Kill what still runs in the background (the session ends). */
  stopBackground(): void {
    for (const c of this.background) c.abort();
    this.background.clear();
  }

  /** The session ends: a session kept in memory leaves no transcript or env file behind. */
  endSession(ctx: ExtensionContext): void {
    this.stopBackground();
    this.options.children?.clear();
    if (ctx.sessionManager.file !== undefined) return;
    for (const file of [this.transcript?.path, this.envFile]) if (file !== undefined) rmSync(file, { force: true });
  }
}
