/**
 * ACP session modes (`session/set_mode`, `current_mode_update`) are mypi's permission modes
 * (docs/permissions.md#permission-modes) — when the host has them. A host that offers them has
 * `permissionModes()` (the modes that may be set here), `permissionMode()` (the current one),
 * `setPermissionMode(id, by)` and `onPermissionModeChange(listener)` (`policy/mode-host.ts`); a
 * host without them advertises no modes (`session/new` sends no `modes`) and `session/set_mode`
 * is refused with the reason. Every change of the mode — the client's, an accepted plan's — is a
 * `current_mode_update`. Every use of modes goes through this file.
 */
import { errorMessage } from "@mypi/kernel";
import { RequestError, type SessionMode, type SessionModeState, type SessionUpdate } from "@agentclientprotocol/sdk";

/** What a host with permission modes offers (duck-typed: the host may or may not have them). */
export interface PermissionModeHost {
  permissionModes?(): readonly { id: string; name?: string; description?: string }[];
  permissionMode?(): string;
  setPermissionMode?(id: string, by?: string): void;
  onPermissionModeChange?(listener: (change: { mode: string }) => void): () => void;
}

function modesOf(host: object): Required<PermissionModeHost> | undefined {
  const h = host as PermissionModeHost;
  return typeof h.permissionModes === "function" &&
    typeof h.permissionMode === "function" &&
    typeof h.setPermissionMode === "function" &&
    typeof h.onPermissionModeChange === "function"
    ? (h as Required<PermissionModeHost>)
    : undefined;
}

export function availableModes(host: object): SessionMode[] {
  return (modesOf(host)?.permissionModes() ?? []).map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    ...(m.description !== undefined && { description: m.description }),
  }));
}

/** The `modes` of `session/new` / `session/load`: absent while the host has none (the permission gate is off). */
export function sessionModes(host: object): SessionModeState | undefined {
  const modes = modesOf(host);
  const available = availableModes(host);
  return modes && available.length > 0
    ? { currentModeId: modes.permissionMode(), availableModes: available }
    : undefined;
}

/** `session/set_mode`: switch, or refuse with the host's reason. The client hears the change from `followModes`. */
export function setMode(host: object, modeId: string): void {
  const modes = modesOf(host);
  if (!modes)
    throw RequestError.invalidParams(
      { modeId },
      "this mypi has no session modes (its host offers no permission modes); initialize and session/new advertise none",
    );
  if (!availableModes(host).some((m) => m.id === modeId)) {
    throw RequestError.invalidParams(
      { modeId },
      `unknown mode "${modeId}": one of ${availableModes(host)
        .map((m) => m.id)
        .join(", ")}`,
    );
  }
  try {
    modes.setPermissionMode(modeId, "session/set_mode");
  } catch (error) {
    throw RequestError.invalidParams({ modeId }, errorMessage(error));
  }
}

/**
 * A `current_mode_update` for every change of the mode, whoever made it; the unsubscribe. Sent on
 * the next tick: `session/set_mode`'s response goes first.
 */
export function followModes(host: object, send: (update: SessionUpdate) => void): () => void {
  const modes = modesOf(host);
  if (!modes) return () => {};
  return modes.onPermissionModeChange(
    (change) => void setImmediate(() => send({ sessionUpdate: "current_mode_update", currentModeId: change.mode })),
  );
}
