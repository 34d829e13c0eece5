/**
 * One session's MCP: the hub (created with the configured servers, or at the first server an
 * extension registers), and what hangs on its servers — `mcp_status` and `/mcp`, the resource
 * tools and attachments, the prompt commands — registered as servers come.
 *
 * Loaded only when a server is configured or registered, so a session without MCP servers never
 * pays for the SDK.
 */
import type { ExtensionAPI } from "@mypi/extension-api";
import type { Message } from "@mypi/kernel";
import type { ClientServices } from "./client-requests.ts";
import type { ConfigProblem, ServerConfig } from "./config.ts";
import type { McpConnection } from "./connection.ts";
import { McpHub } from "./hub.ts";
import { listPrompts, registerPrompts } from "./prompts.ts";
import { Attachments, offersResources, resourceTools } from "./resources.ts";
import { settledOrAborted } from "./settle.ts";
import { registerStatus } from "./status.ts";

interface McpSessionOptions {
  pi: ExtensionAPI;
  /** Where reports go (a notification with a UI, else stderr). */
  report: (line: string) => void;
  /** Where a command's complaint goes without a UI. */
  log: (line: string) => void;
  /** What answers the servers' own requests (roots, forms, sampling, OAuth tokens). */
  client?: ClientServices;
}

export class McpSession {
  readonly hub: McpHub;
  readonly attachments: Attachments;
  readonly #options: McpSessionOptions;
  #resourceTools = false;
  /** Prompt listings after `prompts/list_changed`, in flight. */
  readonly #listing = new Set<Promise<void>>();

  constructor(
    options: McpSessionOptions,
    servers: readonly ServerConfig[] = [],
    problems: readonly ConfigProblem[] = [],
  ) {
    this.#options = options;
    const onNotification = (server: McpConnection, method: string, params: Record<string, unknown>) => {
      if (method === "notifications/resources/updated" && typeof params.uri === "string")
        this.attachments.updated(server, params.uri);
      if (method === "notifications/prompts/list_changed") void this.promptsChanged(server);
    };
    this.hub = new McpHub({
      pi: options.pi,
      servers,
      problems,
      report: options.report,
      onNotification,
      ...(options.client && { client: options.client }),
    });
    this.attachments = new Attachments(this.hub, options.report);
  }

  /** Connect the configured servers and register what they offer. */
  async start(): Promise<void> {
    await this.hub.start();
    registerStatus(this.#options.pi, this.hub);
    // Listed in parallel, registered in the configuration's order (so /help's order is stable).
    const listings = await Promise.all(this.hub.connections.map((c) => listPrompts(c)));
    for (const [i, c] of this.hub.connections.entries()) this.#commands(c, listings[i]!);
    this.#offerResources();
  }

  /** The messages the model gets, once list changes, servers being added and attached resources are current. */
  async beforeModelCall(messages: Message[], signal: AbortSignal): Promise<Message[] | undefined> {
    await this.hub.settle(signal);
    await settledOrAborted([...this.#listing], signal);
    return this.attachments.current(messages, signal);
  }

  /** Connect a server an extension registered (checked by `parseRegistered`); its prompts and resources follow. */
  async add(config: ServerConfig): Promise<void> {
    const c = await this.hub.addServer(config);
    if (c.state !== "connected" || this.hub.server(c.name) !== c) return;
    this.#commands(c, await listPrompts(c));
    this.#offerResources();
  }

  /**
   * Register the prompts not registered yet (a command cannot be taken back: one whose prompt
   * the server dropped stays, and the server's refusal is what its user hears).
   */
  #commands(c: McpConnection, listed: Awaited<ReturnType<typeof listPrompts>>): void {
    const { pi, log } = this.#options;
    const known = this.hub.promptCommands.get(c.name);
    const fresh = listed.prompts.filter((p) => !known?.prompts.includes(p.name));
    const registered = registerPrompts({ pi, server: c, prompts: fresh, lookup: () => this.hub.server(c.name), log });
    if (!known && !listed.prompts.length && !listed.notes.length) return;
    this.hub.promptCommands.set(c.name, {
      prompts: [...(known?.prompts ?? []), ...fresh.map((p) => p.name)],
      commands: [...(known?.commands ?? []), ...registered.commands],
      notes: [...listed.notes, ...registered.problems],
    });
  }

  /** `notifications/prompts/list_changed`: new prompts become commands (before the next model call). */
  promptsChanged(c: McpConnection): Promise<void> {
    const listing = listPrompts(c)
      .then((listed) => this.#commands(c, listed))
      .finally(() => this.#listing.delete(listing));
    this.#listing.add(listing);
    return listing;
  }

  /** The resource tools, once some server offers resources. */
  #offerResources(): void {
    if (this.#resourceTools || !this.hub.connections.some(offersResources)) return;
    this.#resourceTools = true;
    for (const tool of resourceTools(this.hub)) this.#options.pi.registerTool(tool);
  }
}
