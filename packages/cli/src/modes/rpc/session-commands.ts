/**
 * Pi's session commands over RPC: new, switch, fork and clone (each a new host over another
 * session: `HostSession`), compaction, the name, the entries and their tree, statistics, export.
 */
import { errorMessage } from "@mypi/kernel";
import { resolve } from "node:path";
import { defaultExportPath, exportSession } from "../../commands/export.ts";
import { CommandError, optionalString, requireString } from "./command-fields.ts";
import { compactionResult } from "./events.ts";
import { sessionStats, sessionTree } from "./pi-view.ts";
import { emit, type Command, type RpcState } from "./state.ts";
import { toJsonLine } from "./jsonl.ts";

type Handler = (s: RpcState, c: Command) => unknown;

export const SESSION_HANDLERS: Record<string, Handler> = {
  new_session: ({ target }, c) => {
    const parentSession = optionalString(c, "parentSession");
    return target.newSession(parentSession !== undefined ? { parentSession } : undefined);
  },
  switch_session: ({ target }, c) => target.switchSession(requireString(c, "sessionPath")),
  /** Pi: a new session file holding the branch before that user message; answers the message's text. */
  async fork({ target }, c) {
    const entryId = requireString(c, "entryId");
    const message = target.forkMessages().find((m) => m.entryId === entryId);
    if (!message)
      throw new CommandError(
        `Invalid entry ID for forking: ${entryId} is no user message of this branch (get_fork_messages lists them).`,
      );
    const r = await target.forkSession(entryId);
    return r.cancelled ? { cancelled: true } : { text: message.text, cancelled: false };
  },
  /** Pi: the branch up to the current entry, copied into a new session file. */
  async clone({ target }) {
    const leafId = target.sessionManager.getLeafId();
    if (leafId === undefined)
      throw new CommandError("Cannot clone session: no current entry selected (the session is empty).");
    const r = await target.forkSession(leafId, { position: "at" });
    return { cancelled: r.cancelled };
  },
  get_fork_messages: ({ target }) => ({ messages: target.forkMessages() }),
  compact,
  set_session_name: ({ target }, c) => {
    const name = requireString(c, "name").trim();
    if (name === "") throw new CommandError("Session name cannot be empty");
    target.setSessionName(name);
    return undefined;
  },
  get_entries: ({ target }, c) => {
    const since = optionalString(c, "since");
    const all = target.sessionManager.getEntries();
    const from = since === undefined ? 0 : all.findIndex((e) => e.id === since) + 1;
    if (from === 0 && since !== undefined) throw new CommandError(`Entry not found: ${since}`);
    return { entries: all.slice(from), leafId: target.sessionManager.getLeafId() ?? null };
  },
  get_tree: ({ target }) => ({
    tree: sessionTree(target.sessionManager.getEntries()),
    leafId: target.sessionManager.getLeafId() ?? null,
  }),
  get_session_stats: ({ target }) => sessionStats(target),
  export_html: ({ target }, c) => {
    const m = target.sessionManager;
    const asked = optionalString(c, "outputPath");
    return { path: exportSession(m, asked !== undefined ? resolve(asked) : defaultExportPath(process.cwd(), m)) };
  },
};

/**
 * `compact`: `compaction_start` and `compaction_end {reason: "manual"}` around it, as in Pi; Pi's
 * result on success (with mypi's `status` and `tokensAfter`), and an error response otherwise —
 * nothing to compact, an extension cancelled it, or it failed.
 */
async function compact(s: RpcState, c: Command): Promise<Record<string, unknown>> {
  const customInstructions = optionalString(c, "customInstructions");
  const line = (value: Record<string, unknown>) => emit(s, toJsonLine(value));
  line({ type: "compaction_start", reason: "manual" });
  s.compacting = true;
  let outcome;
  try {
    outcome = await s.target.compact(customInstructions);
  } catch (error) {
    outcome = { status: "failed" as const, error: errorMessage(error) };
  } finally {
    s.compacting = false;
  }
  const end = { type: "compaction_end", reason: "manual" };
  if (outcome.status === "compacted") {
    const result = compactionResult({
      summary: outcome.summary ?? "",
      firstKeptEntryId: outcome.firstKeptEntryId,
      tokensBefore: outcome.tokensBefore ?? 0,
      tokensAfter: outcome.tokensAfter ?? 0,
    });
    line({ ...end, result, aborted: false, willRetry: false });
    return { ...result, status: outcome.status, tokensAfter: outcome.tokensAfter };
  }
  const error =
    outcome.status === "skipped"
      ? `Nothing to compact (${outcome.reason ?? "the session is too small"})`
      : outcome.status === "cancelled"
        ? "Compaction cancelled"
        : (outcome.error ?? "Compaction failed");
  const message = /^compaction failed/i.test(error) ? error : `Compaction failed: ${error}`;
  line({
    ...end,
    aborted: outcome.status === "cancelled",
    willRetry: false,
    ...(outcome.status !== "cancelled" && { errorMessage: message }),
  });
  throw new CommandError(error);
}
