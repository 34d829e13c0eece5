/**
 * MCP resources: what a server offers to read (files, records, documents), for the model and the
 * user.
 *
 * - Two tools: `mcp_list_resources` (every server's resources and resource templates, or one
 *   server's) and `mcp_read_resource` (`server`, `uri`); contents are converted like a tool
 *   result's embedded resources (convert.ts): text headed by its URI, images as images, other
 *   blobs as one line.
 * - `@server:uri` in a prompt attaches the resource (through the `input` slot): its text is
 *   appended to the prompt in a `<mcp-resource>` block, images become the prompt's images.
 * - A server that supports subscriptions is subscribed to each attached resource; when it sends
 *   `notifications/resources/updated`, the resource is read again and the model sees the new
 *   text in place of the old one from its next call on (the `context` slot; the transcript keeps
 *   what was attached).
 */
import { defineTool, z } from "@mypi/extension-api";
import {
  errorResult,
  isRecord,
  type Content,
  type ImageContent,
  type Message,
  type Tool,
  type ToolResult,
} from "@mypi/kernel";
import type { McpConnection } from "./connection.ts";
import { toToolResult } from "./convert.ts";
import { listPages } from "./paging.ts";
import { settledOrAborted } from "./settle.ts";

export const LIST_RESOURCES_TOOL = "mcp_list_resources";
export const READ_RESOURCE_TOOL = "mcp_read_resource";

/** What the resource functions need of the hub. */
interface ResourceHost {
  readonly connections: readonly McpConnection[];
  server(name: string): McpConnection | undefined;
}

export function offersResources(server: McpConnection): boolean {
  return server.state === "connected" && isRecord(server.capabilities?.resources);
}

function subscribable(server: McpConnection): boolean {
  const resources = server.capabilities?.resources;
  return isRecord(resources) && resources.subscribe === true;
}

// ─── listing and reading ─────────────────────────────────────────────────────────────────────

interface ResourceListing {
  server: string;
  resources: { uri: string; name?: string; mimeType?: string; description?: string }[];
  templates: { uriTemplate: string; name?: string; mimeType?: string; description?: string }[];
  /** What was skipped or cut, or why the listing failed. */
  notes: string[];
}

/** A server's resources and templates, read item by item (an item without a URI is skipped). */
async function listResources(server: McpConnection, signal?: AbortSignal): Promise<ResourceListing> {
  const timeoutMs = server.config.connectTimeoutMs;
  const page = (method: string) => (cursor: string | undefined) =>
    server.request(method, cursor !== undefined ? { cursor } : undefined, { signal, timeoutMs });
  const listing: ResourceListing = { server: server.name, resources: [], templates: [], notes: [] };
  const [resources, templates] = await Promise.allSettled([
    listPages(page("resources/list"), "resources/list", "resources"),
    listPages(page("resources/templates/list"), "resources/templates/list", "resourceTemplates"),
  ]);
  if (resources.status === "fulfilled") {
    listing.resources = described(resources.value.items, "uri");
    listing.notes.push(
      ...resources.value.notes,
      ...skipped(resources.value.items.length - listing.resources.length, "resource"),
    );
  } else listing.notes.push(`resources/list failed: ${server.describeCallError(resources.reason)}`);
  // Templates are optional in the protocol: a server without them answers "method not found".
  if (templates.status === "fulfilled") {
    listing.templates = described(templates.value.items, "uriTemplate");
    listing.notes.push(
      ...templates.value.notes,
      ...skipped(templates.value.items.length - listing.templates.length, "template"),
    );
  }
  return listing;
}

function described<K extends "uri" | "uriTemplate">(
  items: unknown[],
  key: K,
): ({ [P in K]: string } & { name?: string; mimeType?: string; description?: string })[] {
  const out: ({ [P in K]: string } & { name?: string; mimeType?: string; description?: string })[] = [];
  for (const item of items) {
    if (!isRecord(item) || typeof item[key] !== "string" || item[key] === "") continue;
    const entry = { [key]: item[key] } as { [P in K]: string } & {
      name?: string;
      mimeType?: string;
      description?: string;
    };
    for (const field of ["name", "mimeType", "description"] as const)
      if (typeof item[field] === "string" && item[field] !== "") entry[field] = item[field];
    out.push(entry);
  }
  return out;
}

function skipped(n: number, what: string): string[] {
  return n > 0
    ? [
        `${n} ${what}${n > 1 ? "s" : ""} without a ${what === "template" ? "uriTemplate" : "uri"} ${n > 1 ? "were" : "was"} skipped`,
      ]
    : [];
}

/** One line per resource and template, under a heading per server. */
function listingText(listings: readonly ResourceListing[]): string {
  const lines: string[] = [];
  for (const l of listings) {
    if (lines.length) lines.push("");
    lines.push(
      `${l.server}: ${l.resources.length} resource${l.resources.length === 1 ? "" : "s"}, ${l.templates.length} template${l.templates.length === 1 ? "" : "s"}`,
    );
    const about = (e: { name?: string; mimeType?: string; description?: string }) =>
      `${e.mimeType ? ` (${e.mimeType})` : ""}${e.name ? ` ${JSON.stringify(e.name)}` : ""}${e.description ? `: ${e.description}` : ""}`;
    for (const r of l.resources) lines.push(`- ${r.uri}${about(r)}`);
    for (const t of l.templates) lines.push(`- template ${t.uriTemplate}${about(t)}`);
    for (const note of l.notes) lines.push(`  note: ${note}`);
  }
  return lines.join("\n");
}

/** `resources/read`, its contents converted like a tool result's embedded resources. Rejects on protocol errors. */
async function readResource(server: McpConnection, uri: string, signal?: AbortSignal): Promise<ToolResult> {
  const answer = await server.request("resources/read", { uri }, { signal, timeoutMs: server.config.timeoutMs });
  const contents = Array.isArray(answer.contents) ? answer.contents : [];
  const result = toToolResult(
    { content: contents.map((resource) => ({ type: "resource", resource })) },
    { server: server.name, tool: READ_RESOURCE_TOOL },
  );
  if (result.content.length === 0)
    result.content.push({ type: "text", text: `The MCP server "${server.name}" sent no contents for ${uri}.` });
  return { ...result, details: { server: server.name, uri } };
}

// ─── the tools ───────────────────────────────────────────────────────────────────────────────

export function resourceTools(host: ResourceHost): Tool[] {
  const unknownServer = (name: string) => {
    const known = host.connections.filter(offersResources).map((c) => c.name);
    return errorResult(
      `There is no MCP server "${name}" with resources${known.length ? `; servers with resources: ${known.join(", ")}` : ""}.`,
      {},
    );
  };
  return [
    defineTool({
      name: LIST_RESOURCES_TOOL,
      description:
        "List the resources (readable documents, files, records) and resource templates of the MCP servers, or of one server. Read one with mcp_read_resource.",
      parameters: z.strictObject({ server: z.string().optional().describe("Only this server") }),
      parallelSafe: true,
      execute: async ({ server }, ctx) => {
        const servers =
          server === undefined
            ? host.connections.filter(offersResources)
            : [host.server(server)].filter((c) => c && offersResources(c));
        if (server !== undefined && servers.length === 0) return unknownServer(server);
        if (servers.length === 0)
          return {
            content: [{ type: "text", text: "No connected MCP server offers resources." }],
            details: { servers: [] },
          };
        const listings = await Promise.all(servers.map((c) => listResources(c!, ctx.signal)));
        return { content: [{ type: "text", text: listingText(listings) }], details: { servers: listings } };
      },
    }),
    defineTool({
      name: READ_RESOURCE_TOOL,
      description: "Read a resource of an MCP server by its URI (from mcp_list_resources, or a template filled in).",
      parameters: z.strictObject({
        server: z.string().describe("The server's name"),
        uri: z.string().min(1).describe("The resource's URI"),
      }),
      parallelSafe: true,
      execute: async ({ server, uri }, ctx) => {
        const c = host.server(server);
        if (!c || !offersResources(c)) return unknownServer(server);
        try {
          return await readResource(c, uri, ctx.signal);
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          return errorResult(`The MCP server "${server}" could not read ${uri}: ${c.describeCallError(error)}`, {});
        }
      },
    }),
  ];
}

// ─── attachments ─────────────────────────────────────────────────────────────────────────────

/** `@server:uri` after a space or at the start; the URI runs to the next space. */
const MENTION = /(^|\s)@([A-Za-z0-9_.-]+):(\S+)/g;
/** Sentence punctuation after a mention is not part of its URI. */
const TRAILING = /[.,;:!?)\]'"]+$/;

const BLOCK = /<mcp-resource server="([^"]*)" uri="([^"]*)">\n([\s\S]*?)\n<\/mcp-resource>/g;

interface Attachment {
  server: string;
  uri: string;
  /** The text the model sees now: replaced when the server says the resource changed. */
  text: string;
  /** A re-read in flight (the context slot waits for it). */
  refreshing?: Promise<void>;
}

/** The resources attached to prompts in this session, kept fresh by their servers' updates. */
export class Attachments {
  readonly #host: ResourceHost;
  readonly #byKey = new Map<string, Attachment>();
  readonly #subscribed = new WeakMap<object, Set<string>>();
  readonly #report: (line: string) => void;

  constructor(host: ResourceHost, report: (line: string) => void) {
    this.#host = host;
    this.#report = report;
  }

  /**
   * The prompt with its `@server:uri` mentions attached: undefined when it has none. A mention of
   * a server that is not connected or has no resources is left as typed (an e-mail address or a
   * handle is not a resource); a read that fails is said in the prompt, so nothing is lost.
   */
  async attach(text: string, signal: AbortSignal): Promise<{ text: string; images: ImageContent[] } | undefined> {
    const mentions = new Map<string, { server: McpConnection; uri: string }>();
    for (const m of text.matchAll(MENTION)) {
      const server = this.#host.server(m[2]!);
      const uri = m[3]!.replace(TRAILING, "");
      if (server && offersResources(server) && uri) mentions.set(key(server.name, uri), { server, uri });
    }
    if (mentions.size === 0) return undefined;
    const images: ImageContent[] = [];
    const blocks = await Promise.all(
      [...mentions.values()].map(async ({ server, uri }) => {
        try {
          const result = await readResource(server, uri, signal);
          images.push(...result.content.filter((c): c is ImageContent => c.type === "image"));
          const body = textOf(result.content);
          this.#byKey.set(key(server.name, uri), { server: server.name, uri, text: body });
          this.#subscribe(server, uri);
          return block(server.name, uri, body);
        } catch (error) {
          if (signal.aborted) throw error;
          return `[mypi could not attach @${server.name}:${uri}: ${server.describeCallError(error)}]`;
        }
      }),
    );
    return { text: `${text}\n\n${blocks.join("\n\n")}`, images };
  }

  /** A server said a resource changed: read it again if it is attached. */
  updated(server: McpConnection, uri: string): void {
    const attachment = this.#byKey.get(key(server.name, uri));
    if (!attachment) return;
    const read = readResource(server, uri)
      .then((result) => void (attachment.text = textOf(result.content)))
      .catch((error: unknown) =>
        this.#report(`server "${server.name}": could not read the updated ${uri}: ${server.describeCallError(error)}`),
      )
      .finally(() => {
        if (attachment.refreshing === read) attachment.refreshing = undefined;
      });
    attachment.refreshing = read;
  }

  /** Wait for re-reads in flight, then the messages with every attached block at its current text (undefined: nothing to change). */
  async current(messages: Message[], signal: AbortSignal): Promise<Message[] | undefined> {
    const pending = [...this.#byKey.values()].flatMap((a) => (a.refreshing ? [a.refreshing] : []));
    await settledOrAborted(pending, signal);
    let changed = false;
    const fresh = (text: string) =>
      text.replace(BLOCK, (whole, server: string, uri: string, body: string) => {
        const now = this.#byKey.get(key(unescape(server), unescape(uri)));
        if (!now || now.text === body) return whole;
        changed = true;
        return block(now.server, now.uri, now.text);
      });
    const out = messages.map((m): Message => {
      if (m.role !== "user") return m;
      if (typeof m.content === "string") return { ...m, content: fresh(m.content) };
      return { ...m, content: m.content.map((c): Content => (c.type === "text" ? { ...c, text: fresh(c.text) } : c)) };
    });
    return changed ? out : undefined;
  }

  #subscribe(server: McpConnection, uri: string): void {
    // Per connection (its capabilities object is new at every connect): a restarted server is subscribed anew.
    const connection = server.capabilities;
    if (!connection || !subscribable(server)) return;
    let uris = this.#subscribed.get(connection);
    if (!uris) this.#subscribed.set(connection, (uris = new Set()));
    if (uris.has(uri)) return;
    uris.add(uri);
    server
      .request("resources/subscribe", { uri }, { timeoutMs: server.config.connectTimeoutMs })
      .catch((error: unknown) => {
        uris.delete(uri);
        this.#report(`server "${server.name}": could not subscribe to ${uri}: ${server.describeCallError(error)}`);
      });
  }
}

function block(server: string, uri: string, body: string): string {
  return `<mcp-resource server="${escape(server)}" uri="${escape(uri)}">\n${body}\n</mcp-resource>`;
}

function textOf(content: Content[]): string {
  return content.map((c) => (c.type === "text" ? c.text : `[image ${c.mimeType}, attached]`)).join("\n");
}

function key(server: string, uri: string): string {
  return `${server}\u0000${uri}`;
}

function escape(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
}

function unescape(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&amp;/g, "&");
}
