/**
 * RPC mode (docs/cli.md#modes): Pi's protocol, so clients written for `pi --mode rpc` drive mypi.
 *
 * stdin: one command per line `{id?, type, …}`; stdout: one JSON object per line — a response
 * `{type:"response", id, command, success, data?, error?}` per command, every agent event as it
 * happens, and `extension_ui_request` lines for extension dialogs. Framing is strict JSONL
 * (`rpc/jsonl.ts`). Nothing a client sends can stop the loop: bad JSON, an unknown command or a
 * failing command each get an error response and the next line is read. At the end of input the
 * run in progress is finished (open dialogs resolve to their defaults), then the mode returns.
 */
import { parseSlashCommand } from "@mypi/extension-api";
import { exceedsDepth, tooDeepText, type Agent, type ImageContent, type Message, type StreamEvent } from "@mypi/kernel";
import { resolve } from "node:path";
import { defaultExportPath, exportSession } from "../export/command.ts";
import type { HostSession } from "../host-session.ts";
import { eventLine, LineTooLong, readJsonlLines, toJsonLine, type JsonlRecord } from "../rpc/jsonl.ts";
import type { RpcUI } from "./rpc-ui.ts";

/** What RPC commands act on: the host session and the dialogs carried over the wire. */
export interface RpcTarget extends HostSession {
  readonly ui: RpcUI;
}

export interface RpcIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** The longest command line accepted, in characters (default `MAX_LINE_CHARS`, 64 Mi). */
  maxLineChars?: number;
  /**
   * The process is on its way out (a signal, stdout closed: `exits.ts`): the run in progress and
   * the extension commands are aborted as by `abort`, input is no longer read, and the mode
   * returns once the run has ended.
   */
  stop?: AbortSignal;
  /** Masks progress in event lines (`eventLine`). */
  redact?: <T>(value: T) => T;
}

type Command = { id?: unknown; type: string; [key: string]: unknown };
type Response = { type: "response"; id?: unknown; command: string; success: boolean; data?: unknown; error?: string };

/** Thrown by a command handler: becomes `success:false` with this message. */
class CommandError extends Error {}

export async function runRpcMode(target: RpcTarget, io: RpcIO): Promise<number> {
  const write = (value: unknown) => io.stdout.write(toJsonLine(value));
  const unsubscribe = target.subscribe((event: StreamEvent) => void io.stdout.write(eventLine(event, io.redact)));
  /** Runs started by `prompt`, so the end of input can wait for them. */
  const runs = new Set<Promise<unknown>>();
  /** Commands are handled one at a time, in order: a slow one does not reorder the responses. */
  let queue: Promise<void> = Promise.resolve();

  const respond = (command: Command, result: { data?: unknown } | { error: string }) => {
    const response: Response = { type: "response", command: command.type, success: !("error" in result) };
    if (command.id !== undefined) response.id = command.id;
    if ("error" in result) response.error = result.error;
    else if (result.data !== undefined) response.data = result.data;
    write(response);
  };

  /** The `ctx.signal` of each extension command still running: `abort` aborts them with the run. */
  const commands = new Set<AbortController>();
  /**
   * `abort` commands received so far. A command remembers the count when it arrives: one that
   * was still queued when an abort came (a prompt sent in the same breath) is stopped as it starts.
   */
  let aborts = 0;
  const sentAfter = new WeakMap<Command, number>();
  const abortedSince = (c: Command) => aborts > (sentAfter.get(c) ?? aborts);

  const abortAll = (reason: unknown) => {
    for (const stop of commands) stop.abort(reason);
    target.agent.abort();
  };
  const onStop = () => {
    aborts++; // a command still queued is stopped as it starts
    abortAll(io.stop!.reason);
  };
  if (io.stop?.aborted) onStop();
  else io.stop?.addEventListener("abort", onStop, { once: true });

  /** A handler resolves to the response's `data`, or calls `reply` itself to answer before it is done. */
  const handlers: Record<string, (c: Command, reply: (data?: unknown) => void) => Promise<unknown> | unknown> = {
    prompt: async (c, reply) => {
      const message = requireString(c, "message");
      const images = readImages(c.images); // refused before anything runs, a command or a steer included
      const slash = parseSlashCommand(message);
      if (slash) {
        const stop = new AbortController();
        if (abortedSince(c)) stop.abort(new DOMException("Aborted by the client", "AbortError"));
        commands.add(stop);
        const outcome = await target.runCommand(slash.name, slash.args, stop.signal).finally(() => commands.delete(stop));
        if (outcome.ran) {
          if (outcome.error !== undefined) throw new CommandError(`/${slash.name} failed: ${outcome.error}`);
          return undefined;
        }
      }
      if (target.agent.isRunning) {
        // Queued as text: the input slot (a redaction) sees it before it is recorded, as it sees a prompt.
        const queued = { source: "rpc", ...(images && { images }) } as const;
        const behavior = c.streamingBehavior;
        if (behavior === "steer") return void target.agent.steer(message, queued);
        if (behavior === "followUp") return void target.agent.followUp(message, queued);
        throw new CommandError('The agent is already running. Send "steer" or "follow_up", or prompt with streamingBehavior "steer" | "followUp".');
      }
      // Answer first: the run's events follow the response (the run starts on the next microtask).
      reply();
      const run = target.agent.prompt(message, { source: "rpc", ...(images && { images }) });
      if (abortedSince(c)) target.agent.abort(); // it ends at once, with its agent_end "aborted"
      const settled = Promise.resolve(run).then(
        () => undefined,
        () => undefined,
      );
      runs.add(settled);
      void settled.finally(() => runs.delete(settled));
      return undefined;
    },
    steer: (c) => void target.agent.steer(requireString(c, "message"), { source: "rpc" }),
    follow_up: (c) => void target.agent.followUp(requireString(c, "message"), { source: "rpc" }),
    abort: () => abortAll(new DOMException("Aborted by the client", "AbortError")),
    get_state: () => target.state(),
    get_messages: () => ({ messages: target.agent.messages as readonly Message[] }),
    get_commands: () => ({ commands: target.commands() }),
    new_session: () => target.newSession(),
    compact: async (c) => {
      const result = await target.compact(optionalString(c, "customInstructions"));
      if (result.status === "failed") throw new CommandError(`Compaction failed: ${result.error ?? "unknown error"}`);
      return result;
    },
    set_session_name: (c) => void target.setSessionName(requireString(c, "name")),
    fork: (c) => target.fork(requireString(c, "entryId")),
    get_fork_messages: () => ({ messages: target.forkMessages() }),
    switch_session: (c) => target.switchSession(requireString(c, "sessionPath")),
    export_html: (c) => {
      const m = target.sessionManager;
      const asked = optionalString(c, "outputPath");
      return { path: exportSession(m, asked !== undefined ? resolve(asked) : defaultExportPath(process.cwd(), m)) };
    },
    get_last_assistant_text: () => ({ text: lastAssistantText(target.agent.messages) }),
  };

  /** Parse one line: a command, or the error response it gets. */
  const parse = (line: JsonlRecord): { command: Command } | { refused: Response } => {
    const refused = (error: string, command = "parse"): { refused: Response } => ({
      refused: { type: "response", command, success: false, error: `Failed to parse command: ${error}` },
    });
    if (line instanceof LineTooLong) {
      return refused(`the line is longer than ${line.limit} characters (${line.chars}) and was dropped. Send large content in smaller commands.`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      return refused((error as Error).message);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || typeof (parsed as Command).type !== "string") {
      return refused('expected an object with a string "type"');
    }
    // Kept out before anything holds it: freezing, copying or writing it would overflow the stack.
    if (exceedsDepth(parsed)) {
      const { id, type } = parsed as Command;
      const answer = refused(`${tooDeepText("the command")}.`, type);
      if (id !== undefined && (typeof id !== "object" || id === null)) answer.refused.id = id;
      return answer;
    }
    return { command: parsed as Command };
  };

  const handle = async (command: Command) => {
    const handler = Object.hasOwn(handlers, command.type) ? handlers[command.type] : undefined;
    if (!handler) {
      respond(command, { error: `Unknown command: ${command.type}. Known: ${Object.keys(handlers).join(", ")}.` });
      return;
    }
    let replied = false;
    const reply = (data?: unknown) => {
      if (replied) return;
      replied = true;
      respond(command, { data });
    };
    try {
      const data = await handler(command, reply);
      reply(data);
    } catch (error) {
      if (!replied) respond(command, { error: error instanceof Error ? error.message : String(error) });
    }
  };

  await readJsonlLines(io.stdin, (line) => {
    if (typeof line === "string" && line.trim() === "") return;
    const parsed = parse(line);
    if ("refused" in parsed) {
      // In the queue, so that it is answered in the order the lines came.
      queue = queue.then(() => void write(parsed.refused));
      return;
    }
    const { command } = parsed;
    if (command.type === "extension_ui_response") {
      // Answered at once, outside the queue: the command waiting on this dialog may be in it.
      target.ui.answer(command); // an answer to a dialog that already ended is ignored
    } else if (command.type === "abort") {
      // At once too: what it stops (an extension command, a prompt's run) may be what holds the queue.
      aborts++;
      void handle(command);
    } else {
      sentAfter.set(command, aborts);
      queue = queue.then(() => handle(command));
    }
  }, { maxLineChars: io.maxLineChars, ...(io.stop && { signal: io.stop }) });
  // End of input: nobody can answer a dialog any more; finish what was sent and the run in progress.
  target.ui.close();
  await queue;
  while (runs.size > 0) await Promise.all([...runs]);
  io.stop?.removeEventListener("abort", onStop);
  unsubscribe();
  return 0;
}

/** Pi's `get_last_assistant_text`: the text of the history's last assistant message, or null. */
function lastAssistantText(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant") return m.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  }
  return null;
}

/**
 * A prompt's `images`: absent, or a list of `{type: "image", data, mimeType}` with base64 `data`
 * and an `image/…` type. Copied field by field, so nothing else a client put in them goes on.
 */
function readImages(value: unknown): ImageContent[] | undefined {
  if (value === undefined) return undefined;
  const shape = '"images" must be a list of {"type":"image","data":"<base64>","mimeType":"image/<kind>"}';
  if (!Array.isArray(value)) throw new CommandError(`${shape}.`);
  return value.map((image: unknown, i) => {
    const at = `${shape}; images[${i}]`;
    if (typeof image !== "object" || image === null || Array.isArray(image)) throw new CommandError(`${at} is not an object.`);
    const { type, data, mimeType } = image as Record<string, unknown>;
    if (type !== "image") throw new CommandError(`${at} has type ${JSON.stringify(type) ?? "undefined"}.`);
    if (typeof mimeType !== "string" || !/^image\/[\w.+-]+$/.test(mimeType)) throw new CommandError(`${at} has no image/… mimeType.`);
    if (typeof data !== "string" || data === "" || !BASE64.test(data)) throw new CommandError(`${at} has no base64 data.`);
    return { type: "image", data, mimeType };
  });
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function requireString(c: Command, field: string): string {
  const value = c[field];
  if (typeof value !== "string") throw new CommandError(`"${c.type}" needs a string "${field}".`);
  return value;
}

function optionalString(c: Command, field: string): string | undefined {
  const value = c[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new CommandError(`"${field}" must be a string.`);
  return value;
}
