/**
 * Where a JSON text breaks, for a message that quotes the spot. Only called after `JSON.parse`
 * failed (V8's own messages are inconsistent: some carry a position, some only a snippet).
 * Iterative, so deeply nested input cannot overflow the stack.
 */

interface JsonBreak {
  /** UTF-16 offset of the first character that cannot continue valid JSON (the length when input ended early). */
  position: number;
  problem: string;
}

const UNTERMINATED = "unterminated string";
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/** The first syntax error of `text`, or `undefined` when it is valid JSON. */
export function locateJsonError(text: string): JsonBreak | undefined {
  const n = text.length;
  const stack: ("{" | "[")[] = [];
  let i = 0;
  let mode: "value" | "key" | "after" = "value";
  const fail = (position: number, problem: string): JsonBreak =>
    position >= n
      ? {
          position: n,
          problem: `the text ended before the JSON was complete${problem === UNTERMINATED ? ` (${UNTERMINATED})` : ""}`,
        }
      : { position, problem };
  const skip = () => {
    while (i < n && WS.has(text[i]!)) i++;
  };

  for (;;) {
    skip();
    if (mode === "value") {
      const c = text[i];
      if (c === "{" || c === "[") {
        i++;
        skip();
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++;
          mode = "after";
        } else {
          stack.push(c);
          mode = c === "{" ? "key" : "value";
        }
      } else if (c === '"') {
        const end = scanString(text, i);
        if (typeof end !== "number") return fail(end.position, end.problem);
        i = end;
        mode = "after";
      } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
        const end = scanNumber(text, i);
        if (typeof end !== "number") return fail(end.position, end.problem);
        i = end;
        mode = "after";
      } else if (c === "t" || c === "f" || c === "n") {
        const word = c === "t" ? "true" : c === "f" ? "false" : "null";
        for (let k = 0; k < word.length; k++) {
          if (text[i + k] !== word[k])
            return fail(i + k, `unexpected character ${show(text, i + k)} (expected ${word})`);
        }
        i += word.length;
        mode = "after";
      } else {
        return fail(i, `unexpected character ${show(text, i)} where a value should start`);
      }
    } else if (mode === "key") {
      if (text[i] !== '"') return fail(i, `expected a property name in double quotes, found ${show(text, i)}`);
      const end = scanString(text, i);
      if (typeof end !== "number") return fail(end.position, end.problem);
      i = end;
      skip();
      if (text[i] !== ":") return fail(i, `expected ':' after the property name, found ${show(text, i)}`);
      i++;
      mode = "value";
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        return i < n ? fail(i, `unexpected text after the end of the JSON value: ${show(text, i)}`) : undefined;
      }
      const close = top === "{" ? "}" : "]";
      if (text[i] === ",") {
        i++;
        mode = top === "{" ? "key" : "value";
      } else if (text[i] === close) {
        i++;
        stack.pop();
      } else {
        return fail(i, `expected ',' or '${close}', found ${show(text, i)}`);
      }
    }
  }
}

function scanString(text: string, start: number): number | JsonBreak {
  for (let j = start + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c === 0x5c) {
      const e = text[j + 1];
      if (e === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6))) {
          return { position: Math.min(j + 2, text.length), problem: "invalid \\u escape (needs 4 hex digits)" };
        }
        j += 5;
      } else if (e !== undefined && ESCAPES.has(e)) {
        j += 1;
      } else {
        return { position: j + 1, problem: `invalid escape ${show(text, j + 1)} in a string` };
      }
    } else if (c < 0x20) {
      return { position: j, problem: "unescaped control character in a string (write it as \\n, \\t or \\u00XX)" };
    }
  }
  return { position: text.length, problem: UNTERMINATED };
}

function scanNumber(text: string, start: number): number | JsonBreak {
  NUMBER.lastIndex = start;
  const match = NUMBER.exec(text);
  if (!match) return { position: text[start] === "-" ? start + 1 : start, problem: "invalid number" };
  const end = start + match[0].length;
  const next = text[end];
  if (next === "." || next === "e" || next === "E" || (next !== undefined && next >= "0" && next <= "9")) {
    return { position: end, problem: "invalid number" };
  }
  return end;
}

function show(text: string, i: number): string {
  if (i >= text.length) return "the end of the text";
  const cp = text.codePointAt(i)!;
  return `'${visible(String.fromCodePoint(cp))}'`;
}

/** Control characters, line separators and lone surrogates written as `\uXXXX` so a quote shows them. */
export function visible(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
