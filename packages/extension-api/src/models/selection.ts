/**
 * The session's model and thinking level, and the ways to change them: `/model`, Ctrl+P
 * (`cycle`), RPC `set_model` / `cycle_model` / `set_thinking_level` / `cycle_thinking_level`,
 * `pi.setModel` / `pi.setThinkingLevel`. One object for the process, shared by every host it
 * builds (a new session keeps the model, as in Pi); each host follows it (`onChange`): the
 * agent's `model` and `thinkingLevel`, the session's entries, the extensions' events.
 *
 * The thinking level is kept clamped to what the current model supports (thinking.ts): a change
 * of model clamps it again, unless the change names a level (`provider/id:high`, a scoped model
 * with one).
 */
import { RetrySwitch, type HttpHooks, type ModelClient, type ThinkingLevel } from "@mypi/kernel";
import { clientFor, clientIdOf, type ClientOptions } from "./clients.ts";
import type { ScopedModel } from "./patterns.ts";
import type { ModelRegistry } from "./registry.ts";
import { clampThinkingLevel, DEFAULT_THINKING_LEVEL, nextThinkingLevel, supportedThinkingLevels } from "./thinking.ts";
import { DEFAULT_CONTEXT_WINDOW, modelKey, piModelObject, type ModelEntry, type PiModelObject } from "./types.ts";

/** Pi's `model_select` sources. */
export type ModelSelectSource = "set" | "cycle";

export interface SelectedModel {
  client: ModelClient;
  /** What the registry knows of it; `undefined` for a client it does not describe (`scripted:`, a custom client). */
  entry: ModelEntry | undefined;
}

/** One change, told to every listener: the model, the thinking level, or both (a model change that clamped the level). */
export interface ModelChange {
  model?: { previous: SelectedModel; current: SelectedModel; source: ModelSelectSource };
  thinking?: { previous: ThinkingLevel; level: ThinkingLevel };
}

export interface ModelSelectionOptions {
  registry: ModelRegistry;
  client: ModelClient;
  entry?: ModelEntry;
  /** The level asked for (`--thinking`, a `:level` suffix, the settings' `thinking`); clamped. Default Pi's `medium`. */
  thinking?: string;
  /** `--models` / `enabledModels`: what Ctrl+P and `cycle_model` go through (else every available model). */
  scope?: readonly ScopedModel[];
  /** The retry switch every client it makes shares (RPC `set_auto_retry`); default a new one. */
  retry?: RetrySwitch;
}

/** What the session's history says was chosen last (`model_change`, `thinking_level_change`). */
export interface SessionChoice {
  model?: { model: string; provider?: string; modelId?: string };
  thinkingLevel?: string;
}

export class ModelSelection {
  readonly registry: ModelRegistry;
  /** Shared by every client this selection makes: RPC `set_auto_retry` / `abort_retry` switch it. */
  readonly retry: RetrySwitch;
  #current: SelectedModel;
  #thinking: ThinkingLevel;
  #scope: readonly ScopedModel[];
  #http: () => HttpHooks | undefined = () => undefined;
  #listeners: readonly ((change: ModelChange) => void)[] = [];

  constructor(options: ModelSelectionOptions) {
    this.registry = options.registry;
    this.retry = options.retry ?? new RetrySwitch();
    this.#current = { client: options.client, entry: options.entry };
    this.#thinking = clampThinkingLevel(options.entry, options.thinking ?? DEFAULT_THINKING_LEVEL);
    this.#scope = options.scope ?? [];
  }

  get client(): ModelClient {
    return this.#current.client;
  }

  get entry(): ModelEntry | undefined {
    return this.#current.entry;
  }

  get thinkingLevel(): ThinkingLevel {
    return this.#thinking;
  }

  get scope(): readonly ScopedModel[] {
    return this.#scope;
  }

  /** Pi's `isScoped`: cycling goes through `--models` / `enabledModels`. */
  get isScoped(): boolean {
    return this.#scope.length > 0;
  }

  /** The current model's window, when the registry knows the model. */
  get contextWindow(): number | undefined {
    return this.#current.entry?.contextWindow;
  }

  availableThinkingLevels(): ThinkingLevel[] {
    return supportedThinkingLevels(this.#current.entry);
  }

  /** Pi's `Model` object of the current model (one the registry does not describe is told from its client id). */
  info(): PiModelObject {
    return describe(this.#current);
  }

  /** Where the clients get Pi's HTTP hooks from (the current host's extensions). */
  useHttpHooks(hooks: () => HttpHooks | undefined): void {
    this.#http = hooks;
  }

  /** Listen to changes; returns the function that stops listening. */
  onChange(listener: (change: ModelChange) => void): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  /**
   * Use `entry` from the next run on. `thinking`: the level the choice names (clamped), else the
   * current level clamped to the new model. A string is why not (no key, no client for its
   * protocol); nothing changed then.
   */
  select(entry: ModelEntry, options: { source: ModelSelectSource; thinking?: string }): string | undefined {
    const client = clientFor(entry, this.registry, this.#clientOptions());
    if (typeof client === "string") return client;
    this.#apply({ client, entry }, options.thinking, options.source);
    return undefined;
  }

  /** A client the registry does not describe (a test's scripted model, an embedder's own). */
  selectClient(client: ModelClient, source: ModelSelectSource = "set"): void {
    this.#apply({ client, entry: undefined }, undefined, source);
  }

  /**
   * The next model (`direction` 1) or the previous one (-1) of the scope, else of every available
   * model; `undefined` when there is no other (Pi answers `cycle_model` with `null` then). A model
   * the cycle cannot use (no key, no client for its protocol) is skipped, and `skipped` says why;
   * `entry` is absent when none of the others could be used.
   */
  cycle(
    direction: 1 | -1 = 1,
  ): { entry?: ModelEntry; thinkingLevel: ThinkingLevel; isScoped: boolean; skipped: string[] } | undefined {
    const ring: readonly ScopedModel[] = this.isScoped
      ? this.#scope
      : this.registry.available().map((entry) => ({ entry }));
    if (ring.length <= 1) return undefined;
    const current = this.#current.entry;
    const at = current ? ring.findIndex((m) => m.entry.provider === current.provider && m.entry.id === current.id) : -1;
    const skipped: string[] = [];
    for (let step = 1; step <= ring.length; step++) {
      const index =
        at === -1
          ? direction === 1
            ? step - 1
            : ring.length - step
          : (((at + direction * step) % ring.length) + ring.length) % ring.length;
      if (index === at) break;
      const next = ring[index]!;
      const problem = this.select(next.entry, { source: "cycle", ...(next.thinking && { thinking: next.thinking }) });
      if (problem === undefined)
        return { entry: next.entry, thinkingLevel: this.#thinking, isScoped: this.isScoped, skipped };
      skipped.push(problem);
    }
    return { thinkingLevel: this.#thinking, isScoped: this.isScoped, skipped };
  }

  /** Clamp `requested` to the model and use it; a listener hears of it only when the level changed. */
  setThinkingLevel(requested: string): ThinkingLevel {
    const level = clampThinkingLevel(this.#current.entry, requested);
    if (level !== this.#thinking) {
      const previous = this.#thinking;
      this.#thinking = level;
      this.#emit({ thinking: { previous, level } });
    }
    return level;
  }

  /** The next supported level (wrapping); `undefined` when the model cannot reason. */
  cycleThinkingLevel(): ThinkingLevel | undefined {
    const next = nextThinkingLevel(this.#current.entry, this.#thinking);
    return next === undefined ? undefined : this.setThinkingLevel(next);
  }

  /**
   * Continue with what a resumed session chose last, without telling anyone (Pi fires no
   * `model_select` for it). `keep` names what the command line chose explicitly, which wins.
   * Returns what could not be restored, one line each.
   */
  restore(choice: SessionChoice, keep: { model?: boolean; thinking?: boolean } = {}): string[] {
    const warnings: string[] = [];
    let next = this.#current;
    if (choice.model && !keep.model && choice.model.model !== this.#current.client.id) {
      const found = this.#fromSession(choice.model);
      if (typeof found === "string") warnings.push(found);
      else next = found;
    }
    const level = keep.thinking || choice.thinkingLevel === undefined ? this.#thinking : choice.thinkingLevel;
    this.#current = next;
    this.#thinking = clampThinkingLevel(next.entry, level);
    return warnings;
  }

  #fromSession(m: NonNullable<SessionChoice["model"]>): SelectedModel | string {
    const cannot = (why: string) =>
      `the session last used ${m.model}, which ${why}; continuing with ${this.#current.client.id}`;
    let entry: ModelEntry | undefined;
    if (m.model.startsWith("openai:")) entry = this.registry.openaiCompatible(m.model.slice("openai:".length));
    else if (m.provider !== undefined && m.modelId !== undefined) entry = this.registry.find(m.provider, m.modelId);
    else {
      const slash = m.model.indexOf("/");
      if (slash > 0) entry = this.registry.find(m.model.slice(0, slash), m.model.slice(slash + 1));
    }
    if (!entry)
      return cannot(
        m.model.startsWith("scripted:")
          ? "is a scripted model (pass --model again to replay it)"
          : "is not in the model registry here",
      );
    const client = clientFor(entry, this.registry, this.#clientOptions());
    return typeof client === "string" ? cannot(`cannot be used (${client})`) : { client, entry };
  }

  #clientOptions(): ClientOptions {
    const http = this.#http();
    return { retry: this.retry, ...(http && { http }) };
  }

  #apply(next: SelectedModel, thinking: string | undefined, source: ModelSelectSource): void {
    const previous = this.#current;
    const previousLevel = this.#thinking;
    this.#current = next;
    this.#thinking = clampThinkingLevel(next.entry, thinking ?? previousLevel);
    this.#emit({
      model: { previous, current: next, source },
      ...(this.#thinking !== previousLevel && { thinking: { previous: previousLevel, level: this.#thinking } }),
    });
  }

  #emit(change: ModelChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}

/**
 * Pi's `Model` object of a selected model. One the registry does not describe (`scripted:demo.json`,
 * an embedder's own client) is told from its client id, split at the first `:` or `/`: no price,
 * no reasoning, `contextWindow` the host's (default 128 000).
 */
export function describe(selected: SelectedModel, contextWindow = DEFAULT_CONTEXT_WINDOW): PiModelObject {
  if (selected.entry) return piModelObject(selected.entry);
  const id = selected.client.id;
  const at = id.search(/[:/]/);
  const provider = selected.client.provider ?? (at < 0 ? id : id.slice(0, at));
  const modelId = at < 0 ? id : id.slice(at + 1);
  return {
    id: modelId,
    name: modelId,
    api: selected.client.api ?? (provider === "scripted" ? "scripted" : "openai-completions"),
    provider,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow,
    maxTokens: contextWindow,
  };
}

export { clientIdOf, modelKey };
