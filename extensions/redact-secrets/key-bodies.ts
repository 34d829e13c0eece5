/**
 * Private-key bodies whose BEGIN line is not in the text: `read` with an offset, `tail -n +2`,
 * output cut at its head. Whole blocks (BEGIN … END) are the `private-key` pattern's; this looks
 * at what is left, line by line, in one pass:
 *
 * - base64 lines right before an `-----END … PRIVATE KEY-----` (or `… PRIVATE KEY BLOCK`) line
 *   are a key's tail: they and the END line are redacted;
 * - a run of two or more full-width base64 lines (64 characters: PEM, PGP armor, PuTTY; 70:
 *   OpenSSH) is a slice of a key body, unless it sits in a public block (after a BEGIN line of a
 *   certificate, public key, signature or message, or right before its END line). A slice of a
 *   certificate with neither line in the text is redacted too: base64 of that width is hard to
 *   tell apart, and a certificate is nothing the model needs to read.
 */

const KIND = "[REDACTED:private-key]";
/** One line of a base64 body, indentation allowed (a key in YAML); a PGP checksum line starts with `=`. */
const BODY_LINE = /^[ \t]*=?[A-Za-z0-9+/]+={0,2}[ \t]*\r?$/;
const FULL_WIDTH = /^[ \t]*(?:[A-Za-z0-9+/]{64}|[A-Za-z0-9+/]{70})\r?$/;
/** Shorter lines inside a body walked back from END: only the last one (and a cut first line of the text) may be short. */
const MIN_BODY_LINE = 16;
const PRIVATE_END = /^[ \t]*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;
const ARMOR = /^[ \t]*-----(BEGIN|END) [A-Z0-9 ]+-----/;

/** Cheap test first: most text has neither an END line nor a full-width base64 line. */
const MAY_HOLD_BODY = /-----END |[A-Za-z0-9+/]{64}\r?\n/;

export function redactKeyBodies(text: string): string {
  if (!text.includes("\n") || !MAY_HOLD_BODY.test(text)) return text;
  const lines = text.split("\n");
  const out: string[] = [];
  /** Inside a BEGIN … END block that is not a private key (those were redacted whole already). */
  let inPublicBlock = false;
  let changed = false;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const armor = ARMOR.exec(line);
    if (armor) {
      if (PRIVATE_END.test(line)) {
        // An END with no BEGIN before it: walk back over the body already copied to `out`.
        let start = out.length;
        while (start > 0 && isTailLine(out[start - 1]!, start === out.length, start === 1)) start--;
        out.splice(start, out.length - start, KIND);
        changed = true;
      } else {
        inPublicBlock = armor[1] === "BEGIN";
        out.push(line);
      }
      i++;
      continue;
    }
    if (!inPublicBlock && FULL_WIDTH.test(line)) {
      let end = i;
      while (end + 1 < lines.length && FULL_WIDTH.test(lines[end + 1]!)) end++;
      // The short last line of the body belongs to it.
      if (end + 1 < lines.length && BODY_LINE.test(lines[end + 1]!) && !FULL_WIDTH.test(lines[end + 1]!)) end++;
      const next = lines[end + 1];
      const endsPublic = next !== undefined && ARMOR.test(next) && !PRIVATE_END.test(next);
      if (end > i && !endsPublic && !(next !== undefined && PRIVATE_END.test(next))) {
        out.push(KIND);
        changed = true;
        i = end + 1;
        continue;
      }
      // Before a private END the walk back above takes it; in a public block it stays.
      for (let k = i; k <= end; k++) out.push(lines[k]!);
      i = end + 1;
      continue;
    }
    out.push(line);
    i++;
  }
  return changed ? out.join("\n") : text;
}

/** May this line (walking back from an END) be part of the key body? */
function isTailLine(line: string, isLast: boolean, isFirstOfText: boolean): boolean {
  if (!BODY_LINE.test(line)) return false;
  return isLast || isFirstOfText || line.trim().length >= MIN_BODY_LINE;
}
