/**
 * ACP session modes (`session/set_mode`, `current_mode_update`) are mypi's permission modes —
 * when the host has them. A host that offers them has `permissionModes()` (the modes it knows),
 * `permissionMode()` (the current one) and `setPermissionMode(id)`; until this build's host does,
 * no modes are advertised (`availableModes` is empty, so `session/new` sends no `modes`) and
 * `session/set_mode` is refused with the reason. Every use of modes goes through this file.
 */
import { RequestError, type SessionMode, type SessionModeState } from "@agentclientprotocol/sdk";

/** What a host with permission modes offers (duck-typed: the host may or may not have them). */
export interface PermissionModeHost {
  permissionModes?(): readonly { id: string; name?: string; description?: string }[];
  permissionMode?(): string;
  setPermissionMode?(id: string): void;
}

function modesOf(host: object): Required<PermissionModeHost> | undefined {
  const h = host as PermissionModeHost;
  return typeof h.permissionModes === "function" && typeof h.permissionMode === "function" && typeof h.setPermissionMode === "function"
    ? (h as Required<PermissionModeHost>)
    : undefined;
}

export function availableModes(host: object): SessionMode[] {
  return (modesOf(host)?.permissionModes() ?? []).map((m) => ({ id: m.id, name: m.name ?? m.id, ...(m.description !== undefined && { description: m.description }) }));
}

/** The `modes` of `session/new` / `session/load`: absent while the host has none. */
export function sessionModes(host: object): SessionModeState | undefined {
  const modes = modesOf(host);
  const available = availableModes(host);
  return modes && available.length > 0 ? { currentModeId: modes.permissionMode(), availableModes: available } : undefined;
}

/** `session/set_mode`: the new current mode id (for `current_mode_update`). */
export function setMode(host: object, modeId: string): string {
  const modes = modesOf(host);
  if (!modes) throw RequestError.invalidParams({ modeId }, "this mypi has no session modes (permission modes are not part of this build); initialize and session/new advertise none");
  if (!availableModes(host).some((m) => m.id === modeId)) throw RequestError.invalidParams({ modeId }, `unknown mode "${modeId}": one of ${availableModes(host).map((m) => m.id).join(", ")}`);
  modes.setPermissionMode(modeId);
  return modes.permissionMode();
}
