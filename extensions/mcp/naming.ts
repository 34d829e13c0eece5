/**
 * Tool names: `<server>__<tool>`, fitted to what model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`).
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
