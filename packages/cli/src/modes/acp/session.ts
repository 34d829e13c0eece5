/**
 * One ACP session: a mypi host over one session file, in the client's folder, with the same
 * discovery, trust decision, settings, extensions, policies and model choice as any mypi run
 * there (`run.ts` opens it; the mode only adds its dialogs, the client's MCP servers and the
 * `acp-tools` handler). The ACP session id is the mypi session's id, so `session/load` finds the
 * file again.
 */
import { Writable } from "node:stream";
import { isAbsolute } from "node:path";
import {
  RequestError,
  type AgentContext,
  type AvailableCommand,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import { parseSlashCommand, type ExtensionFactory } from "@mypi/extension-api";
import { SessionManager, sessionFilesByIdPrefix, type AgentEndEvent } from "@mypi/kernel";
import type { CliIO } from "../../io.ts";
import { openHostSession, type ModeStart, type RunSession } from "../../commands/run-mode.ts";
import type { WorkspaceRequest } from "../../workspace/extension-loading.ts";
import { extensionErrorLine, extensionLogLine } from "../print.ts";
import { clientFiles } from "./client-fs.ts";
import { configOptions } from "./config.ts";
import { clientMcpServers } from "./mcp.ts";
import { followModes } from "./modes.ts";
import { createAcpUI, type AcpUI } from "./permission.ts";
import { promptInput } from "./prompt-content.ts";
import { replayUpdates } from "./replay.ts";
import { SessionUpdates } from "./updates.ts";

/** Opens a workspace as the command line would, with what the mode chooses (`run.ts`'s `prepareMode`); a number is a failure already written to `io.stderr`. */
export type OpenWorkspace = (request: WorkspaceRequest & { io: CliIO }) => Promise<ModeStart | number>;

interface SessionEnv {
  open: OpenWorkspace;
  /** What the client said it offers (`initialize`). */
  capabilities(): ClientCapabilities;
  /** The process's io: stderr for logs (stdout belongs to the protocol). */
  io: CliIO;
  client(): AgentContext | undefined;
}

interface OpenParams {
  cwd: string;
  mcpServers: readonly McpServer[];
  /** `session/load`: the id of the session to continue. */
  load?: string;
}

export class AcpSession {
  readonly host: RunSession;
  readonly start: ModeStart;
  readonly ui: AcpUI;
  readonly updates: SessionUpdates;
  readonly #env: SessionEnv;
  /** Told once, at the start of the first prompt turn: why something of the workspace did not load. */
  readonly #notes: string[];
  readonly #stopListening: (() => void)[] = [];
  #running: Promise<unknown> | undefined;
  #cancelled = false;
  #command: AbortController | undefined;
  #commandsSent = "";

  private constructor(o: {
    env: SessionEnv;
    host: RunSession;
    start: ModeStart;
    ui: AcpUI;
    updates: SessionUpdates;
    notes: string[];
  }) {
    this.#env = o.env;
    this.host = o.host;
    this.start = o.start;
    this.ui = o.ui;
    this.updates = o.updates;
    this.#notes = o.notes;
  }

  get id(): string {
    return this.host.sessionManager.id;
  }

  get cwd(): string {
    return this.start.cwd;
  }

  /** `session/new` (and `session/load` with `load`): the workspace loaded, the host started. */
  static async open(env: SessionEnv, params: OpenParams): Promise<AcpSession> {
    const { cwd, mcpServers, load } = params;
    if (!isAbsolute(cwd))
      throw RequestError.invalidParams({ cwd }, `cwd must be an absolute path (got ${JSON.stringify(cwd)})`);
    let session: AcpSession | undefined;
    const notes: string[] = [];
    const updates = new SessionUpdates({ cwd, send: (update) => session?.send(update) });
    const ui = createAcpUI({
      client: env.client,
      sessionId: () => session?.id,
      checking: () => updates.checking(),
      say: (text) => session?.say(text) ?? false,
      log: (line) => void env.io.stderr.write(`${line}\n`),
    });
    // The handler that tells the client a call passed every check: loaded last, `post`, so it is the chain's last word.
    const tools: ExtensionFactory = (pi) => {
      pi.on("tool_call", (event) => void updates.passed(event.toolCallId), { order: "post" });
    };
    const hostExtensions = [
      { name: "acp-tools", factory: tools },
      ...(mcpServers.length > 0 ? [{ name: "acp-client", factory: clientMcpServers(mcpServers, notes) }] : []),
    ];
    const said: string[] = [];
    const stderr = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        said.push(String(chunk));
        env.io.stderr.write(chunk, () => done());
      },
    });
    const files = clientFiles({
      client: env.client,
      sessionId: () => session?.id,
      capabilities: env.capabilities().fs,
    });
    const start = await env.open({
      cwd,
      ...(files && { files }),
      // Nothing of a workspace writes to stdout: that is the protocol's.
      io: { ...env.io, stdout: env.io.stderr, stderr },
      ui,
      hostExtensions,
      ...(mcpServers.length > 0 && { extraExtensions: ["mcp"] }),
      openSession: (args, dir, sessionDir) =>
        load !== undefined
          ? sessionById(load, dir, sessionDir, args.noSession)
          : args.noSession
            ? SessionManager.inMemory(dir)
            : SessionManager.create({ cwd: dir, dir: sessionDir }),
    });
    if (typeof start === "number") {
      const why = said
        .join("")
        .trim()
        .replace(/^mypi: /gm, "");
      throw new RequestError(
        load !== undefined ? -32002 : -32603,
        `mypi could not ${load !== undefined ? "load the session" : "open a session"} in ${cwd}: ${why || "see its stderr"}`,
        { cwd, ...(load !== undefined && { sessionId: load }) },
      );
    }
    if (start.ws.skipped) {
      const what = start.ws.skipped.resources.join(", ");
      notes.push(
        `This folder is not trusted, so its own ${what} did not load. To trust it, run \`mypi trust ${cwd}\` in a terminal (or add --trust-project to the agent's arguments), then start a new session.`,
      );
    }
    notes.push(...start.loadErrors.map((line) => line.replace(/^mypi: /, "")));
    const host = await openHostSession(start);
    session = new AcpSession({ env, host, start, ui, updates, notes });
    session.#listen();
    return session;
  }

  #listen(): void {
    const { io } = this.#env;
    this.#stopListening.push(
      this.host.subscribe((event) => {
        if (event.type === "extension_error") io.stderr.write(extensionErrorLine(event));
        else if (event.type === "extension_log") io.stderr.write(extensionLogLine(event));
        else this.updates.handle(event);
      }),
    );
    const models = this.start.models;
    this.#stopListening.push(
      models.onChange(() => this.send({ sessionUpdate: "config_option_update", configOptions: configOptions(models) })),
    );
    this.#stopListening.push(followModes(this.host, (update) => this.send(update)));
  }

  /** One `session/update` to the client (redacted as RPC's event lines are); dropped once the connection is gone. */
  send(update: SessionUpdate): void {
    const client = this.#env.client();
    if (!client) return;
    const redact = this.start.ws.redactLines;
    void client
      .notify("session/update", { sessionId: this.id, update: redact ? redact(update) : update })
      .catch(() => {});
  }

  /** Agent text during a prompt turn; false when no turn runs (the caller logs instead). */
  say(text: string): boolean {
    if (!this.#running) return false;
    this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    return true;
  }

  /** `session/load`: the branch so far, as updates. */
  replay(): void {
    for (const update of replayUpdates(this.host.sessionManager.getBranch(), this.cwd)) this.send(update);
  }

  /** `available_commands_update`, when the commands differ from what the client was last told. */
  announceCommands(): void {
    const commands: AvailableCommand[] = this.host.commands().map((c) => ({
      name: c.name,
      description:
        c.description ??
        (c.source === "skill" ? `Skill ${c.name}` : c.source === "prompt" ? `Prompt template ${c.name}` : `/${c.name}`),
      ...((c.argumentHint !== undefined || c.source !== "prompt") && {
        input: { hint: c.argumentHint ?? (c.source === "skill" ? "what to do" : "arguments") },
      }),
    }));
    const key = JSON.stringify(commands);
    if (key === this.#commandsSent) return;
    this.#commandsSent = key;
    this.send({ sessionUpdate: "available_commands_update", availableCommands: commands });
  }

  /** `session/prompt`: one turn; resolves with its stop reason once the run ended. */
  async prompt(blocks: readonly ContentBlock[]): Promise<StopReason> {
    if (this.#running)
      throw RequestError.invalidRequest(
        { sessionId: this.id },
        "a prompt is already running in this session: wait for its answer or send session/cancel",
      );
    const input = promptInput(blocks, this.cwd);
    if (input.text.trim() === "" && input.images.length === 0)
      throw RequestError.invalidParams({ sessionId: this.id }, "the prompt is empty");
    this.#cancelled = false;
    let finish!: () => void;
    // Set before the turn starts: what the turn says first (the notes) is said inside it.
    this.#running = new Promise<void>((resolve) => (finish = resolve));
    try {
      return await this.#turn(input);
    } finally {
      finish();
      this.#running = undefined;
      this.announceCommands();
    }
  }

  async #turn(input: {
    text: string;
    images: { type: "image"; data: string; mimeType: string }[];
  }): Promise<StopReason> {
    const notes = this.#notes.splice(0);
    if (notes.length > 0) this.say(`${notes.map((n) => `> ${n}`).join("\n>\n")}\n\n`);
    const slash = input.images.length === 0 ? parseSlashCommand(input.text) : undefined;
    if (slash) {
      const stop = (this.#command = new AbortController());
      if (this.#cancelled) stop.abort();
      const outcome = await this.host
        .runCommand(slash.name, slash.args, stop.signal)
        .finally(() => (this.#command = undefined));
      if (outcome.ran) {
        if (outcome.error !== undefined)
          throw new RequestError(-32603, `/${slash.name} failed: ${outcome.error}`, { command: slash.name });
        return this.#cancelled ? "cancelled" : "end_turn";
      }
      // Not an extension command: a prompt template or a skill, expanded by the input slot as typed.
    }
    if (this.#cancelled) return "cancelled";
    const run = this.host.agent.prompt(input.text, {
      source: "rpc",
      ...(input.images.length > 0 && { images: input.images }),
    });
    let end: AgentEndEvent | undefined;
    for await (const event of run) if (event.type === "agent_end") end = event;
    return this.#stopReason(end);
  }

  #stopReason(end: AgentEndEvent | undefined): StopReason {
    if (this.#cancelled || end?.stopReason === "aborted") return "cancelled";
    if (!end) return "end_turn";
    switch (end.stopReason) {
      case "max_turns":
        return "max_turn_requests";
      case "blocked":
        this.say(
          `> The prompt was refused${end.by !== undefined ? ` by ${end.by}` : ""}: ${end.reason ?? "no reason given"}\n`,
        );
        return "refusal";
      case "handled":
        if (end.reason) this.say(`> ${end.reason}\n`);
        return "end_turn";
      case "error":
        throw new RequestError(-32603, `The run failed: ${end.error ?? "unknown error"}`, { sessionId: this.id });
      default: {
        const last = end.messages.findLast((m) => m.role === "assistant");
        return last?.role === "assistant" && last.stopReason === "length" ? "max_tokens" : "end_turn";
      }
    }
  }

  /** `session/cancel`: open questions are unanswered (the calls refused), the command and the run aborted. */
  cancel(): void {
    if (!this.#running) return;
    this.#cancelled = true;
    this.ui.cancelPending();
    this.#command?.abort(new DOMException("Cancelled by the client", "AbortError"));
    this.host.agent.abort();
  }

  /** The session ends (`session/close`, the connection closed): the run stops, the host shuts down. */
  async close(): Promise<void> {
    this.cancel();
    this.ui.close();
    await this.#running?.catch(() => undefined);
    for (const stop of this.#stopListening.splice(0)) stop();
    await this.host.host.shutdown();
  }
}

/** The session file of this workspace whose id is exactly `id`. */
function sessionById(id: string, cwd: string, dir: string, noSession: boolean): SessionManager | string {
  if (noSession) return "this mypi keeps no sessions (--no-session): there is nothing to load";
  const file = sessionFilesByIdPrefix(dir, id).find((f) => SessionManager.open(f, { cwd }).id === id);
  return file === undefined ? `no session of ${cwd} has the id ${id} (in ${dir})` : SessionManager.open(file, { cwd });
}
