/**
 * Text that came from a model, a tool or an extension, made safe to write to a terminal. Only
 * the renderer may move the cursor, set colours or talk to the terminal: escape sequences in
 * such text (a clear screen, a window title, a clipboard write through OSC 52) and control
 * characters are removed, not interpreted.
 */

// ECMA-48 sequences, in their 7-bit (ESC …) and 8-bit (C1) forms: CSI; the OSC / DCS / SOS / PM /
// APC strings up to their terminator (or the end of the text, as the terminal would swallow it);
// two-byte escapes such as ESC 7 or ESC ( B.
const ESCAPE_SEQUENCE =
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^]*?(?:\x07|\x1b\\|\x9c|$)|\x1b[ -/]*[0-~]/g;
/** C0 controls but tab and newline, DEL, and the C1 controls. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Without escape sequences and control characters; "\r\n" becomes "\n", a tab stays. */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, "").replace(/\r\n/g, "\n").replace(CONTROL, "");
}

/**
 * The same, for tool output read as lines: a line rewritten with "\r" (a progress bar) keeps
 * only its last non-blank version, which is what the terminal would have shown.
 */
export function printableLines(text: string): string {
  const lines = text.replace(ESCAPE_SEQUENCE, "").replace(/\r\n/g, "\n").split("\n");
  return lines
    .map(
      (line) =>
        line
          .split("\r")
          .filter((part) => part.trim() !== "")
          .at(-1) ?? "",
    )
    .join("\n")
    .replace(CONTROL, "");
}

/** Printable, on one line ("⏎" where lines broke, tabs as spaces), at most `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = printableLines(text)
    .replace(/\s*\n\s*/g, " ⏎ ")
    .replace(/\t/g, " ")
    .trim();
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : flat;
}
