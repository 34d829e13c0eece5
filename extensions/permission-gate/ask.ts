/**
 * The question the gate asks, with scopes: one `ctx.ui.select` (Pi's `select` dialog shape, so
 * RPC clients written for Pi answer it with the chosen option's text), then, for "deny and tell
 * the model why", one `ctx.ui.input`. Any host's UI answers it the same way: interactive mode's
 * dialog, an RPC client, an SDK host's `ExtensionUI`.
 */
import type { ExtensionContext } from "@mypi/extension-api";
import type { Scope } from "./policy.ts";

export type Answer = { allow: true; scope: Scope } | { allow: false; reason?: string };

/** The options' texts: stable, so that clients can answer them by value. */
export const OPTION = {
  once: "Allow once",
  session: "Allow for this session",
  project: "Always allow in this project",
  deny: "Deny",
  denyWithReason: "Deny, and tell the model why",
} as const;

export interface Question {
  /** The call as one line: `bash: git push --force`, `write: .github/x.yml`. */
  shown: string;
  /** Why it asks (the rule, the built-in check). */
  because: string;
  scopes: readonly Scope[];
  /** The rules a session or project answer keeps. */
  rules: readonly string[];
  /** Where a project answer is written (shown in the option). */
  projectFile?: string;
}

/** The option texts for a question, in order. */
export function options(q: Question): string[] {
  const rules = q.rules.join(", ");
  const out: string[] = [OPTION.once];
  if (q.scopes.includes("session")) out.push(`${OPTION.session}: ${rules}`);
  if (q.scopes.includes("project"))
    out.push(`${OPTION.project}: ${rules}${q.projectFile ? ` (${q.projectFile})` : ""}`);
  out.push(OPTION.deny, OPTION.denyWithReason);
  return out;
}

/** Ask; no answer (a cancelled dialog, an abort, a closed client) is a deny. */
export async function askUser(q: Question, ctx: ExtensionContext): Promise<Answer> {
  const choices = options(q);
  const title = `Allow ${q.shown}? — it ${q.because}`;
  const picked = await ctx.ui.select(title, choices, { signal: ctx.signal });
  if (picked === undefined) return { allow: false };
  if (picked === OPTION.once) return { allow: true, scope: "once" };
  if (picked.startsWith(OPTION.session)) return { allow: true, scope: "session" };
  if (picked.startsWith(OPTION.project)) return { allow: true, scope: "project" };
  if (picked === OPTION.denyWithReason) {
    const reason = await ctx.ui.input("Tell the model why (or what to do instead)", undefined, { signal: ctx.signal });
    return reason?.trim() ? { allow: false, reason: reason.trim() } : { allow: false };
  }
  return { allow: false };
}
