/**
 * One MCP server: connect (bounded by `connectTimeoutMs`), list its tools, call them, follow
 * `tools/list_changed`, notice a crash, close. Nothing here throws out of `connect()` or
 * `refresh()`: a failure becomes the connection's `state` and `error`, which the hub reports and
 * which the server's tools answer with. `callTool` rejects; the hub turns that into a result.
 *
 * States: connecting → connected | failed (never came up); connected → stopped (the process
 * exited or the transport closed by itself); any → closed (we shut it down).
 */
import { errorMessage } from "@mypi/kernel";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { clientCapabilities, installClientRequests, type ClientServices } from "./client-requests.ts";
import { MAX_TIMEOUT_MS, usesOAuth, type ServerConfig } from "./config.ts";
import { LoginNeeded, McpOAuthProvider, NoOAuth } from "./oauth.ts";
import { readToolList, type McpCallResult, type McpToolInfo } from "./convert.ts";
import { listPages } from "./paging.ts";
import { ProgressRouter, type ProgressListener } from "./progress.ts";
import { ChildProcessTransport } from "./stdio-transport.ts";

type ServerState = "connecting" | "connected" | "failed" | "stopped" | "closed";

interface CallOptions {
  signal: AbortSignal;
  /** The kernel enforces the call's timeout; the SDK's own is set past it as a backstop. 0 = none. */
  timeoutMs: number;
  onProgress?: ProgressListener;
  /**
   * Call as a task (`params.task`): an answer that creates one is handed to `follow`, which
   * resolves to the task's result. Progress keeps flowing until `follow` settles.
   */
  follow?: (created: Record<string, unknown>) => Promise<McpCallResult>;
}

/** What the SDK reported through `client.onerror` (transport noise, late or stray messages). */
interface SdkErrors {
  count: number;
  first: string;
  last: string;
}

const CLIENT_INFO = { name: "mypi", version: "0.0.0" };

type Sdk = {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
} & Pick<
  typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
  "StreamableHTTPClientTransport" | "StreamableHTTPError"
> &
  Pick<
    typeof import("@modelcontextprotocol/sdk/types.js"),
    "ErrorCode" | "McpError" | "ResultSchema" | "ToolListChangedNotificationSchema"
  >;
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
    StreamableHTTPError: http.StreamableHTTPError,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ResultSchema: types.ResultSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  }));
  return sdk;
}
const SDK_BACKSTOP_MS = 5_000;

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
  /** Why the server is not usable (failed / stopped), or the last refresh problem, or what its tool list lacked. */
  error: string | undefined;
  /** The server's tools as last listed. */
  tools: McpToolInfo[] = [];
  /** The server sends `tools/list_changed` (it said so in its capabilities). */
  listChanged = false;
  /** Called after every completed refresh of the tool list. */
  onToolsChanged: (() => void) | undefined;
  /** Called when a connected server stops by itself. */
  onStopped: (() => void) | undefined;
  /** The SDK's error reports for this server, counted; undefined until the first. */
  sdkErrors: SdkErrors | undefined;
  /** What the server announced in `initialize` (`resources`, `prompts`, `tasks`, …); undefined until connected. */
  capabilities: Record<string, unknown> | undefined;
  /** Notifications that no handler of the SDK takes (`notifications/resources/updated`, …). */
  onNotification: ((method: string, params: Record<string, unknown>) => void) | undefined;
  /** Called once per connection, at its first SDK error (later ones are only counted). */
  onSdkError: ((message: string) => void) | undefined;

  #client: Client | undefined;
  #transport: ChildProcessTransport | StreamableHTTPClientTransport | undefined;
  #sdk: Sdk | undefined;
  #progress = new ProgressRouter();
  /** The first SDK report worth showing, and whether it was shown (once per connection). */
  #pendingReport: string | undefined;
  #sdkReported = false;
  #refreshing: Promise<void> | undefined;
  /** The listing that follows the one running (see `refresh`). */
  #queued: Promise<void> | undefined;

  readonly #services: ClientServices;

  /** `services` answer the server's own requests (roots, …); default: the process's directory as the workspace. */
  constructor(config: ServerConfig, services: ClientServices = { cwd: process.cwd() }) {
    this.config = config;
    this.#services = services;
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
    return this.#queued ?? this.#refreshing;
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
    this.sdkErrors = undefined;
    this.#pendingReport = undefined;
    this.#sdkReported = false;
    const sdk = (this.#sdk = await loadSdk());
    const transport = this.#transport ?? this.#makeTransport(sdk);
    const client = new sdk.Client(CLIENT_INFO, { capabilities: clientCapabilities(this.config, this.#services) });
    this.#transport = transport;
    this.#client = client;
    // Callbacks of a client that was replaced (restart) must not touch the new one.
    const current = () => this.#client === client;
    // Transport noise (a stray stdout line), answers nobody waits for: not fatal (crashes arrive
    // through onclose), but not dropped either.
    client.onerror = (error) => void (current() && this.#sdkError(error));
    const progress = (this.#progress = new ProgressRouter());
    client.onclose = () => current() && this.#closedByItself();
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void (current() && this.refresh()));
    client.fallbackNotificationHandler = async (n) =>
      void (current() && this.onNotification?.(n.method, (n.params ?? {}) as Record<string, unknown>));
    try {
      await installClientRequests(client, this.config, this.#services);
      await client.connect(transport, { timeout: remaining() });
      progress.attach(transport);
      if (this.state !== "connecting" || !current()) return; // closed while starting
      const capabilities = client.getServerCapabilities();
      this.capabilities = capabilities;
      this.listChanged = capabilities?.tools?.listChanged === true;
      this.tools = capabilities?.tools ? await this.#listAll(deadline) : [];
      if (this.state !== "connecting" || !current()) return;
      this.state = "connected";
      this.#reportSdkError(); // what the SDK reported while the server started (stray stdout lines)
    } catch (error) {
      if (this.state !== "connecting" || !current()) return;
      // A server that exited before it answered: the stderr line its failure quotes may still be
      // in the pipe (the request fails as soon as the process is gone).
      if (transport instanceof ChildProcessTransport) await transport.drained();
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

  /**
   * Fetch the tool list again. A change announced while a listing runs queues one more listing
   * after it (one, however many announcements), so the promise covers every change announced
   * before the call, and a server that announces a change at every listing cannot keep it
   * pending. Never rejects.
   */
  refresh(): Promise<void> {
    if (this.#queued) return this.#queued;
    if (this.#refreshing) {
      this.#queued = this.#refreshing.then(() => {
        this.#queued = undefined;
        return this.refresh();
      });
      return this.#queued;
    }
    // `finally` runs after this assignment, also when the listing is skipped at once (a
    // notification while the server is still starting): the slot is always freed.
    this.#refreshing = this.#listAgain().finally(() => {
      this.#refreshing = undefined;
      this.onToolsChanged?.();
    });
    return this.#refreshing;
  }

  async #listAgain(): Promise<void> {
    if (this.state !== "connected") return;
    try {
      this.tools = await this.#listAll(Date.now() + this.config.connectTimeoutMs);
    } catch (error) {
      if (this.state === "connected") this.error = `refreshing the tool list failed: ${this.#describe(error, "call")}`;
    }
  }

  /**
   * Every page of `tools/list`, read leniently (convert.ts); what was skipped, and a cursor that
   * comes back (pages in a circle), become the connection's `error`, a note in `mcp_status`.
   * The SDK's `listTools` is not used: its schema refuses the whole list for one malformed tool.
   */
  async #listAll(deadline: number): Promise<McpToolInfo[]> {
    const fetchPage = (cursor: string | undefined) =>
      this.#client!.request(
        { method: "tools/list", ...(cursor !== undefined && { params: { cursor } }) },
        this.#sdk!.ResultSchema,
        {
          timeout: Math.max(1, deadline - Date.now()),
        },
      );
    const { items, notes } = await listPages(fetchPage, "tools/list", "tools");
    const { tools, problems } = readToolList(items);
    notes.unshift(...problems);
    this.error = notes.length ? `tools/list: ${notes.join("; ")}` : undefined;
    return tools;
  }

  /** Rejects on protocol errors, a lost connection, abort (with the signal's reason) or the SDK backstop. */
  async callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    const client = this.#client;
    if (!client || this.state !== "connected") throw new Error(`the server is ${this.state}`);
    // `request` with the loosest result schema, not `client.callTool`: the SDK's schema refuses a
    // whole result for one block it does not know (or an image that is not base64, or a result
    // without the `structuredContent` its output schema promised), and the model would get a
    // validation dump instead of what the server did send. convert.ts reads any shape.
    // Progress goes through our own token (progress.ts), not the SDK's `onprogress`.
    const progress = options.onProgress && this.#progress.open(options.onProgress);
    const params = {
      name: tool,
      arguments: args,
      ...(progress && { _meta: { progressToken: progress.token } }),
      ...(options.follow && { task: {} }),
    };
    try {
      const result = await client.request({ method: "tools/call", params }, this.#sdk!.ResultSchema, {
        signal: options.signal,
        timeout: sdkCallTimeout(options.timeoutMs),
      });
      if (options.follow && typeof result.task === "object" && result.task !== null)
        return await options.follow(result);
      return result as McpCallResult;
    } finally {
      progress?.release();
    }
  }

  /**
   * Any request (resources, prompts, tasks), its result read leniently (any object). Rejects like
   * `callTool`; `timeoutMs` 0 means none.
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<Record<string, unknown>> {
    const client = this.#client;
    if (!client || this.state !== "connected") throw new Error(`the server is ${this.state}`);
    const request = { method, ...(params && { params }) };
    const timeout = options.timeoutMs > 0 ? Math.min(options.timeoutMs, MAX_TIMEOUT_MS) : MAX_TIMEOUT_MS;
    return client.request(request, this.#sdk!.ResultSchema, {
      ...(options.signal && { signal: options.signal }),
      timeout,
    });
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
    const store = this.#services.oauthStore;
    const authProvider =
      store && usesOAuth(c)
        ? new McpOAuthProvider({ server: c.name, url: c.url, store, settings: c.oauth || {} })
        : undefined;
    return new sdk.StreamableHTTPClientTransport(new URL(c.url), {
      requestInit: { headers: c.headers },
      ...(authProvider && { authProvider }),
    });
  }

  #stdioTransport(): ChildProcessTransport {
    const c = this.config as Extract<ServerConfig, { transport: "stdio" }>;
    return new ChildProcessTransport({ command: c.command, args: c.args, env: c.env, cwd: c.cwd });
  }

  /**
   * Count every report; show the first that matters once: while the server is up (a server that
   * failed to start is reported for that), and not a broken pipe (the process is gone: its exit
   * is reported).
   */
  #sdkError(error: unknown): void {
    const message = errorMessage(error).slice(0, 300);
    if (this.sdkErrors) {
      this.sdkErrors.count++;
      this.sdkErrors.last = message;
    } else this.sdkErrors = { count: 1, first: message, last: message };
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "EPIPE" || code === "ECONNRESET" || code === "ERR_STREAM_DESTROYED") return;
    this.#pendingReport ??= message;
    if (this.state === "connected") this.#reportSdkError();
  }

  #reportSdkError(): void {
    if (this.#sdkReported || this.#pendingReport === undefined) return;
    this.#sdkReported = true;
    this.onSdkError?.(this.#pendingReport);
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
      const why =
        e.code === "ENOENT" ? 'not found; check "command" and PATH' : e.code === "EACCES" ? "not executable" : e.code;
      return `could not start ${JSON.stringify(this.config.command)} (${why})`;
    }
    // A process that is gone explains itself better than whatever the protocol saw.
    const exit = this.#exitText(phase === "start" ? " before it answered" : "");
    if (exit) return exit;
    if (error instanceof LoginNeeded || error instanceof NoOAuth) return error.message;
    const { McpError, ErrorCode, StreamableHTTPError } = this.#sdk!;
    if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0)
      return httpStatusText(error.code, error.message);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      const ms = phase === "start" ? this.config.connectTimeoutMs : undefined;
      return ms === undefined ? "the request timed out" : `did not answer within ${ms} ms (connectTimeoutMs)`;
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return "the connection closed";
    if (e?.message === "fetch failed" && this.config.transport === "http") {
      return `could not reach ${this.config.url} (${e.cause?.code ?? e.cause?.message ?? "network error"})`;
    }
    if (isSchemaError(error))
      return `its answer does not follow the MCP schema: ${error.issues.map(issueText).join("; ")}`;
    const message = errorMessage(error);
    return message.replace(/^(MCP error -?\d+: )+/, ""); // the server's own message may carry the prefix too
  }
}

/** The SDK's schema check failed: a zod error (not always an `Error`), whose message is its issues as indented JSON. */
function isSchemaError(error: unknown): error is { issues: { path: PropertyKey[]; message: string }[] } {
  const e = error as { name?: unknown; issues?: unknown } | null;
  return (
    typeof e === "object" && e !== null && (e.name === "ZodError" || e.name === "$ZodError") && Array.isArray(e.issues)
  );
}

function issueText(issue: { path: PropertyKey[]; message: string }): string {
  const message = issue.message.replace(/^Invalid input: /, "");
  return issue.path.length ? `${issue.path.map(String).join(".")}: ${message}` : message;
}

/**
 * "the server answered HTTP 404 (check "url"): Not Found": the SDK's message carries the body but
 * not the status, and the body may be a whole HTML page. Tags are dropped, the text cut at 200.
 */
function httpStatusText(status: number, message: string): string {
  const hint =
    status === 401 || status === 403 ? ' (check the credentials in "headers")' : status === 404 ? ' (check "url")' : "";
  const body = message
    .replace(/^Streamable HTTP error: (Error POSTing to endpoint: ?)?/, "")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const excerpt = body.length > 200 ? `${body.slice(0, 200).trimEnd()}…` : body;
  return `the server answered HTTP ${status}${hint}${excerpt ? `: ${excerpt}` : ""}`;
}

function lastLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines[lines.length - 1] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
