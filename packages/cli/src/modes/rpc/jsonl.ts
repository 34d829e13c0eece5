/**
 * Strict JSON Lines framing for RPC (docs/cli.md#modes): records end at "\n" and nowhere else.
 * Node's `readline` also splits on U+2028 / U+2029, which are legal inside JSON strings, so it
 * would cut a valid command in two. A trailing "\r" is dropped so CRLF clients work.
 */
import { StringDecoder } from "node:string_decoder";
import type { ExtensionStreamEvent } from "@mypi/extension-api";

/** The longest line read (in characters): a longer one is dropped, and reported, not buffered. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** What stands for a line longer than the limit: how long it was. */
export class LineTooLong {
  constructor(
    readonly chars: number,
    readonly limit: number,
  ) {}
}

export type JsonlRecord = string | LineTooLong;

interface JsonlSplitter {
  /** Feed a chunk; returns the complete lines it finished (without their terminators). */
  push(chunk: Buffer | string): JsonlRecord[];
  /** End of input: the unterminated rest, if any, as a last line. */
  end(): JsonlRecord[];
}

/**
 * Linear in the input: each chunk is searched for "\n" once and an unfinished line is kept as
 * its pieces, joined once when its end arrives (gluing the rest to every chunk and splitting
 * again made a 64 MB line cost 27 s). Past `maxLineChars` a line's pieces are let go and only
 * counted until its end.
 */
export function createJsonlSplitter(options: { maxLineChars?: number } = {}): JsonlSplitter {
  const limit = options.maxLineChars ?? MAX_LINE_CHARS;
  // The decoder keeps a multi-byte character that straddles two chunks whole.
  const decoder = new StringDecoder("utf8");
  let pieces: string[] = [];
  let size = 0;
  let tooLong = false;
  const add = (piece: string) => {
    size += piece.length;
    if (tooLong) return;
    if (size > limit) {
      tooLong = true;
      pieces = [];
    } else if (piece.length > 0) pieces.push(piece);
  };
  const close = (): JsonlRecord => {
    const line = tooLong ? new LineTooLong(size, limit) : stripCr(pieces.length === 1 ? pieces[0]! : pieces.join(""));
    pieces = [];
    size = 0;
    tooLong = false;
    return line;
  };
  const take = (text: string): JsonlRecord[] => {
    const lines: JsonlRecord[] = [];
    let from = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
      add(text.slice(from, nl));
      lines.push(close());
      from = nl + 1;
    }
    if (from < text.length) add(from === 0 ? text : text.slice(from));
    return lines;
  };
  return {
    push: (chunk) => take(typeof chunk === "string" ? chunk : decoder.write(chunk)),
    end: () => {
      const lines = take(decoder.end());
      return size > 0 || tooLong ? [...lines, close()] : lines;
    },
  };
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * Read `input` line by line. `onLine` is called in order for every line (blank lines included;
 * the caller decides), with a `LineTooLong` for a line past the limit; the promise resolves at
 * end of input after the last line was handed over, or as soon as `signal` aborts.
 */
export function readJsonlLines(
  input: NodeJS.ReadableStream,
  onLine: (line: JsonlRecord) => void,
  options: { maxLineChars?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const splitter = createJsonlSplitter(options);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer | string) => {
      for (const line of splitter.push(chunk)) onLine(line);
    };
    const stop = () => {
      input.off("data", onData);
      input.off("end", onEnd);
      input.off("error", reject);
      options.signal?.removeEventListener("abort", onAbort);
    };
    const onEnd = () => {
      stop();
      for (const line of splitter.end()) onLine(line);
      resolve();
    };
    // Aborted: reading stops here, as at the end of input; an unfinished line is dropped.
    const onAbort = () => {
      stop();
      resolve();
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    input.on("data", onData);
    input.on("end", onEnd);
    input.on("error", reject);
  });
}

/**
 * One event of the run as a JSON/RPC line. A `message_update` goes without its `message`: that
 * snapshot holds everything streamed so far, so writing it with every delta made the output grow
 * with the square of the answer (a 100 KB tool argument wrote 630 MB; 300 KB ran out of memory).
 * The delta and its `contentIndex` rebuild the message (docs/cli.md), and `message_end` carries
 * it whole.
 *
 * `redact` (redact-secrets' patterns, when it is loaded) masks what passes no slot and a client
 * may log: a `tool_execution_update`'s partial result (the final result passes `tool_result`)
 * and the verdicts and log lines (`hook_decision`, `extension_error`, `extension_log`: an
 * extension's `reason`, `error` or `message` is its own text), as the host masks the verdicts
 * where it records them in the session.
 */
export function eventLine(event: ExtensionStreamEvent, redact?: <T>(value: T) => T): string {
  if (redact && event.type === "tool_execution_update")
    return toJsonLine({ ...event, partialResult: redact(event.partialResult) });
  if (redact && (event.type === "hook_decision" || event.type === "extension_error" || event.type === "extension_log"))
    return toJsonLine(redact(event));
  if (event.type !== "message_update") return toJsonLine(event);
  const { message: _snapshot, ...update } = event;
  return toJsonLine(update);
}

/**
 * One JSON value as one line. `JSON.stringify` never emits a raw "\n", so the framing holds.
 * A value JSON cannot hold — a tool's `details` with a BigInt or a cycle, against the contract —
 * is written anyway, BigInts as strings and repeated objects as "[Circular]": losing the event
 * (an `agent_end` among them) would break the stream for the client.
 */
export function toJsonLine(value: unknown): string {
  try {
    return `${JSON.stringify(value)}\n`;
  } catch {
    return `${JSON.stringify(value, tolerant())}\n`;
  }
}

/** A replacer for values JSON cannot hold: BigInt as its digits, an object met again on the way down as "[Circular]". */
function tolerant(): (this: unknown, key: string, value: unknown) => unknown {
  const path: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    // `this` is the object holding `value`: unwind the path to it, then look for `value` on it.
    while (path.length > 0 && path[path.length - 1] !== this) path.pop();
    if (path.includes(value)) return "[Circular]";
    path.push(value);
    return value;
  };
}
