/**
 * RPC mode (docs/cli.md#modes): Pi's protocol, so clients written for `pi --mode rpc` drive mypi.
 *
 * stdin: one command per line `{id?, type, …}`; stdout: one JSON object per line — a response
 * `{type:"response", id, command, success, data?, error?}` per command, every agent event as it
 * happens, and `extension_ui_request` lines for extension dialogs. Framing is strict JSONL
 * (`rpc/jsonl.ts`). Nothing a client sends can stop the loop: bad JSON, an unknown command or a
 * failing command each get an error response and the next line is read. At the end of input the
 * run in progress is finished (open dialogs resolve to their defaults), then the mode returns.
 *
 * This file starts and ends the mode; its parts are in `rpc/`, plain functions of one state
 * (`state.ts`: the queue, what `abort` stops, the response line, event forwarding):
 * `input.ts` parses and routes each line, `commands.ts` is the dispatch table,
 * `command-fields.ts` reads a command's fields.
 */
import { readJsonlLines } from "../rpc/jsonl.ts";
import { routeLine } from "./rpc/input.ts";
import { announceThinkingLevels } from "./rpc/model-commands.ts";
import { abortAll, createRpcState, forwardEvents, type RpcTarget } from "./rpc/state.ts";

export type { RpcTarget } from "./rpc/state.ts";

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

export async function runRpcMode(target: RpcTarget, io: RpcIO): Promise<number> {
  const s = createRpcState(target, io.stdout);
  const unsubscribe = forwardEvents(s, io.redact);
  const stopAnnouncing = announceThinkingLevels(s);
  const onStop = () => {
    s.aborts++; // a command still queued is stopped as it starts
    abortAll(s, io.stop!.reason);
  };
  if (io.stop?.aborted) onStop();
  else io.stop?.addEventListener("abort", onStop, { once: true });

  await readJsonlLines(io.stdin, (line) => routeLine(s, line), { maxLineChars: io.maxLineChars, ...(io.stop && { signal: io.stop }) });
  // End of input: nobody can answer a dialog any more; finish what was sent and the run in progress.
  target.ui.close();
  await s.queue;
  while (s.runs.size > 0) await Promise.all([...s.runs]);
  io.stop?.removeEventListener("abort", onStop);
  unsubscribe();
  stopAnnouncing();
  return 0;
}
