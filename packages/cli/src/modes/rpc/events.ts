/**
 * The event stream of RPC mode: every event of the target as it happens, in Pi 1.6's shapes
 * (`rpc/pi-wire.ts`), and the events Pi adds that mypi's stream has no counterpart for:
 *
 * - `agent_settled {aborted}` after a run's `agent_end`, once the agent is idle (no run an
 *   extension started from that `agent_end` follows): Pi's RpcClient waits for it
 *   (`waitForIdle`, `promptAndWait`), also after an abort.
 * - `queue_update {steering, followUp}` and `session_info_changed {name}`, written whenever what
 *   the client was last told differs from the state — before each event and each response —
 *   so a change made by a command, by the loop taking a queued message, or by an extension
 *   reaches the client in order, once.
 * - `compaction_start` / `compaction_end` around an automatic compaction, written together when
 *   the kernel reports it (`context_compacted`: it compacts inside the run and announces only
 *   the success).
 */
import type { CompactionEntry, QueuedMessage } from "@mypi/kernel";
import { toJsonLine } from "./jsonl.ts";
import { createPiWire } from "./pi-wire.ts";
import { flushHeldShell } from "./bash.ts";
import { emit, type RpcState } from "./state.ts";

/** Every event of the target, as it happens; returns the unsubscribe. */
export function forwardEvents(s: RpcState, redact?: <T>(value: T) => T): () => void {
  const wire = createPiWire(redact);
  return s.target.subscribe((event) => {
    tellChanges(s);
    if (event.type === "context_compacted") emit(s, autoCompactionLines(s, event));
    emit(s, wire(event));
    if (event.type === "agent_end" && !s.target.agent.isRunning) settle(s, event.stopReason === "aborted");
  });
}

/** The run is over and nothing follows it: what `bash` left for the conversation goes in, then `agent_settled`. */
function settle(s: RpcState, aborted: boolean): void {
  flushHeldShell(s);
  tellChanges(s); // an abort hands the queue back: it is empty now
  emit(s, toJsonLine({ type: "agent_settled", aborted }), true);
}

/** Write `queue_update` / `session_info_changed` for what changed since the client was last told. */
export function tellChanges(s: RpcState): void {
  const { agent, sessionManager } = s.target;
  const told = s.told;
  // Read on every event (a streamed answer has thousands): an empty queue the client knows is empty costs nothing.
  if (agent.pendingMessageCount > 0 || told.steering.length > 0 || told.followUp.length > 0) {
    const queued = agent.queued;
    const steering = queuedTexts(queued.steering);
    const followUp = queuedTexts(queued.followUps);
    if (!sameList(steering, told.steering) || !sameList(followUp, told.followUp)) {
      told.steering = steering;
      told.followUp = followUp;
      emit(s, toJsonLine({ type: "queue_update", steering, followUp }));
    }
  }
  const name = sessionManager.getSessionName();
  // Another session (new, forked, switched to) brings its own name: that is no change of a name.
  if (sessionManager.id !== told.sessionId) {
    told.sessionId = sessionManager.id;
    told.name = name;
  } else if (name !== told.name) {
    told.name = name;
    emit(s, toJsonLine({ type: "session_info_changed", ...(name !== undefined && { name }) }));
  }
}

/** The texts of queued lines, as Pi lists its queue (a ready message an extension queued is no text the client sent). */
export function queuedTexts(queue: readonly QueuedMessage[]): string[] {
  return queue.flatMap((q) => ("role" in q ? [] : [q.text]));
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Pi's compaction pair for an automatic compaction that just succeeded, from the entry it recorded. */
function autoCompactionLines(s: RpcState, event: { tokensBefore: number; tokensAfter: number }): string {
  const entry = [...s.target.sessionManager.getBranch()]
    .reverse()
    .find((e): e is CompactionEntry => e.type === "compaction");
  const result = compactionResult({
    summary: entry?.summary ?? "",
    firstKeptEntryId: entry?.firstKeptEntryId,
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
  });
  return (
    toJsonLine({ type: "compaction_start", reason: "threshold" }) +
    toJsonLine({ type: "compaction_end", reason: "threshold", result, aborted: false, willRetry: false })
  );
}

/** Pi's `CompactionResult`: the summary, where the kept messages begin, the estimates before and after. */
export function compactionResult(c: {
  summary: string;
  firstKeptEntryId: string | undefined;
  tokensBefore: number;
  tokensAfter: number;
}): Record<string, unknown> {
  return {
    summary: c.summary,
    ...(c.firstKeptEntryId !== undefined && { firstKeptEntryId: c.firstKeptEntryId }),
    tokensBefore: c.tokensBefore,
    estimatedTokensAfter: c.tokensAfter,
  };
}
