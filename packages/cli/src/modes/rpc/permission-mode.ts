/**
 * The permission mode over RPC — **mypi additions** to Pi's protocol (docs/cli.md#modes):
 * `set_permission_mode {mode}` answers `{mode, previous}`; `get_permission_mode` answers
 * `{mode, source}`, both null when the gate is off; and every change, whoever made it (the
 * client, an accepted plan's `exit_plan_mode`), is the event `permission_mode_changed {mode,
 * previous, by}`, so a client that shows the mode never shows a stale one.
 */
import { toJsonLine } from "./jsonl.ts";
import { switchPermissionMode } from "../../workspace/policy/mode-host.ts";
import { requireString } from "./command-fields.ts";
import { emit, type Command, type RpcState } from "./state.ts";

export const PERMISSION_MODE_HANDLERS = {
  set_permission_mode: ({ target }: RpcState, c: Command) =>
    switchPermissionMode(target.permissionMode, requireString(c, "mode"), "set_permission_mode"),
  get_permission_mode: ({ target }: RpcState) => ({
    mode: target.permissionMode?.mode ?? null,
    source: target.permissionMode?.source ?? null,
  }),
};

/** Tell the client each change of the mode; returns the unsubscribe. */
export function announcePermissionModes(s: RpcState): () => void {
  return (
    s.target.permissionMode?.subscribe((change) =>
      emit(s, toJsonLine({ type: "permission_mode_changed", ...change })),
    ) ?? (() => {})
  );
}
