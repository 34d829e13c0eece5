/**
 * Pi's spellings of decision results, turned into mypi's before the slot's policy reads them
 * (dispatch/policy.ts knows only mypi's shapes):
 * - `session_before_compact`: `{compaction: {summary, firstKeptEntryId, tokensBefore, details?}}`
 *   gives its `summary` (mypi cuts the history itself, so the other fields are not read);
 * - `resources_discover`: `themePaths` is checked (an array of strings) and left out — mypi has
 *   no themes.
 * A result without Pi's field is handed on as the same object (a `next()` value passed through
 * stays recognisable to the chain).
 */
import { isRecord } from "@mypi/kernel";
import { isThenable } from "../dispatch/chain.ts";

type Handler = (...args: never[]) => unknown;

const ADAPTERS: Readonly<Record<string, (result: unknown) => unknown>> = {
  session_before_compact(result) {
    if (!isRecord(result) || result.summary !== undefined || !isRecord(result.compaction)) return result;
    const summary = result.compaction.summary;
    if (typeof summary !== "string") return result;
    const { compaction: _pi, ...rest } = result;
    return { ...rest, summary };
  },
  resources_discover(result) {
    if (!isRecord(result) || result.themePaths === undefined) return result;
    const themes = result.themePaths;
    if (!Array.isArray(themes) || !themes.every((p) => typeof p === "string")) {
      throw new TypeError(`resources_discover: themePaths must be an array of strings, got ${JSON.stringify(themes)}`);
    }
    const { themePaths: _ignored, ...rest } = result;
    return rest;
  },
};

/** The handler of `slot`, reading Pi's result shapes; `undefined` when the slot has none. */
export function piSlotHandler<H extends Handler>(slot: string, handler: H): H | undefined {
  const adapt = ADAPTERS[slot];
  if (!adapt) return undefined;
  return ((...args: Parameters<H>) => {
    const result = handler(...args);
    return isThenable(result) ? Promise.resolve(result).then(adapt) : adapt(result);
  }) as H;
}
