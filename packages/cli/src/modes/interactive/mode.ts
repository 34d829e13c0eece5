/**
 * The permission mode in interactive mode: `/mode [name]` shows or sets it, Alt+M moves to the
 * next one that may be set (bypass only with the sandbox, the managed settings' modes only), and
 * the footer shows it while it is not `default`. A switch while a run goes applies from the next
 * tool call on.
 */
import {
  describeMode,
  parsePermissionMode,
  PERMISSION_MODES,
  type ModeChange,
} from "@mypi/extensions/permission-gate/modes";
import { refresh, say, type Interactive } from "./state.ts";

/** The footer's status for the mode (empty in default mode); called on every change. */
export function followMode(m: Interactive): () => void {
  const mode = m.options.permissionMode;
  if (!mode) return () => {};
  const show = () =>
    m.footer.setStatus(
      "~permission-mode",
      mode.mode === "default" ? undefined : m.p.yellow(`⏵ ${mode.mode} mode (Alt+M)`),
    );
  show();
  return mode.subscribe((change: ModeChange) => {
    show();
    say(m, m.p.dim(`permission mode: ${describeMode(change.mode)} (${change.by})`));
  });
}

export function cycleMode(m: Interactive): void {
  const mode = m.options.permissionMode;
  if (!mode)
    return say(m, m.p.yellow("permission modes need the permission gate, which is off (mypi extensions says why)"));
  const next = mode.next();
  if (next === mode.mode)
    return say(
      m,
      m.p.yellow(
        `no other permission mode may be set here (${PERMISSION_MODES.filter((x) => x !== next)
          .map((x) => `${x}: ${mode.refusal(x)}`)
          .join("; ")})`,
      ),
    );
  mode.set(next, "Alt+M");
  refresh(m);
}

export function setMode(m: Interactive, args: string): void {
  const mode = m.options.permissionMode;
  if (!mode)
    return say(m, m.p.yellow("permission modes need the permission gate, which is off (mypi extensions says why)"));
  const word = args.trim();
  if (word === "")
    return say(
      m,
      m.p.dim(
        `permission mode: ${describeMode(mode.mode)} (${mode.source}); /mode ${PERMISSION_MODES.join("|")} switches, Alt+M cycles`,
      ),
    );
  const wanted = parsePermissionMode(word);
  if (!wanted) return say(m, m.p.yellow(`/mode: unknown mode "${word}"; choose one of ${PERMISSION_MODES.join(", ")}`));
  if (wanted === mode.mode) return say(m, m.p.dim(`permission mode: already ${wanted}`));
  const refused = mode.set(wanted, "/mode");
  if (refused !== undefined) say(m, m.p.yellow(`/mode ${wanted}: ${refused}`));
  refresh(m);
}
