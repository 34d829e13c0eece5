/**
 * The host's one seam to redact-secrets, for what it writes that no slot passes (verdicts,
 * progress lines, a session's name, a batch check's output): redact-secrets' own `redactDeep`,
 * used only where that extension is loaded — the user chose it, and what it masks in the
 * conversation it must mask there too. Nothing else in the host names the extension's module
 * (the prompt history masks with its patterns always, `tui/history.ts`).
 */
import { redactDeep } from "@mypi/extensions/redact-secrets";
import { isShippedName, shippedNameOf } from "./workspace/shipped.ts";

export type Redactor = <T>(value: T) => T;

/**
 * `redactDeep` when redact-secrets is among `entries` — entry files as the manager lists them,
 * or `-e` specs of a batch task (a shipped name, a folder or its index file) — else undefined.
 */
export function redactorFor(entries: readonly string[]): Redactor | undefined {
  return entries.some((e) => (isShippedName(e) ? e : shippedNameOf(e)) === "redact-secrets") ? redactDeep : undefined;
}
