/**
 * The read-only events the host sends observers about the session: its lifecycle (start,
 * shutdown, compaction, fork, switch, tree navigation, name) and what the person changed in it
 * (the model, the thinking level, a `!cmd`). Apart from the slot events because nothing here
 * decides anything: observers see these after the fact (`HostEvents` in `events.ts` maps them by name).
 */
import type { SessionEntry, ThinkingLevel } from "@mypi/kernel";
import type { PiModelObject } from "../models/types.ts";

/**
 * The host is ready: after loading (`startup`), after `reload()`, in a new session (`new`, also
 * `resume` of another file), and after a fork moved the session (`fork`) — Pi 1.x's one event for
 * all of them; extensions that rebuild state from the branch do it here. `previousSessionFile`:
 * the file this session replaced or was forked in (new, resume, fork).
 */
export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
  timestamp: number;
}
/**
 * The host is shutting down (`quit`), the extension is about to be reloaded (`reload`), or the
 * session is being replaced (`new`, with the new session's file in `targetSessionFile`).
 */
export interface SessionShutdownEvent {
  type: "session_shutdown";
  reason: "quit" | "reload" | "new" | "resume" | "fork";
  targetSessionFile?: string;
  timestamp: number;
}
export interface SessionCompactEvent {
  type: "session_compact";
  tokensBefore: number;
  tokensAfter: number;
  /** The summary came from a `session_before_compact` handler. */
  fromExtension: boolean;
  /** The `compaction` entry written to the session (Pi's field), when there is a session. */
  compactionEntry?: SessionEntry;
  /** As in `session_before_compact`. */
  reason: "manual" | "threshold";
  willRetry: false;
  timestamp: number;
}
export interface SessionForkEvent {
  type: "session_fork";
  entryId: string;
  previousLeafId: string | undefined;
  /** Pi's field. mypi forks inside the same file, so this is the current session file. */
  previousSessionFile: string | undefined;
  timestamp: number;
}
/** The host replaced the session (RPC `new_session`); sent to the new session's extensions. */
export interface SessionSwitchEvent {
  type: "session_switch";
  reason: "new" | "resume";
  previousSessionFile: string | undefined;
  timestamp: number;
}

/** `/tree` moved the session's leaf inside the same file (`navigate`): state kept from the branch is rebuilt here. */
export interface SessionTreeEvent {
  type: "session_tree";
  newLeafId: string | undefined;
  oldLeafId: string | undefined;
  timestamp: number;
}

/** The session's name changed (`pi.setSessionName`, RPC `set_session_name`); Pi 1.x's event. */
export interface SessionInfoChangedEvent {
  type: "session_info_changed";
  /** The name now (`undefined` when cleared). */
  name: string | undefined;
  timestamp: number;
}

/**
 * The user ran `!cmd` (or `!!cmd`: `excludeFromContext`) in interactive mode. mypi runs it itself
 * and tells observers; Pi's handlers may also return `{result}` or `{operations}` to run it their
 * way, which mypi does not read (docs/pi-compat.md).
 */
export interface UserBashEvent {
  type: "user_bash";
  command: string;
  excludeFromContext: boolean;
  cwd: string;
  timestamp: number;
}

/**
 * The model changed — `/model`, Ctrl+P, RPC `set_model` / `cycle_model`, `pi.setModel` — from
 * the next run on (Pi's event). Resuming a session that used another model does not send it:
 * read `ctx.model` in `session_start`.
 */
export interface ModelSelectEvent {
  type: "model_select";
  model: PiModelObject;
  previousModel: PiModelObject | undefined;
  /** `cycle`: Ctrl+P or RPC `cycle_model`; `set`: everything else. */
  source: "set" | "cycle";
  timestamp: number;
}

/**
 * The thinking level changed: `/thinking`, Shift+Tab, RPC, `pi.setThinkingLevel`, or a model
 * change that clamped it (then it comes just before that `model_select`). Pi's event.
 */
export interface ThinkingLevelSelectEvent {
  type: "thinking_level_select";
  level: ThinkingLevel;
  previousLevel: ThinkingLevel;
  timestamp: number;
}
