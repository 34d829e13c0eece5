/**
 * The permission mode as the host offers it to a front end that shows modes to its client (RPC's
 * `set_permission_mode`, an editor's session modes): the modes that may be set here now, the
 * current one, a switch that says why not, and every change whoever made it (`/mode`, Alt+M, an
 * accepted plan). One `ModeState` per process underneath (`load.ts`): a new session keeps the mode.
 */
import {
  describeMode,
  parsePermissionMode,
  PERMISSION_MODES,
  type ModeChange,
  type ModeState,
  type PermissionMode,
} from "@mypi/extensions/permission-gate/modes";

interface PermissionModeInfo {
  id: PermissionMode;
  name: string;
  description: string;
}

export interface PermissionModeHost {
  /** The modes that may be set now, the current one included, in the cycling order; none while the gate is off. */
  permissionModes(): PermissionModeInfo[];
  /** The current mode (`default` while the gate is off). */
  permissionMode(): PermissionMode;
  /** Switch (`by` names who, as the mode's source and its change say); throws an Error that says why not. */
  setPermissionMode(id: string, by?: string): void;
  /** Called after each change, whoever made it; returns the unsubscribe. */
  onPermissionModeChange(listener: (change: ModeChange) => void): () => void;
}

const NAMES: Record<PermissionMode, string> = {
  default: "Default",
  "accept-edits": "Accept edits",
  plan: "Plan",
  bypass: "Bypass",
};

/** Why permission modes cannot be switched in this run. */
const GATE_OFF = "Permission modes need the permission gate, which is off in this run (`mypi extensions` says why).";

/**
 * Switch `state` to the mode `word` names (Claude Code's spellings too); the mode before. Throws
 * an Error that names the fix: the gate is off, the word names no mode, the mode may not be set.
 */
export function switchPermissionMode(
  state: ModeState | undefined,
  word: string,
  by: string,
): { mode: PermissionMode; previous: PermissionMode } {
  if (!state) throw new Error(GATE_OFF);
  const wanted = parsePermissionMode(word);
  if (!wanted) throw new Error(`Unknown permission mode: ${word}. Known: ${PERMISSION_MODES.join(", ")}.`);
  const previous = state.mode;
  const refused = state.set(wanted, by);
  if (refused !== undefined) throw new Error(`Permission mode ${wanted} cannot be set: ${refused}.`);
  return { mode: state.mode, previous };
}

export function permissionModeHost(state: ModeState | undefined): PermissionModeHost {
  return {
    permissionModes: () =>
      state
        ? PERMISSION_MODES.filter((m) => m === state.mode || state.refusal(m) === undefined).map((id) => ({
            id,
            name: NAMES[id],
            description: describeMode(id).slice(id.length + 2),
          }))
        : [],
    permissionMode: () => state?.mode ?? "default",
    setPermissionMode: (id, by = "the client") => void switchPermissionMode(state, id, by),
    onPermissionModeChange: (listener) => state?.subscribe(listener) ?? (() => {}),
  };
}
