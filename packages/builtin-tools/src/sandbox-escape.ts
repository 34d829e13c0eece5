/**
 * When the sandbox stops a command, and how a command leaves it.
 *
 * `sandboxStop(output, plan)`: a failed sandboxed command whose output shows the sandbox's
 * refusals — a write refused as read-only or not permitted, a name that does not resolve or a
 * network that is unreachable while the network is off — gets one paragraph appended that says so,
 * for the model and for the user reading the result, and how to go on.
 *
 * `createEscapeApprovals()`: the bash tool runs a call with `unsandboxed: true` outside the sandbox
 * only when something that asked the user (the permission gate) approved that very call, with that
 * very command. Nothing else can: without an approval the call is refused, saying why.
 */
import type { SandboxPlan } from "./sandbox.ts";

/** The gate's side approves; the bash tool's side takes each approval once. */
export interface EscapeApprovals {
  approve(toolCallId: string, command: string): void;
  /** Whether `toolCallId` was approved with exactly `command` (the approval is used up). */
  take(toolCallId: string, command: string): boolean;
}

export function createEscapeApprovals(): EscapeApprovals {
  const approved = new Map<string, string>();
  return {
    approve: (id, command) => void approved.set(id, command),
    take(id, command) {
      const found = approved.get(id);
      approved.delete(id);
      return found === command;
    },
  };
}

const WRITE_REFUSED = /\b(Read-only file system|EROFS)\b/;
const NOT_PERMITTED = /\b(Permission denied|Operation not permitted|EACCES|EPERM)\b/;
const NETWORK_REFUSED =
  /(Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|ENETUNREACH|ECONNREFUSED)/;

/** Why the sandbox may have stopped the command (a short phrase), or undefined when nothing shows it. */
export function sandboxStop(output: string, plan: Pick<SandboxPlan, "network" | "writable">): string | undefined {
  if (WRITE_REFUSED.test(output))
    return `it tried to write where the sandbox allows no writes (writable: ${plan.writable.join(", ")}; the rest is read-only)`;
  if (!plan.network && NETWORK_REFUSED.test(output)) return "it needed the network, which is off in the sandbox";
  if (NOT_PERMITTED.test(output))
    return `it was refused access, which the sandbox does outside ${plan.writable.join(", ")}, to frozen agent and git folders and to hidden secrets`;
  return undefined;
}

/** The paragraph a stopped command's result ends with. */
export function stopNote(why: string, canEscape: boolean): string {
  const next = canEscape
    ? 'If it must run outside the sandbox, call bash again with the same command and "unsandboxed": true: the user is asked first. Otherwise do it another way.'
    : "Do it another way, or ask the user to run it.";
  return `[sandbox] The sandbox may have stopped this command: ${why}. ${next}`;
}

/** What a call with `unsandboxed: true` answers when nobody approved it. */
export const UNAPPROVED_ESCAPE =
  "Refused to run outside the sandbox: that needs the user's approval, and none was given for this call " +
  "(the permission gate asks for it; it is loaded with permission rules, a permission mode, in interactive mode, or with -e permission-gate). " +
  'Run the command inside the sandbox (without "unsandboxed"), or ask the user to run it.';
