/**
 * A batch task's session, as the batch (not the task's own process) sees it (docs/batch.md#resuming-runs):
 * a file under the batch's folder, or a Redis list (`--session-store`, workers). Read to decide
 * whether a task that was cut off or paused can go on, to count what its run did when the run
 * went on in another process, and to wait for a writer that is still ending.
 */
import { rmSync } from "node:fs";
import {
  FileSessionStore,
  planResume,
  RedisSessionStore,
  runStateOf,
  SessionManager,
  textOf,
  type ResumePoint,
  type SessionStore,
} from "@mypi/kernel";
import { redisClient } from "../../workspace/session-open.ts";

/** Where a task's session is: a file, or an id in a Redis store. */
export type TaskSessionRef = { file: string } | { url: string; id: string };

interface SessionLook {
  /** The session holds a run. */
  exists: boolean;
  /** Where the run would go on; undefined when it reached its answer. */
  point: ResumePoint | undefined;
  /** What the run did so far (all of it: every process that wrote the session). */
  stats: SessionStats;
}

export interface SessionStats {
  turns: number;
  toolCalls: number;
  tokens: { input: number; output: number };
  /** From the decisions the host recorded (`mypi:hook_decision`), as the event stream counts them. */
  extensions: Record<string, { blocked: number; rewrote: number }>;
  /** How the last run ended, when the session says (its last answer is complete). */
  stopReason?: string;
  finalText?: string;
}

/** The session's state, read without taking its lock. */
export async function lookAtSession(ref: TaskSessionRef): Promise<SessionLook> {
  return withStore(ref, async (store) => {
    const session = await SessionManager.load(store);
    if (session.getEntries().length === 0)
      return {
        exists: false,
        point: undefined,
        stats: { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} },
      };
    const messages = session.buildContext({ repair: false });
    // The tools matter only for how a cut-off call is settled, which the task's own process decides.
    const point = planResume(messages, new Map(), { ...runStateOf(session.getBranch()), queued: false });
    return { exists: true, point, stats: statsOf(session) };
  });
}

/** Waits (checking every 100 ms, at most `ms`) until nobody holds the session's lock: a dying writer lets go, or its lease ends. */
export async function whenFree(ref: TaskSessionRef, ms: number, signal: AbortSignal): Promise<boolean> {
  return withStore(ref, async (store) => {
    const until = Date.now() + ms;
    for (;;) {
      if ((await store.holder()) === undefined) return true;
      if (Date.now() >= until || signal.aborted) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
}

/** Forget the session (a task that starts over). */
export async function removeSession(ref: TaskSessionRef): Promise<void> {
  if ("file" in ref) {
    rmSync(ref.file, { force: true });
    rmSync(`${ref.file}.lock`, { force: true });
    return;
  }
  const client = await redisClient(ref.url);
  try {
    const key = new RedisSessionStore({ client, id: ref.id }).key;
    await client.del(key, `${key}:lock`, `${key}:lock:owner`);
  } finally {
    client.disconnect();
  }
}

/** Model calls, tool results and tokens of every run in the session, and how the last one ended when its answer is complete. */
function statsOf(session: SessionManager): SessionStats {
  const stats: SessionStats = { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} };
  let last: { stopReason: string; text: string } | undefined;
  for (const entry of session.getBranch()) {
    if (entry.type === "custom" && entry.customType === "mypi:hook_decision") countDecision(stats, entry.data);
    if (entry.type !== "message") continue;
    const m = entry.message;
    if (m.role === "toolResult") stats.toolCalls++;
    if (m.role !== "assistant") continue;
    stats.turns++;
    stats.tokens.input += Number(m.usage?.input) || 0;
    stats.tokens.output += Number(m.usage?.output) || 0;
    last = { stopReason: m.stopReason, text: textOf(m.content) };
  }
  if (last && (last.stopReason === "stop" || last.stopReason === "length")) {
    stats.stopReason = "completed";
    stats.finalText = last.text;
  }
  return stats;
}

const BLOCKED = new Set(["block", "withhold", "fail_closed"]);
const REWROTE = new Set(["rewrite", "patch", "transform"]);

function countDecision(stats: SessionStats, data: unknown): void {
  const d = data as { extension?: unknown; outcome?: unknown } | undefined;
  const blocked = BLOCKED.has(String(d?.outcome));
  if (!blocked && !REWROTE.has(String(d?.outcome))) return;
  const counts = (stats.extensions[String(d?.extension)] ??= { blocked: 0, rewrote: 0 });
  if (blocked) counts.blocked++;
  else counts.rewrote++;
}

async function withStore<T>(ref: TaskSessionRef, use: (store: SessionStore) => Promise<T>): Promise<T> {
  if ("file" in ref) return use(new FileSessionStore(ref.file));
  const client = await redisClient(ref.url);
  try {
    return await use(new RedisSessionStore({ client, id: ref.id }));
  } finally {
    client.disconnect();
  }
}
