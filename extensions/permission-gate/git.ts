/**
 * What git runs besides itself: commands named in its settings (`-c`, `git config`), in options
 * (`--upload-pack`, `rebase --exec`), in `ext::` URLs, and subcommands that run a command
 * (`bisect run`, `submodule foreach`, `filter-branch`). A literal command is handed back to be
 * judged; one set through git's settings, or known only when it runs, asks whatever the rules say;
 * code in files git runs (hooks of a template, an exec path, an alias) is opaque.
 */
import type { Next } from "./next.ts";
import type { Field } from "./words.ts";

/** git configuration keys whose value is a command git runs (an alias with `!`, a pager, a hook folder …). */
const GIT_RUNS_COMMAND =
  /^(?:alias\..+|core\.(?:sshcommand|pager|editor|fsmonitor|hookspath|askpass|gitproxy)|diff\.external|sequence\.editor|pager\..+|gpg\..*program|credential\..*helper|filter\..+|.+\.(?:textconv|command|cmd|tool)|uploadpack\.packobjectshook|remote\..+\.(?:receivepack|uploadpack)|include\.path|includeif\..+|init\.templatedir)$/i;

/** Keys that let git run the command of an `ext::` URL. */
const GIT_ALLOWS_EXT = /^protocol\.(?:ext\.)?allow$/i;

/** git's global options that take the next word as their value. */
const GIT_VALUE_OPTIONS = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--exec-path",
  "--super-prefix",
  "--list-cmds",
  "--attr-source",
]);

/** Options whose value is a command git runs through the shell, by subcommand ("*": any). */
const COMMAND_OPTIONS: Record<string, readonly string[]> = {
  "*": ["--upload-pack", "--receive-pack"],
  clone: ["-u"],
  "ls-remote": ["-u"],
  push: ["--exec"],
  archive: ["--exec"],
  "fetch-pack": ["--exec"],
  "send-pack": ["--exec"],
  rebase: ["--exec", "-x"],
  difftool: ["--extcmd", "-x"],
  grep: ["--open-files-in-pager", "-O"],
  "send-email": ["--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"],
  "filter-branch": [
    "--tree-filter",
    "--index-filter",
    "--env-filter",
    "--msg-filter",
    "--commit-filter",
    "--parent-filter",
    "--tag-name-filter",
    "--setup",
  ],
};

/** Options whose value is optional: only a value written onto the option counts. */
const ATTACHED_ONLY = new Set(["--open-files-in-pager", "-O"]);

/** Options that point git at files it runs (hooks, subcommands) the gate does not read. */
const FOREIGN_CODE: Record<string, readonly string[]> = { clone: ["--template"], init: ["--template"] };

/**
 * git's own subcommands and the programs commonly installed beside it (`git lfs`): any other name
 * may be an alias of git's configuration (`!rm …` runs a shell), which the gate does not read.
 */
const GIT_COMMANDS = new Set(
  `
  add am annex annotate apply archive backfill bisect blame branch bugreport bundle cat-file
  check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
  citool clean clone column commit commit-graph commit-tree config count-objects credential
  credential-cache credential-store daemon describe diagnose diff diff-files diff-index diff-tree
  difftool fast-export fast-import fetch fetch-pack filter-branch filter-repo fmt-merge-msg
  for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id gitk grep gui
  hash-object help hook http-backend http-fetch http-push imap-send index-pack init init-db
  instaweb interpret-trailers last-modified lfs log ls-files ls-remote ls-tree mailinfo mailsplit
  maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours
  merge-recursive merge-recursive-ours merge-recursive-theirs merge-resolve merge-subtree
  merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes p4 pack-objects
  pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push quiltimport range-diff
  read-tree rebase receive-pack reflog refs remote remote-ext remote-fd remote-ftp remote-ftps
  remote-http remote-https repack replace replay repo request-pull rerere reset restore rev-list
  rev-parse revert rm scalar send-email send-pack shell shortlog show show-branch show-index
  show-ref sparse-checkout stage stash status stripspace submodule subtree svn switch symbolic-ref
  tag unpack-file unpack-objects update-index update-ref update-server-info upload-archive
  upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree
`.split(/\s+/),
);

/** git's subcommand past its global options, its arguments, and the `-c key=value` settings. */
interface GitCall {
  sub: Field | undefined;
  args: Field[];
  configs: Field[];
  /** `--exec-path=DIR`: git runs its subcommands from there. */
  execPath?: Field;
}

export function gitCall(argv: Field[]): GitCall {
  const configs: Field[] = [];
  let execPath: Field | undefined;
  let i = 1;
  for (; i < argv.length; i++) {
    const f = argv[i]!;
    if (!f.exact || !f.text.startsWith("-")) break;
    if (f.text === "-c" || f.text === "--config-env") {
      if (argv[i + 1]) configs.push(argv[i + 1]!);
      i++;
    } else if (f.text.startsWith("--config-env=")) configs.push({ ...f, text: f.text.slice("--config-env=".length) });
    else if (f.text.startsWith("-c")) configs.push({ ...f, text: f.text.slice(2) });
    else if (f.text.startsWith("--exec-path=")) execPath = { ...f, text: f.text.slice("--exec-path=".length) };
    else if (GIT_VALUE_OPTIONS.has(f.text)) i++;
  }
  return { sub: argv[i], args: argv.slice(i + 1), configs, ...(execPath && { execPath }) };
}

/** A `-c`/`--config` setting that makes git run a command: unresolved (why), or undefined. */
function riskyConfig(config: Field, where: string): Next | undefined {
  const key = config.text.split("=")[0]!;
  if (!config.exact || GIT_RUNS_COMMAND.test(key))
    return { unresolved: `${where} ${key || "…"} makes git run a command the gate cannot follow` };
  return undefined;
}

/** git runs commands named in its configuration, its options and its URLs. */
export function git(argv: Field[]): Next[] {
  const call = gitCall(argv);
  const out: Next[] = [];
  let extAllowed = false;
  for (const config of call.configs) {
    const risky = riskyConfig(config, "git -c");
    if (risky) return [risky];
    if (GIT_ALLOWS_EXT.test(config.text.split("=")[0]!)) extAllowed = true;
  }
  if (call.execPath)
    out.push({ opaque: "git --exec-path runs git's subcommands from a folder the gate does not read" });
  if (call.sub && !call.sub.exact)
    return [{ unresolved: `the git subcommand comes from ${call.sub.unknown}, known only when it runs` }];
  const sub = call.sub?.text ?? "";
  const args = call.args;
  if (sub !== "" && !GIT_COMMANDS.has(sub))
    out.push({
      opaque: `git ${sub} may be an alias of git's configuration, which the gate does not read`,
      vouch: true,
    });
  if (sub === "config") {
    const reads = args.some(
      (f) => f.exact && /^(?:--get(?:-all|-regexp|-urlmatch)?|-l|--list|get|list|--unset(?:-all)?|unset)$/.test(f.text),
    );
    const key = args.find((f) => !f.exact || GIT_RUNS_COMMAND.test(f.text));
    if (key && !reads) return [{ unresolved: `git config ${key.exact ? key.text : "…"} sets a command git will run` }];
  }
  if (sub === "clone") {
    for (let i = 0; i < args.length; i++) {
      const f = args[i]!;
      const config =
        f.exact && (f.text === "-c" || f.text === "--config")
          ? args[i + 1]
          : f.exact && f.text.startsWith("--config=")
            ? { ...f, text: f.text.slice(9) }
            : undefined;
      const risky = config && riskyConfig(config, "git clone -c");
      if (risky) return [risky];
    }
  }
  const commandOptions = [...COMMAND_OPTIONS["*"]!, ...(COMMAND_OPTIONS[sub] ?? [])];
  for (let i = 0; i < args.length; i++) {
    const f = args[i]!;
    if (!f.exact) {
      // A URL known only when it runs may be an ext:: URL where git is told to allow them.
      if (extAllowed) out.push({ opaque: `git may run the command of an ext:: URL in ${f.unknown}` });
      continue;
    }
    if (f.text === "--") break;
    const value = optionValue(f, args[i + 1], commandOptions);
    if (value) {
      if (value.next) i++;
      out.push(
        value.field.exact
          ? { script: value.field.text }
          : { unresolved: `git ${value.option} runs ${value.field.unknown}, known only when it runs` },
      );
      continue;
    }
    const foreign = optionValue(f, args[i + 1], FOREIGN_CODE[sub] ?? []);
    if (foreign) {
      if (foreign.next) i++;
      out.push({ opaque: `git ${sub} ${foreign.option} runs hooks from a folder the gate does not read` });
      continue;
    }
    if (f.text.startsWith("ext::")) out.push(...extUrl(f.text));
  }
  if (sub === "bisect" && args[0]?.exact && args[0].text === "run")
    out.push(args.length > 1 ? { run: args.slice(1) } : { unresolved: "git bisect run has no command" });
  if (sub === "submodule") {
    const at = args.findIndex((f) => f.exact && f.text === "foreach");
    if (at >= 0) {
      const words = args
        .slice(at + 1)
        .filter(
          (f, k, all) => !(f.exact && f.text.startsWith("--") && all.slice(0, k).every((g) => g.text.startsWith("--"))),
        );
      const unknown = words.find((f) => !f.exact);
      if (unknown) out.push({ unresolved: `git submodule foreach runs ${unknown.unknown}, known only when it runs` });
      else if (words.length > 0) out.push({ script: words.map((f) => f.text).join(" ") });
    }
  }
  return out;
}

/**
 * `--opt=value`, `--opt value`, `-x value` and `-xvalue` for the options in `names`: the value,
 * whether it was the next word, and the option's name.
 */
function optionValue(
  f: Field,
  next: Field | undefined,
  names: readonly string[],
): { field: Field; next: boolean; option: string } | undefined {
  for (const name of names) {
    if (f.text === name)
      return next && !ATTACHED_ONLY.has(name) ? { field: next, next: true, option: name } : undefined;
    if (name.startsWith("--") && f.text.startsWith(`${name}=`))
      return { field: { ...f, text: f.text.slice(name.length + 1) }, next: false, option: name };
    if (!name.startsWith("--") && f.text.startsWith(name) && f.text.length > name.length)
      return { field: { ...f, text: f.text.slice(name.length) }, next: false, option: name };
  }
  return undefined;
}

/**
 * `ext::<command> <args>`: git runs the command itself, its words split at spaces; `% ` is a
 * space inside a word, `%%` a percent sign, `%s`/`%S` the service name.
 */
function extUrl(url: string): Next[] {
  const words: string[] = [""];
  const text = url.slice("ext::".length);
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "%" && i + 1 < text.length) {
      const n = text[++i]!;
      words[words.length - 1] +=
        n === " " ? " " : n === "%" ? "%" : n === "s" ? "upload-pack" : n === "S" ? "git-upload-pack" : "";
    } else if (c === " ") words.push("");
    else words[words.length - 1] += c;
  }
  const argv = words.filter((w) => w !== "").map((w): Field => ({ text: w, exact: true }));
  return argv.length > 0 ? [{ run: argv }] : [];
}
