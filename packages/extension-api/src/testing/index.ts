/// <reference types="node" preserve="true" />
/**
 * `@mypi/extension-api/testing` — a test kit for extension authors, for any test runner:
 *
 *   const ext = await loadExtensions("./guard.ts");
 *   const d = await ext.callSlot("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "rm -rf /" } });
 *   // d: the kernel-facing decision for tool_call, typed: { block: true, reason, by } | { input?, by? } | undefined
 *
 *   const run = await runConversation({ extensions: ["./guard.ts"], prompt: "clean up", turns: [...] });
 *   // run.events, run.decisions, run.errors, run.requests, run.stopReason, run.finalText
 *
 *   const replayed = await replay("./sessions/monday.jsonl", ["./guard.ts"]);
 *   // replayed.differences: what these extensions would decide differently from the record
 *
 * Both use the real `ExtensionManager` and host, so what passes here behaves the same in `mypi`.
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createScriptedModel,
  SessionManager,
  type AgentStopReason,
  type ModelRequest,
  type ScriptedTurn,
  type Tool,
} from "@mypi/kernel";
import type {
  DecisionSlots,
  ExtensionErrorEvent,
  ExtensionStreamEvent,
  HookDecisionEvent,
  SlotName,
} from "../events.ts";
import { createExtensionHost } from "../host/host.ts";
import { formatLoadFailure } from "../loader.ts";
import { ExtensionManager } from "../manager.ts";
import type { SlotResults } from "../dispatch/policy.ts";
import type { ExtensionFactory, ExtensionUI, LoadFailure } from "../types.ts";
import { readRecording, Replayer, type SessionReplay } from "../replay/index.ts";

export { createFakeUI, type FakeDialog, type FakeUI, type FakeUIOptions } from "./fake-ui.ts";
export type { DecisionView, DifferenceKind, ReplayDifference, ReplayError, SessionReplay } from "../replay/index.ts";

/** A file (path or file URL, relative paths against `process.cwd()`), or a factory with a name. */
export type ExtensionSource = string | URL | { name: string; factory: ExtensionFactory };

export interface LoadOptions {
  /** The workspace (`ctx.cwd`, `pi.cwd`). Default `process.cwd()`. */
  cwd?: string;
  /** A UI for dialogs (`createFakeUI`); without one they resolve to their defaults, as headless. */
  ui?: ExtensionUI;
  /** Values of extension flags, by name without dashes. */
  flags?: Record<string, string | boolean>;
  /** What `pi.getSettings()` returns. */
  settings?: Record<string, unknown>;
  /** Return load failures in `failures` instead of throwing. */
  allowLoadFailures?: boolean;
}

/**
 * What slot `K`'s chain hands on — to the kernel for its five slots, to the host for the others:
 * the decisions merged along the chain.
 */
export type SlotDecision<K extends SlotName> = SlotResults[K];

export interface LoadedExtensions {
  manager: ExtensionManager;
  failures: LoadFailure[];
  /** `hook_decision` events of every `callSlot` so far, in order. */
  decisions: HookDecisionEvent[];
  /** `extension_error` events of every `callSlot` so far. */
  errors: ExtensionErrorEvent[];
  /** Run one slot's chain as the kernel would; `undefined` means nothing changed. */
  callSlot<K extends SlotName>(
    slot: K,
    event: DecisionSlots[K]["event"],
    options?: { signal?: AbortSignal },
  ): Promise<SlotDecision<K> | undefined>;
  /** `session_shutdown` to the extensions, then unload them. */
  dispose(): Promise<void>;
}

export class ExtensionLoadError extends Error {
  constructor(readonly failures: LoadFailure[]) {
    super(`extensions failed to load:\n${failures.map((f) => `  ${formatLoadFailure(f)}`).join("\n")}`);
    this.name = "ExtensionLoadError";
  }
}

/** Load extensions into a fresh manager, in order. Throws `ExtensionLoadError` when one fails (unless `allowLoadFailures`). */
export async function loadExtensions(
  sources: ExtensionSource | readonly ExtensionSource[],
  options: LoadOptions = {},
): Promise<LoadedExtensions> {
  const cwd = options.cwd ?? process.cwd();
  const manager = new ExtensionManager({
    cwd,
    ...(options.ui && { ui: options.ui }),
    ...(options.flags && { flags: options.flags }),
    ...(options.settings && { settings: options.settings }),
  });
  const failures: LoadFailure[] = [];
  for (const source of Array.isArray(sources) ? sources : [sources]) {
    const result =
      typeof source === "object" && !(source instanceof URL)
        ? await manager.loadExtension(source.factory, source.name)
        : await manager.load([toPath(source)]);
    failures.push(...result.failed);
  }
  if (failures.length > 0 && !options.allowLoadFailures) {
    manager.dispose();
    throw new ExtensionLoadError(failures);
  }
  const decisions: HookDecisionEvent[] = [];
  const errors: ExtensionErrorEvent[] = [];
  return {
    manager,
    failures,
    decisions,
    errors,
    async callSlot(slot, event, callOptions = {}) {
      const signal = callOptions.signal ?? new AbortController().signal;
      const emit = (e: HookDecisionEvent | ExtensionErrorEvent) =>
        void (e.type === "hook_decision" ? decisions.push(e) : errors.push(e));
      return await manager.runSlot(slot, event, { signal, emit });
    },
    dispose: () => manager.shutdown(),
  };
}

export interface ConversationOptions extends LoadOptions {
  extensions: readonly ExtensionSource[];
  /** The scripted model's answers, in order (docs/kernel.md, "the scripted model"). */
  turns: ScriptedTurn[];
  /** One prompt, or several sent one after another in the same session. */
  prompt: string | readonly string[];
  /** Tools that come from no extension (a fake `bash`, say). */
  tools?: Tool[];
  systemPrompt?: string;
  maxTurns?: number;
}

export interface Conversation {
  /** Every event of every run, in order (kernel events, `hook_decision`, `extension_error`). */
  events: ExtensionStreamEvent[];
  decisions: HookDecisionEvent[];
  errors: ExtensionErrorEvent[];
  /** What the model was sent, one request per model call. */
  requests: ModelRequest[];
  /** Of the last run. */
  stopReason: AgentStopReason | undefined;
  finalText: string | undefined;
  session: SessionManager;
}

/** Load the extensions, run the prompts against a scripted model in an in-memory session, shut down. */
export async function runConversation(options: ConversationOptions): Promise<Conversation> {
  const loaded = await loadExtensions(options.extensions, options);
  const requests: ModelRequest[] = [];
  const model = createScriptedModel(
    { turns: options.turns },
    { name: "test", onRequest: (r) => void requests.push(r) },
  );
  const session = SessionManager.inMemory(loaded.manager.cwd);
  const host = createExtensionHost({
    manager: loaded.manager,
    model,
    session,
    ...(options.tools && { tools: options.tools }),
    ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
  });
  const events: ExtensionStreamEvent[] = [];
  const run: Conversation = {
    events,
    decisions: [],
    errors: [],
    requests,
    stopReason: undefined,
    finalText: undefined,
    session,
  };
  try {
    await host.start();
    for (const prompt of typeof options.prompt === "string" ? [options.prompt] : options.prompt) {
      for await (const event of host.agent.prompt(prompt)) {
        events.push(event);
        if (event.type === "hook_decision") run.decisions.push(event);
        if (event.type === "extension_error") run.errors.push(event);
        if (event.type === "agent_end") {
          run.stopReason = event.stopReason;
          run.finalText = event.finalText;
        }
      }
    }
  } finally {
    await host.shutdown();
  }
  return run;
}

export interface ReplayOptions extends LoadOptions {
  /** Stops the replay between steps. */
  signal?: AbortSignal;
}

/**
 * Replay a recorded session — a mypi or Pi session file, or a Claude Code transcript — through
 * these extensions, as `mypi replay` does: every recorded prompt, model answer, call and result
 * through the decision slots, no model called, no tool run. Resolves to what they would decide
 * differently from the record (`differences`, empty when nothing changed), the handlers that
 * failed (`errors`) and what could not be replayed (`notes`). The workspace (`ctx.cwd`) is the
 * recorded one unless `cwd` is given. docs/testing-policies.md.
 */
export async function replay(
  sessionFile: string | URL,
  extensions: ExtensionSource | readonly ExtensionSource[],
  options: ReplayOptions = {},
): Promise<SessionReplay> {
  const recording = readRecording(toPath(sessionFile));
  const loaded = await loadExtensions(extensions, { ...options, cwd: options.cwd ?? recording.cwd ?? process.cwd() });
  try {
    return await new Replayer(loaded.manager, options.signal ? { signal: options.signal } : {}).replay(recording);
  } finally {
    await loaded.dispose();
  }
}

function toPath(source: string | URL): string {
  if (source instanceof URL) return fileURLToPath(source);
  if (source.startsWith("file:")) return fileURLToPath(source);
  return isAbsolute(source) ? source : resolve(source);
}
