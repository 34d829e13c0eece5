/**
 * Tool names: `<server>__<tool>`, fitted to what model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`).
 *
 * The name says which server a tool is of, whatever the servers call their tools: a server name
 * (as it appears in tool names) may not contain `__` nor end with `_`, and is at most 40
 * characters, so the first `__` of a tool name ends the server's part and a shortened name keeps
 * it whole; two servers whose names read the same there (`a.b`, `a_b`) are refused as well
 * (`serverNameProblem`, checked where servers are configured or registered). Otherwise server
 * `a` with a tool `b__c` would take `a__b__c` from server `a__b`'s tool `c`, and the rules
 * written for one would apply to the other. (Claude Code, which names tools
 * `mcp__<server>__<tool>`, replaces characters the same way but takes `__` in server names.)
 *
 * - Characters outside the set become `_`.
 * - A name over 64 characters keeps its first 55 and ends in `_` plus 8 hex digits of a SHA-256
 *   of the original server and tool names, so it is the same on every run and machine.
 * - Two different tools that would get the same name (`a.b` and `a_b`, or server `x` tool `y__z`
 *   and server `x__y` tool `z`): the one named second gets the hashed form. A name, once given
 *   in a session, stays with its tool — a refresh never moves a name to another tool.
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;
const HASH_LENGTH = 8;
/** Past this, a shortened tool name (its first 55 characters) could cut into the server's part. */
const MAX_SERVER_NAME = 40;

/** The server's part of its tools' names. */
export function serverPart(server: string): string {
  return sanitize(server);
}

/** Why `server` cannot name a server's tools unambiguously, or undefined. */
export function serverNameProblem(server: string): string | undefined {
  const part = sanitize(server);
  const suggestion = part.replace(/_+/g, "_").replace(/^_|_$/g, "").slice(0, MAX_SERVER_NAME) || "server";
  if (part.includes("__") || part.endsWith("_")) {
    return `a server name may not contain "__" or end with "_" (tools are named <server>__<tool>, and this server's could pass for another's); rename it, e.g. "${suggestion}"`;
  }
  if (part.length > MAX_SERVER_NAME)
    return `a server name may have at most ${MAX_SERVER_NAME} characters (it begins each of its tools' names); rename it, e.g. "${suggestion}"`;
  return undefined;
}

/** The name a server's tool gets when nothing collides with it. */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${sanitize(server)}__${sanitize(tool)}`;
  return plain.length <= MAX_TOOL_NAME ? plain : hashedName(server, tool);
}

/** The collision-proof form: a prefix of the plain name, `_`, 8 hex digits. */
export function hashedName(server: string, tool: string, salt = ""): string {
  const plain = `${sanitize(server)}__${sanitize(tool)}`;
  const hash = createHash("sha256").update(`${server}\u0000${tool}${salt}`).digest("hex").slice(0, HASH_LENGTH);
  return `${plain.slice(0, MAX_TOOL_NAME - HASH_LENGTH - 1)}_${hash}`;
}

function sanitize(part: string): string {
  return part.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/** Gives each (server, tool) a name for the whole session; never reuses a name for another tool. */
export class ToolNamer {
  readonly #byKey = new Map<string, string>();
  readonly #taken = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.#taken.add(name);
  }

  nameFor(server: string, tool: string): string {
    const key = `${server}\u0000${tool}`;
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    let name = mcpToolName(server, tool);
    for (let n = 0; this.#taken.has(name); n++) name = hashedName(server, tool, n === 0 ? "" : `#${n}`);
    this.#byKey.set(key, name);
    this.#taken.add(name);
    return name;
  }
}
