/**
 * What a command runs, as the look-through functions (wrappers.ts, programs.ts, git.ts) report
 * it to the walk over the script (commands.ts).
 */
import type { Field } from "./words.ts";

/**
 * What a command runs:
 * - `run`: another command, these words;
 * - `script`: a shell script text, parsed and judged in turn;
 * - `inside`: text bash reads again (a value in an arithmetic subscript, a prompt, an exported
 *   function): parsed and judged when it parses, else opaque with `why`;
 * - `unresolved`: something the gate cannot know, asked about whatever the rules say;
 * - `opaque`: code the gate does not read, asked about where a deny or ask rule could match what
 *   it runs; `vouch`: an allow rule that matches the command itself lifts that (the user vouches
 *   for `make`, `npm test`, `./build.sh`);
 * - `write`: a file the command writes (`sed 'w file'`), judged by the Write rules.
 */
export type Next =
  | { run: Field[] }
  | { script: string }
  | { inside: string; why: string }
  | { unresolved: string }
  | { opaque: string; vouch?: true }
  | { write: Field };

/** Words a program joins with blanks and hands to a shell (`ssh host …`, `watch …`), or runs as they are (`direct`). */
export function joined(name: string, words: Field[], direct: boolean): Next[] {
  if (words.length === 0) return [];
  if (direct) return [{ run: words }];
  const unknown = words.find((f) => !f.exact);
  if (unknown) return [{ unresolved: `what ${name} runs depends on ${unknown.unknown}, known only when it runs` }];
  return [{ script: words.map((f) => f.text).join(" ") }];
}

/**
 * A command text some program runs through the shell: judged when known; known only when it runs,
 * it asks whatever the rules say, as `bash -c "$X"` does.
 */
export function commandText(what: string, value: Field): Next {
  return value.exact
    ? { script: value.text }
    : { unresolved: `${what} runs ${value.unknown}, known only when it runs` };
}
