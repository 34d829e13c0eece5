/**
 * Pi's `bash` and `abort_bash`: the client's own shell command, run in the workspace as
 * interactive mode's `!cmd` is (`tui/shell.ts`: `bash -c`, not the model's tool, not sandboxed;
 * a Pi extension's `user_bash` handler may answer instead, or forbid it). Its output streams as
 * `bash_execution_update {id, delta}` and the response is Pi's `BashResult`. Unless
 * `excludeFromContext`, the command and its output join the conversation as a custom message
 * (`customType: "bashExecution"`, which `get_messages` shows as Pi's `bashExecution`), so the
 * model sees it with the next prompt — at once while the agent is idle, else when the run in
 * progress has ended. It passes no slot on the way, so redact-secrets' masking (when loaded) is
 * applied to it first, as to everything else the host records.
 */
import type { CustomMessage } from "@mypi/kernel";
import { toJsonLine } from "./jsonl.ts";
import { runShell, shellContext, type ShellResult } from "../../tui/shell.ts";
import { CommandError, requireString } from "./command-fields.ts";
import { emit, type Command, type RpcState } from "./state.ts";

/** The custom type of a shell command's output in the conversation. */
export const BASH_EXECUTION = "bashExecution";

/** What `bash` answers: Pi's `BashResult` (`exitCode` absent when the command was killed). */
export interface BashResult {
  output: string;
  exitCode?: number;
  cancelled: boolean;
  truncated: boolean;
}

export async function bash(s: RpcState, c: Command): Promise<BashResult> {
  const command = requireString(c, "command");
  const exclude = c.excludeFromContext ?? false;
  if (typeof exclude !== "boolean") throw new CommandError('"excludeFromContext" must be true or false.');
  if (s.bash) throw new CommandError("A bash command is already running: wait for its response, or send abort_bash.");
  const stop = new AbortController();
  s.bash = stop;
  try {
    const answer = await s.target.userBash?.(command, exclude);
    if (answer && "error" in answer)
      throw new CommandError(`Not run: ${answer.extension}'s user_bash handler failed: ${answer.error}`);
    const ran: ShellResult = answer
      ? {
          output: answer.result.output,
          exitCode: answer.result.exitCode ?? null,
          cancelled: answer.result.cancelled,
          truncated: answer.result.truncated,
        }
      : await runShell(command, s.target.sessionManager.cwd, stop.signal, (delta) =>
          emit(s, toJsonLine({ type: "bash_execution_update", ...(c.id !== undefined && { id: c.id }), delta })),
        );
    // It joins the conversation without passing a slot: masked as the host masks what it records.
    if (!exclude) record(s, s.redact ? s.redact(shellMessage(command, ran)) : shellMessage(command, ran));
    return {
      output: ran.output,
      ...(ran.exitCode !== null && { exitCode: ran.exitCode }),
      cancelled: ran.cancelled,
      truncated: ran.truncated,
    };
  } finally {
    s.bash = undefined;
  }
}

/** `abort_bash`: stop the running command (its process group); nothing running is no error, as in Pi. */
export function abortBash(s: RpcState): undefined {
  s.bash?.abort(new DOMException("Aborted by the client", "AbortError"));
  return undefined;
}

function shellMessage(command: string, r: ShellResult): CustomMessage {
  return {
    role: "custom",
    customType: BASH_EXECUTION,
    content: shellContext(command, r),
    display: true,
    details: {
      command,
      output: r.output,
      exitCode: r.exitCode ?? undefined,
      cancelled: r.cancelled,
      truncated: r.truncated,
    },
    timestamp: Date.now(),
  };
}

/** Into the conversation now when the agent is idle; else when its run has ended (`flushHeldShell`). */
function record(s: RpcState, message: CustomMessage): void {
  s.heldShell.push(message);
  if (!s.target.agent.isRunning) flushHeldShell(s);
}

/** Append the held shell output to the session and the history (the agent is idle). */
export function flushHeldShell(s: RpcState): void {
  const { agent, sessionManager } = s.target;
  if (s.heldShell.length === 0 || agent.isRunning) return;
  const messages = s.heldShell.splice(0);
  for (const m of messages) sessionManager.appendMessage(m);
  agent.replaceMessages([...agent.messages, ...messages]);
}
