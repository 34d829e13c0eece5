/**
 * The input line of interactive mode, as a pure function of the keys typed (the terminal is in
 * raw mode, so every key arrives as bytes: Ctrl+C is "\x03", Enter is "\r").
 *
 * Interactive mode turns on bracketed paste, so the terminal wraps pasted text in
 * ESC[200~ … ESC[201~: inside, a line break is part of the line (several pasted lines are one
 * prompt, sent with Enter) and control keys are text, not commands — but Ctrl+C always acts.
 */

import { parseSlashCommand } from "@mypi/extension-api";

export type EditorAction =
  | { type: "submit"; line: string }
  /** Ctrl+C. */
  | { type: "interrupt" }
  /** Ctrl+D on an empty line. */
  | { type: "eof" };

export interface EditorState {
  buffer: string;
  /** Between the paste markers. */
  pasting: boolean;
  /** An escape sequence cut off at the end of the last chunk, completed by the next one. */
  pending: string;
}

export const emptyEditor: EditorState = { buffer: "", pasting: false, pending: "" };

export interface EditorStep extends EditorState {
  actions: EditorAction[];
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
/** A whole escape sequence: CSI (arrows, paste markers), SS3 (F1–F4), or Alt+key. */
const SEQUENCE = /^\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|[^[O])/;
/** The start of one that the chunk ended in. */
const PARTIAL = /^\x1b(?:\[[0-?]*[ -/]*|O)?$/;

/** Apply one chunk of input (one key, or a paste) to the line. */
export function applyKeys(state: EditorState, chunk: string): EditorStep {
  const actions: EditorAction[] = [];
  const text = state.pending + chunk;
  let b = state.buffer;
  let pasting = state.pasting;
  let pending = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\x1b") {
      const rest = text.slice(i);
      const sequence = SEQUENCE.exec(rest)?.[0];
      // A chunk that is only ESC is the Escape key, not half of a sequence.
      if (sequence === undefined && PARTIAL.test(rest) && text !== "\x1b") {
        pending = rest;
        break;
      }
      if (sequence === PASTE_START) pasting = true;
      else if (sequence === PASTE_END) pasting = false;
      i += (sequence?.length ?? 1) - 1;
      continue;
    }
    if (ch === "\x03") {
      actions.push({ type: "interrupt" });
      pasting = false;
      continue;
    }
    if (pasting) {
      if (ch === "\r" || ch === "\n") {
        if (ch === "\r" && text[i + 1] === "\n") i++;
        b += "\n";
      } else if (ch === "\t" || isPrintable(ch)) b += ch;
      continue;
    }
    switch (ch) {
      case "\r":
      case "\n":
        // "\r\n" from a paste the terminal did not mark is one line end.
        if (ch === "\r" && text[i + 1] === "\n") i++;
        actions.push({ type: "submit", line: b });
        b = "";
        break;
      case "\x04":
        if (b === "") actions.push({ type: "eof" });
        break;
      case "\x7f":
      case "\b":
        b = withoutLastCharacter(b);
        break;
      case "\x15": // Ctrl+U: clear the line
        b = "";
        break;
      case "\x17": // Ctrl+W: delete the word before the cursor
        b = b.replace(/\S*\s*$/, "");
        break;
      case "\t":
        b += " ";
        break;
      default:
        if (isPrintable(ch)) b += ch;
    }
  }
  return { buffer: b, pasting, pending, actions };
}

/** Not a C0 or C1 control character (some terminals obey C1 ones, e.g. U+009B as CSI). */
function isPrintable(ch: string): boolean {
  return ch >= " " && !(ch >= "\x7f" && ch <= "\x9f");
}

const graphemes = new Intl.Segmenter();
/** Backspace removes what the user sees as one character: an emoji with its modifiers, a letter with its accents. */
function withoutLastCharacter(line: string): string {
  // A character is far shorter than 64 code units; the tail is enough to find the last one.
  const tail = line.slice(-64);
  const last = [...graphemes.segment(tail)].at(-1)?.segment ?? "";
  return line.slice(0, line.length - last.length);
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
