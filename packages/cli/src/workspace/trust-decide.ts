/**
 * Deciding project trust for one process (the order is documented in `trust.ts`): the flag, then
 * the saved decision — both known before any extension loads, so every extension sees the
 * workspace's settings from its first line — then the `project_trust` handlers of the extensions
 * already loaded (global and `-e` ones), then, in interactive mode only, the question.
 */
import type { ExtensionManager } from "@mypi/extension-api";
import type { CliIO } from "../io.ts";
import { askTrust, lineUI } from "./trust-prompt.ts";
import { TrustStore, type TrustDecision } from "./trust.ts";

interface TrustQuestion {
  manager: ExtensionManager;
  cwd: string;
  /** `$MYPI_HOME`: where `trust.json` is. */
  home: string;
  /** What the workspace holds that needs trust (`protectedResources`); empty: nothing is asked. */
  resources: readonly string[];
  /** `--trust-project` / `--no-trust-project`. */
  flag: boolean | undefined;
  io: CliIO;
  /** May ask on the terminal (interactive mode). */
  interactive: boolean;
}

/** The decision that needs no extension: the flag, else the saved one; `undefined` when neither applies. */
export function decideTrustEarly(q: Pick<TrustQuestion, "cwd" | "home" | "flag">): TrustDecision | undefined {
  if (q.flag !== undefined) return { trusted: q.flag, source: "flag" };
  const found = new TrustStore(q.home).lookup(q.cwd);
  return found && { trusted: found.trusted, source: "saved", savedFor: found.path };
}

/** The rest of the decision, once the global and `-e` extensions loaded. */
export async function decideTrust(q: TrustQuestion): Promise<TrustDecision> {
  const early = decideTrustEarly(q);
  if (early) return early;
  // Nothing of the workspace would load: no question, no event.
  if (q.resources.length === 0) return { trusted: false, source: "default" };
  const store = new TrustStore(q.home);
  const fromExtension = await askExtensions(q);
  if (fromExtension) {
    if (fromExtension.remember) store.set(q.cwd, fromExtension.trusted);
    return {
      trusted: fromExtension.trusted,
      source: "extension",
      ...(fromExtension.by !== undefined && { extension: fromExtension.by }),
    };
  }
  if (!q.interactive) return { trusted: false, source: "default" };
  const answer = await askTrust(q.io, q.cwd, q.resources);
  if (answer.remember) store.set(q.cwd, answer.trusted);
  return { trusted: answer.trusted, source: "asked" };
}

/** The first yes/no of a `project_trust` handler, if any. Dialogs there use the terminal's lines (interactive) or the mode's UI. */
async function askExtensions(
  q: TrustQuestion,
): Promise<{ trusted: boolean; remember: boolean; by?: string } | undefined> {
  const restoreUI = q.interactive && !q.manager.currentUI.hasUI;
  if (restoreUI) q.manager.setUI(lineUI(q.io));
  let by: string | undefined;
  try {
    const decision = await q.manager.runSlot(
      "project_trust",
      { cwd: q.cwd },
      {
        signal: new AbortController().signal,
        // The deciding handler is credited in its hook_decision; failures become diagnostics.
        emit: (event) => {
          if (event.type === "hook_decision" && (event.outcome === "allow" || event.outcome === "block"))
            by = event.extension;
          if (event.type === "extension_error")
            q.manager.diagnostic(`${event.extension}: project_trust failed: ${event.error}`);
        },
      },
    );
    if (decision === undefined || decision.trusted === "undecided") return undefined;
    return {
      trusted: decision.trusted === "yes",
      remember: decision.remember === true,
      ...(by !== undefined && { by }),
    };
  } finally {
    if (restoreUI) q.manager.setUI(undefined);
  }
}
