/**
 * The short list of commands `bash` refuses outright. It is a seatbelt against a model's slip
 * (`rm -rf ~`, `mkfs`, a fork bomb), not a sandbox: anything clever gets through, and policy
 * belongs in a `tool_call` extension. Each rule looks at one simple command of the line at a
 * time (split on `;`, `&&`, `||`, `|`, `&`, newlines and subshell brackets).
 */

/** Why `command` is refused, or undefined when it may run. */
export function destructiveReason(command: string): string | undefined {
  if (isForkBomb(command)) return "it is a fork bomb";
  if (/>\s*\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)/.test(command)) return "it writes over a raw disk device";
  for (const words of simpleCommands(command)) {
    const reason = ruleFor(words);
    if (reason) return reason;
  }
  return undefined;
}

function ruleFor(words: string[]): string | undefined {
  const [name = "", ...rest] = words;
  const flags = rest.filter((w) => w.startsWith("-"));
  const targets = rest.filter((w) => !w.startsWith("-"));
  const recursive = flags.some((f) => f === "--recursive" || (/^-[a-zA-Z]+$/.test(f) && /[rR]/.test(f)));
  switch (name) {
    case "rm":
      if (flags.includes("--no-preserve-root")) return "it deletes the whole file system";
      if (recursive && targets.some(isRootOrHome)) return "it deletes the whole file system or the home folder";
      return undefined;
    case "chmod":
    case "chown":
    case "chgrp":
      if (recursive && targets.some(isRootOrHome))
        return "it changes the permissions of the whole file system or the home folder";
      return undefined;
    case "dd":
      if (rest.some((w) => /^of=\/dev\/(?!null$|zero$|stdout$|stderr$|tty$|fd\/)/.test(w)))
        return "it writes over a raw disk device";
      return undefined;
    case "wipefs":
    case "mke2fs":
      return "it erases or formats a disk";
    case "shutdown":
    case "reboot":
    case "halt":
    case "poweroff":
      return "it shuts down or restarts the machine";
    case "init":
    case "telinit":
      return targets.some((t) => t === "0" || t === "6") ? "it shuts down or restarts the machine" : undefined;
    case "systemctl":
      return targets.some((t) => /^(poweroff|reboot|halt|kexec)$/.test(t))
        ? "it shuts down or restarts the machine"
        : undefined;
    default:
      return name === "mkfs" || name.startsWith("mkfs.") ? "it erases or formats a disk" : undefined;
  }
}

/** `/`, `/*`, `//`, `~`, `~/`, `~/*`, `$HOME`, `$HOME/*` … (`${HOME}` arrives as `$HOME`). */
function isRootOrHome(target: string): boolean {
  return /^\/+\*?$/.test(target) || /^(~|\$HOME)(\/+\*?)?$/.test(target);
}

/** `:(){ :|:& };:` and its renamings (`bomb(){ bomb|bomb& }; bomb`), whitespace ignored. */
function isForkBomb(command: string): boolean {
  // The name starts where a run of name characters starts: tried at every position inside a run,
  // a 200 KB heredoc of letters took minutes (each try scans to the run's end).
  return /(?<![\w:.-])([\w:.-]+)\(\)\{\1\|\1&\};\1/.test(command.replace(/\s+/g, ""));
}

/** Pass-through prefixes that run the command that follows them. */
const WRAPPERS = new Set(["sudo", "doas", "command", "exec", "nohup", "time", "nice", "env", "builtin"]);

/** Each simple command as words, quotes removed, wrappers and `VAR=value` prefixes skipped. */
function simpleCommands(command: string): string[][] {
  const result: string[][] = [];
  const plain = command.replace(/\$\{(\w+)\}/g, "$$$1"); // ${HOME} → $HOME, so braces only group commands
  for (const segment of plain.split(/&&|\|\||[;&|\n()`{}]|\$\(/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/^["']+|["']+$/g, ""))
      .filter((w) => w !== "");
    let i = 0;
    while (i < words.length) {
      const w = words[i]!;
      if (WRAPPERS.has(w) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
      else if (i > 0 && WRAPPERS.has(words[i - 1]!) && w.startsWith("-"))
        i++; // sudo -u root …
      else break;
    }
    const rest = words.slice(i);
    if (rest.length > 0) {
      rest[0] = rest[0]!.replace(/^.*\//, ""); // /bin/rm → rm
      result.push(rest);
    }
  }
  return result;
}
