/**
 * How an `Agent` hands events to its listeners and to the run's stream: in causal order — an
 * event raised while another is being delivered (a listener that emits, aborts or queues) waits
 * until that one reached everybody — and a listener that throws or rejects is reported, never
 * allowed to stop the others (docs/architecture.md#events).
 */
import { errorMessage } from "../values.ts";
import type { HostEventBase, StreamEvent } from "../types.ts";
import type { AgentListener } from "./agent-options.ts";
import type { RunStream } from "./run-stream.ts";

export class Delivery<H extends HostEventBase> {
  /** Replaced, never changed in place, so delivery iterates a stable list. */
  #listeners: readonly AgentListener<H>[] = [];
  #delivering = false;
  #backlog: { event: StreamEvent<H>; stream: RunStream<H> | undefined }[] = [];

  constructor(readonly onError: ((error: unknown, event: StreamEvent<H>) => void) | undefined) {}

  subscribe(listener: AgentListener<H>): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  deliver(event: StreamEvent<H>, stream: RunStream<H> | undefined): void {
    if (this.#delivering) {
      this.#backlog.push({ event, stream });
      return;
    }
    this.#delivering = true;
    try {
      this.#deliverOne(event, stream);
      for (let i = 0; i < this.#backlog.length; i++) {
        const next = this.#backlog[i]!;
        this.#deliverOne(next.event, next.stream);
      }
    } finally {
      if (this.#backlog.length > 0) this.#backlog = [];
      this.#delivering = false;
    }
  }

  /** A listener (or the host's last word) failed: to `onListenerError`, else one line on stderr. */
  reportError(error: unknown, event: StreamEvent<H>): void {
    const report = this.onError;
    if (report) {
      try {
        report(error, event);
      } catch {
        // the reporter itself failed: nothing left to tell
      }
      return;
    }
    process.stderr.write(`mypi: a listener failed on ${event.type}: ${errorMessage(error)}\n`);
  }

  #deliverOne(event: StreamEvent<H>, stream: RunStream<H> | undefined): void {
    stream?.push(event);
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        const returned = listeners[i]!(event);
        if (returned !== undefined && typeof (returned as Promise<void>).then === "function") {
          (returned as Promise<void>).then(undefined, (error: unknown) => this.reportError(error, event));
        }
      } catch (error) {
        this.reportError(error, event);
      }
    }
  }
}
