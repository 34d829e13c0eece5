/**
 * One MCP server: connect (bounded by `connectTimeoutMs`), list its tools, call them, follow
 * `tools/list_changed`, notice a crash, close. Nothing here throws out of `connect()` or
 * `refresh()`: a failure becomes the connection's `state` and `error`, which the hub reports and
 * which the server's tools answer with. `callTool` rejects; the hub turns that into a result.
 *
 * States: connecting → connected | failed (never came up); connected → stopped (the process
 * exited or the transport closed by itself); any → closed (we shut it down).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MAX_TIMEOUT_MS, type ServerConfig } from "./config.ts";
import type { McpCallResult, McpToolInfo } from "./convert.ts";
import { ChildProcessTransport } from "./stdio-transport.ts";

export type ServerState = "connecting" | "connected" | "failed" | "stopped" | "closed";

export interface CallOptions {
  signal: AbortSignal;
  /** The kernel enforces the call's timeout; the SDK's own is set past it as a backstop. 0 = none. */
  timeoutMs: number;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

const CLIENT_INFO = { name: "mypi", version: "0.0.0" };

type Sdk = {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
} & Pick<typeof import("@modelcontextprotocol/sdk/types.js"), "ErrorCode" | "McpError" | "ToolListChangedNotificationSchema">;
let sdk: Promise<Sdk> | undefined;

/** The SDK's client side, loaded once, on first use: stdio servers are spawned meanwhile. */
export function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, http, types]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  }));
  return sdk;
}
const SDK_BACKSTOP_MS = 5_000;
const MAX_PAGES = 100;

/**
 * The SDK's own timeout for a call (it always sets one): a backstop past the kernel's, kept within
 * what a timer can wait — a timeout near the limit plus the backstop would otherwise fire at once.
 * No call timeout (0) gets the longest timer, which is "none" in practice.
 */
export function sdkCallTimeout(timeoutMs: number): number {
  return timeoutMs > 0 ? Math.min(timeoutMs + SDK_BACKSTOP_MS, MAX_TIMEOUT_MS) : MAX_TIMEOUT_MS;
}

export class McpConnection {
  readonly config: ServerConfig;
  state: ServerState = "connecting";
  /** Why the server is not usable (failed / stopped), or the last refresh problem. */
  error: string | undefined;
  /** The server's tools as last listed. */
  tools: McpToolInfo[] = [];
  /** The server sends `tools/list_changed` (it said so in its capabilities). */
  listChanged = false;
  /** Called after every completed refresh of the tool list. */
  onToolsChanged: (() => void) | undefined;
  /** Called when a connected server stops by itself. */
  onStopped: (() => void) | undefined;

  #client: Client | undefined;
  #transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  #sdk: Sdk | undefined;
  #refreshing: Promise<void> | undefined;
  #again = false;

  constructor(config: ServerConfig) {
    this.config = config;
  }

  get name(): string {
    return this.config.name;
  }

  /** What the server is, for status lines: the command line or the URL. */
  get target(): string {
    const c = this.config;
    return c.transport === "stdio" ? [c.command, ...c.args].join(" ") : c.url;
  }

  /** The refresh in flight, if any (the hub awaits it before a model call). */
  get refreshing(): Promise<void> | undefined {
    return this.#refreshing;
  }

  stderrTail(): string {
    return this.#transport instanceof ChildProcessTransport ? this.#transport.stderrTail() : "";
  }

  offers(tool: string): boolean {
    return this.tools.some((t) => t.name === tool);
  }

  /** Spawn a stdio server now, before the SDK is loaded; `connect()` goes on from there. */
  spawnEarly(): void {
    if (this.config.transport !== "stdio" || this.#transport) return;
    const transport = this.#stdioTransport();
    this.#transport = transport;
    transport.start().catch(() => {}); // a spawn failure is reported by connect()
  }

  /** Start, `initialize`, list the tools. Resolves when the server is connected or has failed. */
  async connect(): Promise<void> {
    const deadline = Date.now() + this.config.connectTimeoutMs;
    const remaining = () => Math.max(1, deadline - Date.now());
    this.state = "connecting";
    this.error = undefined;
    const sdk = (this.#sdk = await loadSdk());
    const transport = this.#transport ?? this.#makeTransport(sdk);
    const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
    this.#transport = transport;
    this.#client = client;
    // Callbacks of a client that was replaced (restart) must not touch the new one.
    const current = () => this.#client === client;
    client.onerror = () => {}; // transport noise (a stray stdout line); crashes arrive through onclose
    client.onclose = () => current() && this.#closedByItself();
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void (current() && this.refresh()));
    try {
      await client.connect(transport, { timeout: remaining() });
      if (this.state !== "connecting" || !current()) return; // closed while starting
      const capabilities = client.getServerCapabilities();
      this.listChanged = capabilities?.tools?.listChanged === true;
      this.tools = capabilities?.tools ? await this.#listAll(remaining()) : [];
      if (this.state !== "connecting" || !current()) return;
      this.state = "connected";
    } catch (error) {
      if (this.state !== "connecting" || !current()) return;
      this.state = "failed";
      this.error = this.#describe(error, "start");
      this.kill();
      void client.close().catch(() => {});
    }
  }

  /** Close, then connect again with a fresh process or session (the `/mcp restart` command). */
  async restart(): Promise<void> {
    await this.close();
    this.#client = undefined;
    this.#transport = undefined;
    this.spawnEarly();
    await this.connect();
  }

  /** Fetch the tool list again (coalesced: a notification during a refresh runs one more). Never rejects. */
  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again = true;
      return this.#refreshing;
    }
    const run = async () => {
      do {
        this.#again = false;
        if (this.state !== "connected") break;
        try {
          this.tools = await this.#listAll(this.config.connectTimeoutMs);
          this.error = undefined;
        } catch (error) {
          if (this.state === "connected") this.error = `refreshing the tool list failed: ${this.#describe(error, "call")}`;
        }
      } while (this.#again);
      this.#refreshing = undefined;
      this.onToolsChanged?.();
    };
    this.#refreshing = run();
    return this.#refreshing;
  }

  async #listAll(timeout: number): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.#client!.listTools(cursor === undefined ? undefined : { cursor }, { timeout });
      tools.push(...(result.tools as McpToolInfo[]));
      if (!result.nextCursor || result.nextCursor === cursor) break;
      cursor = result.nextCursor;
    }
    return tools;
  }

  /** Rejects on protocol errors, a lost connection, abort (with the signal's reason) or the SDK backstop. */
  async callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    const client = this.#client;
    if (!client || this.state !== "connected") throw new Error(`the server is ${this.state}`);
    const result = await client.callTool({ name: tool, arguments: args }, undefined, {
      signal: options.signal,
      timeout: sdkCallTimeout(options.timeoutMs),
      ...(options.onProgress && { onprogress: options.onProgress }),
    });
    return result as McpCallResult;
  }

  /** Why a call failed, in words the model can act on (no "MCP error -32000" codes alone). */
  describeCallError(error: unknown): string {
    return this.#describe(error, "call");
  }

  /** Close politely (stdio: end stdin, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    await this.#client?.close().catch(() => {});
    await this.#transport?.close().catch(() => {});
  }

  /** Synchronous last resort (process exit): SIGKILL a stdio server's process group. */
  kill(): void {
    if (this.#transport instanceof ChildProcessTransport) this.#transport.kill();
  }

  #makeTransport(sdk: Sdk): ChildProcessTransport | StreamableHTTPClientTransport {
    const c = this.config;
    if (c.transport === "stdio") return this.#stdioTransport();
    return new sdk.StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers } });
  }

  #stdioTransport(): ChildProcessTransport {
    const c = this.config as Extract<ServerConfig, { transport: "stdio" }>;
    return new ChildProcessTransport({ command: c.command, args: c.args, env: c.env, cwd: c.cwd });
  }

  /** The transport closed: a crash when connected; during start-up `connect()` reports it. */
  #closedByItself(): void {
    if (this.state !== "connected") return;
    this.state = "stopped";
    this.error = this.#exitText("") ?? "the connection closed";
    this.onStopped?.();
  }

  /** "exited with code 7; its last stderr line: …" for a stdio server that is gone. */
  #exitText(when: string): string | undefined {
    const transport = this.#transport;
    if (!(transport instanceof ChildProcessTransport) || !transport.exit) return undefined;
    const { code, signal } = transport.exit;
    const how = `${code !== null ? `exited with code ${code}` : `was killed by ${signal}`}${when}`;
    const last = lastLine(transport.stderrTail());
    return last ? `${how}; its last stderr line: ${last}` : how;
  }

  #describe(error: unknown, phase: "start" | "call"): string {
    const e = error as NodeJS.ErrnoException & { code?: unknown; cause?: { code?: string; message?: string } };
    if (this.config.transport === "stdio" && typeof e?.code === "string" && e.syscall?.startsWith("spawn")) {
      const why = e.code === "ENOENT" ? "not found; check \"command\" and PATH" : e.code === "EACCES" ? "not executable" : e.code;
      return `could not start ${JSON.stringify(this.config.command)} (${why})`;
    }
    // A process that is gone explains itself better than whatever the protocol saw.
    const exit = this.#exitText(phase === "start" ? " before it answered" : "");
    if (exit) return exit;
    const { McpError, ErrorCode } = this.#sdk!;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      const ms = phase === "start" ? this.config.connectTimeoutMs : undefined;
      return ms === undefined ? "the request timed out" : `did not answer within ${ms} ms (connectTimeoutMs)`;
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return "the connection closed";
    if (e?.message === "fetch failed" && this.config.transport === "http") {
      return `could not reach ${this.config.url} (${e.cause?.code ?? e.cause?.message ?? "network error"})`;
    }
    const message = error instanceof Error ? error.message : String(error);
    return message.replace(/^MCP error -?\d+: /, "");
  }
}

function lastLine(text: string): string {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  const line = lines[lines.length - 1] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
