/**
 * A reader of GNU sed scripts, for what they run and write: the `e` command runs a command
 * (`1e rm x`) or, without one, the pattern space; the `e` flag of `s` runs the pattern space
 * after the substitution; `w`/`W` and the `w` flag of `s` write a file. Everything else sed does
 * stays inside sed. A script this reader cannot follow is reported as such: the gate then cannot
 * prove it harmless.
 */

interface SedEffects {
  /** Commands `e COMMAND` runs through the shell. */
  commands: string[];
  /** What runs text the gate cannot see (the pattern space), if anything. */
  executes?: string;
  /** Files `w` writes. */
  writes: string[];
}

/** What `script` runs and writes, or undefined when it cannot be read. */
export function readSed(script: string): SedEffects | undefined {
  const out: SedEffects = { commands: [], writes: [] };
  let i = 0;
  const at = (k = 0) => script[i + k] ?? "";
  const toLineEnd = (): string => {
    const start = i;
    while (i < script.length && script[i] !== "\n") i++;
    return script.slice(start, i);
  };
  /** A regex or replacement up to `delim`, with its escapes; false when it does not end. */
  const skipPart = (delim: string): boolean => {
    while (i < script.length && script[i] !== delim) {
      if (script[i] === "\\") i++;
      else if (script[i] === "\n" && delim !== "\n") return false;
      i++;
    }
    if (i >= script.length) return false;
    i++;
    return true;
  };
  const address = (): boolean => {
    if (/\d/.test(at())) {
      while (/\d/.test(at())) i++;
      if (at() === "~") for (i++; /\d/.test(at()); ) i++;
    } else if (at() === "$") i++;
    else if (at() === "/" || at() === "\\") {
      if (at() === "\\") i++;
      const delim = at();
      i++;
      if (!delim || !skipPart(delim)) return false;
      while (at() === "I" || at() === "M") i++;
    }
    return true;
  };
  while (i < script.length) {
    while (/[\s;]/.test(at()) && i < script.length) i++;
    if (i >= script.length) break;
    if (at() === "#") {
      toLineEnd();
      continue;
    }
    if (!address()) return undefined;
    if (at() === ",") {
      i++;
      if (at() === "+" || at() === "~") for (i++; /\d/.test(at()); ) i++;
      else if (!address()) return undefined;
    }
    while (at() === " " || at() === "\t") i++;
    while (at() === "!" || at() === " " || at() === "\t") i++;
    const c = at();
    i++;
    switch (c) {
      case "{":
      case "}":
      case "=":
      case "d":
      case "D":
      case "g":
      case "G":
      case "h":
      case "H":
      case "n":
      case "N":
      case "p":
      case "P":
      case "x":
      case "z":
      case "F":
        break;
      case "l":
      case "L":
      case "q":
      case "Q":
        while (/[\s\d]/.test(at()) && at() !== "\n") i++;
        break;
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
        while (i < script.length && script[i] !== "\n" && script[i] !== ";") i++;
        break;
      case "a":
      case "i":
      case "c":
        // The text runs to the end of the line; a backslash at the end continues it.
        for (;;) {
          const line = toLineEnd();
          if (!line.endsWith("\\") || i >= script.length) break;
          i++;
        }
        break;
      case "r":
      case "R":
        toLineEnd();
        break;
      case "w":
      case "W":
        out.writes.push(toLineEnd().trim());
        break;
      case "e": {
        const command = toLineEnd().trim();
        if (command === "") out.executes = "sed's e command runs the pattern space as a command";
        else out.commands.push(command);
        break;
      }
      case "s": {
        const delim = at();
        i++;
        if (!delim || delim === "\n" || delim === "\\" || !skipPart(delim) || !skipPart(delim)) return undefined;
        while (/[gpiImMe\d]/.test(at()) && at() !== "") {
          if (at() === "e") out.executes = "sed's s///e runs the pattern space as a command";
          i++;
        }
        if (at() === "w") {
          i++;
          out.writes.push(toLineEnd().trim());
        }
        break;
      }
      case "y": {
        const delim = at();
        i++;
        if (!delim || !skipPart(delim) || !skipPart(delim)) return undefined;
        break;
      }
      default:
        return undefined;
    }
  }
  return out;
}
