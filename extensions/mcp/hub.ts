/**
 * The servers of one session and their tools as mypi tools. The hub connects every configured
 * server (in parallel), registers each server tool as `<server>__<tool>` through `pi`, keeps the
 * registrations in step with `tools/list_changed`, answers calls, and closes everything.
 *
 * Registration follows the server's list:
 * - a new tool is registered;
 * - a tool the server no longer offers is unregistered (`pi.unregisterTool`): the model stops
 *   seeing it, and a call that still names it gets the kernel's "not found" answer;
 * - a tool whose schema or description changed is unregistered and registered anew, so the model
 *   and the argument validation see the new definition.
 * A server that stopped keeps its tools registered: they answer with an error naming the server
 * and why it stopped, which tells the model more than a tool that vanished.
 */
import type { ExtensionAPI } from "@mypi/extension-api";
import { defineTool } from "@mypi/extension-api";
import { errorMessage, errorResult, type Tool, type ToolContext, type ToolResult } from "@mypi/kernel";
import type { ClientServices } from "./client-requests.ts";
import { samePartProblem, usesOAuth, type ConfigProblem, type ServerConfig } from "./config.ts";
import { McpConnection } from "./connection.ts";
import { toJsonSchema, toolDescription, toToolResult, type McpToolInfo } from "./convert.ts";
import { ToolNamer, serverPart } from "./naming.ts";
import { settledOrAborted } from "./settle.ts";
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "./resources.ts";
import { followTask, taskBlocker } from "./tasks.ts";

/** What the hub needs of `pi`. */
export type McpPi = Pick<ExtensionAPI, "registerTool" | "unregisterTool">;

export const STATUS_TOOL = "mcp_status";

interface Registration {
  server: string;
  tool: string;
  /** What was registered: a changed tool has another fingerprint. */
  fingerprint: string;
}

export interface HubOptions {
  pi: McpPi;
  servers: readonly ServerConfig[];
  problems?: readonly ConfigProblem[];
  /** A line for the user (without a prefix): a server that stopped, a tool that could not be registered. */
  report?: (message: string) => void;
  /** What answers the servers' own requests (roots, …); default: the process's directory as the workspace. */
  client?: ClientServices;
  /** A server's notification that neither the SDK nor the hub handles (`notifications/resources/updated`, …). */
  onNotification?: (server: McpConnection, method: string, params: Record<string, unknown>) => void;
}

export class McpHub {
  /** The configured servers, then those added at run time (`addServer`), in that order. */
  readonly connections: McpConnection[];
  readonly configProblems: readonly ConfigProblem[];
  /** Tools that could not be registered or re-registered, by mypi name. */
  readonly toolProblems = new Map<string, string>();
  /** Each server's prompts as slash commands (prompts.ts), and what went wrong listing or registering them. */
  readonly promptCommands = new Map<string, { prompts: string[]; commands: string[]; notes: string[] }>();

  readonly #pi: McpPi;
  readonly #report: (message: string) => void;
  readonly #byServer: Map<string, McpConnection>;
  readonly #namer = new ToolNamer([STATUS_TOOL, LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL]);
  readonly #onNotification: HubOptions["onNotification"];
  readonly #registered = new Map<string, Registration>();
  #loading = true;
  /** Servers being added at run time (`settle` waits for them). */
  readonly #adding = new Set<Promise<void>>();
  readonly #onExit = () => this.killAll();
  readonly #client: ClientServices | undefined;

  constructor(options: HubOptions) {
    this.#pi = options.pi;
    this.#report = options.report ?? (() => {});
    this.#onNotification = options.onNotification;
    this.configProblems = options.problems ?? [];
    this.#client = options.client;
    this.connections = options.servers.map((config) => new McpConnection(config, options.client));
    this.#byServer = new Map(this.connections.map((c) => [c.name, c]));
  }

  /** Connect every server (each bounded by its `connectTimeoutMs`) and register their tools. Never rejects. */
  async start(): Promise<void> {
    process.on("exit", this.#onExit);
    for (const c of this.connections) {
      this.#listen(c);
      c.spawnEarly(); // the servers boot while the SDK loads
    }
    await Promise.all(this.connections.map((c) => c.connect()));
    for (const c of this.connections) this.#follow(c);
    this.sync();
    this.#loading = false;
  }

  /**
   * Connect one more server (`pi.registerMcpServer`), named and hooked like a configured one; its
   * tools are registered once it is connected. Resolves when it is connected or has failed;
   * `settle` waits for it. Rejects only for a name in use.
   */
  async addServer(config: ServerConfig): Promise<McpConnection> {
    if (this.#byServer.has(config.name))
      throw new Error(`an MCP server named "${config.name}" is configured or registered already`);
    const same = this.connections.find((c) => serverPart(c.name) === serverPart(config.name));
    if (same) throw new Error(`MCP server "${config.name}": ${samePartProblem(config.name, same.name)}`);
    const c = new McpConnection(config, this.#client);
    this.connections.push(c);
    this.#byServer.set(c.name, c);
    this.#listen(c);
    c.spawnEarly();
    const connected = c.connect().then(() => {
      if (this.#byServer.get(c.name) !== c) return; // removed while it connected
      this.#follow(c);
      this.sync();
      if (c.state !== "connected")
        this.#report(
          `server "${c.name}" ${c.state}: ${c.error ?? "unknown reason"}; its tools are unavailable (see mcp_status)`,
        );
    });
    this.#adding.add(connected);
    await connected.finally(() => this.#adding.delete(connected));
    return c;
  }

  /** Close a server added at run time and unregister its tools. */
  async removeServer(name: string): Promise<void> {
    const c = this.#byServer.get(name);
    if (!c) return;
    this.#byServer.delete(name);
    this.connections.splice(this.connections.indexOf(c), 1);
    this.promptCommands.delete(name);
    this.sync();
    await c.close();
  }

  /** Before it connects: what the server sends that the hub passes on. */
  #listen(c: McpConnection): void {
    c.onNotification = (method, params) => this.#onNotification?.(c, method, params);
    c.onSdkError = (message) =>
      this.#report(
        `server "${c.name}": the MCP SDK reported: ${message} (later reports of this server are counted in mcp_status)`,
      );
  }

  /** Once it is up: its list changes and its end. */
  #follow(c: McpConnection): void {
    c.onToolsChanged = () => this.sync();
    c.onStopped = () =>
      this.#report(`server "${c.name}" stopped: ${c.error}. Its tools answer with an error from now on.`);
  }

  server(name: string): McpConnection | undefined {
    return this.#byServer.get(name);
  }

  /** The mypi names registered for a server, in its listing order. */
  toolNames(server: string): string[] {
    const tools = this.#byServer.get(server)?.tools ?? [];
    return tools.map((t) => this.#namer.nameFor(server, t.name)).filter((name) => this.#registered.has(name));
  }

  /** Wait for servers being added and tool-list refreshes in flight (they register what changed before resolving). */
  async settle(signal: AbortSignal): Promise<void> {
    await settledOrAborted(
      [...this.#adding, ...this.connections.flatMap((c) => (c.refreshing ? [c.refreshing] : []))],
      signal,
    );
  }

  /** Bring the registrations in line with what the servers offer now. */
  sync(): void {
    const offered = new Map<string, { server: McpConnection; tool: McpToolInfo }>();
    // A server that stopped or was closed keeps its last list: its tools answer with the reason.
    for (const server of this.connections) {
      for (const tool of server.tools) offered.set(this.#namer.nameFor(server.name, tool.name), { server, tool });
    }
    const blocked = new Map<string, string>();
    for (const [name, { server, tool }] of [...offered]) {
      const why = taskBlocker(server, tool);
      if (why) {
        offered.delete(name); // not offered: unregistered below if it was, and said in mcp_status
        blocked.set(name, why);
        continue;
      }
      const fingerprint = fingerprintOf(tool);
      const existing = this.#registered.get(name);
      if (existing?.fingerprint === fingerprint) continue;
      if (existing) this.#unregister(name); // changed on the server: registered anew with the new definition
      this.#register(name, server, tool, fingerprint);
    }
    for (const name of [...this.#registered.keys()]) if (!offered.has(name)) this.#unregister(name);
    for (const name of [...this.toolProblems.keys()]) if (!offered.has(name)) this.toolProblems.delete(name);
    for (const [name, why] of blocked) this.toolProblems.set(name, why);
  }

  #register(name: string, server: McpConnection, tool: McpToolInfo, fingerprint: string): void {
    try {
      this.#pi.registerTool(this.#toTool(name, server, tool));
    } catch (error) {
      const message = `not registered: ${errorMessage(error)}`;
      const known = this.toolProblems.get(name) === message; // every refresh tries again; report once
      this.toolProblems.set(name, message);
      if (!this.#loading && !known) this.#report(`tool ${name} ${message}`);
      return;
    }
    this.toolProblems.delete(name);
    this.#registered.set(name, { server: server.name, tool: tool.name, fingerprint });
  }

  #unregister(name: string): void {
    this.#registered.delete(name);
    try {
      this.#pi.unregisterTool(name);
    } catch (error) {
      // Only after the extension was unloaded (a late list change); nothing is left to remove.
      this.#report(`tool ${name} could not be removed: ${errorMessage(error)}`);
    }
  }

  #toTool(name: string, server: McpConnection, tool: McpToolInfo): Tool {
    const timeoutMs = server.config.timeoutMs;
    return defineTool({
      name,
      description: toolDescription(server.name, tool),
      jsonSchema: toJsonSchema(tool.inputSchema),
      // MCP's readOnlyHint is the server's own claim; it only decides whether calls may overlap.
      parallelSafe: tool.annotations?.readOnlyHint === true,
      // A call a resumed run finds cut off runs again only when the server says that is harmless:
      // it changes nothing (readOnlyHint) or doing it twice is doing it once (idempotentHint).
      rerunnable: tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true,
      ...(timeoutMs > 0 && { timeoutMs }),
      execute: (args: Record<string, unknown>, ctx: ToolContext) => this.call(name, args, ctx),
    });
  }

  /** Run one call of a registered tool. Resolves to an error result for every failure but abort. */
  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const registration = this.#registered.get(name);
    const server = registration && this.#byServer.get(registration.server);
    if (!registration || !server)
      return errorResult(`The tool "${name}" is not known to the MCP extension.`, { tool: name });
    const where = { server: server.name, tool: registration.tool };
    if (server.state !== "connected") {
      return errorResult(
        `The MCP server "${server.name}" is not available: it ${server.state === "stopped" ? "stopped" : "is shut down"} (${server.error ?? "closed"}). Its tools cannot be used now; continue without them.`,
        where,
      );
    }
    if (!server.offers(registration.tool)) {
      const current = this.toolNames(server.name);
      return errorResult(
        `The MCP server "${server.name}" no longer offers the tool "${registration.tool}" (its tool list changed). ` +
          (current.length ? `Its tools now: ${current.join(", ")}.` : "It offers no tools now."),
        where,
      );
    }
    try {
      const asTask = server.tools.find((t) => t.name === registration.tool)?.taskSupport === "required";
      const onStatus = (s: { status: string; message?: string; taskId: string }) =>
        ctx.onUpdate({ content: [{ type: "text", text: s.message ?? `task ${s.status}` }], details: { task: s } });
      const result = await server.callTool(registration.tool, args, {
        signal: ctx.signal,
        timeoutMs: server.config.timeoutMs,
        onProgress: (p) => ctx.onUpdate(progressUpdate(p)),
        ...(asTask && {
          follow: (created: Record<string, unknown>) => followTask(server, created, { signal: ctx.signal, onStatus }),
        }),
      });
      return toToolResult(result, where);
    } catch (error) {
      if (ctx.signal.aborted) throw error; // the kernel answers aborts and timeouts in its own words
      const now: string = server.state; // the call may have outlived the server
      if (now === "stopped") {
        return errorResult(
          `The MCP server "${server.name}" stopped while running "${registration.tool}": ${server.error}.`,
          where,
        );
      }
      if (now === "closed") {
        return errorResult(
          `The MCP server "${server.name}" was shut down by mypi (a reload, /mcp restart or the end of the session) while running "${registration.tool}"; call the tool again if you still need it.`,
          where,
        );
      }
      return errorResult(
        `The MCP server "${server.name}" could not run "${registration.tool}": ${server.describeCallError(error)}`,
        where,
      );
    }
  }

  /** Close a server and connect it again (after a crash, or a fix to the server). Resolves to a report line. */
  async restart(name: string): Promise<string> {
    const server = this.#byServer.get(name);
    if (!server)
      return `There is no MCP server "${name}"; configured: ${this.connections.map((c) => c.name).join(", ")}.`;
    await server.restart();
    this.sync();
    if (server.state !== "connected")
      return `MCP server "${name}" ${server.state}: ${server.error ?? "unknown reason"}`;
    return `MCP server "${name}" restarted with ${this.toolNames(name).length} tools.`;
  }

  /**
   * OAuth login to an HTTP server of this session (`/mcp login <name>`): `show` gets the URL to
   * open; once the tokens are stored the server is connected again. Resolves to a report line.
   */
  async login(name: string, show: (url: string) => void, signal?: AbortSignal): Promise<string> {
    const server = this.#byServer.get(name);
    if (!server)
      return `There is no MCP server "${name}"; configured: ${this.connections.map((c) => c.name).join(", ")}.`;
    const store = this.#client?.oauthStore;
    if (server.config.transport !== "http" || !usesOAuth(server.config) || !store)
      return `MCP server "${name}" does not use OAuth (only HTTP servers without an "Authorization" header and without "oauth": false do).`;
    const { loginWith } = await import("./login-command.ts");
    const result = await loginWith(server.config, store, { onAuthorizationUrl: show, ...(signal && { signal }) });
    return result.ok ? `${result.message} ${await this.restart(name)}` : `mcp: ${result.message}`;
  }

  /** Close every server (stdio: stdin, SIGTERM, SIGKILL). */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
    // Only now: a host that exits during the polite close (a second Ctrl-C) must still kill them.
    process.off("exit", this.#onExit);
  }

  /** Synchronous: SIGKILL every stdio server still running (process exit). */
  killAll(): void {
    for (const c of this.connections) c.kill();
  }
}

function progressUpdate(p: { progress: number; total?: number; message?: string }): ToolResult {
  const amount = p.total !== undefined ? `${p.progress}/${p.total}` : String(p.progress);
  return {
    content: [{ type: "text", text: p.message ? `${p.message} (${amount})` : amount }],
    details: { progress: p.progress, total: p.total, message: p.message },
  };
}

function fingerprintOf(tool: McpToolInfo): string {
  return JSON.stringify([
    tool.description ?? "",
    tool.title ?? "",
    tool.inputSchema ?? null,
    tool.annotations?.readOnlyHint === true,
    tool.annotations?.idempotentHint === true,
    tool.taskSupport ?? null,
  ]);
}
