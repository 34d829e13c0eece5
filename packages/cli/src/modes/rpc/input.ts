/**
 * The input reader's side: each stdin line parsed into a command (or the error response it gets)
 * and routed — dialog answers and `abort` at once, everything else through the queue, in order.
 */
import { errorMessage, exceedsDepth, tooDeepText } from "@mypi/kernel";
import { LineTooLong, type JsonlRecord } from "./jsonl.ts";
import { handleCommand } from "./commands.ts";
import { write, type Command, type Response, type RpcState } from "./state.ts";

/** Route one stdin line (`readJsonlLines` calls this for each). */
export function routeLine(s: RpcState, line: JsonlRecord): void {
  if (typeof line === "string" && line.trim() === "") return;
  const parsed = parseCommand(line);
  if ("refused" in parsed) {
    // In the queue, so that it is answered in the order the lines came.
    s.queue = s.queue.then(() => void write(s, parsed.refused));
    return;
  }
  const { command } = parsed;
  if (command.type === "extension_ui_response") {
    // Answered at once, outside the queue: the command waiting on this dialog may be in it.
    s.target.ui.answer(command); // an answer to a dialog that already ended is ignored
  } else if (command.type === "abort" || command.type === "abort_bash") {
    // At once too: what it stops (an extension command, a prompt's run, a bash command) may be what holds the queue.
    if (command.type === "abort") s.aborts++;
    void handleCommand(s, command);
  } else {
    s.sentAfter.set(command, s.aborts);
    s.queue = s.queue.then(() => handleCommand(s, command));
  }
}

/** Parse one line: a command, or the error response it gets. */
function parseCommand(line: JsonlRecord): { command: Command } | { refused: Response } {
  const refused = (error: string, command = "parse"): { refused: Response } => ({
    refused: { type: "response", command, success: false, error: `Failed to parse command: ${error}` },
  });
  if (line instanceof LineTooLong) {
    return refused(
      `the line is longer than ${line.limit} characters (${line.chars}) and was dropped. Send large content in smaller commands.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    return refused(errorMessage(error));
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || typeof (parsed as Command).type !== "string") {
    return refused('expected an object with a string "type"');
  }
  // Kept out before anything holds it: freezing, copying or writing it would overflow the stack.
  if (exceedsDepth(parsed)) {
    const { id, type } = parsed as Command;
    const answer = refused(`${tooDeepText("the command")}.`, type);
    if (id !== undefined && (typeof id !== "object" || id === null)) answer.refused.id = id;
    return answer;
  }
  return { command: parsed as Command };
}
