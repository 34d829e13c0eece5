/**
 * The session as Pi 1.6's RPC commands describe it, read from mypi's: the conversation
 * (`get_messages`), the state (`get_state`), the statistics (`get_session_stats`) and the entry
 * tree (`get_tree`).
 *
 * The conversation starts with Pi's system message (its `role: "system"`, the system prompt as
 * `content` and the offered tools as `toolsAdded`) once it has a message: mypi keeps the system
 * prompt beside the history, Pi records it in it. A compaction summary shows as Pi's
 * `compactionSummary`, and `bash` output as Pi's `bashExecution`; every other message is mypi's
 * own, which Pi's are.
 */
import {
  estimateContextTokens,
  readCompactionSummary,
  type CompactionEntry,
  type Message,
  type SessionEntry,
} from "@mypi/kernel";
import { costOf } from "./pi-wire.ts";
import { BASH_EXECUTION } from "./bash.ts";
import { thinkingLevelOf } from "./model.ts";
import type { RpcState, RpcTarget } from "./state.ts";

/** `get_messages`: Pi's view of the history. */
export function piMessages(target: RpcTarget): unknown[] {
  const { agent, sessionManager } = target;
  const history = agent.messages;
  if (history.length === 0) return [];
  const system = {
    role: "system",
    content: agent.systemPrompt ?? "",
    toolsAdded: agent.tools.schemas(),
    timestamp: history[0]!.timestamp,
  };
  const compaction = lastCompaction(sessionManager.getBranch());
  return [system, ...history.map((m) => piMessage(m, compaction))];
}

function piMessage(m: Message, compaction: CompactionEntry | undefined): unknown {
  const summary = readCompactionSummary(m);
  if (summary !== undefined)
    return { role: "compactionSummary", summary, tokensBefore: compaction?.tokensBefore ?? 0, timestamp: m.timestamp };
  if (m.role === "custom" && m.customType === BASH_EXECUTION && typeof m.details === "object" && m.details !== null) {
    return { role: "bashExecution", ...(m.details as Record<string, unknown>), timestamp: m.timestamp };
  }
  return m;
}

function lastCompaction(branch: readonly SessionEntry[]): CompactionEntry | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i]!;
    if (e.type === "compaction") return e;
  }
  return undefined;
}

/** `get_state`: Pi's fields in Pi's order, then mypi's (`extensionErrors`). */
export function piState(s: RpcState): Record<string, unknown> {
  const { target } = s;
  const { agent } = target;
  const {
    model: _id,
    messageCount: _count,
    isStreaming,
    sessionFile,
    sessionId,
    sessionName,
    pendingMessageCount,
    ...mypi
  } = target.state();
  return {
    model: target.modelInfo(),
    thinkingLevel: thinkingLevelOf(target),
    isStreaming,
    isCompacting: s.compacting,
    steeringMode: agent.steeringMode,
    followUpMode: agent.followUpMode,
    sessionFile,
    sessionId,
    sessionName,
    autoCompactionEnabled: agent.autoCompaction,
    messageCount: piMessages(target).length,
    pendingMessageCount,
    ...mypi,
  };
}

/**
 * `get_session_stats`: counts over every message the session file holds (all branches, before
 * compactions too, as Pi counts), tokens and cost from the assistant messages' usage (`cost`
 * where a message carries it), and the context in use now (an estimate, as mypi's compaction
 * makes it).
 */
export function sessionStats(target: RpcTarget): Record<string, unknown> {
  const { sessionManager, agent } = target;
  const messages = sessionManager.getEntries().flatMap((e) => (e.type === "message" ? [e.message] : []));
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  let toolCalls = 0;
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    toolCalls += m.content.filter((b) => b.type === "toolCall").length;
    const u = m.usage;
    const [input, output, cacheRead, cacheWrite] = [
      u?.input ?? 0,
      u?.output ?? 0,
      u?.cacheRead ?? 0,
      u?.cacheWrite ?? 0,
    ];
    tokens.input += input;
    tokens.output += output;
    tokens.cacheRead += cacheRead;
    tokens.cacheWrite += cacheWrite;
    tokens.total += u?.totalTokens ?? input + output + cacheRead + cacheWrite;
    cost += costOf(u).total;
  }
  const count = (role: Message["role"]) => messages.filter((m) => m.role === role).length;
  const { contextWindow } = target.modelInfo();
  const used = estimateContextTokens(agent.messages);
  return {
    sessionFile: sessionManager.file,
    sessionId: sessionManager.id,
    userMessages: count("user"),
    assistantMessages: count("assistant"),
    toolCalls,
    toolResults: count("toolResult"),
    // Pi's system message counts as one (`get_messages`).
    totalMessages: messages.length + (messages.length > 0 ? 1 : 0),
    tokens,
    cost,
    contextUsage: { tokens: used, contextWindow, percent: (used / contextWindow) * 100 },
  };
}

/** Pi's `SessionTreeNode`: an entry, its children, and its label when it has one. */
interface TreeNode {
  entry: SessionEntry;
  children: TreeNode[];
  label?: string;
  labelTimestamp?: string;
}

/** `get_tree`: the entries under their roots (an entry whose parent is not in the file is a root), in file order. */
export function sessionTree(entries: readonly SessionEntry[]): TreeNode[] {
  const labels = new Map<string, { label: string; timestamp: string }>();
  for (const e of entries) {
    if (e.type !== "label") continue;
    if (e.label === undefined) labels.delete(e.targetId);
    else labels.set(e.targetId, { label: e.label, timestamp: e.timestamp });
  }
  const nodes = new Map<string, TreeNode>();
  for (const entry of entries) {
    const label = labels.get(entry.id);
    nodes.set(entry.id, { entry, children: [], ...(label && { label: label.label, labelTimestamp: label.timestamp }) });
  }
  const roots: TreeNode[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id)!;
    const parent = entry.parentId === null ? undefined : nodes.get(entry.parentId);
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}
