/**
 * RPC mode (docs/cli.md#modes): Pi 1.6's protocol, so Pi's RpcClient and clients written for
 * `pi --mode rpc` drive mypi.
 *
 * stdin: one command per line `{id?, type, …}`; stdout: one JSON object per line — a response
 * `{id, type:"response", command, success, data?, error?}` per command, every agent event as it
 * happens (in Pi's shapes, with Pi's own events), and `extension_ui_request` lines for extension
 * dialogs. Framing is strict JSONL (`rpc/jsonl.ts`). Nothing a client sends can stop the loop:
 * bad JSON, an unknown command or a failing command each get an error response and the next line
 * is read. At the end of input the run in progress is finished (open dialogs resolve to their
 * defaults), then the mode returns.
 *
 * This file starts and ends the mode; its parts are in `rpc/`, plain functions of one state
 * (`state.ts`: the queue, what `abort` stops, what the client was told, the response line):
 * `input.ts` parses and routes each line, `events.ts` writes the event stream, `commands.ts` is
 * the dispatch table (with `session-commands.ts`, `model.ts`, `bash.ts` and
 * `permission-mode.ts`), `pi-view.ts` reads the session as Pi's commands describe it,
 * `command-fields.ts` reads a command's fields.
 */
import { readJsonlLines } from "./rpc/jsonl.ts";
import { routeLine } from "./rpc/input.ts";
import { forwardEvents } from "./rpc/events.ts";
import { announceThinkingLevels } from "./rpc/model.ts";
import { announcePermissionModes } from "./rpc/permission-mode.ts";
import { abortAll, createRpcState } from "./rpc/state.ts";

export type { RpcTarget } from "./rpc/state.ts";
import type { RpcTarget } from "./rpc/state.ts";

interface RpcIO {
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
  /**
   * An extension asked the process to end (`ctx.shutdown()`, Pi's behaviour): input is no longer
   * read, and the mode returns as at the end of input — the command in progress answered, the run
   * in progress finished.
   */
  end?: AbortSignal;
  /**
   * Masks progress in event lines (`eventLine`), and `bash` output before it joins the
   * conversation (it passes no slot): redact-secrets' patterns, when that extension is loaded.
   */
  redact?: <T>(value: T) => T;
}

export async function runRpcMode(target: RpcTarget, io: RpcIO): Promise<number> {
  const s = createRpcState(target, io.stdout, io.redact);
  const unsubscribe = forwardEvents(s, io.redact);
  const stopAnnouncing = announceThinkingLevels(s);
  const stopModes = announcePermissionModes(s);
  const onStop = () => {
    s.aborts++; // a command still queued is stopped as it starts
    abortAll(s, io.stop!.reason);
  };
  if (io.stop?.aborted) onStop();
  else io.stop?.addEventListener("abort", onStop, { once: true });

  const reading = io.stop && io.end ? AbortSignal.any([io.stop, io.end]) : (io.stop ?? io.end);
  await readJsonlLines(io.stdin, (line) => routeLine(s, line), {
    maxLineChars: io.maxLineChars,
    ...(reading && { signal: reading }),
  });
  // End of input: nobody can answer a dialog any more; finish what was sent and the run in progress.
  target.ui.close();
  await s.queue;
  while (s.runs.size > 0) await Promise.all([...s.runs]);
  io.stop?.removeEventListener("abort", onStop);
  unsubscribe();
  stopAnnouncing();
  stopModes();
  return 0;
}
