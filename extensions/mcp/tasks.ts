/**
 * MCP tasks: a tool that declares `execution.taskSupport: "required"` is called with task
 * augmentation. The server answers `tools/call` at once with a task; mypi polls `tasks/get`
 * (at the server's `pollInterval`), shows each new `statusMessage` as progress, and fetches the
 * result with `tasks/result` once the task is done (or needs input: the server then sends its
 * request on that answer's stream). An abort or timeout of the call sends `tasks/cancel`.
 *
 * A server that does not announce tasks for `tools/call` cannot run such a tool: it is not
 * offered (`taskBlocker` says why, for `mcp_status`). `optional` tools are called plainly, which
 * their servers must accept.
 */
import type { McpConnection } from "./connection.ts";
import type { McpCallResult, McpToolInfo } from "./convert.ts";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const DEFAULT_POLL_MS = 1000;
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5000;
/** How long an abort waits for the server to take `tasks/cancel` before the call gives up. */
const CANCEL_WAIT_MS = 2000;

/** Whether the server announced that `tools/call` may be a task. */
function runsToolTasks(server: McpConnection): boolean {
  const tasks = server.capabilities?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return typeof tasks?.requests?.tools?.call === "object" && tasks.requests.tools.call !== null;
}

/** Why the tool cannot be offered, or undefined when it can. */
export function taskBlocker(server: McpConnection, tool: McpToolInfo): string | undefined {
  if (tool.taskSupport !== "required" || runsToolTasks(server)) return undefined;
  return `not offered: it must run as a task (execution.taskSupport "required"), and the server does not announce tasks for tools/call`;
}

interface FollowOptions {
  signal: AbortSignal;
  /** A new status message of the task (`working`: "Gathering sources…"). */
  onStatus?: (status: { status: string; message?: string; taskId: string }) => void;
}

/** Follow the task a `tools/call` created until its result. Rejects on abort (after `tasks/cancel`) and protocol errors. */
export async function followTask(
  server: McpConnection,
  created: Record<string, unknown>,
  options: FollowOptions,
): Promise<McpCallResult> {
  const task = created.task as Record<string, unknown>;
  const taskId = typeof task.taskId === "string" ? task.taskId : undefined;
  if (!taskId) throw new Error("it created a task without a taskId");
  const { signal } = options;
  const pollMs = clamp(typeof task.pollInterval === "number" ? task.pollInterval : DEFAULT_POLL_MS);
  const timeoutMs = server.config.connectTimeoutMs;
  let last: string | undefined;
  const seen = (t: Record<string, unknown>): string => {
    const status = typeof t.status === "string" ? t.status : "working";
    const message = typeof t.statusMessage === "string" ? t.statusMessage : undefined;
    const key = `${status}\u0000${message ?? ""}`;
    if (key !== last) options.onStatus?.({ status, taskId, ...(message !== undefined && { message }) });
    last = key;
    return status;
  };
  try {
    for (let status = seen(task); !TERMINAL.has(status) && status !== "input_required"; ) {
      await delay(pollMs, signal);
      status = seen(await server.request("tasks/get", { taskId }, { signal, timeoutMs }));
    }
    // The kernel's timeout bounds the call; this request has none of its own.
    return (await server.request("tasks/result", { taskId }, { signal, timeoutMs: 0 })) as McpCallResult;
  } catch (error) {
    if (signal.aborted) await cancel(server, taskId);
    throw error;
  }
}

async function cancel(server: McpConnection, taskId: string): Promise<void> {
  if (server.state !== "connected") return;
  await server.request("tasks/cancel", { taskId }, { timeoutMs: CANCEL_WAIT_MS }).catch(() => {}); // a task already over cannot be cancelled
}

function clamp(ms: number): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Number.isFinite(ms) ? ms : DEFAULT_POLL_MS));
}

/** Wait `ms`, or reject with the signal's reason as soon as it aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
