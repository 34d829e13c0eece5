/**
 * What a server may ask of mypi (requests in the client's direction): `roots/list` (the
 * workspace), `elicitation/create` (a dialog for the user, elicitation.ts) and
 * `sampling/createMessage` (a call of the host's model, sampling.ts). The capabilities declared
 * in `initialize` are exactly the requests answered here, so a server never learns of a feature
 * it would then be refused without a reason.
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ExtensionUI } from "@mypi/extension-api";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "./config.ts";
import { elicit, type FormSchema } from "./elicitation.ts";

/** What the answers need from the session; one object per hub, read at each request. */
export interface ClientServices {
  /** The agent's workspace: the one root reported to every server. */
  cwd: string;
  /** The session's UI for elicitation dialogs; `undefined` without one (print and JSON modes). */
  ui?: () => ExtensionUI | undefined;
  /** A line for the user (a declined request, a refused one). */
  report?: (line: string) => void;
}

export function clientCapabilities(_config: ServerConfig, _services: ClientServices): ClientCapabilities {
  // The workspace is fixed for the session, so there is never a roots/list_changed to send.
  // Form mode only: URL mode (open a page) is not offered.
  return { roots: { listChanged: false }, elicitation: { form: {} } };
}

/** The workspace as MCP roots: one `file://` URI, named after its folder. */
export function workspaceRoots(cwd: string): { uri: string; name: string }[] {
  return [{ uri: pathToFileURL(cwd).href, name: basename(cwd) || cwd }];
}

/** Register the request handlers; call before `client.connect`, with the capabilities above. */
export async function installClientRequests(client: Client, config: ServerConfig, services: ClientServices): Promise<void> {
  const { ElicitRequestSchema, ListRootsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const report = services.report ?? (() => {});
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: workspaceRoots(services.cwd) }));
  client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
    const params = request.params as { message: string; requestedSchema: FormSchema };
    return elicit({ server: config.name, message: params.message, schema: params.requestedSchema, ui: services.ui?.(), signal: extra.signal, report });
  });
}
