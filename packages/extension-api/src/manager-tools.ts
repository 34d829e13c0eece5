/**
 * The manager's tools: one kernel `ToolRegistry`, made with the manager and handed to the
 * `Agent` a host builds, so the tools, the active set and each tool's owner (`source`: an
 * extension's name; none for a tool the host gave) live in one place whether or not an agent is
 * bound. The extensions' tools enter it through `sync` (the merged view of the attached
 * records); what depends on the tools (the host's system prompt) subscribes with `onChange`.
 */
import { ToolRegistry, toolSchema, type Tool } from "@mypi/kernel";
import type { ExtensionRecord } from "./api.ts";
import { mergeTools, type OnReplace } from "./registrations.ts";
import type { ToolInfo } from "./types.ts";

/** What the tools need of their manager. */
interface ToolsHost {
  /** The attached records, in load order. */
  records(): readonly ExtensionRecord[];
  /** Report a replacement once (`key` identifies it). */
  once: OnReplace;
  diagnostic(message: string): void;
}

export class ExtensionTools {
  /**
   * No `onDiagnostic`: the registry would call every re-registration a replacement, a reload's
   * new version of a tool included. Clashes between extensions are `mergeTools`' to report (once
   * per pair); `sync` reports the one clash only the registry sees (an extension's tool over the host's).
   */
  readonly registry = new ToolRegistry();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly host: ToolsHost) {}

  /** The extensions' tools, a later extension's tool replacing an earlier one of the same name. */
  fromExtensions(): { tool: Tool; extension: string }[] {
    return this.registry.list().flatMap((tool) => {
      const extension = this.registry.sourceOf(tool.name);
      return extension === undefined ? [] : [{ tool, extension }];
    });
  }

  /** Every tool with its owner (`host` for a tool the host gave). */
  infos(): ToolInfo[] {
    return this.registry.list().map((t) => ({ ...toolSchema(t), source: this.registry.sourceOf(t.name) ?? "host" }));
  }

  /** An extension's name, `host`, or undefined when no tool has the name. */
  owner(name: string): string | undefined {
    if (!this.registry.get(name)) return undefined;
    return this.registry.sourceOf(name) ?? "host";
  }

  activeNames(): string[] {
    return this.registry.active().map((t) => t.name);
  }

  /** The known tools of `names` become the active set; unknown ones are a diagnostic naming `extension`. */
  setActive(extension: string, names: readonly string[]): void {
    const unknown = names.filter((n) => !this.registry.get(n));
    if (unknown.length)
      this.host.diagnostic(`${extension}: setActiveTools ignores unknown tool(s) ${unknown.join(", ")}`);
    this.registry.setActive(names.filter((n) => this.registry.get(n)));
    this.notify();
  }

  /**
   * Bring the registry in step with the attached records: an extension's tool that is gone
   * leaves, a new or newer one is registered (a tool keeps its place when replaced).
   */
  sync(): void {
    const current = new Map(mergeTools(this.host.records(), this.host.once).map((t) => [t.tool.name, t] as const));
    let changed = false;
    for (const tool of this.registry.list()) {
      if (this.registry.sourceOf(tool.name) !== undefined && !current.has(tool.name))
        changed = this.registry.unregister(tool.name) || changed;
    }
    for (const [name, { tool, extension }] of current) {
      if (this.registry.get(name) === tool) continue;
      this.register(tool, extension);
      changed = true;
    }
    if (changed) this.keepLoadOrder([...current.values()]);
    if (changed) this.notify();
  }

  /**
   * The extensions' tools listed in their extensions' order, whatever order they arrived in (the
   * workspace's extensions load after the `-e` ones, once it is trusted, yet come before them).
   */
  private keepLoadOrder(merged: readonly { tool: Tool; extension: string }[]): void {
    const inRegistry = this.fromExtensions().map((t) => t.tool.name);
    if (inRegistry.every((name, i) => name === merged[i]?.tool.name)) return;
    for (const name of inRegistry) this.registry.unregister(name);
    for (const { tool, extension } of merged) this.registry.register(tool, { source: extension });
  }

  /**
   * The host's own tools, placed before the extensions' (as if the host had registered them
   * first): an extension's tool of the same name replaces the host's, with a diagnostic.
   */
  addHostTools(tools: readonly Tool[]): void {
    if (!tools.length) return;
    const extensions = this.fromExtensions();
    for (const { tool } of extensions) this.registry.unregister(tool.name);
    for (const tool of tools) this.registry.register(tool);
    for (const { tool, extension } of extensions) this.register(tool, extension);
    this.notify();
  }

  /** Drop the tools a host gave (its agent is gone); the extensions' stay. */
  removeHostTools(): void {
    let changed = false;
    for (const tool of this.registry.list()) {
      if (this.registry.sourceOf(tool.name) === undefined) changed = this.registry.unregister(tool.name) || changed;
    }
    if (changed) this.notify();
  }

  /**
   * `setActiveTools` a factory called while it loaded (`record.activeToolsRequest`), applied once
   * its tools are attached and in the registry (they count as known only then).
   */
  applyRequest(record: ExtensionRecord): void {
    const names = record.activeToolsRequest;
    if (!names) return;
    delete record.activeToolsRequest;
    this.setActive(record.name, names);
  }

  /** Call `listener` after every change of the tools or the active set; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private register(tool: Tool, extension: string): void {
    const { replaced } = this.registry.register(tool, { source: extension });
    // A replaced entry with a source was an extension's (an older version, or a clash
    // `mergeTools` reported); one without is a tool the host gave.
    if (replaced && replaced.source === undefined)
      this.host.diagnostic(`tool '${tool.name}' from ${extension} replaces the one the host registered`);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
