/**
 * The manager's side of loading (`load.ts` runs the load order): the modules an extension may
 * import, and the `LoadHooks` the load order is given — Pi's rule that a tool or flag name is the
 * first registrant's, a record joining the chains and the bus, a record disposed. Apart from
 * `manager.ts` because it is what one extension's arrival and departure do to the manager's
 * parts, not what the manager offers hosts.
 */
import * as kernel from "@mypi/kernel";
import type { ExtensionRecord } from "./api.ts";
import type { ManagerAdapter } from "./adapters.ts";
import type { LoadHooks } from "./load.ts";
import { ExtensionLoader, hostModules } from "./loader.ts";
import type { ExtensionManager } from "./manager.ts";
import type { ExtensionManagerOptions } from "./types.ts";

/** The manager's parts a record joins and leaves. */
export type RecordParts = Pick<ExtensionManager, "driver" | "mcpServers" | "channels">;

/** What the load order's hooks need of the manager, its private parts included. */
export interface LoadParts {
  /** The host extensions' `pi` talks to, and the parts a record joins. */
  readonly manager: ExtensionManager;
  readonly options: ExtensionManagerOptions;
  /** The layers' seams, read at each load (a later `adapt` counts for later loads). */
  readonly adapters: readonly ManagerAdapter[];
  /** The attached records, in load order. */
  records(): ExtensionRecord[];
  /** Handlers, tools or extensions changed. */
  changed(): void;
}

/**
 * The loader of extensions' files, handing them the layers' modules, this package and the kernel
 * (the adapters are read at each load: a later `adapt` counts for later loads).
 */
function createLoader(
  adapters: readonly ManagerAdapter[],
  nativeImport: ExtensionManagerOptions["nativeImport"],
): ExtensionLoader {
  return new ExtensionLoader(
    async () =>
      hostModules(...adapters.map((a) => a.modules), {
        "@mypi/extension-api": await ownPackage(),
        "@mypi/kernel": kernel,
      }),
    nativeImport,
  );
}

/** What the load order needs of the manager (`load.ts`). */
export function loadHooks(parts: LoadParts): LoadHooks {
  const { options, manager } = parts;
  return {
    get loadTimeoutMs() {
      return options.loadTimeoutMs; // read at each load, as the options are
    },
    loader: createLoader(parts.adapters, options.nativeImport),
    cwd: manager.cwd,
    context: manager.context,
    host: manager,
    extendApi: (pi, entry, record) => {
      const seat = {
        name: entry.name,
        ...(entry.path !== undefined && { path: entry.path }),
        attached: () => record.state === "attached",
        context: record.context,
      };
      for (const a of parts.adapters) a.extendApi?.(pi, seat);
    },
    dispose: (record) => disposeRecord(record, manager),
    conflict: (record, others = parts.records()) => conflict(record, others),
    attach: (record) => {
      record.state = "attached";
      manager.driver.subscribe(record);
    },
    changed: () => parts.changed(),
    settle: (record) => manager.toolset.applyRequest(record),
    deliverTo: (extension, event) => manager.driver.observers.deliverTo(extension, event),
  };
}

/**
 * Pi fails the load of an extension that registers a tool or a flag another extension already
 * has (it keeps the first); so does mypi. The builtin tools' names are free to take.
 */
function conflict(record: ExtensionRecord, others: readonly ExtensionRecord[]): string | undefined {
  if (record.replaceable) return undefined;
  const where = (r: ExtensionRecord) => (r.path === undefined ? r.name : `${r.name} (${r.path})`);
  for (const other of others) {
    if (other === record) continue;
    const tool = other.replaceable ? undefined : [...record.tools.keys()].find((name) => other.tools.has(name));
    if (tool !== undefined)
      return `tool "${tool}" conflicts with ${where(other)}, which registered it first; rename one of them, or load only one`;
    const flag = [...record.flags.keys()].find((name) => other.flags.has(name));
    if (flag !== undefined)
      return `flag "--${flag}" conflicts with ${where(other)}, which registered it first; rename one of them, or load only one`;
  }
  return undefined;
}

/** Detach one instance: observers, listeners; its handlers and tools leave with `changed()`. */
export function disposeRecord(record: ExtensionRecord, parts: RecordParts): void {
  // The bus knows observers by extension name, and only an attached record subscribed any: a
  // new version that failed during a reload must not unsubscribe the old one it leaves in place.
  if (record.state === "attached") {
    parts.driver.observers.removeExtension(record.name);
    parts.mcpServers.dropExtension(record.name);
  }
  record.state = "disposed";
  for (const l of record.listeners.splice(0)) parts.channels.off(l.channel, l.fn);
}

/**
 * This package's own entry, for the extensions' `import … from "@mypi/extension-api"`: imported by
 * its name, as a user's file names it, so that it is the very module instance the host runs
 * (one `ExtensionError`, one `defineTool`), and lazily, so that the manager does not import the
 * index that exports it. The name is held in a variable: the compiler resolves no self-reference
 * while it builds the package's own declarations.
 */
function ownPackage(): Promise<Record<string, unknown>> {
  const name: string = "@mypi/extension-api";
  return import(name) as Promise<Record<string, unknown>>;
}
