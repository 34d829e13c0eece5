/**
 * Where MCP servers are configured and what an entry may say.
 *
 * Two files, `$MYPI_HOME/mcp.json` (default `~/.mypi/mcp.json`) and `<cwd>/.mypi/mcp.json`, each
 * `{ "servers": { "<name>": { … } } }`. The project file wins per server name (a project entry
 * with `"disabled": true` switches off a home one). A file that is missing is no problem; one
 * that cannot be read or parsed, and an entry that is malformed, become `ConfigProblem`s — data,
 * never a throw — so one bad entry cannot take the other servers down.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { errnoCode, errorMessage, isRecord, MAX_TIMER_DELAY_MS } from "@mypi/kernel";
import { serverNameProblem, serverPart } from "./naming.ts";
import type { OAuthSettings } from "./oauth.ts";

/** Defaults, in milliseconds. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** The longest timeout a server entry may set: the longest delay a timer can wait (a longer one would fire at once). */
export const MAX_TIMEOUT_MS = MAX_TIMER_DELAY_MS;

interface CommonServerConfig {
  name: string;
  /** The file the entry came from. */
  file: string;
  /** Per tool call; 0 = none. Enforced by the kernel like a native tool's `timeoutMs`. */
  timeoutMs: number;
  /** Start-up (spawn + `initialize` + first `tools/list`), and each later `tools/list`. */
  connectTimeoutMs: number;
  /**
   * The server may ask for completions of the session's model (`sampling/createMessage`):
   * `true` always, `"ask"` after the user approves each request; absent or false: never.
   */
  sampling?: boolean | "ask";
}
export interface StdioServerConfig extends CommonServerConfig {
  transport: "stdio";
  command: string;
  args: string[];
  /** Added to a small inherited environment (PATH, HOME, …), as the MCP SDK does. */
  env: Record<string, string>;
  /** Absolute; default the agent's workspace. */
  cwd: string;
}
export interface HttpServerConfig extends CommonServerConfig {
  transport: "http";
  url: string;
  headers: Record<string, string>;
  /** OAuth (oauth.ts): on unless `false` or an `Authorization` header is given. */
  oauth?: OAuthSettings | false;
}

/** Whether mypi runs the OAuth flow for this server (an explicit `Authorization` header wins). */
export function usesOAuth(config: HttpServerConfig): boolean {
  return config.oauth !== false && !Object.keys(config.headers).some((k) => k.toLowerCase() === "authorization");
}
export type ServerConfig = StdioServerConfig | HttpServerConfig;

export interface ConfigProblem {
  file: string;
  /** Absent when the whole file is unusable. */
  server?: string;
  message: string;
}

export interface McpConfig {
  /** Sorted by name, so start-up and naming do not depend on file order. */
  servers: ServerConfig[];
  problems: ConfigProblem[];
}

interface ConfigLocations {
  /** The agent's workspace: `<cwd>/.mypi/mcp.json`, and the base of a relative `cwd`. */
  cwd: string;
  /** `$MYPI_HOME`, default `~/.mypi`. */
  home: string;
  /** For `${VAR}` in the files; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Read `<cwd>/.mypi/mcp.json` too (default true; false for a workspace that is not trusted). */
  project?: boolean;
}

export function defaultHome(env: Record<string, string | undefined> = process.env): string {
  return env.MYPI_HOME || join(homedir(), ".mypi");
}

function configFiles(where: Pick<ConfigLocations, "cwd" | "home">): { home: string; project: string } {
  return { home: join(where.home, "mcp.json"), project: join(where.cwd, ".mypi", "mcp.json") };
}

/** Read both files and merge them (project over home, per server name). */
export function loadMcpConfig(where: ConfigLocations): McpConfig {
  const files = configFiles(where);
  const env = where.env ?? process.env;
  const problems: ConfigProblem[] = [];
  const byName = new Map<string, ServerConfig | "disabled">();
  for (const file of where.project === false ? [files.home] : [files.home, files.project]) {
    const text = readIfPresent(file, problems);
    if (text === undefined) continue;
    const parsed = parseMcpConfig(text, { file, cwd: where.cwd, env });
    problems.push(...parsed.problems);
    for (const [name, entry] of parsed.servers) byName.set(name, entry);
  }
  const servers = [...byName.values()].filter((s): s is ServerConfig => s !== "disabled");
  servers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Two names that read the same in tool names (`a.b`, `a_b`): the later one is refused.
  const parts = new Map<string, string>();
  const kept = servers.filter((s) => {
    const first = parts.get(serverPart(s.name));
    if (first === undefined) {
      parts.set(serverPart(s.name), s.name);
      return true;
    }
    problems.push({ file: s.file, server: s.name, message: samePartProblem(s.name, first) });
    return false;
  });
  return { servers: kept, problems };
}

function readIfPresent(file: string, problems: ConfigProblem[]): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR")
      problems.push({ file, message: `cannot read it: ${errorMessage(error)}` });
    return undefined;
  }
}

const STDIO_KEYS = ["type", "command", "args", "env", "cwd", "timeoutMs", "connectTimeoutMs", "sampling", "disabled"];
const HTTP_KEYS = ["type", "url", "headers", "oauth", "timeoutMs", "connectTimeoutMs", "sampling", "disabled"];

/**
 * Parse one file's text. `servers` maps each usable entry's name to its config, or to
 * `"disabled"` (which still overrides an entry of the same name from an earlier file).
 */
export function parseMcpConfig(
  text: string,
  ctx: { file: string; cwd: string; env: Record<string, string | undefined> },
): { servers: Map<string, ServerConfig | "disabled">; problems: ConfigProblem[] } {
  const servers = new Map<string, ServerConfig | "disabled">();
  const problems: ConfigProblem[] = [];
  const { file } = ctx;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    problems.push({
      file,
      message: `not valid JSON (${errorMessage(error)}); expected { "servers": { "<name>": { "command": … } | { "url": … } } }`,
    });
    return { servers, problems };
  }
  if (!isRecord(json)) {
    problems.push({ file, message: `expected an object { "servers": { … } }, found ${describe(json)}` });
    return { servers, problems };
  }
  // "mcpServers" is what several other tools write; accepted so their files can be copied as is.
  const table = json.servers ?? json.mcpServers;
  if (table === undefined) {
    problems.push({ file, message: `no "servers" object; write { "servers": { "<name>": { … } } }` });
    return { servers, problems };
  }
  if (!isRecord(table)) {
    problems.push({ file, message: `"servers" must be an object keyed by server name, found ${describe(table)}` });
    return { servers, problems };
  }
  for (const [name, entry] of Object.entries(table)) {
    const result = parseServer(name, entry, ctx);
    if (typeof result === "string") problems.push({ file, server: name, message: result });
    else servers.set(name, result ?? "disabled");
  }
  return { servers, problems };
}

/** One entry → its config, `null` when disabled, or a problem (a string that says how to fix it). */
function parseServer(
  name: string,
  entry: unknown,
  ctx: { file: string; cwd: string; env: Record<string, string | undefined> },
): ServerConfig | null | string {
  if (name.length === 0) return `a server needs a non-empty name`;
  const badName = serverNameProblem(name);
  if (badName !== undefined) return badName;
  if (!isRecord(entry)) return `expected an object with "command" (stdio) or "url" (HTTP), found ${describe(entry)}`;
  if (entry.disabled === true) return null;
  if (entry.disabled !== undefined && entry.disabled !== false) return `"disabled" must be true or false`;

  const type = entry.type;
  if (type === "sse") return `the SSE transport is not supported; give the server's streamable HTTP endpoint as "url"`;
  if (type !== undefined && type !== "stdio" && type !== "http" && type !== "streamable-http") {
    return `"type" must be "stdio" or "http" (or left out), found ${describe(type)}`;
  }
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand === hasUrl)
    return hasCommand
      ? `give either "command" or "url", not both`
      : `give "command" (a program to start) or "url" (a streamable HTTP endpoint)`;
  if ((type === "stdio" && !hasCommand) || ((type === "http" || type === "streamable-http") && !hasUrl)) {
    return `"type": ${JSON.stringify(type)} does not match the entry (it has ${hasCommand ? '"command"' : '"url"'})`;
  }
  const allowed = hasCommand ? STDIO_KEYS : HTTP_KEYS;
  const unknown = Object.keys(entry).filter((k) => !allowed.includes(k));
  if (unknown.length)
    return `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")}; a ${hasCommand ? "stdio" : "HTTP"} server takes ${allowed.map((k) => `"${k}"`).join(", ")}`;

  const timeoutMs = optionalMs(entry.timeoutMs, "timeoutMs", DEFAULT_CALL_TIMEOUT_MS, true);
  if (typeof timeoutMs === "string") return timeoutMs;
  const connectTimeoutMs = optionalMs(entry.connectTimeoutMs, "connectTimeoutMs", DEFAULT_CONNECT_TIMEOUT_MS, false);
  if (typeof connectTimeoutMs === "string") return connectTimeoutMs;
  if (entry.sampling !== undefined && typeof entry.sampling !== "boolean" && entry.sampling !== "ask")
    return `"sampling" must be true, "ask" or false, found ${describe(entry.sampling)}`;
  const sampling =
    entry.sampling === true || entry.sampling === "ask" ? { sampling: entry.sampling as true | "ask" } : {};

  try {
    const expand = (value: string, where: string) => expandVariables(value, ctx.env, where);
    if (hasCommand) {
      if (typeof entry.command !== "string" || entry.command === "") return `"command" must be a non-empty string`;
      if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === "string")))
        return `"args" must be an array of strings`;
      if (entry.cwd !== undefined && typeof entry.cwd !== "string") return `"cwd" must be a string`;
      const env = stringRecord(entry.env, "env");
      if (typeof env === "string") return env;
      const cwd = entry.cwd === undefined ? ctx.cwd : expand(entry.cwd, "cwd");
      return {
        name,
        file: ctx.file,
        transport: "stdio",
        command: expand(entry.command, "command"),
        args: ((entry.args as string[] | undefined) ?? []).map((a, i) => expand(a, `args[${i}]`)),
        env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, expand(v, `env.${k}`)])),
        cwd: isAbsolute(cwd) ? cwd : resolve(ctx.cwd, cwd),
        timeoutMs,
        connectTimeoutMs,
        ...sampling,
      };
    }
    if (typeof entry.url !== "string") return `"url" must be a string`;
    const url = expand(entry.url, "url");
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return `"url" is not a valid URL: ${JSON.stringify(url)}`;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      return `"url" must be http:// or https://, found ${parsed.protocol}`;
    const headers = stringRecord(entry.headers, "headers");
    if (typeof headers === "string") return headers;
    const oauth = parseOAuth(entry.oauth, expand);
    if (typeof oauth === "string") return oauth;
    return {
      name,
      file: ctx.file,
      transport: "http",
      url,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, expand(v, `headers.${k}`)])),
      timeoutMs,
      connectTimeoutMs,
      ...sampling,
      ...(oauth !== undefined && { oauth }),
    };
  } catch (error) {
    return errorMessage(error);
  }
}

const OAUTH_KEYS = ["clientId", "clientSecret", "scope", "callbackPort"];

/** `"oauth": false` or `{ clientId?, clientSecret?, scope?, callbackPort? }`; strings take `${VAR}`. */
function parseOAuth(
  value: unknown,
  expand: (value: string, where: string) => string,
): OAuthSettings | false | undefined | string {
  if (value === undefined || value === false) return value;
  if (!isRecord(value))
    return `"oauth" must be false or an object with ${OAUTH_KEYS.map((k) => `"${k}"`).join(", ")}, found ${describe(value)}`;
  const unknown = Object.keys(value).filter((k) => !OAUTH_KEYS.includes(k));
  if (unknown.length)
    return `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"oauth.${k}"`).join(", ")}; "oauth" takes ${OAUTH_KEYS.map((k) => `"${k}"`).join(", ")}`;
  const settings: OAuthSettings = {};
  for (const key of ["clientId", "clientSecret", "scope"] as const) {
    const v = value[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v === "") return `"oauth.${key}" must be a non-empty string`;
    settings[key] = expand(v, `oauth.${key}`);
  }
  const port = value.callbackPort;
  if (port !== undefined) {
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
      return `"oauth.callbackPort" must be a port number (1 to 65535), found ${describe(port)}`;
    settings.callbackPort = port;
  }
  if (settings.clientSecret !== undefined && settings.clientId === undefined)
    return `"oauth.clientSecret" needs "oauth.clientId" (the client it belongs to)`;
  return settings;
}

/**
 * `${VAR}` and `${VAR:-default}` from the environment, so secrets stay out of the file. A
 * variable that is unset and has no default is an error (a header like `Bearer ` would fail later
 * and less clearly). `$$` is a literal `$`.
 */
export function expandVariables(value: string, env: Record<string, string | undefined>, where = "value"): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (match, name: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$";
      const found = env[name!];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new Error(
        `${where} uses \${${name}}, which is not set; set it in the environment or write \${${name}:-default}`,
      );
    },
  );
}

function optionalMs(value: unknown, key: string, fallback: number, zeroAllowed: boolean): number | string {
  if (value === undefined) return fallback;
  const ok = typeof value === "number" && Number.isFinite(value) && (zeroAllowed ? value >= 0 : value > 0);
  if (!ok)
    return `"${key}" must be a ${zeroAllowed ? "non-negative" : "positive"} number of milliseconds${zeroAllowed ? " (0 = no limit)" : ""}, found ${describe(value)}`;
  if ((value as number) > MAX_TIMEOUT_MS) {
    return `"${key}" must be at most ${MAX_TIMEOUT_MS} milliseconds (about 24.8 days, the longest a timer can wait)${zeroAllowed ? "; use 0 for no limit" : ""}, found ${describe(value)}`;
  }
  return value as number;
}

function stringRecord(value: unknown, key: string): Record<string, string> | string {
  if (value === undefined) return {};
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === "string"))
    return `"${key}" must be an object of strings`;
  return value as Record<string, string>;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

/**
 * An entry an extension registered (`pi.registerMcpServer`) → its config; throws what is wrong
 * with it, in the words a file's problem would use.
 */
/** Why two servers cannot both be used: their tools' names would be the same. */
export function samePartProblem(server: string, other: string): string {
  return `its tools would be named like those of server "${other}" (both begin "${serverPart(server)}__"); rename one of them`;
}

export function parseRegistered(
  entry: { name: string; extension: string; config: Record<string, unknown> },
  ctx: { cwd: string; env: Record<string, string | undefined> },
): ServerConfig {
  const parsed = parseServer(entry.name, entry.config, {
    ...ctx,
    file: `pi.registerMcpServer (extension ${entry.extension})`,
  });
  if (parsed === null)
    throw new Error(`MCP server "${entry.name}" is disabled in its entry; leave "disabled" out to add it`);
  if (typeof parsed === "string") throw new Error(`MCP server "${entry.name}": ${parsed}`);
  return parsed;
}
