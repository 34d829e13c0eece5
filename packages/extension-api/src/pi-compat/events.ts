/**
 * `pi.on` for Pi extensions: Pi 1.x's events that mypi's own table (`ROUTES`) lacks, and the
 * parts of Pi's `on` contract that mypi's does not have.
 *
 * - `pi.on` returns a function that removes the handler (Pi 1.x). mypi's handler table is fixed
 *   per load, so the handler stays in the table and stops being called: a removed decision
 *   handler passes, a removed observer returns at once.
 * - `agent_settled` is delivered after each `agent_end` (mypi has no automatic retry or queued
 *   continuation after a run ends, so the end of a run is when it settled).
 * - `before_provider_headers` / `after_provider_response` and `user_bash` are kept apart (`keep`):
 *   the layer calls them itself and reads what they return — around each request of the
 *   OpenAI-compatible model clients (`httpHooks` in index.ts), and when the user runs `!cmd`
 *   (`userBash` in index.ts), where a Pi handler's `{result}` replaces mypi's run of the command.
 * - The other Pi 1.x events mypi never emits (`PI_ONLY_EVENTS`) load without their handler and
 *   are reported once per extension and event; so is any name of a later Pi, unless it is one
 *   or two letters off a known event — a typo, which still fails the load with "Did you mean".
 * - A `message_end` handler returning Pi's `{message}` replacement is reported once: mypi's
 *   `message_end` is an observer, the message stays as it was.
 */
import { closest } from "../errors.ts";
import { ROUTES, type ExtensionAPI } from "../types.ts";

/** Pi 1.6 events that mypi does not emit, and why (the reason goes into the report). */
const PI_ONLY_EVENTS: Readonly<Record<string, string>> = Object.freeze({
  session_compact_failed: "a failed compaction is reported to its caller (ctx.compact's onError), not as an event",
  context_with_system: "the system prompt is not a message in mypi; use before_agent_start or context",
  cache_warming_decision: "mypi does not warm provider caches",
  provider_stream_event: "the provider's raw stream is the host's",
  agent_before_settle: "mypi has no settle boundary to append entries at; use agent_end",
  ui_prompt_start: "mypi does not announce dialogs",
  ui_prompt_end: "mypi does not announce dialogs",
  mcp_servers_change: "MCP servers are mypi's mcp extension's",
});

type On = (event: unknown, handler: unknown, options?: unknown) => void;
type Report = (message: string) => void;

/** The two events about a model client's HTTP exchange, kept apart from mypi's own table. */
const HTTP_EVENTS = ["before_provider_headers", "after_provider_response"] as const;
export type HttpEvent = (typeof HTTP_EVENTS)[number];
/** Events whose handlers' results the layer reads, so it calls them itself rather than mypi's bus. */
const KEPT_EVENTS = [...HTTP_EVENTS, "user_bash"] as const;
export type KeptEvent = (typeof KEPT_EVENTS)[number];
/** Where `piOn` puts their handlers; `live()` is false once removed with the function `pi.on` returned. */
type AddKeptHandler = (event: KeptEvent, handler: (...args: unknown[]) => unknown, live: () => boolean) => void;

/** Pi's `pi.on` over mypi's `base` for the extension `name`; `report` gets each one-time line. */
export function piOn(
  base: ExtensionAPI["on"],
  name: string,
  report: Report,
  keep: AddKeptHandler,
): (event: string, handler: unknown, options?: unknown) => () => void {
  const on = base as unknown as On;
  const reported = new Set<string>();
  const once = (key: string, message: string) => {
    if (reported.has(key)) return;
    reported.add(key);
    report(`${name}: ${message} (reported once; see docs/pi-compat.md)`);
  };
  const nothing = () => {};

  return (event, handler, options) => {
    if (typeof handler !== "function" || typeof event !== "string") {
      on(event, handler, options); // mypi's own errors: not a function, not a name
      return nothing;
    }
    let live = true;
    const off = () => void (live = false);
    const fn = handler as (...args: unknown[]) => unknown;
    if ((KEPT_EVENTS as readonly string[]).includes(event)) {
      keep(event as KeptEvent, fn, () => live);
      return off;
    }
    if (event === "agent_settled") {
      on(
        "agent_end",
        (e: { stopReason?: string }, ctx: unknown) =>
          live ? fn({ type: "agent_settled", aborted: e.stopReason === "aborted" }, ctx) : undefined,
        options,
      );
      return off;
    }
    if (!Object.hasOwn(ROUTES, event)) {
      const why = PI_ONLY_EVENTS[event];
      if (why !== undefined) {
        once(
          `event:${event}`,
          `pi.on("${event}"): mypi does not emit this Pi event, so this handler never runs: ${why}`,
        );
        return nothing;
      }
      if (closest(event, Object.keys(ROUTES)) === undefined) {
        once(`event:${event}`, `pi.on("${event}"): mypi has no such event, so this handler never runs`);
        return nothing;
      }
      on(event, handler, options); // a typo: fails the load with "Did you mean"
      return nothing;
    }
    const replaced = (result: unknown) => {
      if (typeof (result as { message?: unknown } | undefined)?.message === "object") {
        once(
          "message_end:message",
          `a message_end handler returned a replacement message: mypi keeps the original message`,
        );
      }
    };
    on(
      event,
      function (this: unknown, ...args: unknown[]) {
        if (!live) return undefined;
        const result = fn.apply(this, args);
        if (event === "message_end") {
          if (result instanceof Promise) return result.then((r) => void replaced(r));
          replaced(result);
        }
        return result;
      },
      options,
    );
    return off;
  };
}
