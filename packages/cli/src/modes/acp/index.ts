/**
 * `mypi acp` (docs/acp.md): the Agent Client Protocol on stdin/stdout, over the official SDK
 * (`@agentclientprotocol/sdk`, ACP v1, its stable entry point). stdout carries only protocol
 * messages; logs and diagnostics go to stderr.
 *
 * Each `session/new` opens a mypi host in the client's folder as a run there would
 * (`session.ts`); this file answers the methods and keeps the sessions. The SDK answers what
 * never reaches a handler — malformed JSON (-32700), a message that is no request (-32600), a
 * method before `initialize` (-32600), an unknown method (-32601), params that do not match the
 * schema (-32602) — and the connection goes on. A handler's failure is an error response.
 *
 * The parts: `session.ts` (one session: open, prompt, cancel, close), `updates.ts` (events →
 * `session/update`), `tool-calls.ts` (kinds, titles, diffs), `permission.ts` (dialogs →
 * `session/request_permission`), `prompt-content.ts` (content blocks → the prompt),
 * `replay.ts` (`session/load`), `config.ts` (model and thinking level), `modes.ts` (session
 * modes), `mcp.ts` (the client's MCP servers).
 */
import { Readable, Writable } from "node:stream";
import { readFileSync } from "node:fs";
import {
  agent,
  ndJsonStream,
  RequestError,
  type AgentConnection,
  type ClientCapabilities,
  type SessionId,
} from "@agentclientprotocol/sdk";
import type { CliIO } from "../../io.ts";
import { listSessions } from "@mypi/kernel";
import { configOptions, setConfigOption } from "./config.ts";
import { sessionModes, setMode } from "./modes.ts";
import { AcpSession, type OpenWorkspace } from "./session.ts";

export interface AcpIO {
  io: CliIO;
  /** The process is on its way out (a signal, stdout closed): every session ends. */
  stop: AbortSignal;
  open: OpenWorkspace;
}

export async function runAcpMode({ io, stop, open }: AcpIO): Promise<number> {
  const sessions = new Map<SessionId, AcpSession>();
  /** Sessions being opened: ended with the others when the connection closes. */
  const opening = new Set<Promise<unknown>>();
  let connection: AgentConnection | undefined;
  let clientCapabilities: ClientCapabilities = {};
  const env = { open, io, client: () => connection?.client, capabilities: () => clientCapabilities };

  const sessionOf = (sessionId: SessionId): AcpSession => {
    const session = sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  };
  const opened = async (task: Promise<AcpSession>): Promise<AcpSession> => {
    opening.add(task);
    try {
      const session = await task;
      sessions.set(session.id, session);
      return session;
    } finally {
      opening.delete(task);
    }
  };
  /** What the client is told after a session opened: after the response (`setImmediate`), so the session is known to it. */
  const afterOpening = (session: AcpSession, replay: boolean) =>
    setImmediate(() => {
      if (replay) session.replay();
      session.announceCommands();
    });

  const app = agent({ name: "mypi" })
    .onRequest("initialize", ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: 1,
        agentInfo: { name: "mypi", title: "mypi", version: version() },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          // mypi's MCP extension speaks stdio and streamable HTTP; not the old SSE transport.
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {}, close: {} },
        },
        authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params }) => {
      const session = await opened(AcpSession.open(env, { cwd: params.cwd, mcpServers: params.mcpServers }));
      afterOpening(session, false);
      const modes = sessionModes(session.host);
      return { sessionId: session.id, configOptions: configOptions(session.start.models), ...(modes && { modes }) };
    })
    .onRequest("session/load", async ({ params }) => {
      const already = sessions.get(params.sessionId);
      const session =
        already ??
        (await opened(
          AcpSession.open(env, { cwd: params.cwd, mcpServers: params.mcpServers, load: params.sessionId }),
        ));
      afterOpening(session, true);
      const modes = sessionModes(session.host);
      return { configOptions: configOptions(session.start.models), ...(modes && { modes }) };
    })
    .onRequest("session/list", ({ params }) => {
      const cwds = params.cwd ? [params.cwd] : [...new Set([...sessions.values()].map((s) => s.cwd))];
      const listed = cwds.flatMap((cwd) =>
        listSessions(cwd).map((s) => ({
          sessionId: s.id,
          cwd,
          ...((s.name ?? s.firstPrompt) !== undefined && { title: s.name ?? s.firstPrompt!.slice(0, 80) }),
          updatedAt: new Date(s.modified).toISOString(),
        })),
      );
      return { sessions: listed };
    })
    .onRequest("session/close", async ({ params }) => {
      const session = sessionOf(params.sessionId);
      sessions.delete(params.sessionId);
      await session.close();
      return {};
    })
    .onRequest("session/prompt", async ({ params }) => ({
      stopReason: await sessionOf(params.sessionId).prompt(params.prompt),
    }))
    .onNotification("session/cancel", ({ params }) => sessions.get(params.sessionId)?.cancel())
    .onRequest("session/set_mode", ({ params }) => {
      // The change reaches the client as a current_mode_update, as every change does (`followModes`).
      setMode(sessionOf(params.sessionId).host, params.modeId);
      return {};
    })
    .onRequest("session/set_config_option", ({ params }) => {
      const session = sessionOf(params.sessionId);
      setConfigOption(session.start.models, params.configId, params.value);
      return { configOptions: configOptions(session.start.models) };
    });

  const stream = ndJsonStream(
    Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>,
  );
  connection = app.connect(stream);
  const onStop = () => connection?.close();
  if (stop.aborted) onStop();
  else stop.addEventListener("abort", onStop, { once: true });
  await connection.closed.catch(() => undefined);
  stop.removeEventListener("abort", onStop);
  // Nobody is left to answer: the runs end (their open questions unanswered), the hosts shut down.
  await Promise.allSettled([...opening]);
  await Promise.allSettled([...sessions.values()].map((s) => s.close()));
  return 0;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "0.0.0";
}
