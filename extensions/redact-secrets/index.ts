/**
 * redact-secrets — API keys, tokens, private keys and passwords in URLs are replaced by
 * `[REDACTED:<kind>]` before the model sees them and, where a slot comes first, before disk.
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
 *   only write a secret it made up. `tool_execution_start` / `_update` events (stdout in JSON and
 *   RPC modes) pass through no slot; the `tracer` extension applies this redactor to what it
 *   writes when both are loaded (`pi.events` channel `redact-secrets:redactor`).
 */
import type { ExtensionAPI } from "@mypi/extension-api";

export interface SecretPattern {
  kind: string;
  /** Global regexps. With a `keep` group count, the first groups are kept and the rest replaced. */
  pattern: RegExp;
  /** Leading capture groups that are not secret (a `Bearer ` prefix, a variable name). */
  keep?: number;
}

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { kind: "private-key", pattern: /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g },
  { kind: "url-password", pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]+:)([^\s@/?#]+)(?=@)/gi, keep: 1 },
  { kind: "openai-key", pattern: /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "github-token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g },
  { kind: "gitlab-token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "slack-token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "stripe-key", pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: "google-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "bearer-token", pattern: /\b(Bearer\s+)([A-Za-z0-9._~+/-]{16,}=*)/g, keep: 1 },
  // NAME=value / NAME: value where NAME says it is secret. Values that are references
  // (`$VAR`, `${…}`, `process.env.X`) or already redacted are left alone.
  {
    kind: "secret-assignment",
    pattern:
      /\b([A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CLIENT_SECRET)[A-Z0-9_]*["']?\s*[=:]\s*["']?)(?!\$|process\.env|\[REDACTED)([^\s"'`,;)]{6,})/g,
    keep: 1,
  },
  // The same in JSON / YAML with a quoted value: "password": "hunter22".
  {
    kind: "secret-assignment",
    pattern: /(["']?\b(?:password|passwd|secret|token|api_key|apikey|access_token|refresh_token|client_secret)["']?\s*[:=]\s*["'])(?!\$|\[REDACTED)([^"'\s]{6,})(?=["'])/gi,
    keep: 1,
  },
];

/** Replace every secret in `text`. Returns the same string when nothing matched. */
export function redactText(text: string): string {
  let out = text;
  for (const { kind, pattern, keep } of SECRET_PATTERNS) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, (...m: unknown[]) => {
      const groups = m.slice(1, 1 + (keep ?? 0)) as (string | undefined)[];
      return `${groups.map((g) => g ?? "").join("")}[REDACTED:${kind}]`;
    });
  }
  return out;
}

/**
 * Redact every string inside a JSON-like value. Returns the same object when nothing changed,
 * so callers can tell "no patch" by identity.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactText(value) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const next = value.map((v) => {
      const r = redactDeep(v);
      if (r !== v) changed = true;
      return r;
    });
    return (changed ? next : value) as T;
  }
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    // Image data is base64: a pattern hit inside it would be noise, and a change would corrupt it.
    if ((value as { type?: unknown }).type === "image") return value;
    let changed = false;
    const next: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = redactDeep(v);
      if (r !== v) changed = true;
      next[k] = r;
    }
    return (changed ? next : value) as T;
  }
  return value;
}

export const REDACTOR_CHANNEL = "redact-secrets:redactor";
export const REDACTOR_REQUEST = "redact-secrets:request";

export default function redactSecrets(pi: ExtensionAPI): void {
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

  // Offer the redactor to other extensions (the tracer), whichever of us loads first.
  const offer = () => pi.events.emit(REDACTOR_CHANNEL, redactDeep);
  pi.events.on(REDACTOR_REQUEST, offer);
  offer();
}
