/**
 * Permission modes: how the gate answers what your rules leave open.
 *
 *   default        your rules and the built-in list decide
 *   accept-edits   as default, and your `ask` rules on file changes inside the workspace are answered yes
 *   plan           only reading tools and read-only shell commands, until the user accepts the plan
 *   bypass         everything is allowed but what a deny rule or a managed ask rule stops
 *
 * The mode is one object the host and the gate share (`ModeState`): the host sets it (a flag, a
 * setting, a key, `/mode`, an RPC command), the gate reads it on every call and tells the model in
 * plan mode. The host decides what may be set (`refuse`): managed settings may restrict the
 * modes, and bypass needs the bash sandbox or an explicit flag.
 */

export const PERMISSION_MODES = ["default", "accept-edits", "plan", "bypass"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/** Claude Code's spellings are taken as well. */
const ALIASES: Record<string, PermissionMode> = { acceptEdits: "accept-edits", bypassPermissions: "bypass" };

/** The mode a word names, or undefined. */
export function parsePermissionMode(text: string): PermissionMode | undefined {
  const word = text.trim();
  if ((PERMISSION_MODES as readonly string[]).includes(word)) return word as PermissionMode;
  return Object.hasOwn(ALIASES, word) ? ALIASES[word] : undefined;
}

export interface ModeChange {
  mode: PermissionMode;
  previous: PermissionMode;
  /** Who switched: `/mode`, `Alt+M`, `exit_plan_mode`, `set_permission_mode` … */
  by: string;
}

export interface ModeState {
  readonly mode: PermissionMode;
  /** Where the current mode came from (`--permission-mode`, `permissionMode in <file>`, `/mode` …). */
  readonly source: string;
  /** Switch to `mode`; the sentence that says why not when it may not be set (the mode stays). */
  set(mode: PermissionMode, by: string): string | undefined;
  /** Why `mode` may not be set here, or undefined. */
  refusal(mode: PermissionMode): string | undefined;
  /** The mode after the current one in `PERMISSION_MODES`' order that may be set (the current one when none). */
  next(): PermissionMode;
  /** Called after each change; returns the unsubscribe. */
  subscribe(listener: (change: ModeChange) => void): () => void;
}

export interface ModeStateOptions {
  initial?: PermissionMode;
  /** Where `initial` came from (default: "default"). */
  source?: string;
  /** Why a mode may not be set, or undefined (managed settings, bypass without the sandbox). */
  refuse?: (mode: PermissionMode) => string | undefined;
}

export function createModeState(options: ModeStateOptions = {}): ModeState {
  let mode: PermissionMode = options.initial ?? "default";
  let source = options.source ?? "default";
  const listeners = new Set<(change: ModeChange) => void>();
  const refusal = (m: PermissionMode) => options.refuse?.(m);
  return {
    get mode() {
      return mode;
    },
    get source() {
      return source;
    },
    refusal,
    set(next, by) {
      if (next === mode) return undefined;
      const refused = refusal(next);
      if (refused !== undefined) return refused;
      const previous = mode;
      mode = next;
      source = by;
      for (const listener of [...listeners]) listener({ mode, previous, by });
      return undefined;
    },
    next() {
      const at = PERMISSION_MODES.indexOf(mode);
      for (let i = 1; i < PERMISSION_MODES.length; i++) {
        const candidate = PERMISSION_MODES[(at + i) % PERMISSION_MODES.length]!;
        if (refusal(candidate) === undefined) return candidate;
      }
      return mode;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

/** One line for a mode, as banners and `/mode` show it. */
export function describeMode(mode: PermissionMode): string {
  switch (mode) {
    case "default":
      return "default: your rules and the built-in list decide";
    case "accept-edits":
      return "accept-edits: file changes inside the workspace are not asked about";
    case "plan":
      return "plan: reading only, until you accept the plan";
    case "bypass":
      return "bypass: everything runs but what deny rules and managed ask rules stop";
  }
}
