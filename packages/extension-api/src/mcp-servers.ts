/**
 * MCP servers that extensions add at run time (`pi.registerMcpServer`, a Pi 1.x method). The
 * manager only keeps the registrations and who made them; the extension that connects MCP
 * servers (mypi's `mcp`) offers itself as the provider by emitting its provider object on the
 * bus channel `MCP_PROVIDER_CHANNEL`, and is handed every registration, past and future.
 *
 * - Registered before a provider exists (an extension that loads before `mcp`): kept, and given
 *   to the provider when it comes; still waiting when the extensions are bound to a host: a
 *   diagnostic (stderr in the CLI). Registered after that, with no provider: a coded error
 *   saying how to load one.
 * - A name is one extension's: another extension's registration of it throws; the same
 *   extension registering it again replaces its earlier entry.
 * - The provider validates the config and may refuse it (it throws; nothing is kept).
 * - An extension that is unloaded (a reload) takes its registrations with it.
 */
import { errorMessage } from "@mypi/kernel";
import { ExtensionError } from "./errors.ts";

/** The bus channel on which an MCP extension offers its provider (`null` withdraws it). */
export const MCP_PROVIDER_CHANNEL = "mypi:mcp-provider";

export interface RegisteredMcpServer {
  name: string;
  /** The extension that registered it. */
  extension: string;
  /** The entry as given: the same keys as a server in `mcp.json`. */
  config: Record<string, unknown>;
}

/** What an MCP extension offers; `add` throws for a config it cannot use. */
export interface McpServerProvider {
  add(server: RegisteredMcpServer): void;
  remove(name: string): void;
}

export class McpServerRegistry {
  readonly #entries = new Map<string, RegisteredMcpServer>();
  #provider: { extension: string; provider: McpServerProvider } | undefined;
  readonly #diagnostic: (message: string) => void;
  readonly #reported = new Set<string>();

  constructor(diagnostic: (message: string) => void) {
    this.#diagnostic = diagnostic;
  }

  register(extension: string, name: unknown, config: unknown, loaded: boolean): void {
    const fail = (message: string) => new ExtensionError("MYPI_INVALID_MCP_SERVER", message, { extension });
    if (typeof name !== "string" || name.trim() === "")
      throw fail(
        `registerMcpServer(${JSON.stringify(name) ?? String(name)}, …): the first argument is the server's name, a non-empty string`,
      );
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw fail(
        `registerMcpServer("${name}", …): the second argument is the server's entry, as in mcp.json: { command, args? } or { url, headers? }`,
      );
    }
    const owner = this.#entries.get(name)?.extension;
    if (owner !== undefined && owner !== extension) {
      throw fail(
        `registerMcpServer("${name}", …): the extension ${owner} registered an MCP server of that name; choose another name`,
      );
    }
    if (!this.#provider && loaded) {
      throw new ExtensionError(
        "MYPI_NO_MCP",
        `registerMcpServer("${name}", …): no MCP extension is loaded to connect it; mypi's mcp extension loads when an mcp.json exists, or with -e mcp`,
        { extension },
      );
    }
    const entry: RegisteredMcpServer = { name, extension, config: { ...(config as Record<string, unknown>) } };
    if (owner !== undefined) this.#provider?.provider.remove(name);
    this.#provider?.provider.add(entry); // throws for a config it refuses: nothing is kept
    this.#entries.set(name, entry);
  }

  unregister(extension: string, name: unknown): void {
    const entry = typeof name === "string" ? this.#entries.get(name) : undefined;
    if (!entry || entry.extension !== extension) {
      const yours = [...this.#entries.values()].filter((e) => e.extension === extension).map((e) => e.name);
      throw new ExtensionError(
        "MYPI_INVALID_MCP_SERVER",
        `unregisterMcpServer(${JSON.stringify(name) ?? String(name)}): ${entry ? `the extension ${entry.extension} registered it` : "no MCP server of that name was registered"}; yours: ${yours.join(", ") || "none"}`,
        { extension },
      );
    }
    this.#entries.delete(entry.name);
    this.#provider?.provider.remove(entry.name);
  }

  list(): RegisteredMcpServer[] {
    return [...this.#entries.values()].map((e) => ({ ...e, config: { ...e.config } }));
  }

  /** An extension emitted on `MCP_PROVIDER_CHANNEL`: it connects registrations from now on (`null`: it stops). */
  offer(extension: string, provider: unknown): void {
    if (provider === null || provider === undefined) {
      if (this.#provider?.extension === extension) this.#provider = undefined;
      return;
    }
    const p = provider as McpServerProvider;
    if (typeof p.add !== "function" || typeof p.remove !== "function") {
      this.#diagnostic(
        `${extension}: emitted on ${MCP_PROVIDER_CHANNEL} something that is not an MCP server provider ({ add, remove }); ignored`,
      );
      return;
    }
    this.#provider = { extension, provider: p };
    for (const entry of [...this.#entries.values()]) {
      try {
        p.add(entry);
      } catch (error) {
        this.#entries.delete(entry.name);
        this.#diagnostic(`${entry.extension}: MCP server "${entry.name}" was not added: ${errorMessage(error)}`);
      }
    }
  }

  /**
   * The extensions are loaded and bound to a host: registrations still waiting for a provider
   * will not be connected. Each is reported once, through `report` (a diagnostic).
   */
  reportUnconnected(report: (extension: string, message: string) => void): void {
    if (this.#provider) return;
    for (const entry of this.#entries.values()) {
      if (this.#reported.has(entry.name)) continue;
      this.#reported.add(entry.name);
      report(
        entry.extension,
        `registerMcpServer("${entry.name}", …): no MCP extension is loaded to connect it; mypi's mcp extension loads when an mcp.json exists, or with -e mcp`,
      );
    }
  }

  /** An extension was unloaded: its registrations go, and so does its provider. */
  dropExtension(extension: string): void {
    if (this.#provider?.extension === extension) this.#provider = undefined;
    for (const entry of [...this.#entries.values()]) {
      if (entry.extension !== extension) continue;
      this.#entries.delete(entry.name);
      this.#provider?.provider.remove(entry.name);
    }
  }
}
