/**
 * The stdio transport: MCP over a child process's stdin/stdout (one JSON-RPC message per line),
 * written here rather than taken from the SDK because mypi needs what the SDK's transport keeps
 * to itself:
 * - the child in its own process group, so closing kills what it started too (`npx` → node);
 * - its exit code and the tail of its stderr, so a crash is reported with its cause;
 * - an immediate kill (a server that never answered `initialize`, and process exit) besides the
 *   polite close (end stdin, then SIGTERM, then SIGKILL);
 * - no import of the SDK, so the servers can be spawned while the SDK is still loading;
 * - no wait without end: a server that closes its stdout but keeps running is stopped, and a
 *   helper the server left holding its pipes does not hold up `close` (or the news of a crash).
 * The SDK's `Protocol` checks every message's shape; this file frames lines, and puts an answer
 * the SDK would not recognise (and so leave its request waiting) into the one shape it takes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage, isRecord } from "@mypi/kernel";

interface StdioTransportOptions {
  command: string;
  args: string[];
  /** Added to the SDK's small default environment (PATH, HOME, USER, SHELL, TERM, LOGNAME). */
  env: Record<string, string>;
  cwd: string;
  /** How long `close()` waits after ending stdin, and again after SIGTERM. Default 1000. */
  closeGraceMs?: number;
}

const STDERR_TAIL_CHARS = 2000;
/** A line longer than this cannot be a sane message (the SDK's own limit). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
const OWN_GROUP = process.platform !== "win32";
/** What a server inherits besides its configured `env` (the MCP SDK's choice: sudo's defaults). */
const INHERITED_ENV =
  process.platform === "win32"
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "PROGRAMFILES",
      ]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

function inheritedEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = env[key];
    if (value !== undefined && !value.startsWith("()")) out[key] = value; // "()…" is a shell function export
  }
  return out;
}

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioTransportOptions;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #started: Promise<void> | undefined;
  #child: ChildProcess | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #exited: Promise<void> | undefined;
  #stderr = "";

  constructor(options: StdioTransportOptions) {
    this.#options = options;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the process ended, once it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.#exit;
  }

  /**
   * Settles once a process that exited has closed its pipes, so that `stderrTail()` holds all it
   * wrote ('exit' can come before the last stderr bytes are read); at once when it has not exited
   * (or never started). A helper holding the pipes delays it by the close grace at most.
   */
  async drained(): Promise<void> {
    if (this.#exit && this.#exited) await this.#exited;
  }

  /** The last lines the server wrote to stderr (up to ~2000 characters), trimmed. */
  stderrTail(): string {
    return this.#stderr.trim();
  }

  /** Spawn the process. Idempotent: the hub starts it early and the SDK's `connect` calls it again. */
  start(): Promise<void> {
    this.#started ??= this.#spawn();
    return this.#started;
  }

  #spawn(): Promise<void> {
    const { command, args, env, cwd } = this.#options;
    const grace = this.#options.closeGraceMs ?? 1000;
    return new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env: { ...inheritedEnvironment(), ...env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: OWN_GROUP,
        shell: false,
        windowsHide: true,
      });
      this.#child = child;
      let started = false;
      this.#exited = new Promise<void>((done) => child.once("close", () => done()));
      const processExited = new Promise<void>((done) => child.once("exit", () => done()));
      child.once("spawn", () => {
        started = true;
        resolve();
      });
      child.once("error", (error) => {
        if (!started) reject(error);
        else this.onerror?.(error);
      });
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        // The pipes close with the process, unless a helper it started (in a session of its own,
        // out of reach of the group kill) holds them: they are let go after the grace.
        void settlesWithin(this.#exited!, grace).then((closed) => closed || this.#destroyPipes());
      });
      child.once("close", () => {
        // An exit before `spawn` was reported as the start error; nothing was connected.
        if (started) this.onclose?.();
      });
      child.stdout!.on("data", (chunk: Buffer) => this.#receive(chunk));
      // A spawn that failed ends stdout too, without a process.
      child.stdout!.once("end", () => {
        if (started) void this.#stdoutEnded(processExited, grace);
      });
      child.stderr!.setEncoding("utf8").on("data", (text: string) => {
        this.#stderr = (this.#stderr + text).slice(-STDERR_TAIL_CHARS);
      });
      // A write to a process that just died must not become an uncaught 'error'.
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("error", (error) => this.onerror?.(error));
    });
  }

  /**
   * No answer can come any more. A process that is not exiting anyway would leave every call
   * waiting for its timeout (or for ever, with none), so it is stopped.
   */
  async #stdoutEnded(processExited: Promise<void>, grace: number): Promise<void> {
    if (await settlesWithin(processExited, grace)) return;
    this.#stderr += "\n[mypi] the server closed its stdout while running; it was stopped";
    this.kill();
  }

  /** Split stdout into lines; each line is one message. */
  #receive(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const line = Buffer.concat([...this.#pending, chunk.subarray(start, nl)])
        .toString("utf8")
        .replace(/\r$/, "");
      this.#pending = [];
      this.#pendingBytes = 0;
      start = nl + 1;
      if (line.trim() !== "") this.#deliver(line);
    }
    if (start < chunk.length) {
      this.#pending.push(chunk.subarray(start));
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > MAX_LINE_BYTES) {
        // The stream cannot be resynchronised: stop the server rather than buffer without end.
        this.#pending = [];
        this.#stderr += `\n[mypi] the server wrote a line over ${MAX_LINE_BYTES} bytes to stdout and was stopped`;
        this.onerror?.(new Error(`message over ${MAX_LINE_BYTES} bytes`));
        this.kill();
      }
    }
  }

  #deliver(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      // Not JSON (a server logging to stdout): reported, skipped.
      this.onerror?.(new Error(`a line on stdout that is not JSON: ${errorMessage(error)}`));
      return;
    }
    this.onmessage?.(asAnswer(message) ?? (message as JSONRPCMessage));
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || this.#exit || stdin.destroyed) return Promise.reject(new Error("the server process is not running"));
    return new Promise<void>((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** End stdin and wait for the process to leave; SIGTERM, then SIGKILL, if it does not. */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child || !this.#exited) return;
    if (!this.#exit) {
      const grace = this.#options.closeGraceMs ?? 1000;
      child.stdin?.end();
      if (!(await settlesWithin(this.#exited, grace))) {
        this.#signal("SIGTERM");
        if (!(await settlesWithin(this.#exited, grace))) this.#signal("SIGKILL");
      }
    }
    await this.#exited;
    this.#pending = [];
  }

  #destroyPipes(): void {
    for (const pipe of [this.#child?.stdin, this.#child?.stdout, this.#child?.stderr]) pipe?.destroy();
  }

  /** SIGKILL now, synchronously (process exit, a server that never answered). */
  kill(): void {
    if (this.#child && !this.#exit) this.#signal("SIGKILL");
  }

  #signal(signal: NodeJS.Signals): void {
    const child = this.#child;
    if (!child?.pid) return;
    try {
      if (OWN_GROUP) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      child.kill(signal); // the group is gone already; make sure of the child itself
    }
  }
}

/**
 * An answer (an `id`, no `method`) in the shape the SDK recognises: it ignores one with
 * `"error": null` beside the result, without `"jsonrpc"`, with a result that is not an object
 * or an error code that is not an integer, and the request would wait for its timeout (or for
 * ever). A result that is not an object becomes an error answer saying so. Anything else: undefined.
 */
function asAnswer(message: unknown): JSONRPCMessage | undefined {
  if (!isRecord(message) || "method" in message || (typeof message.id !== "string" && typeof message.id !== "number"))
    return undefined;
  const { id, result, error } = message;
  if (isRecord(error)) {
    const code = Number.isInteger(error.code) ? (error.code as number) : INTERNAL_ERROR;
    const text = typeof error.message === "string" ? error.message : JSON.stringify(error);
    return {
      jsonrpc: "2.0",
      id,
      error: { code, message: text, ...(error.data !== undefined && { data: error.data }) },
    };
  }
  if (isRecord(result)) return { jsonrpc: "2.0", id, result };
  const found = result === undefined ? "nothing" : JSON.stringify(result).slice(0, 100);
  return {
    jsonrpc: "2.0",
    id,
    error: { code: INTERNAL_ERROR, message: `its answer has no result object (found ${found})` },
  };
}

/** JSON-RPC's "internal error". */
const INTERNAL_ERROR = -32603;

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}
