/**
 * The shared history, as one client may send it (docs/models.md#history-across-protocols).
 *
 * A session may switch models and protocols between turns. What one provider made for itself —
 * Anthropic's signed thinking, the Responses API's encrypted reasoning items and item ids — is
 * valid only for the client that produced it, so it is sent back only to a client with the same
 * api, provider and model id, and dropped for any other (as Pi does: readable thinking from
 * another model, sent as text, would read to the new model as something it had said). Tool
 * call ids are rewritten where a provider rejects their form, the same way for the call and its
 * result, so they stay paired.
 */
import { createHash } from "node:crypto";
import type { AssistantMessage, ModelApi } from "../types.ts";

/** Who a client is, as its messages record it. */
export interface ClientIdentity {
  id: string;
  api: ModelApi;
  provider: string;
}

/**
 * Whether `message` came from this very client (same api, provider and model id), and finished:
 * only then is what the provider made for itself sent back. An errored or aborted turn may hold a
 * reasoning item without the item that followed it, which the API would refuse.
 */
export function isOwnTurn(message: AssistantMessage, client: ClientIdentity): boolean {
  return (
    message.api === client.api &&
    message.provider === client.provider &&
    message.model === client.id &&
    message.stopReason !== "error" &&
    message.stopReason !== "aborted"
  );
}

/**
 * Tool call ids made acceptable to one provider: `rewrite(id)` is the id as sent, the same for a
 * call and its result. Ids already acceptable are sent unchanged.
 */
export function toolCallIdMapper(options: {
  accepts: (id: string) => boolean;
  maxLength: number;
  clean: (id: string) => string;
}): (id: string) => string {
  const byOriginal = new Map<string, string>();
  return (id) => {
    const known = byOriginal.get(id);
    if (known !== undefined) return known;
    let out = id;
    if (!options.accepts(id) || id.length > options.maxLength) {
      // A short hash of the original keeps two ids that clean alike (and an id that is already
      // what another cleans to) apart.
      const suffix = `_${createHash("sha256").update(id).digest("hex").slice(0, 10)}`;
      out = (options.clean(id) || "call").slice(0, options.maxLength - suffix.length) + suffix;
    }
    byOriginal.set(id, out);
    return out;
  };
}
