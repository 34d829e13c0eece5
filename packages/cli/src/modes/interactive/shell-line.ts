/**
 * `!cmd` and `!!cmd` lines (`tui/shell.ts` parses and runs them): one at a time, shown as a tool
 * block; a Pi extension's `user_bash` handler may answer instead of the shell, or forbid the run.
 * The output of `!cmd` (not `!!cmd`) goes to the model before the next prompt (`startRun`).
 */
import { runShell, shellContext, type ShellResult } from "../../tui/shell.ts";
import { refresh, type Interactive } from "./state.ts";

export async function runShellLine(m: Interactive, command: string, excludeFromContext: boolean): Promise<void> {
  const { shell } = m;
  const stop = new AbortController();
  shell.running = stop;
  const block = m.chat.shellBlock(`shell-${++shell.count}`, command);
  refresh(m);
  // Escape while a user_bash handler thinks stops waiting, and nothing runs.
  const asked = m.session.userBash?.(command, excludeFromContext);
  const answer =
    asked &&
    (await Promise.race([
      asked,
      new Promise<"stopped">((resolve) =>
        stop.signal.addEventListener("abort", () => resolve("stopped"), { once: true }),
      ),
    ]));
  if (answer === "stopped" || (answer && "error" in answer)) {
    if (shell.running === stop) shell.running = undefined;
    const why =
      answer === "stopped"
        ? "stopped before a user_bash handler answered"
        : `${answer.extension}'s user_bash handler failed: ${answer.error}`;
    block.finish({ content: [{ type: "text", text: `not run: ${why}` }] }, true, Date.now());
    return refresh(m);
  }
  const r: ShellResult = answer
    ? {
        output: answer.result.output,
        exitCode: answer.result.exitCode ?? null,
        cancelled: answer.result.cancelled,
        truncated: answer.result.truncated,
      }
    : await runShell(command, m.io.cwd, stop.signal);
  if (shell.running === stop) shell.running = undefined;
  const failed = r.cancelled || r.exitCode !== 0;
  const status = r.cancelled ? "cancelled" : r.exitCode !== 0 ? `exit code ${r.exitCode ?? "?"}` : "";
  const text = `${r.output.replace(/\n$/, "")}${r.truncated ? "\n[output truncated]" : ""}${failed ? `${r.output ? "\n" : ""}${status}` : ""}`;
  block.finish({ content: [{ type: "text", text }] }, failed, Date.now());
  if (!excludeFromContext) shell.shared.push(shellContext(command, r));
  refresh(m);
}
