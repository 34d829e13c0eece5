/**
 * permission-gate — stops destructive shell commands before they run.
 *
 * A `tool_call` handler on `bash`: when the command matches one of the patterns below, the call
 * is blocked when there is no UI (print, JSON and headless runs: nobody can say yes), and the
 * user is asked through `ctx.ui.confirm` when there is one (interactive, RPC). The block reason
 * names the pattern, so the model learns why and can take another way.
 *
 * Registered with `order: "post"`: it runs after the other `tool_call` handlers, so it judges the
 * input that will really run, including any rewrite an earlier handler made.
 */
import type { ExtensionAPI } from "@mypi/extension-api";

export interface DestructivePattern {
  /** Short name shown to the user and the model. */
  name: string;
  test: RegExp;
}

/** Where a command word may start: line start, a blank, or a shell separator / opener. */
const START = String.raw`(?:^|[\s;&|(\x60])`;
/** One argument that does not cross into the next command. */
const ARG = String.raw`[^\s;&|]+\s+`;

export const DESTRUCTIVE_PATTERNS: readonly DestructivePattern[] = [
  { name: "recursive rm", test: new RegExp(String.raw`${START}(?:[\w./-]*/)?rm\s+(?:${ARG})*?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?=\s|$)`) },
  { name: "sudo", test: /(?:^|[;&|(\s])sudo\s/ },
  { name: "git push --force", test: /\bgit\s+push\b[^;&|\n]*\s(?:--force(?:-with-lease)?\b|-f\b)/ },
  { name: "git reset --hard", test: /\bgit\s+reset\b[^;&|\n]*\s--hard\b/ },
  { name: "git clean -f", test: /\bgit\s+clean\b[^;&|\n]*\s-[a-zA-Z]*f/ },
  { name: "git checkout/restore of everything", test: /\bgit\s+(?:checkout|restore)\s+(?:--\s+)?\.(?:\s|$)/ },
  { name: "find -delete", test: /\bfind\b[^;&|\n]*\s-delete\b/ },
  { name: "mkfs", test: /\bmkfs(?:\.\w+)?\b/ },
  { name: "dd to a device or file", test: /\bdd\b[^;&|\n]*\bof=/ },
  { name: "write to a block device", test: />\s*\/dev\/(?:sd|hd|nvme|disk|mmcblk)/ },
  { name: "chmod 777", test: new RegExp(String.raw`\bchmod\s+(?:${ARG})*?0?777\b`) },
  { name: "recursive chown", test: new RegExp(String.raw`\bchown\s+(?:${ARG})*?-[a-zA-Z]*R`) },
  { name: "pipe from the network into a shell", test: /\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b/ },
  { name: "shutdown or reboot", test: /(?:^|[;&|(\s])(?:shutdown|reboot|halt|poweroff)\b/ },
  { name: "fork bomb", test: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
];

/** The first destructive pattern the command matches, or undefined. */
export function findDestructive(command: string): DestructivePattern | undefined {
  return DESTRUCTIVE_PATTERNS.find((p) => p.test.test(command));
}

/** How long the user has to answer the confirmation. */
export const ASK_TIMEOUT_MS = 5 * 60_000;

export default function permissionGate(pi: ExtensionAPI): void {
  pi.on(
    "tool_call",
    async (event, ctx) => {
      if (event.toolName !== "bash") return undefined;
      const command = typeof event.input.command === "string" ? event.input.command : "";
      const hit = findDestructive(command);
      if (!hit) return undefined;
      if (!ctx.hasUI) {
        return {
          block: true,
          reason: `"${command}" looks destructive (${hit.name}) and there is no user to confirm it. Do it another way or ask the user to run it.`,
        };
      }
      // The dialog closes (as "no") when the run is aborted or this handler times out.
      const ok = await ctx.ui.confirm("Run a destructive command?", `${command}\n\n(${hit.name})`, { signal: ctx.signal });
      if (ok) return undefined;
      return { block: true, reason: `the user declined "${command}" (${hit.name}).` };
    },
    // A person may take a while to answer; past this the call is blocked (fail closed).
    { order: "post", timeoutMs: ASK_TIMEOUT_MS },
  );
}
