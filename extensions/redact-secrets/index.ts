/// <reference types="node" preserve="true" />
/**
 * redact-secrets — API keys, tokens, private keys, passwords in URLs and literal values given to
 * secret-named settings are replaced by `[REDACTED:<kind>]` before the model sees them and, where
 * a slot comes first, before disk.
 *
 * Where each guarantee comes from (the kernel's order of events decides what is possible):
 * - Tool results — `tool_result` patch of `content` and `details`, for every result, errors and
 *   blocked calls included. The slot runs before the result is recorded, so the session file,
 *   the model and `tool_execution_end` only ever hold the redacted text. Arguments a tool echoes
 *   back (an error quoting `oldText`, bash printing its command) are part of the result.
 * - Prompts — `input` transform: a secret typed into a prompt is redacted before it enters
 *   history (and the session file). To hand the agent a key, put it in the environment.
 * - Every model request — `context`: all messages, including the tool-call arguments of earlier
 *   assistant messages, are redacted on the copy that is sent.
 * - Not covered: an assistant message is recorded when it ends, before any slot sees it, so the
 *   arguments the model wrote are on disk as written. The model only sees redacted text, so it can
 *   only write a secret it made up. `tool_execution_start` / `_update` events pass through no
 *   slot: with this extension loaded, the CLI masks the partial results of `_update` in its JSON
 *   and RPC lines with `redactDeep` (the `_start` arguments are the model's), and the host the
 *   verdicts it records in the session; the `tracer` extension imports `redactDeep` from this
 *   module and applies it to everything it writes. Not through the shared bus (`pi.events`): any
 *   extension can emit there, and one sending a no-op "redactor" made the tracer write secrets.
 */
import type { ExtensionAPI } from "@mypi/extension-api";
import { redactKeyBodies } from "./key-bodies.ts";

export interface SecretPattern {
  kind: string;
  /** Global regexps. With a `keep` group count, the first groups are kept and the rest replaced. */
  pattern: RegExp;
  /** Leading capture groups that are not secret (a `Bearer ` prefix, a variable name). */
  keep?: number;
  /**
   * Judges a match the regexp alone cannot (is this name secret? is this value code?), given the
   * named capture groups. A match it rejects is left as written.
   */
  accept?: (groups: Readonly<Record<string, string | undefined>>) => boolean;
}

// --- secret-assignment: `NAME = value` where the name says secret and the value is a literal ---

/** Words that mark a name as holding a secret, compared with whole word parts (see `nameParts`). */
const SECRET_WORDS = new Set([
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "accesskey",
  "privatekey",
]);
/**
 * Short words that also begin names about something else (`auth_type`, `pass_rate`, `pwd_dir`):
 * they mark a secret only as the last word part (`basic_auth`, `_auth`, `DB_PASS`, `db_pwd`).
 */
const SECRET_LAST_WORDS = new Set(["auth", "pass", "pw", "pwd"]);
/** A last word part that makes the name describe the secret rather than hold it (`TOKEN_COUNT`). */
const DESCRIBING_WORDS = new Set([
  "count",
  "len",
  "length",
  "min",
  "max",
  "limit",
  "size",
  "type",
  "kind",
  "name",
  "label",
  "field",
  "file",
  "path",
  "dir",
  "url",
  "uri",
  "endpoint",
  "header",
  "prefix",
  "ttl",
  "timeout",
]);
/** How many texts and names the memos keep (`redactText`, `isSecretName`). */
const MEMO_ENTRIES = 4096;
/** The shell's working directory, in every `env` listing: `pwd` here is not a password. */
const SHELL_PWD = "PWD";

/** `aws_secret_access_key`, `apiKey`, `X-Api-Key`, `spring.datasource.password` → lower-case word parts. */
function nameParts(name: string): string[] {
  return name
    .split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])/)
    .filter((part) => part !== "")
    .map((part) => part.toLowerCase());
}

/** A secret word as a part, or as two parts in a row (`api_key`, `apiKey` and `APIKEY` alike). */
function hasSecretWord(parts: readonly string[]): boolean {
  const last = parts.at(-1);
  if (last !== undefined && SECRET_LAST_WORDS.has(last)) return true;
  return parts.some((part, i) => SECRET_WORDS.has(part) || SECRET_WORDS.has(part + (parts[i + 1] ?? "")));
}

/** Names seen recently (the keys of every object `redactDeep` walks: few, and the same ones again and again). */
const secretNames = new Map<string, boolean>();

function isSecretName(name: string): boolean {
  const known = secretNames.get(name);
  if (known !== undefined) return known;
  const parts = nameParts(name);
  const secret = name !== SHELL_PWD && !DESCRIBING_WORDS.has(parts.at(-1) ?? "") && hasSecretWord(parts);
  if (secretNames.size >= MEMO_ENTRIES) secretNames.clear();
  secretNames.set(name, secret);
  return secret;
}

/** Shorter values are placeholders or flags (`on`, `None`), and too short to be worth hiding. */
const MIN_SECRET_LENGTH = 6;
/** The value lives elsewhere: `$VAR`, `${VAR}`, `$(cmd)`, `${{ secrets.X }}`, `{{ .Values.x }}`, `<%= … %>`, `%VAR%`. */
const REFERENCE = /^(?:\$[A-Za-z_{(]|\{\{|<%|%\w+%)/;
/** Another pattern got here first; redacting again would only nest markers. */
const ALREADY_REDACTED = /^\[REDACTED:/;
/** A number is a setting (`TOKEN_COUNT=123456`), not a secret. */
const NUMBER = /^\d[\d._]*$/;
/** Null-likes, booleans and type names: `token = None`, `OPENAI_API_KEY: string`. */
const CODE_WORDS =
  /^(?:null|nil|none|undefined|true|false|string|str|number|int|integer|float|double|bool|boolean|bytes|buffer|object|unknown|any|void|char)$/i;
/** A call or index reads the value at run time (`getPassword()`, `os.environ["API_KEY"]`); `Option<String>` is a type. */
const CALL_INDEX_OR_GENERIC = /^[\w$.]+[([<]/;
/**
 * Names in code are made of letters; secrets have digits or symbols. So a dotted name of letters is
 * a property (`req.headers.authorization`) while `ya29.a0Af…` is a token, and a bare word of letters
 * is a variable, type or keyword (`api_key=api_key`, `token: string`).
 */
const DOTTED_NAME = /^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+$/;
const BARE_WORD = /^[A-Za-z_]+$/;

interface AssignedValue {
  value: string;
  quoted: boolean;
  /** `DB_PASSWORD`: the shell and `.env` convention, where a bare word is the value itself. */
  upperCaseName: boolean;
}

function isLiteralSecret({ value, quoted, upperCaseName }: AssignedValue): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (REFERENCE.test(value) || ALREADY_REDACTED.test(value) || NUMBER.test(value) || CODE_WORDS.test(value))
    return false;
  if (quoted) return true;
  if (CALL_INDEX_OR_GENERIC.test(value) || DOTTED_NAME.test(value)) return false;
  // `DB_PASSWORD=postgres` is a password; `API_KEY = apiKey` still copies a variable.
  if (BARE_WORD.test(value)) return upperCaseName && !hasSecretWord(nameParts(value));
  return true;
}

/** Where a name starts: not inside another name, but after the dashes of a flag (`--token=`). */
const NAME_START = String.raw`(?<![\w.]|[\w.]-)`;
/** Cheap filter so the regexp only stops at names that may hold a secret word; `isSecretName` decides. */
const MAY_NAME_SECRET = String.raw`(?=[\w.-]*?(?:pass|pw|secret|token|auth|(?:api|access|private)[_.-]?key))`;
/** Dots and dashes join the parts of properties (`spring.datasource.password`) and headers (`X-Api-Key`). */
const NAME = String.raw`[A-Za-z_][\w.-]*`;
/** `=`, `:`, Go's `:=`, `=>` of PHP arrays and Ruby hashes; a quoted name closes its quote first. */
const SEPARATOR = String.raw`["']?[ \t]*(?::=|=>|[=:])[ \t]*`;
/** Inside quotes, up to the closing one. A quoted text with spaces is a message or label, not a secret. */
const QUOTED_VALUE = String.raw`(?<=["'\x60])[^\s"'\x60]+(?=["'\x60])`;
/** Unquoted, up to a space, a quote or what ends an argument or item. */
const BARE_VALUE = String.raw`(?<!["'\x60])[^\s"'\x60,;)\]}]+`;

const SECRET_ASSIGNMENT = new RegExp(
  `${NAME_START}(["']?${MAY_NAME_SECRET}(?<name>${NAME})${SEPARATOR}(?<quote>["'\\x60]?))(?<value>${QUOTED_VALUE}|${BARE_VALUE})`,
  "gi",
);

function acceptSecretAssignment({
  name = "",
  quote = "",
  value = "",
}: Readonly<Record<string, string | undefined>>): boolean {
  return isSecretName(name) && isLiteralSecret({ value, quoted: quote !== "", upperCaseName: !/[a-z]/.test(name) });
}

/** Where a token starts: not inside a word of letters and digits, but after `_` (`token_ghp_…`) or punctuation. */
const T = "(?<![A-Za-z0-9])";

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // PEM (`RSA`, `EC`, `OPENSSH`, `ENCRYPTED`, none) and PGP's `PRIVATE KEY BLOCK`; to the END line or the text's end.
  {
    kind: "private-key",
    pattern: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$)/g,
  },
  // A PuTTY .ppk file: the lines after `Private-Lines: N`.
  {
    kind: "private-key",
    pattern: /(Private-Lines:[ \t]*\d+[ \t]*\r?\n)((?:[A-Za-z0-9+/=]+\r?\n)*[A-Za-z0-9+/=]+(?=\r?\n|$))/g,
    keep: 1,
  },
  // The scheme is at most 32 characters: unbounded, a long run of "a-a-a-…" made the search
  // quadratic (seconds for one 50 KB tool result, minutes for 400 KB).
  { kind: "url-password", pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/?#]+:)([^\s@/?#]+)(?=@)/gi, keep: 1 },
  { kind: "openai-key", pattern: new RegExp(`${T}sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}`, "g") },
  { kind: "github-token", pattern: new RegExp(`${T}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`, "g") },
  { kind: "gitlab-token", pattern: new RegExp(`${T}glpat-[A-Za-z0-9_-]{20,}`, "g") },
  { kind: "slack-token", pattern: new RegExp(`${T}xox[abposr]-[A-Za-z0-9-]{10,}`, "g") },
  { kind: "stripe-key", pattern: new RegExp(`${T}[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`, "g") },
  { kind: "aws-access-key", pattern: new RegExp(`${T}(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])`, "g") },
  { kind: "google-api-key", pattern: new RegExp(`${T}AIza[0-9A-Za-z_-]{35}`, "g") },
  // OAuth access tokens (`ya29.…`) and refresh tokens (`1//0…`) of Google accounts.
  {
    kind: "google-oauth-token",
    pattern: new RegExp(`${T}(?:ya29\\.[0-9A-Za-z_-]{20,}|(?<![:/])1//0[0-9A-Za-z_-]{30,})`, "g"),
  },
  // Azure storage and service-bus connection strings, and the signature of a SAS URL.
  {
    kind: "azure-key",
    pattern: /((?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([^;\s"']+)/gi,
    keep: 1,
  },
  { kind: "azure-key", pattern: /([?&]sig=)([^&\s"'#]{16,})/g, keep: 1 },
  { kind: "jwt", pattern: new RegExp(`${T}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}`, "g") },
  // HTTP auth schemes are case-insensitive: `authorization: bearer …` is as much a token.
  { kind: "bearer-token", pattern: /\b(Bearer\s+)([A-Za-z0-9._~+/-]{16,}=*)/gi, keep: 1 },
  // Basic credentials are base64 of `user:password`. Only after an Authorization header name:
  // "basic" alone starts too much prose.
  {
    kind: "basic-auth",
    pattern: /\b(authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+)([A-Za-z0-9+/]{8,}={0,2})/gi,
    keep: 1,
  },
  // `curl -u user:password` (also `--user`, `-U`/`--proxy-user`, attached or with `=`), on one command line.
  {
    kind: "user-password",
    pattern: /(\bcurl\b[^\n|;&]*?[ \t](?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)?["']?[^\s:"']*:)(?<value>[^\s"']+)/g,
    keep: 1,
    accept: ({ value = "" }) => !REFERENCE.test(value),
  },
  // `mysql -pSECRET` (the password attached to -p; `-p` alone prompts) and its sibling tools.
  {
    kind: "mysql-password",
    pattern:
      /(\bmysql(?:dump|admin|import|show|check|binlog|pump|sh)?\b[^\n|;&]*?[ \t]-p)(?<value>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s;|&]*)/g,
    keep: 1,
    accept: ({ value = "" }) => !REFERENCE.test(value.replace(/^["']/, "")),
  },
  // `.netrc`: `machine host login me password SECRET`, on one line or several.
  {
    kind: "netrc-password",
    pattern:
      /((?:^|\s)(?:machine[ \t]+\S+|default)(?:\s+(?:login|account|port|protocol)[ \t]+\S+)*\s+password[ \t]+)(\S+)/g,
    keep: 1,
  },
  // …and a `password SECRET` line of one whose `machine` line is not in the text.
  {
    kind: "netrc-password",
    pattern: /^([ \t]*password[ \t]+)(?<value>\S+)[ \t]*$/gm,
    keep: 1,
    accept: ({ value = "" }) => isLiteralSecret({ value, quoted: true, upperCaseName: false }),
  },
  // `.pgpass`: `host:port:database:user:password`, one entry per line.
  {
    kind: "pgpass-password",
    pattern: /^((?:[^:\s\\]|\\.)+:(?:\d+|\*):(?:[^:\s\\]|\\.)+:(?:[^:\s\\]|\\.)+:)(\S+)$/gm,
    keep: 1,
  },
  // Last, so a value another kind recognised keeps that kind's name.
  { kind: "secret-assignment", pattern: SECRET_ASSIGNMENT, keep: 1, accept: acceptSecretAssignment },
];

/**
 * What `redactText` answered for texts it saw recently. A context handler reads the whole history
 * before every model call, so the same texts come back call after call (and a replay of recorded
 * sessions feeds every call's history in a row): the patterns run once per text. Bounded in
 * entries and characters (it holds texts the history holds anyway), emptied when full.
 */
const memo = new Map<string, string>();
const MEMO_CHARACTERS = 8 * 1024 * 1024;
let memoCharacters = 0;

/** Replace every secret in `text`. Returns the same string when nothing matched. */
export function redactText(text: string): string {
  const known = memo.get(text);
  if (known !== undefined) return known;
  const out = redactUncached(text);
  const size = text.length + (out === text ? 0 : out.length);
  if (size <= MEMO_CHARACTERS / 16) {
    if (memo.size >= MEMO_ENTRIES || memoCharacters + size > MEMO_CHARACTERS) {
      memo.clear();
      memoCharacters = 0;
    }
    memo.set(text, out);
    memoCharacters += size;
  }
  return out;
}

function redactUncached(text: string): string {
  let out = text;
  for (const { kind, pattern, keep, accept } of SECRET_PATTERNS) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, (...m: unknown[]) => {
      // A regexp with named groups passes them as the last argument.
      const last = m.at(-1);
      const named = typeof last === "object" && last !== null ? (last as Record<string, string | undefined>) : {};
      if (accept && !accept(named)) return m[0] as string;
      const kept = m.slice(1, 1 + (keep ?? 0)) as (string | undefined)[];
      return `${kept.map((g) => g ?? "").join("")}[REDACTED:${kind}]`;
    });
    // Bodies without their BEGIN line, once the whole blocks are gone.
    if (pattern === SECRET_PATTERNS[0]!.pattern) out = redactKeyBodies(out);
  }
  return out;
}

/**
 * Redact every string inside a JSON-like value. Returns the same object when nothing changed,
 * so callers can tell "no patch" by identity.
 */
const REDACTED_VALUE = "[REDACTED:secret-assignment]";

/**
 * A string under a key that says secret (`{password: "hunter22"}` in a tool's details or
 * arguments): the same rule as `"password": "…"` in text — a literal of 6+ characters, no space.
 */
function isSecretValueOf(key: string, value: string): boolean {
  return isSecretName(key) && !/\s/.test(value) && isLiteralSecret({ value, quoted: true, upperCaseName: false });
}

export function redactDeep<T>(value: T): T {
  return redactWithin(value, []);
}

/** `redactDeep` with the objects on the way down, so a cycle ends as "[Circular]" instead of overflowing the stack. */
function redactWithin<T>(value: T, ancestors: object[]): T {
  if (typeof value === "string") return redactText(value) as T;
  if (typeof value !== "object" || value === null) return value;
  if (ancestors.includes(value)) return "[Circular]" as T;
  if (Array.isArray(value)) {
    ancestors.push(value);
    let changed = false;
    const next = value.map((v) => {
      const r = redactWithin(v, ancestors);
      if (r !== v) changed = true;
      return r;
    });
    ancestors.pop();
    return (changed ? next : value) as T;
  }
  if (Object.getPrototypeOf(value) === Object.prototype) {
    // Image data is base64: a pattern hit inside it would be noise, and a change would corrupt it.
    if ((value as { type?: unknown }).type === "image") return value;
    ancestors.push(value);
    let changed = false;
    const next: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = typeof v === "string" && isSecretValueOf(k, v) ? REDACTED_VALUE : redactWithin(v, ancestors);
      if (r !== v) changed = true;
      next[k] = r;
    }
    ancestors.pop();
    return (changed ? next : value) as T;
  }
  return value;
}

export default function redactSecrets(pi: ExtensionAPI): void {
  // What the host writes past the slots (verdicts, session names, progress lines, the prompt history).
  pi.registerRedactor(redactDeep);
  pi.on("tool_result", (event) => {
    const content = redactDeep(event.content);
    const details = redactDeep(event.details);
    if (content === event.content && details === event.details) return undefined;
    return {
      ...(content !== event.content ? { content } : {}),
      ...(details !== event.details ? { details } : {}),
    };
  });

  pi.on("input", (event) => {
    const text = redactText(event.text);
    return text === event.text ? undefined : { action: "transform", text };
  });

  pi.on("context", (event) => {
    const messages = redactDeep(event.messages);
    return messages === event.messages ? undefined : { messages };
  });
}
