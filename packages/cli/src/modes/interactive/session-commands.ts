/**
 * The session commands of interactive mode: `/new`, `/name`, `/session`, `/resume`, `/tree`,
 * `/fork` and `/export`. Pickers are the extension dialogs (`ExtensionUI.select` / `input`), so
 * they work wherever those do. These names are the host's: an extension command of the same name
 * is shadowed, as for `/reload`.
 */
import { errorMessage } from "@mypi/kernel";
import { resolve } from "node:path";
import type { MessageEntry, SessionEntry, UserMessage } from "@mypi/kernel";
import type { ExtensionUI } from "@mypi/extension-api";
import { defaultExportPath, exportSession } from "../../commands/export.ts";
import type { HostSession } from "@mypi/extension-api/host";
import { describeSession } from "../../session-list.ts";
import { formatCost, promptTokens, sessionUsage } from "../../render/usage-totals.ts";
import { clip, contentText, kindOf, latestLabels, treeRows, treeText } from "../../session-tree.ts";
import { linkedSessionFile, openChildSession } from "../../child-sessions.ts";

export interface SessionCommandContext {
  session: HostSession;
  ui: ExtensionUI;
  /** Where relative paths (`/export file`) resolve: the shell's directory. */
  cwd: string;
  /** A line of information; `warn` a line that needs attention. Both sanitise what they show. */
  info(text: string): void;
  warn(text: string): void;
  /** Put text into the input line (`/fork` offers the message it forked before, to edit and send again). */
  setEditorText?(text: string): void;
}

/** For /help and Tab completion. */
export const SESSION_COMMANDS: readonly { name: string; description: string; argumentHint?: string }[] = [
  { name: "new", description: "a new session" },
  { name: "name", description: "name this session", argumentHint: "[title]" },
  { name: "session", description: "file, id, counts, tokens and cost" },
  { name: "resume", description: "continue another session of this workspace" },
  { name: "tree", description: "go to any entry, or label it", argumentHint: "[id]" },
  { name: "fork", description: "a new session from before a message of this branch", argumentHint: "[id]" },
  { name: "export", description: "the session as HTML", argumentHint: "[file]" },
];
const NAMES = new Set(SESSION_COMMANDS.map((c) => c.name));
/** Commands that move or replace the session: they wait for an idle agent. */
const NEED_IDLE = new Set(["new", "resume", "tree", "fork"]);
/** How many entries of the branch are shown after the session moved. */
const TAIL = 6;
const ROW_TEXT = 70;

/** Runs `/name args` when it is a session command; false when it is not one. */
export async function runSessionCommand(name: string, args: string, c: SessionCommandContext): Promise<boolean> {
  if (!NAMES.has(name)) return false;
  if (NEED_IDLE.has(name) && c.session.agent.isRunning) {
    c.warn(`/${name} waits for an idle agent: let the run finish or press Ctrl+C.`);
    return true;
  }
  switch (name) {
    case "new": {
      const r = await c.session.newSession();
      if (r.cancelled) c.warn("an extension kept the current session (session_before_switch)");
      else c.info("new session");
      return true;
    }
    case "name": {
      const title = args.trim();
      if (title === "") c.info(`session name: ${c.session.state().sessionName ?? "(none; /name <title> sets one)"}`);
      else {
        c.session.setSessionName(title);
        c.info(`session name: ${title}`);
      }
      return true;
    }
    case "session":
      for (const line of sessionLines(c.session)) c.info(line);
      return true;
    case "export": {
      const m = c.session.sessionManager;
      const out = args.trim() ? resolve(c.cwd, args.trim()) : defaultExportPath(c.cwd, m);
      try {
        c.info(`exported to ${exportSession(m, out)}`);
      } catch (error) {
        c.warn(`could not write ${out}: ${errorMessage(error)}`);
      }
      return true;
    }
    case "resume":
      await resume(c);
      return true;
    case "tree":
      await tree(args.trim(), c);
      return true;
    case "fork":
      await fork(args.trim(), c);
      return true;
  }
  return false;
}

function sessionLines(session: HostSession): string[] {
  const m = session.sessionManager;
  const entries = m.getEntries();
  const messages = entries.flatMap((e) => (e.type === "message" ? [e.message] : []));
  const roles = (role: string) => messages.filter((msg) => msg.role === role).length;
  const toolCalls = messages.reduce(
    (n, msg) => n + (msg.role === "assistant" ? msg.content.filter((b) => b.type === "toolCall").length : 0),
    0,
  );
  const usage = sessionUsage(m);
  const models = session.models;
  const prompt = promptTokens(usage);
  const cached =
    usage.cacheRead + usage.cacheWrite > 0
      ? ` (${usage.cacheRead} read from cache, ${((100 * usage.cacheRead) / prompt).toFixed(1)}%; ${usage.cacheWrite} written)`
      : "";
  const lines = [
    `file      ${m.file ?? "(not saved: --no-session)"}`,
    `id        ${m.id}`,
    `name      ${m.getSessionName() ?? "(none)"}`,
    ...(models
      ? [
          `model     ${models.client.id}${models.availableThinkingLevels().length > 1 ? ` · thinking ${models.thinkingLevel}` : ""}`,
        ]
      : []),
    `entries   ${entries.length} (${m.getBranch().length} on this branch)`,
    `messages  ${messages.length}: ${roles("user")} user, ${roles("assistant")} assistant, ${roles("toolResult")} tool results`,
    `tool calls ${toolCalls}`,
    `tokens    ${prompt + usage.output}: ${prompt} in${cached}, ${usage.output} out`,
    `cost      ${usage.costKnown ? formatCost(usage.cost) : "unknown (no message carried a cost: the model's prices are not known)"}`,
  ];
  // A session that used several models: what each one cost.
  if (usage.byModel.size > 1)
    for (const [model, row] of usage.byModel)
      lines.push(`  ${model}: ${formatCost(row.cost)} (${row.tokens} tokens, ${row.messages} answers)`);
  return lines;
}

async function resume(c: SessionCommandContext): Promise<void> {
  const current = c.session.sessionManager.file;
  const sessions = c.session.listSessions().filter((s) => s.file !== current);
  if (sessions.length === 0) return c.info("no other session in this workspace");
  const rows = sessions.map((s) => describeSession(s));
  const picked = await c.ui.select("Resume which session?", rows);
  const chosen = picked === undefined ? undefined : sessions[rows.indexOf(picked)];
  if (!chosen) return c.info("(resume cancelled)");
  const r = await c.session.switchSession(chosen.file);
  if (r.cancelled) return c.warn("an extension kept the current session (session_before_switch)");
  c.info(`resumed ${chosen.name ?? chosen.file}`);
  // What loading skipped or repaired, as `--session` says it on stderr.
  for (const warning of c.session.sessionManager.loadWarnings) c.warn(`session: ${warning}`);
  showBranch(c);
}

/**
 * `/tree`: pick an entry (user and assistant messages, compactions and branch points; `/tree all`
 * lists every entry), then continue from it or label it. `/tree <id>` goes straight there.
 */
async function tree(args: string, c: SessionCommandContext): Promise<void> {
  const m = c.session.sessionManager;
  if (args !== "" && args !== "all") {
    const entry = findEntry(m.getEntries(), args, c);
    if (entry) await (isUserMessage(entry) ? askAgain(entry, c) : goTo(entry, c));
    return;
  }
  const entries = m.getEntries();
  if (entries.length === 0) return c.info("the session has no entries yet");
  const onBranch = new Set(m.getBranch().map((e) => e.id));
  const labels = latestLabels(entries);
  const shown = treeRows(entries).filter(
    (r) => args === "all" || r.children > 1 || r.entry.id === m.getLeafId() || isMilestone(r.entry),
  );
  const rows = shown.map(({ entry, prefix }) => {
    const label = labels.get(entry.id);
    return `${prefix}${onBranch.has(entry.id) ? "●" : "○"} ${kindOf(entry)}: ${clip(treeText(entry), ROW_TEXT)}${label ? ` [${label}]` : ""} (${entry.id})`;
  });
  const picked = await c.ui.select("Go to which entry? (● this branch)", rows);
  const row = picked === undefined ? undefined : shown[rows.indexOf(picked)];
  if (!row) return c.info("(tree cancelled)");
  const label = labels.get(row.entry.id);
  // A user message is asked again, as in Pi: its text goes to the editor and the session branches
  // off before it — continuing after it would put two user messages in a row.
  const onward = isUserMessage(row.entry) ? ASK_AGAIN : "continue from here";
  const child = linkedSessionFile(row.entry);
  const actions = [
    ...(child ? ["show the child agent's transcript"] : []),
    onward,
    "label it",
    ...(label ? ["clear its label"] : []),
  ];
  const action = await c.ui.select(`${kindOf(row.entry)} ${row.entry.id}`, actions);
  if (action === "show the child agent's transcript") return showChildSession(child!, c);
  if (action === "continue from here") return goTo(row.entry, c);
  if (action === ASK_AGAIN && isUserMessage(row.entry)) return askAgain(row.entry, c);
  if (action === "label it") {
    const text = await c.ui.input("Label", label);
    if (text === undefined || text.trim() === "") return c.info("(label unchanged)");
    c.session.setLabel(row.entry.id, text.trim());
    return c.info(`labelled ${row.entry.id}: ${text.trim()}`);
  }
  if (action === "clear its label") {
    c.session.setLabel(row.entry.id, undefined);
    return c.info(`cleared the label of ${row.entry.id}`);
  }
  c.info("(tree cancelled)");
}

const ASK_AGAIN = "edit and ask again from here (a new branch)";

type UserEntry = MessageEntry & { message: UserMessage };

function isUserMessage(entry: SessionEntry): entry is UserEntry {
  return entry.type === "message" && entry.message.role === "user";
}

/** Branch off before a user message (`session_before_fork` may refuse) and put its text in the editor, to edit and send. */
async function askAgain(entry: UserEntry, c: SessionCommandContext): Promise<void> {
  const r = await c.session.fork(entry.id);
  if (r.cancelled) return c.warn("an extension kept the session where it was (session_before_fork)");
  c.info(`branched off before ${entry.id}: its text is in the editor — edit it and send, or clear it`);
  showBranch(c);
  c.setEditorText?.(contentText(entry.message.content));
}

async function goTo(entry: SessionEntry, c: SessionCommandContext): Promise<void> {
  await c.session.navigate(entry.id);
  c.info(`now at ${entry.id}; the next prompt continues from there`);
  showBranch(c);
}

/** `/fork`: a new session from before a user message of this branch (`/fork <id>` names it). */
async function fork(args: string, c: SessionCommandContext): Promise<void> {
  const messages = c.session.forkMessages();
  let entryId: string | undefined;
  if (args !== "") entryId = findEntry(c.session.sessionManager.getEntries(), args, c)?.id;
  else {
    if (messages.length === 0) return c.info("no user message on this branch to fork from");
    const rows = messages.map((msg) => `${clip(msg.text, ROW_TEXT)} (${msg.entryId})`);
    const picked = await c.ui.select("Fork before which message? (it can then be asked again)", rows);
    entryId = picked === undefined ? undefined : messages[rows.indexOf(picked)]?.entryId;
    if (entryId === undefined) return c.info("(fork cancelled)");
  }
  if (entryId === undefined) return;
  const text = messages.find((msg) => msg.entryId === entryId)?.text;
  const r = await c.session.forkSession(entryId);
  if (r.cancelled) return c.warn("an extension kept the current session (session_before_switch)");
  c.info(`forked into a new session${r.file ? ` ${r.file}` : " (in memory)"}`);
  if (text !== undefined) c.info(`it ends before: ${clip(text, ROW_TEXT * 2)}`);
  showBranch(c);
  if (text !== undefined) c.setEditorText?.(text);
}

function findEntry(
  entries: readonly SessionEntry[],
  prefix: string,
  c: SessionCommandContext,
): SessionEntry | undefined {
  const matches = entries.filter((e) => e.id.startsWith(prefix));
  if (matches.length === 1) return matches[0];
  c.warn(
    matches.length === 0
      ? `no entry id starts with "${prefix}" (/tree lists them)`
      : `"${prefix}" matches ${matches.length} entries: give more of the id`,
  );
  return undefined;
}

function isMilestone(entry: SessionEntry): boolean {
  return (
    entry.type === "compaction" ||
    (entry.type === "message" && (entry.message.role === "user" || entry.message.role === "assistant")) ||
    linkedSessionFile(entry) !== undefined
  );
}

/** A child agent's transcript, linked from an `agent` call's result: its branch, one line per entry. */
function showChildSession(file: string, c: SessionCommandContext): void {
  const child = openChildSession(c.session.sessionManager.file, file);
  if (typeof child === "string") return c.warn(child);
  c.info(`child agent session ${child.file}:`);
  for (const entry of child.getBranch()) c.info(`  ${kindOf(entry)}: ${clip(treeText(entry), ROW_TEXT * 2)}`);
}

/** The end of the current branch, so that the screen shows where the session now is. */
function showBranch(c: SessionCommandContext): void {
  const branch = c.session.sessionManager.getBranch().filter(isMilestone);
  if (branch.length === 0) return c.info("  (the branch is empty: the next prompt starts it)");
  if (branch.length > TAIL) c.info(`  … ${branch.length - TAIL} earlier`);
  for (const entry of branch.slice(-TAIL)) c.info(`  ${kindOf(entry)}: ${clip(treeText(entry), ROW_TEXT * 2)}`);
}
