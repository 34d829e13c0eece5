/**
 * What a line submitted in interactive mode is: a slash command or text for the agent. (Keys
 * and editing are pi-tui's `Editor`, `modes/interactive.ts`.)
 */
import { parseSlashCommand } from "@mypi/extension-api";

/** A typed line: a slash command (`/name args`) or text for the agent. */
type ParsedLine = { kind: "command"; name: string; args: string } | { kind: "text"; text: string } | { kind: "empty" };

/** Command names follow `registerCommand`'s rule (`parseSlashCommand`), as in print and RPC mode. */
export function parseLine(line: string): ParsedLine {
  const text = line.trim();
  if (!text) return { kind: "empty" };
  const command = parseSlashCommand(text);
  if (command) return { kind: "command", ...command };
  return { kind: "text", text };
}
