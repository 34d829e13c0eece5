/**
 * The input line of interactive mode, as a pure function of the keys typed (the terminal is in
 * raw mode, so every key arrives as bytes: Ctrl+C is "\x03", Enter is "\r").
 */

import { parseSlashCommand } from "@mypi/extension-api";

export type EditorAction =
  | { type: "submit"; line: string }
  /** Ctrl+C. */
  | { type: "interrupt" }
  /** Ctrl+D on an empty line. */
  | { type: "eof" };

export interface EditorStep {
  buffer: string;
  actions: EditorAction[];
}

/** Apply one chunk of input (one key, or a paste) to the buffer. */
export function applyKeys(buffer: string, chunk: string): EditorStep {
  const actions: EditorAction[] = [];
  let b = buffer;
  for (let i = 0; i < chunk.length; i++) {
    const ch = chunk[i]!;
    switch (ch) {
      case "\r":
      case "\n":
        // "\r\n" from a paste is one line end.
        if (ch === "\r" && chunk[i + 1] === "\n") i++;
        actions.push({ type: "submit", line: b });
        b = "";
        break;
      case "\x03":
        actions.push({ type: "interrupt" });
        break;
      case "\x04":
        if (b === "") actions.push({ type: "eof" });
        break;
      case "\x7f":
      case "\b": {
        const chars = [...b];
        chars.pop();
        b = chars.join("");
        break;
      }
      case "\x15": // Ctrl+U: clear the line
        b = "";
        break;
      case "\x17": // Ctrl+W: delete the word before the cursor
        b = b.replace(/\S*\s*$/, "");
        break;
      case "\x1b": {
        // An escape sequence (arrows, function keys, bracketed paste markers): skip it whole.
        const m = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?/.exec(chunk.slice(i));
        i += (m?.[0].length ?? 1) - 1;
        break;
      }
      case "\t":
        b += " ";
        break;
      default:
        if (ch >= " ") b += ch;
    }
  }
  return { buffer: b, actions };
}

/** A typed line: a slash command (`/name args`) or text for the agent. */
export type ParsedLine = { kind: "command"; name: string; args: string } | { kind: "text"; text: string } | { kind: "empty" };

/** Command names follow `registerCommand`'s rule (`parseSlashCommand`), as in print and RPC mode. */
export function parseLine(line: string): ParsedLine {
  const text = line.trim();
  if (!text) return { kind: "empty" };
  const command = parseSlashCommand(text);
  if (command) return { kind: "command", ...command };
  return { kind: "text", text };
}
