/**
 * The seams through which a layer adds to what extensions see, without the manager naming it
 * (docs/internals.md#extension-api). Pi compatibility is one such layer (`pi-compat/`); a host's
 * own `virtualModules` / `extendApi` / `extendContext` options are another. Adapters apply in the
 * order they were added; each member is optional.
 */
import type { DispatchAdapter } from "./dispatch/driver.ts";
import type { CommandContext, ExtensionAPI, ExtensionContext } from "./types.ts";

/** One extension instance, as an adapter's `extendApi` sees it. */
export interface ExtensionSeat {
  readonly name: string;
  readonly path?: string;
  /** Whether the instance is live (attached: its handlers run); false while it loads and once disposed. */
  attached(): boolean;
  /** The ctx its handlers, observers, commands and tools receive. */
  readonly context: ExtensionContext;
}

export interface ManagerAdapter extends DispatchAdapter {
  /** Modules handed to extensions as the host's own, by import name (read at each load). */
  readonly modules?: Readonly<Record<string, unknown>>;
  /** Add members to an extension's `pi` before its factory runs. */
  extendApi?(pi: ExtensionAPI, extension: ExtensionSeat): void;
  /** Add members to the `ctx` every handler, observer and command sees (once, when the adapter is added). */
  extendContext?(ctx: ExtensionContext): void;
  /** Add members to a command's (or a shortcut's) ctx of `extension`. */
  extendCommandContext?(ctx: CommandContext, extension: string): void;
}
