/**
 * The load path: the load order (`LoadOrder`: loads, loads of factories and reloads, one at a
 * time) and one extension's load (`stageEntry`: import its module when it comes from a file, run
 * its factory into a fresh record under the load timeout, roll the record back when the load
 * fails or gives up). What a loaded record joins (the observer bus, the chains, the tools) is
 * the manager's, through `LoadHooks`.
 */
import { timerDelay } from "@mypi/kernel";
import { createExtensionAPI, createRecord, type ApiHost, type ExtensionRecord } from "./api.ts";
import { extensionContext } from "./context.ts";
import { describeLoadError, isLoadFailure, resolveEntry, type ExtensionLoader } from "./loader.ts";
import type { BusEvent } from "./dispatch/observer-bus.ts";
import type {
  ExtensionAPI,
  ExtensionContext,
  ExtensionFactory,
  ExtensionSpec,
  LoadFailure,
  LoadResult,
} from "./types.ts";

/** Loading an extension (importing its module and running its default export) may take this long. */
const DEFAULT_LOAD_TIMEOUT_MS = 60_000;

/** One place in the load order: an extension that loaded, or one that failed (retried by `reload`). */
export interface Entry {
  name: string;
  path?: string;
  realPath?: string;
  factory?: ExtensionFactory;
  /** Its tools are defaults others may replace (`ExtensionRecord.replaceable`). */
  replaceable?: boolean;
  record?: ExtensionRecord;
  failure?: LoadFailure;
}

/** What staging an entry needs from the manager. */
interface StageDeps {
  readonly loadTimeoutMs: number | undefined;
  readonly loader: ExtensionLoader;
  /** Where an entry's path resolves again on a reload. */
  readonly cwd: string;
  /** The manager's base ctx; each extension gets its own view of it. */
  readonly context: ExtensionContext;
  readonly host: ApiHost;
  /** Add the host's and Pi compatibility's members to a fresh `pi`. */
  extendApi(pi: ExtensionAPI, entry: Entry, record: ExtensionRecord): void;
  /** Detach a record (observers, listeners); used to roll back a failed or abandoned load. */
  dispose(record: ExtensionRecord): void;
}

/** What the load order asks of the manager around a load. */
export interface LoadHooks extends StageDeps {
  /**
   * Why `record` may not join: a tool or flag name another attached extension has (Pi fails such
   * a load the same way). `undefined`: it may.
   */
  conflict(record: ExtensionRecord, others?: readonly ExtensionRecord[]): string | undefined;
  /** A record joins: its observers subscribe. */
  attach(record: ExtensionRecord): void;
  /** Handlers, tools or extensions changed. */
  changed(): void;
  /** After `changed()`: what the factory asked for once its tools are there (`setActiveTools`). */
  settle(record: ExtensionRecord): void;
  /** Hand one extension an event and wait for its observers. */
  deliverTo<E extends BusEvent>(extension: string, event: E): Promise<void>;
}

/** The extensions in load order, loaded or failed; every change to it runs one at a time. */
export class LoadOrder {
  readonly entries: Entry[] = [];
  private lifecycle: Promise<unknown> = Promise.resolve();

  constructor(private readonly hooks: LoadHooks) {}

  /**
   * Files and folders in order, before the entry at `at` (default: at the end); a file already
   * loaded is skipped. A spec with a `name` is loaded under it (a package's extensions are named
   * after the package), else under its file's name.
   */
  load(specs: readonly ExtensionSpec[], baseDir: string, at: number | undefined): Promise<LoadResult> {
    return this.serially(async () => {
      const result: LoadResult = { loaded: [], failed: [] };
      let position = at ?? this.entries.length;
      const place = (entry: Entry) => void this.entries.splice(position++, 0, entry);
      for (const spec of specs) {
        const path = typeof spec === "string" ? spec : spec.path;
        const named = typeof spec === "string" ? undefined : spec.name;
        const entry = resolveEntry(path, baseDir);
        if (isLoadFailure(entry)) {
          const failure = { ...entry, name: uniqueName(this.entries, named ?? entry.name) }; // it may load on a reload: its name is its own
          place({ name: failure.name, path: entry.path, failure });
          result.failed.push(failure);
          continue;
        }
        if (this.entries.some((e) => e.realPath === entry.realPath)) continue;
        const slot: Entry = {
          name: uniqueName(this.entries, named ?? entry.name),
          path: entry.file,
          realPath: entry.realPath,
        };
        place(slot);
        await this.fill(slot, result);
      }
      return result;
    });
  }

  /** An in-process factory, at the end. */
  loadExtension(
    factory: ExtensionFactory,
    name: string,
    options: { path?: string | undefined; replaceable?: boolean | undefined },
  ): Promise<LoadResult> {
    return this.serially(async () => {
      const result: LoadResult = { loaded: [], failed: [] };
      const slot: Entry = { name: uniqueName(this.entries, name), factory };
      if (options.path !== undefined) slot.path = options.path;
      if (options.replaceable) slot.replaceable = true;
      this.entries.push(slot);
      await this.fill(slot, result);
      return result;
    });
  }

  /** Every entry again; see `ExtensionManager.reload`. */
  reload(): Promise<LoadResult> {
    return this.serially(async () => {
      const { hooks } = this;
      const result: LoadResult = { loaded: [], failed: [] };
      const staged = new Map<Entry, ExtensionRecord>();
      /** What will be attached after this reload, in load order so far: a new version that clashes with it fails. */
      const kept: ExtensionRecord[] = [];
      for (const entry of this.entries) {
        const staging = await stageEntry(entry, hooks);
        const conflict = isLoadFailure(staging) ? undefined : hooks.conflict(staging, kept);
        const outcome: ExtensionRecord | LoadFailure =
          conflict === undefined ? staging : conflictFailure(entry, conflict);
        if (conflict !== undefined) hooks.dispose(staging as ExtensionRecord);
        if (isLoadFailure(outcome)) {
          result.failed.push(outcome);
          if (!entry.record) entry.failure = outcome;
          else kept.push(entry.record);
        } else {
          staged.set(entry, outcome);
          kept.push(outcome);
        }
      }
      for (const entry of [...this.entries].reverse()) {
        if (!entry.record || !staged.has(entry)) continue;
        await hooks.deliverTo(entry.name, { type: "session_shutdown", reason: "reload", timestamp: Date.now() });
        hooks.dispose(entry.record);
      }
      for (const [entry, record] of staged) {
        entry.record = record;
        delete entry.failure;
        hooks.attach(record);
        result.loaded.push(entry.name);
      }
      hooks.changed();
      for (const record of staged.values()) hooks.settle(record);
      for (const entry of staged.keys()) {
        await hooks.deliverTo(entry.name, { type: "session_start", reason: "reload", timestamp: Date.now() });
      }
      return result;
    });
  }

  private async fill(entry: Entry, result: LoadResult): Promise<void> {
    const outcome = await stageEntry(entry, this.hooks);
    const conflict = isLoadFailure(outcome) ? undefined : this.hooks.conflict(outcome);
    if (conflict !== undefined && !isLoadFailure(outcome)) {
      this.hooks.dispose(outcome);
      entry.failure = conflictFailure(entry, conflict);
      result.failed.push(entry.failure);
      return;
    }
    if (isLoadFailure(outcome)) {
      entry.failure = outcome;
      result.failed.push(outcome);
      return;
    }
    entry.record = outcome;
    this.hooks.attach(outcome);
    this.hooks.changed();
    this.hooks.settle(outcome);
    result.loaded.push(entry.name);
  }

  /** Loads, loads of factories and reloads run one at a time: interleaved, two would replace the same instances. */
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lifecycle.then(work);
    this.lifecycle = run.catch(() => {});
    return run;
  }
}

function conflictFailure(entry: Entry, message: string): LoadFailure {
  return { path: entry.path ?? `<${entry.name}>`, name: entry.name, code: "MYPI_CONFLICT", message };
}

/** One load of one extension: given up on when it takes too long (`loadTimeoutMs`). */
interface Attempt {
  abandoned: boolean;
  record?: ExtensionRecord;
}

/**
 * Import (when from a file) and run the factory into a fresh record, not yet attached. A load
 * that takes longer than `loadTimeoutMs` (a factory or a top-level await that never settles)
 * fails, and its record is rolled back: what the factory registers once it wakes up is refused.
 */
async function stageEntry(entry: Entry, deps: StageDeps): Promise<ExtensionRecord | LoadFailure> {
  const timeoutMs = deps.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
  const attempt: Attempt = { abandoned: false };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, timerDelay(timeoutMs), "timeout")));
  const outcome = await Promise.race([runFactory(entry, attempt, deps), timedOut]);
  clearTimeout(timer);
  if (outcome !== "timeout") return outcome;
  attempt.abandoned = true;
  if (attempt.record) deps.dispose(attempt.record);
  return {
    path: entry.path ?? `<${entry.name}>`,
    name: entry.name,
    code: "MYPI_TIMEOUT",
    message:
      `the extension did not finish loading within ${timeoutMs} ms (its default export, or a top-level await, never settled); ` +
      "start slow work without awaiting it in the default export, e.g. in a session_start handler",
  };
}

async function runFactory(entry: Entry, attempt: Attempt, deps: StageDeps): Promise<ExtensionRecord | LoadFailure> {
  let factory = entry.factory;
  const where = entry.path ?? `<${entry.name}>`;
  if (!factory) {
    const resolved = resolveEntry(entry.path!, deps.cwd);
    if (isLoadFailure(resolved)) return { ...resolved, name: entry.name };
    const imported = await deps.loader.import(resolved);
    if (isLoadFailure(imported)) return { ...imported, name: entry.name };
    factory = imported;
  }
  if (typeof factory !== "function") {
    const message = `found a factory of type ${factory === null ? "null" : typeof factory}; an extension is a function: (pi: ExtensionAPI) => { … }`;
    return { path: where, name: entry.name, code: "MYPI_BAD_EXPORT", message };
  }
  // Imported after the load gave up on it: never run it (nobody reads this outcome).
  if (attempt.abandoned)
    return { path: where, name: entry.name, code: "MYPI_TIMEOUT", message: "imported after the load timed out" };
  const record = createRecord(entry.name, factory, extensionContext(deps.context, entry.name), entry);
  attempt.record = record;
  try {
    const pi = createExtensionAPI(record, deps.host);
    deps.extendApi(pi, entry, record);
    await factory(pi);
    return record;
  } catch (error) {
    deps.dispose(record); // roll back whatever it registered
    return describeLoadError(error, where, entry.name);
  }
}

/** `base`, or `base#2`, `base#3`, … : the first name no entry has. */
function uniqueName(entries: readonly Entry[], base: string): string {
  const taken = new Set(entries.map((e) => e.name));
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}#${n}`)) n++;
  return `${base}#${n}`;
}
