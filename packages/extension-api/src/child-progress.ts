/**
 * A child's events as its parent's progress (docs/subagents.md#seeing-it): each event of the child
 * — and of the children it starts in turn, which reach it the same way — becomes one value for the
 * parent tool call's `onUpdate`, so the parent's stream carries it inside a `tool_execution_update`
 * and the parent's own event contract stays as it is (one `agent_end`, its own, last). Deltas
 * (`message_update`) are left out: the `message_end` that follows carries the whole message.
 *
 * A grandchild's event arrives as the child's `tool_execution_update` of the call that runs it;
 * it is handed on as the event itself, with its own path, so every descendant's events reach the
 * top flat, each tagged once.
 */
import type { StreamEvent } from "@mypi/kernel";
import type { ChildEvent, ChildProgress } from "./child-types.ts";
import type { ExtensionHostEvent } from "./events.ts";

/** The event a progress value carries, when it is a child's (a `tool_execution_update`'s `partialResult`). */
export function childEventOf(partialResult: unknown): ChildEvent | undefined {
  const event = (partialResult as { details?: { agentEvent?: unknown } } | null | undefined)?.details?.agentEvent;
  if (typeof event !== "object" || event === null) return undefined;
  const { type, agentPath } = event as { type?: unknown; agentPath?: unknown };
  return typeof type === "string" && Array.isArray(agentPath) && agentPath.every((p) => typeof p === "string")
    ? (event as ChildEvent)
    : undefined;
}

/** The name in a path segment: `call_3:explorer` → `explorer`. */
export function segmentName(segment: string): string {
  const colon = segment.lastIndexOf(":");
  return colon < 0 ? segment : segment.slice(colon + 1);
}

interface Status {
  depth: number;
  name: string;
  step: string;
}

/**
 * A listener for the child at `path` that hands each of its events (and its descendants') to
 * `onUpdate` as `ChildProgress`: the event tagged with its path, and the status of every
 * descendant seen, one line each, indented by depth.
 */
export function progressForwarder(
  path: readonly string[],
  onUpdate: (progress: ChildProgress) => void,
): (event: StreamEvent<ExtensionHostEvent>) => void {
  const statuses = new Map<string, Status>();
  const render = (): string =>
    [...statuses.values()].map((s) => `${"  ".repeat(s.depth)}${s.name}: ${s.step}`).join("\n");
  const forward = (event: ChildEvent): void => {
    const key = event.agentPath.join("/");
    let status = statuses.get(key);
    if (!status) {
      status = {
        depth: Math.max(0, event.agentPath.length - path.length),
        name: segmentName(event.agentPath.at(-1) ?? ""),
        step: "starting",
      };
      statuses.set(key, status);
    }
    const step = stepOf(event);
    if (step !== undefined) status.step = step;
    try {
      onUpdate({ content: [{ type: "text", text: render() }], details: { agentEvent: event } });
    } catch {
      // The parent's onUpdate is the kernel's (it never throws); a caller's own that fails loses progress, not the run.
    }
  };
  return (event) => {
    if (event.type === "message_update") return;
    if (event.type === "tool_execution_update") {
      const inner = childEventOf(event.partialResult);
      if (inner) return forward(inner);
    }
    forward(Object.freeze({ ...event, agentPath: path }) as ChildEvent);
  };
}

/** What a child is doing, as its latest event says; `undefined`: the event changes nothing shown. */
function stepOf(event: ChildEvent): string | undefined {
  switch (event.type) {
    case "agent_start":
      return "started";
    case "turn_start":
      return `turn ${event.turnIndex + 1}`;
    case "tool_execution_start":
      return `${event.toolName} ${brief(event.args)}`.trimEnd();
    case "tool_execution_end":
      return `${event.toolName} ${event.isError ? "failed" : "done"}`;
    case "agent_end":
      return event.stopReason === "completed"
        ? "done"
        : event.error
          ? `${event.stopReason}: ${oneLine(event.error)}`
          : event.stopReason;
    default:
      return undefined;
  }
}

/** A tool call's arguments in a few words: the first string argument, cut at 60 characters. */
function brief(args: unknown): string {
  if (typeof args !== "object" || args === null) return "";
  const first = Object.values(args).find((v): v is string => typeof v === "string");
  return first === undefined ? "" : oneLine(first).slice(0, 60);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
