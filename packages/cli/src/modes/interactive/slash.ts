/**
 * Slash-command dispatch: mypi's own commands (`/quit`, `/help`, `/reload`, `/compact`, `/continue-run`), then the
 * session commands (`session-commands.ts`: `/new`, `/resume`, `/tree`, …), then extension
 * commands; a prompt template or skill (`/name args` that no command ran) is sent as a prompt,
 * which the host expands.
 */
import { errorMessage } from "@mypi/kernel";
import { printable } from "../../render/text.ts";
import { orderLines } from "../../commands/extensions.ts";
import { runSessionCommand, SESSION_COMMANDS, type SessionCommandContext } from "./session-commands.ts";
import { setMode } from "./mode.ts";
import { modelCommand, thinkingCommand } from "./models.ts";
import { exit, startRun } from "./run-lifecycle.ts";
import { refresh, running, say, sayFrom, type Interactive } from "./state.ts";

/** mypi's own commands, for /help and Tab. */
export const BUILTIN_COMMANDS = [
  { name: "quit", description: "exit" },
  { name: "reload", description: "reload the extensions" },
  { name: "compact", description: "summarize the history", argumentHint: "[instructions]" },
  { name: "continue-run", description: "go on with the run a crash or a pause left unfinished" },
  {
    name: "model",
    description: "switch the model (a picker; or provider/id[:level], part of an id)",
    argumentHint: "[model]",
  },
  {
    name: "thinking",
    description: "set the thinking level (off … xhigh, as the model supports)",
    argumentHint: "[level]",
  },
  { name: "help", description: "list the commands and keys" },
  { name: "extensions", description: "the loaded extensions, their order per slot, and their decisions so far" },
  {
    name: "mode",
    description: "show or set the permission mode: default, accept-edits, plan, bypass",
    argumentHint: "[mode]",
  },
];

const KEYS_HELP = [
  "Enter sends; while the agent works, a line steers it and Alt+Enter queues a follow-up.",
  "Shift+Enter or Ctrl+J: a new line · Up/Down: history · Tab: complete · @: a file · !cmd: run a shell command",
  "Esc aborts the run · Ctrl+O expands/collapses tool output · Ctrl+C aborts, twice exits · Ctrl+D on an empty editor exits",
  "Ctrl+L picks a model · Ctrl+P / Shift+Ctrl+P the next / previous model · Shift+Tab the next thinking level",
  "Alt+M: the next permission mode (default → accept-edits → plan → bypass)",
];

export async function runSlash(m: Interactive, name: string, args: string): Promise<void> {
  switch (name) {
    case "quit":
    case "exit":
      return exit(m, 0);
    case "help":
      return showHelp(m);
    case "mode":
      return setMode(m, args);
    case "model":
      return modelCommand(m, args);
    case "thinking":
      return thinkingCommand(m, args);
    case "extensions":
      return showExtensions(m);
    case "reload":
    case "compact":
      if (running(m)) return waitsForIdle(m, name);
      return name === "reload" ? reload(m) : compact(m, args);
    case "continue-run":
      if (running(m)) return waitsForIdle(m, name);
      return continueRun(m);
    default:
      if (await runSessionCommand(name, args, sessionCommandContext(m))) return;
      return runExtensionCommand(m, name, args);
  }
}

function showHelp(m: Interactive): void {
  const own = [...BUILTIN_COMMANDS, ...SESSION_COMMANDS].map(
    (c) => `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ""}  ${c.description}`,
  );
  const theirs = m.session
    .commands()
    .map((c) => `/${c.name}${c.description ? `  ${c.description}` : ""}  (${c.extension ?? c.source})`);
  say(m, m.p.dim([...own, ...theirs, ...KEYS_HELP, loadedLine(m)].join("\n")));
}

/** One line: the extensions loaded, in load order. */
export function loadedLine(m: Pick<Interactive, "session">): string {
  const names = m.session.extensions().loaded.map((e) => e.name);
  return `extensions: ${names.length ? names.join(", ") : "none"} · /extensions shows their order and decisions`;
}

/** `/extensions`: what loaded (and from where), each slot's chain with pre / post marks, and each extension's decisions this session. */
function showExtensions(m: Interactive): void {
  const { loaded, chains } = m.session.extensions();
  const lines = [`Extensions (${loaded.length}), in load order:`];
  for (const e of loaded) {
    const counts = m.decisions.get(e.name);
    const decided = counts ? [...counts].map(([outcome, n]) => `${outcome} ${n}`).join(", ") : "no decisions yet";
    lines.push(`  ${e.name}${e.path ? `  ${e.path}` : ""}  — ${decided}`);
  }
  lines.push("Handlers per slot and event, outermost first (pre / post: their order option):", ...orderLines(chains));
  say(m, m.p.dim(printable(lines.join("\n"))));
}

/** `/continue-run`: the session's run goes on (docs/resume.md); calls a paused run holds are asked about here. */
function continueRun(m: Interactive): void {
  m.session.agent
    .resume({ judgeWaiting: true })
    .then(undefined, (error: unknown) => sayFrom(m, errorMessage(error), m.p.yellow));
}

async function reload(m: Interactive): Promise<void> {
  const { p } = m;
  const r = await m.session.reload();
  const failed = r.failed.length
    ? p.red(`; failed: ${printable(r.failed.map((f) => f.name).join(", "))} (each keeps its previous version)`)
    : "";
  say(m, p.dim(`reloaded ${r.loaded.length} extension${r.loaded.length === 1 ? "" : "s"}`) + failed);
  // Why each failed, with its file and line: what to fix before the next /reload.
  for (const f of r.failed) sayFrom(m, `  ${f.name}: ${f.error}`, p.red);
}

async function compact(m: Interactive, args: string): Promise<void> {
  const { p } = m;
  say(m, p.dim("compacting…"));
  const r = await m.session.compact(args || undefined);
  if (r.status === "compacted") return say(m, p.dim(`compacted: ${r.tokensBefore} → ${r.tokensAfter} tokens`));
  sayFrom(m, `not compacted (${r.status}${r.reason ? `: ${r.reason}` : ""}${r.error ? `: ${r.error}` : ""})`, p.yellow);
}

/** An extension command, with a `ctx.signal` that Ctrl+C aborts; else a prompt template or skill. */
async function runExtensionCommand(m: Interactive, name: string, args: string): Promise<void> {
  const stop = new AbortController();
  m.commands.add(stop);
  try {
    const r = await m.session.runCommand(name, args, stop.signal);
    if (!r.ran) {
      // A prompt template or skill: the text goes to the agent, which expands it after the input slot.
      const known = name.startsWith("skill:") || m.session.commands().some((c) => c.name === name);
      if (!known) say(m, m.p.yellow(`unknown command /${name} — /help lists the commands`));
      else if (running(m)) waitsForIdle(m, name);
      else startRun(m, `/${name}${args ? ` ${args}` : ""}`);
    } else if (r.error !== undefined) sayFrom(m, `/${name} failed: ${r.error}`, m.p.red);
  } finally {
    m.commands.delete(stop);
  }
}

function waitsForIdle(m: Interactive, name: string): void {
  say(m, m.p.yellow(`/${name} waits for an idle agent: let the run finish or press Esc.`));
}

function sessionCommandContext(m: Interactive): SessionCommandContext {
  return {
    session: m.session,
    ui: m.ui,
    cwd: m.io.cwd,
    info: (t) => sayFrom(m, t, m.p.dim),
    warn: (t) => sayFrom(m, t, m.p.yellow),
    setEditorText: (text) => (m.input.setText(text), refresh(m)),
  };
}
