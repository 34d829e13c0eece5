/**
 * What a server may ask of mypi (requests in the client's direction): `roots/list` (the
 * workspace), `elicitation/create` (a dialog for the user, elicitation.ts) and
 * `sampling/createMessage` (a call of the host's model, sampling.ts; only for a server whose entry
 * allows it). The capabilities declared
 * in `initialize` are exactly the requests answered here, so a server never learns of a feature
 * it would then be refused without a reason.
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CompleteRequest, CompleteResult, ExtensionUI } from "@mypi/extension-api";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "./config.ts";
import { elicit, type FormSchema } from "./elicitation.ts";
import type { OAuthStore } from "./oauth-store.ts";
import { SamplingRefused, sample, type SamplingParams } from "./sampling.ts";

/** What the answers (and the OAuth flow) need from the session; one object per hub, read at each request. */
export interface ClientServices {
  /** The agent's workspace: the one root reported to every server. */
  cwd: string;
  /** The session's UI for elicitation dialogs; `undefined` without one (print and JSON modes). */
  ui?: () => ExtensionUI | undefined;
  /** A line for the user (a declined request, a refused one). */
  report?: (line: string) => void;
  /** The host's model call (`pi.complete`); without it no server may sample. */
  complete?: (request: CompleteRequest) => Promise<CompleteResult>;
  /** Where HTTP servers' OAuth tokens are kept; without it no OAuth flow runs. */
  oauthStore?: OAuthStore;
}

export function clientCapabilities(config: ServerConfig, services: ClientServices): ClientCapabilities {
  // The workspace is fixed for the session, so there is never a roots/list_changed to send.
  // Form mode only: URL mode (open a page) is not offered.
  const capabilities: ClientCapabilities = { roots: { listChanged: false }, elicitation: { form: {} } };
  if (maySample(config, services)) capabilities.sampling = {};
  return capabilities;
}

function maySample(config: ServerConfig, services: ClientServices): boolean {
  return (config.sampling === true || config.sampling === "ask") && services.complete !== undefined;
}

/** `"sampling": "ask"`: the user sees what the server wants the model to answer, and says yes or no. */
async function approveSampling(
  server: string,
  params: SamplingParams,
  ui: ExtensionUI | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (!ui)
    throw new SamplingRefused(
      `the entry of MCP server "${server}" says "sampling": "ask", and mypi runs without a user interface (print or JSON mode), so nobody can approve`,
    );
  const last = params.messages.at(-1)?.content;
  const text = (Array.isArray(last) ? last : last ? [last] : [])
    .map((b) => (b.type === "text" ? (b.text ?? "") : `[${b.type}]`))
    .join(" ");
  const preview = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  const approved = await ui.confirm(
    `MCP server "${server}" asks the model to answer (up to ${params.maxTokens} tokens)`,
    preview,
    { signal },
  );
  if (!approved) throw new SamplingRefused("the user declined the sampling request");
}

/** Servers already told (in a report line) that they may not sample, per hub: one line each. */
const refusedOnce = new WeakMap<ClientServices, Set<string>>();

/** The workspace as MCP roots: one `file://` URI, named after its folder. */
function workspaceRoots(cwd: string): { uri: string; name: string }[] {
  return [{ uri: pathToFileURL(cwd).href, name: basename(cwd) || cwd }];
}

/** Register the request handlers; call before `client.connect`, with the capabilities above. */
export async function installClientRequests(
  client: Client,
  config: ServerConfig,
  services: ClientServices,
): Promise<void> {
  const { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, McpError } = await import(
    "@modelcontextprotocol/sdk/types.js"
  );
  const report = services.report ?? (() => {});
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: workspaceRoots(services.cwd) }));
  client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
    const params = request.params as { message: string; requestedSchema: FormSchema };
    return elicit({
      server: config.name,
      message: params.message,
      schema: params.requestedSchema,
      ui: services.ui?.(),
      signal: extra.signal,
      report,
    });
  });
  if (maySample(config, services)) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const params = request.params as SamplingParams;
      if (config.sampling === "ask") await approveSampling(config.name, params, services.ui?.(), extra.signal);
      return sample({ server: config.name, params, complete: services.complete!, signal: extra.signal });
    });
    return;
  }
  // Not declared, so a well-behaved server never asks; one that does learns why, instead of the
  // SDK's bare "method not found".
  client.fallbackRequestHandler = async (request) => {
    if (request.method !== "sampling/createMessage")
      throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    const why = config.sampling
      ? "this host has no model to offer"
      : `sampling is off for it; add "sampling": true (or "ask") to its entry in ${config.file} to allow it`;
    const told = refusedOnce.get(services) ?? new Set<string>();
    refusedOnce.set(services, told);
    if (!told.has(config.name)) report(`server "${config.name}" asked to use the model (sampling); refused: ${why}.`);
    told.add(config.name);
    throw new SamplingRefused(`mypi does not let the MCP server "${config.name}" use its model: ${why}`);
  };
}
