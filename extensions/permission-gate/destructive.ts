/**
 * The built-in destructive list: the gate's default "ask" set, judged on parsed words.
 *
 * A field not known before the command runs (`$X`, `$(…)`) is taken as possibly the flag or
 * operand a check looks for: `rm $opts x` may be `rm -rf x`. A field whose known start rules that
 * out (`./$name` cannot be an option) does not count.
 */
import { DISK_DEVICE, type Invocation } from "./commands.ts";
import { gitCall } from "./git.ts";
import type { Field } from "./words.ts";

interface DestructiveCheck {
  /** Short name shown to the user and the model. */
  name: string;
  test(call: Invocation): boolean;
}

/** A field that is, or may be, an option (it starts with `-`, or nothing of it is known). */
const mayBeOption = (f: Field) => f.text.startsWith("-") || (!f.exact && f.text === "");

/** The fields before a known `--` (after it, `-rf` is a file name). */
function beforeDoubleDash(args: Field[]): Field[] {
  const end = args.findIndex((f) => f.exact && f.text === "--");
  return end < 0 ? args : args.slice(0, end);
}

/** Does an option among `args` hold one of `letters` (in a cluster like `-rf`) or equal a long form? */
function hasOption(args: Field[], letters: string, long: readonly string[]): boolean {
  return beforeDoubleDash(args).some((f) => {
    if (!mayBeOption(f)) return false;
    if (!f.exact) return true;
    if (f.text.startsWith("--")) return long.some((l) => f.text === l || f.text.startsWith(`${l}=`));
    return [...f.text.slice(1)].some((c) => letters.includes(c));
  });
}

/** Is some field `value`, or may it be (unknown past a known start that fits)? */
function hasWord(args: Field[], test: (text: string) => boolean, startsLike: string[] = []): boolean {
  return args.some((f) =>
    f.exact ? test(f.text) : f.text === "" || startsLike.some((s) => s.startsWith(f.text) || f.text.startsWith(s)),
  );
}

const named =
  (...names: string[]) =>
  (call: Invocation) =>
    names.includes(call.name);
const args = (call: Invocation) => call.argv.slice(1);

/** git's subcommand (or a subcommand that may be it) with its arguments. */
function gitSub(call: Invocation, subs: string[]): Field[] | undefined {
  if (call.name !== "git") return undefined;
  const git = gitCall(call.argv);
  if (!git.sub) return undefined;
  return !git.sub.exact || subs.includes(git.sub.text) ? git.args : undefined;
}

function check(name: string, test: (call: Invocation) => boolean): DestructiveCheck {
  return { name, test };
}

export const DESTRUCTIVE_CHECKS: readonly DestructiveCheck[] = [
  check("recursive rm", (c) => c.name === "rm" && hasOption(args(c), "rR", ["--recursive"])),
  check("sudo", named("sudo", "doas", "su", "pkexec", "run0")),
  check("git push --force", (c) => {
    const a = gitSub(c, ["push"]);
    return (
      !!a &&
      (hasOption(a, "f", ["--force", "--force-with-lease", "--force-if-includes", "--mirror"]) ||
        hasWord(a, (t) => t.startsWith("+"), ["+"]))
    );
  }),
  check("git push --delete", (c) => {
    const a = gitSub(c, ["push"]);
    return (
      !!a && (hasOption(a, "d", ["--delete", "--prune"]) || hasWord(a, (t) => t.startsWith(":") && t.length > 1, [":"]))
    );
  }),
  check("git reset --hard", (c) => {
    const a = gitSub(c, ["reset"]);
    return !!a && hasOption(a, "", ["--hard", "--merge", "--keep"]);
  }),
  check("git clean -f", (c) => {
    const a = gitSub(c, ["clean"]);
    return !!a && hasOption(a, "f", ["--force"]);
  }),
  check("git checkout/restore of everything", (c) => {
    const a = gitSub(c, ["checkout", "restore"]);
    return !!a && hasWord(a, (t) => t === "." || t === "./" || t === ":/" || t === "*", ["."]);
  }),
  check("git branch -D", (c) => {
    const a = gitSub(c, ["branch"]);
    return !!a && hasOption(a, "D", []);
  }),
  check("find -delete", (c) => c.name === "find" && hasWord(args(c), (t) => t === "-delete", ["-delete"])),
  check("mkfs", (c) => c.name === "mkfs" || c.name.startsWith("mkfs.") || c.name === "mke2fs" || c.name === "wipefs"),
  check("dd to a device or file", (c) => c.name === "dd" && hasWord(args(c), (t) => t.startsWith("of="), ["of="])),
  check("write to a block device", (c) => c.name === "tee" && hasWord(args(c), (t) => DISK_DEVICE.test(t), ["/dev/"])),
  check(
    "chmod 777",
    (c) => c.name === "chmod" && hasWord(args(c), (t) => /^0?777$|^[ugoa]*[+=]rwx$/.test(t), ["777", "0777"]),
  ),
  check(
    "recursive chown",
    (c) => (c.name === "chown" || c.name === "chgrp") && hasOption(args(c), "R", ["--recursive"]),
  ),
  check("shutdown or reboot", (c) => {
    if (["shutdown", "reboot", "halt", "poweroff"].includes(c.name)) return true;
    if (c.name === "systemctl")
      return hasWord(args(c), (t) => ["reboot", "poweroff", "halt", "kexec", "soft-reboot"].includes(t));
    return (c.name === "init" || c.name === "telinit") && hasWord(args(c), (t) => t === "0" || t === "6");
  }),
];

/** The first built-in check the invocation hits. */
export function findDestructiveCall(call: Invocation): DestructiveCheck | undefined {
  return DESTRUCTIVE_CHECKS.find((c) => c.test(call));
}
