/**
 * What the loaded extensions registered, merged into the views the host and `mypi extensions`
 * read: handlers in effective order, the effective tools and commands (a later extension's
 * replacing an earlier one of the same name), flags, and the listing. Pure functions over the
 * attached records, in load order; the manager owns the records and calls these.
 */
import { relative, isAbsolute } from "node:path";
import { mypiHome, type Tool } from "@mypi/kernel";
import type { ExtensionRecord, HandlerRecord } from "./api.ts";
import type { CommandContext, CommandInfo, EventName, ExtensionContext, ExtensionInfo, FlagInfo } from "./types.ts";

/** Called when a later extension's tool or command replaces an earlier one: `key` identifies the case (report it once). */
export type OnReplace = (key: string, message: string) => void;

const RANK = { pre: 0, none: 1, post: 2 } as const;

/** A slot's handlers in effective order: pre, unmarked, post; each in load and registration order. */
export function orderedHandlers(records: readonly ExtensionRecord[], name: EventName): { record: ExtensionRecord; h: HandlerRecord }[] {
  const list = records.flatMap((record, index) => record.handlers.filter((h) => h.name === name).map((h) => ({ record, h, index })));
  return list.sort((a, b) => RANK[a.h.order ?? "none"] - RANK[b.h.order ?? "none"] || a.index - b.index || a.h.seq - b.h.seq);
}

/**
 * The effective order of handlers per event, as extension names (outermost first); a handler
 * with a `label` is `name[label]`.
 */
export function handlerOrder(records: readonly ExtensionRecord[], names: readonly EventName[]): Partial<Record<EventName, string[]>> {
  const out: Partial<Record<EventName, string[]>> = {};
  for (const name of names) {
    const extensions = orderedHandlers(records, name).map(({ record, h }) => (h.label === undefined ? record.name : `${record.name}[${h.label}]`));
    if (extensions.length) out[name] = extensions;
  }
  return out;
}

/** The tools of all extensions, a later extension's tool replacing an earlier one of the same name. */
export function mergeTools(records: readonly ExtensionRecord[], onReplace: OnReplace): { tool: Tool; extension: string }[] {
  const byName = new Map<string, { tool: Tool; extension: string }>();
  for (const record of records) {
    for (const tool of record.tools.values()) {
      const previous = byName.get(tool.name);
      if (previous) onReplace(`tool:${tool.name}:${previous.extension}:${record.name}`, `tool '${tool.name}' from ${record.name} replaces the one from ${previous.extension}`);
      byName.set(tool.name, { tool, extension: record.name });
    }
  }
  return [...byName.values()];
}

export interface MergedCommand {
  name: string;
  description?: string;
  handler: (args: string, ctx: CommandContext) => unknown;
  record: ExtensionRecord;
}

/** The commands of all extensions by name, a later extension's replacing an earlier one. */
export function mergeCommands(records: readonly ExtensionRecord[], onReplace: OnReplace): Map<string, MergedCommand> {
  const map = new Map<string, MergedCommand>();
  for (const record of records) {
    for (const [name, def] of record.commands) {
      const previous = map.get(name);
      if (previous) onReplace(`command:${name}:${previous.record.name}:${record.name}`, `command /${name} from ${record.name} replaces the one from ${previous.record.name}`);
      map.set(name, { name, ...(def.description !== undefined && { description: def.description }), handler: def.handler, record });
    }
  }
  return map;
}

/** A command handler's ctx: the extension's, with the call's `signal` and the command-only actions. */
export function commandContext(base: ExtensionContext, signal: AbortSignal | undefined, actions: Pick<CommandContext, "waitForIdle" | "reload" | "fork">): CommandContext {
  return Object.create(base, {
    ...(signal && { signal: { value: signal } }),
    waitForIdle: { value: actions.waitForIdle },
    reload: { value: actions.reload },
    fork: { value: actions.fork },
  }) as CommandContext;
}

/** The commands as listed (`getCommands`): the extensions', then the host's whose name no extension took. */
export function listCommands(commands: ReadonlyMap<string, MergedCommand>, resourceCommands: readonly CommandInfo[], cwd: string): CommandInfo[] {
  const own = [...commands.values()].map(({ name, description, record }) => {
    const info: CommandInfo = { name, source: "extension", extension: record.name, sourceInfo: extensionSourceInfo(record, cwd) };
    if (description !== undefined) info.description = description;
    if (record.path !== undefined) info.path = record.path;
    return info;
  });
  const taken = new Set(own.map((c) => c.name));
  return [...own, ...resourceCommands.filter((c) => !taken.has(c.name)).map((c) => ({ ...c }))];
}

export function flagsOf(records: readonly ExtensionRecord[]): FlagInfo[] {
  return records.flatMap((r) => [...r.flags].map(([name, f]) => ({ ...f, name, extension: r.name })));
}

/** Loaded extensions in load order with what each registered (for `mypi extensions`). */
export function describeExtensions(records: readonly ExtensionRecord[]): ExtensionInfo[] {
  return records.map((r) => {
    const info: ExtensionInfo = {
      name: r.name,
      handlers: r.handlers.map((h) => (h.order ? { name: h.name, order: h.order } : { name: h.name })),
      tools: [...r.tools.keys()],
      commands: [...r.commands.keys()],
      flags: [...r.flags.keys()],
    };
    if (r.path !== undefined) info.path = r.path;
    return info;
  });
}

const inside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
};

/**
 * Pi's `sourceInfo` of what an extension registered: its file (or `<inline:name>` for an
 * in-process factory), and whether it came from the workspace's `.mypi/` (`project`), mypi's
 * home (`user`, installed packages included) or elsewhere (`-e`: `temporary`).
 */
export function extensionSourceInfo(record: Pick<ExtensionRecord, "name" | "path" | "realPath">, cwd: string): NonNullable<CommandInfo["sourceInfo"]> {
  if (record.path === undefined) return { path: `<inline:${record.name}>`, source: "inline", scope: "temporary", origin: "top-level" };
  const file = record.realPath ?? record.path;
  const scope = inside(`${cwd}/.mypi`, record.path) ? "project" : inside(mypiHome(), record.path) || inside(mypiHome(), file) ? "user" : "temporary";
  return { path: record.path, source: "local", scope, origin: "top-level" };
}
