/**
 * A line submitted from the editor (Enter; Alt+Enter makes it a follow-up): kept in the history,
 * then a `!cmd`, a slash command, steering for the run going, or a new run's prompt.
 */
import { printable } from "../../render/text.ts";
import { parseShellLine } from "../../tui/shell.ts";
import { parseLine } from "../parse-line.ts";
import { running, say, sayFrom, refresh, type Interactive } from "./state.ts";
import { startRun, steerRun } from "./run-lifecycle.ts";
import { runShellLine } from "./shell-line.ts";
import { runSlash } from "./slash.ts";

export function submit(m: Interactive, line: string, followUp = false): void {
  const { p } = m;
  const parsed = parseLine(line);
  if (parsed.kind === "empty") return refresh(m);
  m.history.add(line.trim());
  m.input.addToHistory?.(line.trim());
  const shellLine = parseShellLine(line);
  if (shellLine) {
    say(m, `${p.bold(">")} ${printable(line.trim())}`);
    if (m.shell.running) return say(m, p.yellow("a shell command is running: wait for it, or press Esc to stop it"));
    void runShellLine(m, shellLine.command, shellLine.excludeFromContext);
    return;
  }
  if (parsed.kind === "command") {
    say(m, `${p.bold(">")} ${printable(line.trim())}`);
    void runSlashReporting(m, parsed.name, parsed.args);
    return;
  }
  if (running(m)) return steerRun(m, parsed.text, followUp);
  say(m, `${p.bold(">")} ${printable(parsed.text)}`);
  startRun(m, parsed.text);
}

/** A slash command whose failure is said in the conversation (`--resume` opens `/resume` this way too). */
export function runSlashReporting(m: Interactive, name: string, args: string): Promise<void> {
  return runSlash(m, name, args).catch((error: unknown) => sayFrom(m, `✗ /${name}: ${String(error)}`, m.p.red));
}
