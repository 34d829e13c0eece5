/**
 * Progress notifications, delivered in the order they arrive, before the answer they precede.
 *
 * The SDK runs a notification's handler a microtask after the message arrives, but settles a
 * response at once and then forgets the request's progress handler: when a server writes its
 * last `notifications/progress` and the result in one chunk, the result wins and the progress is
 * dropped (as an "unknown token" error). So mypi gives its calls progress tokens of its own and
 * takes their notifications off the transport itself, synchronously, before the SDK sees the
 * message that follows. Notifications for tokens that are not ours pass on to the SDK.
 *
 * The answer closes its request's token at once, in the same synchronous step, so a notification
 * that comes after the answer (even in the same chunk) is not delivered: the call is over. An
 * answer that creates a task (`result.task`) keeps the token open; the task's end releases it.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export type ProgressListener = (progress: Progress) => void;

export class ProgressRouter {
  readonly #listeners = new Map<string, ProgressListener>();
  /** JSON-RPC request id → our token, for requests in flight that carry one. */
  readonly #requests = new Map<string | number, string>();
  #next = 0;

  /**
   * Take this transport's progress notifications for our tokens. Call after the SDK's `connect`
   * (which installs its own `onmessage`): ours runs first and hands everything else on.
   */
  attach(transport: Transport): void {
    const inner = transport.onmessage;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { id?: string | number; method?: string; params?: { _meta?: { progressToken?: unknown } } };
      const token = m.params?._meta?.progressToken;
      if (m.id !== undefined && m.method && typeof token === "string" && this.#listeners.has(token))
        this.#requests.set(m.id, token);
      return send(message, options);
    };
    transport.onmessage = (message, extra) => {
      const progress = ourProgress(message, this.#listeners);
      if (progress) return progress.listener(progress.value);
      this.#answered(message);
      inner?.(message, extra);
    };
  }

  /** An answer to a request of ours ends its progress, unless it created a task. */
  #answered(message: unknown): void {
    const m = message as { id?: string | number; method?: unknown; result?: { task?: unknown } } | null;
    if (m === null || typeof m !== "object" || m.method !== undefined || m.id === undefined) return;
    const token = this.#requests.get(m.id);
    if (token === undefined) return;
    this.#requests.delete(m.id);
    if (typeof m.result?.task !== "object" || m.result.task === null) this.#listeners.delete(token);
  }

  /** A fresh token whose notifications go to `listener` until `release` (after the call's answer). */
  open(listener: ProgressListener): { token: string; release: () => void } {
    const token = `mypi-progress-${++this.#next}`;
    this.#listeners.set(token, listener);
    const release = () => {
      this.#listeners.delete(token);
      // A request that was aborted never gets its answer: forget it here.
      for (const [id, t] of this.#requests) if (t === token) this.#requests.delete(id);
    };
    return { token, release };
  }
}

function ourProgress(
  message: unknown,
  listeners: Map<string, ProgressListener>,
): { listener: ProgressListener; value: Progress } | undefined {
  const m = message as { method?: unknown; params?: Record<string, unknown> } | null;
  if (m?.method !== "notifications/progress" || typeof m.params !== "object" || m.params === null) return undefined;
  const token = m.params.progressToken;
  const listener = typeof token === "string" ? listeners.get(token) : undefined;
  if (!listener) return undefined;
  const { progress, total, message: text } = m.params;
  // A malformed notification of ours is dropped here rather than handed to the SDK, which would
  // not know the token either.
  if (typeof progress !== "number") return { listener: () => {}, value: { progress: 0 } };
  const value: Progress = { progress };
  if (typeof total === "number") value.total = total;
  if (typeof text === "string") value.message = text;
  return { listener, value };
}
