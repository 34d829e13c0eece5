/**
 * The record of one instance of one extension: its state and everything it registered (handlers,
 * tools, commands, flags, redactors, `pi.events` listeners). Everything an extension registers lands
 * here, so the manager can attach, detach and roll it back as a unit. Apart from `api.ts` (the `pi`
 * object that fills a record) because the manager, dispatch and the registries read records without it.
 */
import type { Tool } from "@mypi/kernel";
import type {
  CommandDefinition,
  EventName,
  ExtensionContext,
  ExtensionFactory,
  FlagDefinition,
  Redactor,
} from "./types.ts";

export interface HandlerRecord {
  readonly name: EventName;
  readonly handler: (...args: never[]) => unknown;
  readonly order?: "pre" | "post";
  readonly timeoutMs?: number;
  readonly onError?: "open" | "closed";
  /** `"root"`: the handler decides for the main agent only, not for the child agents it starts. */
  readonly agents?: "all" | "root";
  readonly label?: string;
  readonly seq: number;
}

/** One instance of one extension and everything it registered. */
export interface ExtensionRecord {
  readonly name: string;
  readonly path: string | undefined;
  readonly realPath: string | undefined;
  readonly factory: ExtensionFactory;
  /** loading → attached → disposed; a failed load goes loading → disposed. */
  state: "loading" | "attached" | "disposed";
  readonly handlers: HandlerRecord[];
  readonly tools: Map<string, Tool>;
  readonly commands: Map<string, CommandDefinition>;
  readonly flags: Map<string, FlagDefinition>;
  /** `pi.registerRedactor`, in registration order. */
  readonly redactors: Redactor[];
  /** `pi.events` listeners: live from the moment they are added (other extensions may answer during load). */
  readonly listeners: { channel: string; fn: (data: unknown) => void }[];
  /**
   * Its tools are defaults a later extension may replace (with a diagnostic), as Pi's built-in
   * tools are: the builtin tools. Any other extension's tool name is its own (`manager-tools.ts`).
   */
  readonly replaceable: boolean;
  /** The ctx this extension's handlers, observers, commands and tools receive. */
  readonly context: ExtensionContext;
  /**
   * `setActiveTools` called while loading: the names wait here until the extension attaches,
   * because its own tools become known only then (dropped with it when the load fails).
   */
  activeToolsRequest?: string[];
}

export function createRecord(
  name: string,
  factory: ExtensionFactory,
  context: ExtensionContext,
  where: { path?: string | undefined; realPath?: string | undefined; replaceable?: boolean | undefined } = {},
): ExtensionRecord {
  const { path, realPath } = where;
  return {
    name,
    replaceable: where.replaceable === true,
    context,
    path,
    realPath,
    factory,
    state: "loading",
    handlers: [],
    tools: new Map(),
    commands: new Map(),
    flags: new Map(),
    redactors: [],
    listeners: [],
  };
}
