/**
 * The tools an agent knows. A later registration of a name wins (with a diagnostic); the active
 * set narrows what the model sees; `schemas()` is cached until something changes, because the
 * loop reads it before every model call.
 */
import type { Tool, ToolSchema } from "../types.ts";
import { prepareTool, toolSchema } from "./define.ts";

interface Entry {
  tool: Tool;
  source?: string;
}

export class ToolRegistry {
  /** Called with a human-readable line, e.g. when a registration replaces another. */
  onDiagnostic?: (message: string) => void;

  readonly #entries = new Map<string, Entry>();
  /** `undefined`: every registered tool is active. */
  #active: Set<string> | undefined;
  #schemas: ToolSchema[] | undefined;

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Add a tool; a tool of the same name is replaced (it keeps its place in the order). Throws a `ToolDefinitionError` for a malformed tool. */
  register(tool: Tool, opts: { source?: string } = {}): { replaced?: { source?: string } } {
    prepareTool(tool);
    const previous = this.#entries.get(tool.name);
    this.#entries.set(tool.name, opts.source === undefined ? { tool } : { tool, source: opts.source });
    this.#schemas = undefined;
    if (!previous) return {};
    const by = opts.source === undefined ? "" : ` from ${opts.source}`;
    const of = previous.source === undefined ? "the one registered earlier" : `the one from ${previous.source}`;
    this.onDiagnostic?.(`tool '${tool.name}'${by} replaces ${of}`);
    return { replaced: previous.source === undefined ? {} : { source: previous.source } };
  }

  unregister(name: string): boolean {
    const removed = this.#entries.delete(name);
    if (removed) this.#schemas = undefined;
    return removed;
  }

  /** Any registered tool, active or not. */
  get(name: string): Tool | undefined {
    return this.#entries.get(name)?.tool;
  }

  /** Where a tool came from (the `source` given to `register`). */
  sourceOf(name: string): string | undefined {
    return this.#entries.get(name)?.source;
  }

  /** All registered tools, in registration order. */
  list(): Tool[] {
    return [...this.#entries.values()].map((e) => e.tool);
  }

  /**
   * Restrict the tools the model sees; `undefined` makes every registered tool active again.
   * A name that is not registered throws. A tool unregistered later drops out; registered again, it is back.
   */
  setActive(names: readonly string[] | undefined): void {
    if (names !== undefined) {
      const unknown = names.filter((n) => !this.#entries.has(n));
      if (unknown.length > 0) {
        throw new Error(
          `setActive: unknown tool${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `'${n}'`).join(", ")}; registered: ${[...this.#entries.keys()].join(", ") || "(none)"}`,
        );
      }
    }
    this.#active = names === undefined ? undefined : new Set(names);
    this.#schemas = undefined;
  }

  /** The active tools, in registration order. */
  active(): Tool[] {
    const active = this.#active;
    return this.list().filter((t) => active === undefined || active.has(t.name));
  }

  isActive(name: string): boolean {
    return this.#entries.has(name) && (this.#active === undefined || this.#active.has(name));
  }

  /** The schemas of the active tools as the model sees them; the same frozen array until a change. */
  schemas(): ToolSchema[] {
    this.#schemas ??= Object.freeze(this.active().map(toolSchema)) as ToolSchema[];
    return this.#schemas;
  }
}
