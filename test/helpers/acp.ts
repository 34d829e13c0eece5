/**
 * Driving `mypi acp` as an editor does: the ACP SDK's own client side over the child's stdio.
 *
 *   const acp = startAcp(sandbox, ["--model", `scripted:${script}`]);
 *   await acp.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
 *   const { sessionId } = await acp.call("session/new", { cwd: sandbox.ws, mcpServers: [] });
 *   acp.permissions.push("allow");             // how the next permission request is answered
 *   await acp.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
 *   acp.transcript                              // every message the client saw, in order
 *   await acp.end();                            // close stdin: the exit code and stderr
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import {
  client,
  ndJsonStream,
  RequestError,
  type ClientConnection,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { MYPI_BIN, type Sandbox } from "./mypi.ts";
import type { JsonObject } from "./json.ts";

/** One message as the client saw it: a request it sent and its answer, an update, a permission request. */
export type TranscriptEntry =
  | { kind: "request"; method: string; params: unknown }
  | { kind: "response"; method: string; result?: unknown; error?: { code: number; message: string } }
  | { kind: "update"; sessionId: string; update: SessionUpdate }
  | { kind: "permission"; params: RequestPermissionRequest; answer: RequestPermissionResponse }
  | { kind: "fs"; method: string; path: string };

/** How a permission request is answered: an option kind to pick, "cancelled", or a function (may wait). */
export type PermissionAnswer =
  | "allow"
  | "reject"
  | "cancelled"
  | ((request: RequestPermissionRequest) => Promise<RequestPermissionResponse>);

export interface AcpProcess {
  child: ChildProcessWithoutNullStreams;
  connection: ClientConnection;
  transcript: TranscriptEntry[];
  /** Answers for the next permission requests, first to last; none left: cancelled. */
  permissions: PermissionAnswer[];
  call<T = JsonObject>(method: string, params: unknown): Promise<T>;
  /** The updates of `sessionId` so far. */
  updates(sessionId?: string): SessionUpdate[];
  /** Resolves with the first update (past or future) that matches. */
  waitForUpdate(test: (update: SessionUpdate) => boolean): Promise<SessionUpdate>;
  stderr(): string;
  /** Close stdin and wait for the process to exit. */
  end(): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/**
 * `editor`: the client's open buffers (path → text); with it the client answers `fs/read_text_file`
 * from them (a path it does not hold: not found) and `fs/write_text_file` into them (the test
 * advertises `fs` in `initialize` itself).
 */
export function startAcp(
  sandbox: Sandbox,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; editor?: Map<string, string> } = {},
): AcpProcess {
  const child = spawn(process.execPath, [MYPI_BIN, "acp", ...args], {
    cwd: options.cwd ?? sandbox.ws,
    env: { ...sandbox.env, ...options.env },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  const transcript: TranscriptEntry[] = [];
  const permissions: PermissionAnswer[] = [];
  const waiters: { test: (u: SessionUpdate) => boolean; resolve: (u: SessionUpdate) => void }[] = [];

  const app = client({ name: "mypi-test-client" })
    .onNotification("session/update", ({ params }) => {
      transcript.push({ kind: "update", sessionId: params.sessionId, update: params.update });
      for (const w of [...waiters]) {
        if (!w.test(params.update)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(params.update);
      }
    })
    .onRequest("session/request_permission", async ({ params }) => {
      const how = permissions.shift() ?? "cancelled";
      const answer: RequestPermissionResponse =
        typeof how === "function"
          ? await how(params)
          : how === "cancelled"
            ? { outcome: { outcome: "cancelled" } }
            : {
                outcome: {
                  outcome: "selected",
                  optionId: params.options.find((o) => o.kind.startsWith(how === "allow" ? "allow" : "reject"))!
                    .optionId,
                },
              };
      transcript.push({ kind: "permission", params, answer });
      return answer;
    });
  const { editor } = options;
  if (editor) {
    app
      .onRequest("fs/read_text_file", ({ params }) => {
        transcript.push({ kind: "fs", method: "fs/read_text_file", path: params.path });
        const text = editor.get(params.path);
        if (text === undefined) throw RequestError.resourceNotFound(params.path);
        return { content: text };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        transcript.push({ kind: "fs", method: "fs/write_text_file", path: params.path });
        editor.set(params.path, params.content);
        return {};
      });
  }
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );

  const updates = (sessionId?: string) =>
    transcript.flatMap((e) =>
      e.kind === "update" && (sessionId === undefined || e.sessionId === sessionId) ? [e.update] : [],
    );
  return {
    child,
    connection,
    transcript,
    permissions,
    async call(method, params) {
      transcript.push({ kind: "request", method, params });
      try {
        const result = await connection.agent.request(method, params);
        transcript.push({ kind: "response", method, result });
        return result as never;
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        transcript.push({ kind: "response", method, error: { code, message } });
        throw error;
      }
    },
    updates,
    waitForUpdate(test) {
      const found = updates().find(test);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ test, resolve }));
    },
    stderr: () => stderr,
    async end() {
      child.stdin.end();
      const { code, signal } = await exit;
      connection.close();
      return { code, signal, stderr };
    },
  };
}

/** The kind of each update (`sessionUpdate`), with the status of tool call updates: the order a client sees. */
export function updateKinds(updates: readonly SessionUpdate[]): string[] {
  return updates.map((u) =>
    u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update"
      ? `${u.sessionUpdate}:${u.status ?? "-"}`
      : u.sessionUpdate,
  );
}
