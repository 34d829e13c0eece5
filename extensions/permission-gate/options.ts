/** Reading a program's GNU-style options, for the look-through functions that need its option values. */
import type { Field } from "./words.ts";

/** One option with its value (if it takes one), as `parseOptions` found it. */
export interface Option {
  name: string;
  value?: Field;
}

interface OptionSpec {
  /** Short options that take a value (`-f x`, `-fx`). */
  short?: string;
  /** Long options that take the next word as their value when written without `=`. */
  long?: readonly string[];
  /** The first operand ends the options (`ssh host cmd`, `parallel cmd ::: …`). */
  stopAtOperand?: boolean;
}

/** GNU-style options and operands (`--` ends the options). */
export function parseOptions(args: Field[], spec: OptionSpec): { options: Option[]; operands: Field[] } {
  const options: Option[] = [];
  const operands: Field[] = [];
  for (let i = 0; i < args.length; i++) {
    const f = args[i]!;
    // A word known only in part is an option when its known start says so (`--to-command="$X"`).
    if (!f.text.startsWith("-") || f.text === "-" || (!f.exact && !/^--?[A-Za-z]/.test(f.text))) {
      operands.push(f);
      if (spec.stopAtOperand) return { options, operands: [...operands, ...args.slice(i + 1)] };
      continue;
    }
    if (f.exact && f.text === "--") return { options, operands: [...operands, ...args.slice(i + 1)] };
    if (f.text.startsWith("--")) {
      const eq = f.text.indexOf("=");
      if (eq > 0) options.push({ name: f.text.slice(0, eq), value: { ...f, text: f.text.slice(eq + 1) } });
      else if (spec.long?.includes(f.text) && i + 1 < args.length) options.push({ name: f.text, value: args[++i]! });
      else options.push({ name: f.text });
      continue;
    }
    const letters = f.text.slice(1);
    for (let k = 0; k < letters.length; k++) {
      const l = letters[k]!;
      if (!spec.short?.includes(l)) {
        options.push({ name: `-${l}` });
        continue;
      }
      const rest = letters.slice(k + 1);
      if (rest !== "" || !f.exact) options.push({ name: `-${l}`, value: { ...f, text: rest } });
      else if (i + 1 < args.length) options.push({ name: `-${l}`, value: args[++i]! });
      else options.push({ name: `-${l}` });
      break;
    }
  }
  return { options, operands };
}
