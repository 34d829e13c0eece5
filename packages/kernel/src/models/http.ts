/**
 * What every HTTP model client shares (docs/models.md#failures): the hooks around each request,
 * the attempt loop with its retries, and the reading of a stream under an idle watchdog.
 *
 * Retries happen only before a response has started streaming, so no event is ever sent twice;
 * the SDKs run with `maxRetries: 0`, so that the wait between attempts is abortable and testable.
 */
import type { ModelStreamEvent } from "../types.ts";
import { retryDelayMs, type ClassifiedError } from "./openai-errors.ts";
import type { RetrySwitch } from "./retry-switch.ts";

/**
 * Called around each HTTP request of a client. `headers` may change the request's headers in
 * place (a `null` value removes one); `response` sees the status and headers before the body is
 * read. A hook that throws fails the request as a transport error would.
 */
export interface HttpHooks {
  headers?(headers: Record<string, string | null>): void | Promise<void>;
  response?(response: { status: number; headers: Record<string, string> }): void | Promise<void>;
}

export function hookedFetch(hooks: HttpHooks): typeof globalThis.fetch {
  return async (input, init) => {
    let request = init;
    if (hooks.headers) {
      const headers: Record<string, string | null> = Object.fromEntries(new Headers(init?.headers).entries());
      await hooks.headers(headers);
      const out = new Headers();
      for (const [name, value] of Object.entries(headers)) if (typeof value === "string") out.set(name, value);
      request = { ...init, headers: out };
    }
    const response = await globalThis.fetch(input, request);
    await hooks.response?.({ status: response.status, headers: Object.fromEntries(response.headers.entries()) });
    return response;
  };
}

/**
 * A signal of its own for one attempt, aborted with `parent`. The SDKs never remove the abort
 * listener they add to the signal they are given, and a run's signal lives across many calls.
 */
function linkAbort(parent: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const forward = () => controller.abort(parent.reason);
  parent.addEventListener("abort", forward, { once: true });
  return { signal: controller.signal, dispose: () => parent.removeEventListener("abort", forward) };
}

export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A host's hand on the retries at run time (switched off, or the waits stopped). */
  retry?: RetrySwitch;
}

export type Opened<T> =
  | { ok: true; value: T; dispose(): void }
  | { ok: false; aborted: true }
  | { ok: false; aborted: false; message: string };

/**
 * Make the request, retrying what `classify` calls retryable (after the server's `retry-after`,
 * else a doubling backoff) up to `maxRetries` times. On success the caller reads the stream and
 * then calls `dispose`; the attempt's signal stays linked to `signal` until then.
 */
export async function openWithRetries<T>(options: {
  open(signal: AbortSignal): Promise<T>;
  classify(err: unknown): ClassifiedError;
  signal: AbortSignal;
  policy: RetryPolicy;
}): Promise<Opened<T>> {
  const { signal, policy } = options;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) return { ok: false, aborted: true };
    const link = linkAbort(signal);
    try {
      const value = await options.open(link.signal);
      return { ok: true, value, dispose: link.dispose };
    } catch (err) {
      link.dispose();
      const failure = options.classify(err);
      if (signal.aborted || failure.kind === "aborted") return { ok: false, aborted: true };
      let stopped = false;
      if (failure.retryable && attempt < policy.maxRetries && policy.retry?.enabled !== false) {
        const delay = retryDelayMs(attempt, policy.retryBaseMs, failure.retryAfterMs);
        if (!policy.retry) {
          await policy.sleep(delay, signal);
          continue;
        }
        stopped = await policy.retry.wait(delay, signal, policy.sleep);
        if (!stopped) continue;
      }
      const gaveUp = stopped
        ? " (retrying was stopped)"
        : failure.retryable && attempt > 0
          ? ` (gave up after ${attempt + 1} attempts)`
          : "";
      return { ok: false, aborted: false, message: failure.message + gaveUp };
    }
  }
}

/** The part of an SDK stream used here: events as they arrive, and a way to cancel. */
export interface EventStream extends AsyncIterable<unknown> {
  controller: AbortController;
}

/** How reading a stream ended. */
export type StreamEnd =
  | { kind: "aborted" }
  /** A protocol error: an error frame, a frame that is not JSON, an event of the wrong shape. */
  | { kind: "failed"; error: unknown }
  | { kind: "stalled" }
  /** The body ended; `cutBy` says what cut the connection, when something did. */
  | { kind: "ended"; cutBy?: string };

/**
 * Read `stream` to its end, handing each raw event to `push` and yielding what it returns. The
 * idle watchdog covers only the wait for the next event, not a slow consumer. The connection is
 * closed however reading ends (an early return by the consumer included).
 */
export async function* readEvents(options: {
  stream: EventStream;
  signal: AbortSignal;
  idleTimeoutMs: number;
  push(raw: unknown): ModelStreamEvent[];
  isProtocolError(err: unknown): boolean;
  transportDetail(err: unknown): string;
}): AsyncGenerator<ModelStreamEvent, StreamEnd> {
  const { stream, signal } = options;
  const iterator = stream[Symbol.asyncIterator]();
  let stalled = false;
  let end: StreamEnd = { kind: "ended" };
  let watchdog: NodeJS.Timeout | undefined;
  try {
    while (true) {
      watchdog = setTimeout(() => {
        stalled = true;
        stream.controller.abort();
      }, options.idleTimeoutMs);
      let events: ModelStreamEvent[];
      try {
        const next = await iterator.next();
        if (next.done) break;
        events = options.push(next.value);
      } catch (err) {
        if (signal.aborted || stalled) break;
        end = options.isProtocolError(err)
          ? { kind: "failed", error: err }
          : { kind: "ended", cutBy: options.transportDetail(err) };
        break;
      } finally {
        clearTimeout(watchdog);
      }
      for (const event of events) yield event;
    }
  } finally {
    clearTimeout(watchdog);
    stream.controller.abort();
  }
  if (signal.aborted) return { kind: "aborted" };
  if (stalled) return { kind: "stalled" };
  return end;
}

export function nonEmpty(value: string | undefined): string | undefined {
  // An empty KEY= line counts as unset, as it would for a person reading it.
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
