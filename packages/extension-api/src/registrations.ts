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
export function orderedHandlers(
  records: readonly ExtensionRecord[],
  name: EventName,
): { record: ExtensionRecord; h: HandlerRecord }[] {
  const list = records.flatMap((record, index) =>
    record.handlers.filter((h) => h.name === name).map((h) => ({ record, h, index })),
  );
  return list.sort(
    (a, b) => RANK[a.h.order ?? "none"] - RANK[b.h.order ?? "none"] || a.index - b.index || a.h.seq - b.h.seq,
  );
}

/**
 * The effective order of handlers per event, as extension names (outermost first); a handler
 * with a `label` is `name[label]`.
 */
export function handlerOrder(
  records: readonly ExtensionRecord[],
  names: readonly EventName[],
): Partial<Record<EventName, string[]>> {
  const out: Partial<Record<EventName, string[]>> = {};
  for (const name of names) {
    const extensions = orderedHandlers(records, name).map(({ record, h }) =>
      h.label === undefined ? record.name : `${record.name}[${h.label}]`,
    );
    if (extensions.length) out[name] = extensions;
  }
  return out;
}

/** The same, each handler with its `order` mark (`pre` / `post`) when it has one. */
export function handlerChains(
  records: readonly ExtensionRecord[],
  names: readonly EventName[],
): Partial<Record<EventName, { extension: string; order?: "pre" | "post" }[]>> {
  const out: Partial<Record<EventName, { extension: string; order?: "pre" | "post" }[]>> = {};
  for (const name of names) {
    const chain = orderedHandlers(records, name).map(({ record, h }) => {
      const extension = h.label === undefined ? record.name : `${record.name}[${h.label}]`;
      return h.order ? { extension, order: h.order } : { extension };
    });
    if (chain.length) out[name] = chain;
  }
  return out;
}

/**
 * The tools of all extensions by name. A replaceable extension's tool (the builtin tools') gives
 * way to a later one of the same name; otherwise the first registration wins, as in Pi (a load
 * that clashes fails, `ExtensionManager.conflict`; this covers names registered afterwards).
 */
export function mergeTools(
  records: readonly ExtensionRecord[],
  onReplace: OnReplace,
): { tool: Tool; extension: string }[] {
  const byName = new Map<string, { tool: Tool; record: ExtensionRecord }>();
  for (const record of records) {
    for (const tool of record.tools.values()) {
      const previous = byName.get(tool.name);
      const key = `tool:${tool.name}:${previous?.record.name}:${record.name}`;
      if (previous && !previous.record.replaceable) {
        onReplace(
          key,
          `tool '${tool.name}' from ${record.name} is not used: ${previous.record.name} registered it first; rename one of them`,
        );
        continue;
      }
      if (previous)
        onReplace(key, `tool '${tool.name}' from ${record.name} replaces the one from ${previous.record.name}`);
      byName.set(tool.name, { tool, record });
    }
  }
  return [...byName.values()].map(({ tool, record }) => ({ tool, extension: record.name }));
}

interface MergedCommand {
  name: string;
  description?: string;
  handler: (args: string, ctx: CommandContext) => unknown;
  record: ExtensionRecord;
}

/**
 * The commands of all extensions by the name they are run with. A name two extensions registered
 * is Pi's: each runs as `name:1`, `name:2`, … in load order (a number another command already
 * has is skipped), and the bare name runs none of them; said once per name.
 */
export function mergeCommands(records: readonly ExtensionRecord[], onReplace: OnReplace): Map<string, MergedCommand> {
  const all = records.flatMap((record) => [...record.commands].map(([name, def]) => ({ name, def, record })));
  const owners = new Map<string, ExtensionRecord[]>();
  for (const { name, record } of all) owners.set(name, [...(owners.get(name) ?? []), record]);
  const taken = new Set(all.map((c) => c.name).filter((name) => owners.get(name)!.length === 1));
  const seen = new Map<string, number>();
  const map = new Map<string, MergedCommand>();
  for (const { name, def, record } of all) {
    let invocation = name;
    if (owners.get(name)!.length > 1) {
      let n = (seen.get(name) ?? 0) + 1;
      while (taken.has(`${name}:${n}`)) n++;
      seen.set(name, n);
      invocation = `${name}:${n}`;
      taken.add(invocation);
    }
    map.set(invocation, {
      name: invocation,
      ...(def.description !== undefined && { description: def.description }),
      handler: def.handler,
      record,
    });
  }
  for (const [name, records] of owners) {
    if (records.length < 2) continue;
    const as = [...map.values()]
      .filter((c) => c.name.startsWith(`${name}:`) && records.includes(c.record))
      .map((c) => `/${c.name}`);
    onReplace(
      `command:${name}:${records.map((r) => r.name).join(",")}`,
      `command /${name} is registered by ${records.map((r) => r.name).join(" and ")}: run them as ${as.join(" and ")}`,
    );
  }
  return map;
}

/**
 * A command handler's ctx: the extension's members and the command-only actions, all own and
 * enumerable (Pi's command ctx spreads whole), with the call's `signal`.
 */
export function commandContext(
  base: ExtensionContext,
  signal: AbortSignal | undefined,
  actions: Pick<CommandContext, "waitForIdle" | "reload" | "fork" | "newSession">,
): CommandContext {
  const ctx = Object.defineProperties({}, Object.getOwnPropertyDescriptors(base)) as CommandContext;
  const own = (value: unknown) => ({ value, enumerable: true, configurable: true, writable: true });
  return Object.defineProperties(ctx, {
    ...(signal && { signal: own(signal) }),
    waitForIdle: own(actions.waitForIdle),
    newSession: own(actions.newSession),
    fork: own(actions.fork),
    reload: own(actions.reload),
  });
}

/** The commands as listed (`getCommands`): the extensions', then the host's whose name no extension took. */
export function listCommands(
  commands: ReadonlyMap<string, MergedCommand>,
  resourceCommands: readonly CommandInfo[],
  cwd: string,
): CommandInfo[] {
  const own = [...commands.values()].map(({ name, description, record }) => {
    const info: CommandInfo = {
      name,
      source: "extension",
      extension: record.name,
      sourceInfo: extensionSourceInfo(record, cwd),
    };
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
      handlers: r.handlers.map((h) => ({
        name: h.name,
        ...(h.order && { order: h.order }),
        ...(h.agents === "root" && { agents: "root" as const }),
      })),
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
function extensionSourceInfo(
  record: Pick<ExtensionRecord, "name" | "path" | "realPath">,
  cwd: string,
): NonNullable<CommandInfo["sourceInfo"]> {
  if (record.path === undefined)
    return { path: `<inline:${record.name}>`, source: "inline", scope: "temporary", origin: "top-level" };
  const file = record.realPath ?? record.path;
  const scope = inside(`${cwd}/.mypi`, record.path)
    ? "project"
    : inside(mypiHome(), record.path) || inside(mypiHome(), file)
      ? "user"
      : "temporary";
  return { path: record.path, source: "local", scope, origin: "top-level" };
}
