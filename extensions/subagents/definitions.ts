/**
 * Agent definitions (docs/subagents.md#agent-files): Markdown files with YAML front matter — name,
 * description, tools, model, thinking level — whose body is the child's system prompt, in the
 * format of Claude Code's `agents/*.md`, so those files work as they are. Read from
 * `~/.mypi/agents/`, and in a trusted workspace from `.claude/agents/` and `.mypi/agents/`; a
 * later folder's agent replaces an earlier one of the same name (the workspace's win, mypi's own
 * folder last). Other extensions' agent files (`sources`, bus.ts: installed Claude Code plugins')
 * are read the same way and named `<namespace>:<name>`, which no folder's agent can be named.
 *
 * Claude Code's tool names are mapped to mypi's (`Bash` → `bash`, `Glob` → `find`, …; its MCP
 * tools `mcp__server__tool` → `server__tool`); its model aliases (`sonnet`, `opus`, `haiku`) are
 * looked up like any model name, and run on the parent's model when the host knows none of them.
 * A field mypi does not read is reported once, never a failure.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseFrontmatter } from "@mypi/extension-api";
import { errnoCode, errorMessage, THINKING_LEVELS, type ThinkingLevel } from "@mypi/kernel";
import type { AgentSource } from "./bus.ts";

export interface AgentDefinition {
  name: string;
  description: string;
  /** The child's system prompt: the file's body. */
  systemPrompt: string;
  /** mypi tool names (patterns with `*` allowed); absent: every tool of the parent. */
  tools?: string[];
  /** Tool names taken away from `tools` (or from the parent's). */
  disallowedTools?: string[];
  /** A model name for the host's lookup, or a Claude Code alias; absent or `inherit`: the parent's. */
  model?: string;
  thinking?: ThinkingLevel;
  maxTurns?: number;
  file: string;
  /** Which folder it came from, or another extension's source (`plugin`). */
  scope: "user" | "project" | "plugin";
  /** A source's agent: where it comes from (`plugin formatter`). */
  origin?: string;
  /** Front-matter fields read but not honoured, and unknown ones (reported once per file). */
  ignoredFields: string[];
}

export interface AgentDiscovery {
  agents: AgentDefinition[];
  /** One line per file that could not be used, or field that is not read. */
  problems: string[];
}

interface DiscoverOptions {
  /** mypi's home (`$MYPI_HOME`, default `~/.mypi`). */
  home: string;
  cwd: string;
  /** Whether the workspace's own folders may be read (project trust). */
  trusted: boolean;
  /** Agent files other extensions offer (bus.ts), read before the folders. */
  sources?: readonly AgentSource[];
}

/** Claude Code's tool names → mypi's. A name not listed is kept as written (mypi's own names work as they are). */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = Object.freeze({
  Bash: "bash",
  Read: "read",
  Write: "write",
  Edit: "edit",
  MultiEdit: "edit",
  Grep: "grep",
  Glob: "find",
  LS: "ls",
  Task: "agent",
  Agent: "agent",
});

/** Claude Code's model aliases: when the host cannot look them up, the child runs on its parent's model. */
export const CLAUDE_MODEL_ALIASES: ReadonlySet<string> = new Set(["sonnet", "opus", "haiku"]);

/** Front-matter fields of Claude Code's agent files that mypi accepts and does not act on. */
const NOT_HONOURED = new Set([
  "permissionMode",
  "skills",
  "mcpServers",
  "hooks",
  "memory",
  "background",
  "isolation",
  "initialPrompt",
]);
/** Fields mypi reads, and `color`, which only paints Claude Code's screen. */
const KNOWN = new Set([
  "name",
  "description",
  "tools",
  "disallowedTools",
  "model",
  "thinking",
  "effort",
  "maxTurns",
  "color",
]);
/** Claude Code's `effort` values → mypi's thinking levels. */
const EFFORTS: Readonly<Record<string, ThinkingLevel>> = {
  low: "low",
  medium: "medium",
  high: "high",
  max: "xhigh",
  xhigh: "xhigh",
  minimal: "minimal",
  off: "off",
};
const NAME = /^[A-Za-z0-9_.-]+$/;

/** The folders agents are read from, in order (a later one's agent replaces an earlier one's). */
export function agentFolders(o: DiscoverOptions): { dir: string; scope: AgentDefinition["scope"] }[] {
  const folders: { dir: string; scope: AgentDefinition["scope"] }[] = [{ dir: join(o.home, "agents"), scope: "user" }];
  if (o.trusted)
    folders.push(
      { dir: join(o.cwd, ".claude", "agents"), scope: "project" },
      { dir: join(o.cwd, ".mypi", "agents"), scope: "project" },
    );
  return folders;
}

/** Every agent of the folders, by name (later folders win), with what could not be used. */
export function discoverAgents(o: DiscoverOptions): AgentDiscovery {
  const byName = new Map<string, AgentDefinition>();
  const problems: string[] = [];
  for (const source of o.sources ?? []) {
    if (!NAME.test(source.namespace)) {
      problems.push(
        `${source.origin}: agents cannot be named under "${source.namespace}" (letters, digits, "-", "_" and "." only); they are not used`,
      );
      continue;
    }
    for (const file of source.files) {
      const parsed = readAgentFile(file, "plugin");
      if ("problem" in parsed) {
        problems.push(`${source.origin}: ${parsed.problem}`);
        continue;
      }
      const refused = parsed.ignoredFields.filter((f) => source.refused?.[f] !== undefined);
      const rest = parsed.ignoredFields.filter((f) => source.refused?.[f] === undefined);
      for (const field of refused)
        problems.push(
          `agent file ${file}: ${field} is ignored for ${source.origin}'s agents (${source.refused![field]})`,
        );
      if (rest.length > 0)
        problems.push(
          `agent file ${file}: ${rest.join(", ")} ${rest.length === 1 ? "is" : "are"} not read by mypi (reported once)`,
        );
      const name = `${source.namespace}:${parsed.name}`;
      byName.set(name, { ...parsed, name, origin: source.origin });
    }
  }
  for (const { dir, scope } of agentFolders(o)) {
    for (const file of markdownFiles(dir)) {
      const parsed = readAgentFile(file, scope);
      if ("problem" in parsed) {
        problems.push(parsed.problem);
        continue;
      }
      if (parsed.ignoredFields.length > 0)
        problems.push(
          `agent file ${file}: ${parsed.ignoredFields.join(", ")} ${parsed.ignoredFields.length === 1 ? "is" : "are"} not read by mypi (reported once)`,
        );
      byName.set(parsed.name, parsed);
    }
  }
  return { agents: [...byName.values()], problems };
}

/** The `*.md` files directly in `dir`, sorted; none when it does not exist. */
function markdownFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith(".md"))
    .sort()
    .map((n) => join(dir, n))
    .filter((f) => {
      try {
        return statSync(f).isFile();
      } catch {
        return false;
      }
    });
}

/** One agent file, or why it cannot be used. */
export function readAgentFile(file: string, scope: AgentDefinition["scope"]): AgentDefinition | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return {
      problem: `agent file ${file}: cannot be read (${errnoCode(error) ?? errorMessage(error)})`,
    };
  }
  return parseAgent(text, file, scope);
}

export function parseAgent(
  text: string,
  file: string,
  scope: AgentDefinition["scope"],
): AgentDefinition | { problem: string } {
  let frontmatter: Record<string, unknown>;
  let body: string;
  try {
    ({ frontmatter, body } = parseFrontmatter(text));
  } catch (error) {
    return { problem: `agent file ${file}: ${errorMessage(error)}; it is not used` };
  }
  const fail = (what: string) => ({ problem: `agent file ${file}: ${what}; it is not used` });
  const name = frontmatter.name ?? basename(file, ".md");
  if (typeof name !== "string" || !NAME.test(name))
    return fail(`name ${JSON.stringify(name)} is not letters, digits, "-", "_" and "."`);
  const description = frontmatter.description;
  if (typeof description !== "string" || description.trim() === "")
    return fail("it has no description (the model picks an agent by its description)");
  const tools = toolList(frontmatter.tools);
  if (tools === null) return fail("tools should be a comma-separated list or a YAML list of tool names");
  const disallowed = toolList(frontmatter.disallowedTools);
  if (disallowed === null) return fail("disallowedTools should be a comma-separated list or a YAML list of tool names");
  const model = frontmatter.model;
  if (model !== undefined && typeof model !== "string") return fail("model should be a model name, or inherit");
  const thinking = thinkingOf(frontmatter);
  if (thinking === null)
    return fail(`thinking / effort should be one of ${THINKING_LEVELS.join(", ")} (effort: low, medium, high, max)`);
  const maxTurns = frontmatter.maxTurns;
  if (maxTurns !== undefined && !(typeof maxTurns === "number" && Number.isInteger(maxTurns) && maxTurns > 0))
    return fail("maxTurns should be a whole number above 0");
  const ignoredFields = Object.keys(frontmatter)
    .filter((k) => !KNOWN.has(k))
    .map((k) => (NOT_HONOURED.has(k) ? k : `${k} (unknown)`));
  return {
    name,
    description: description.trim(),
    systemPrompt: body.trim(),
    ...(tools !== undefined && { tools }),
    ...(disallowed !== undefined && { disallowedTools: disallowed }),
    ...(model !== undefined && model !== "inherit" && { model }),
    ...(thinking !== undefined && { thinking }),
    ...(maxTurns !== undefined && { maxTurns: maxTurns as number }),
    file,
    scope,
    ignoredFields,
  };
}

/** `Read, Grep` or `[Read, Grep]` as mypi tool names; `undefined` when absent, `null` when malformed. */
function toolList(value: unknown): string[] | undefined | null {
  if (value === undefined || value === null) return undefined;
  const items =
    typeof value === "string"
      ? value.split(",")
      : Array.isArray(value) && value.every((v) => typeof v === "string")
        ? (value as string[])
        : null;
  if (items === null) return null;
  return [
    ...new Set(
      items
        .map((t) => t.trim())
        .filter((t) => t !== "")
        .map(mypiToolName),
    ),
  ];
}

/** A tool name as Claude Code writes it (`Glob`, `Agent(explorer)`, `mcp__github__create_issue`) → mypi's. */
export function mypiToolName(name: string): string {
  const bare = name.replace(/\(.*\)$/, "").trim();
  const mcp = /^mcp__([^_].*?)__(.+)$/.exec(bare);
  if (mcp) return `${mcp[1]}__${mcp[2]}`;
  return CLAUDE_TOOL_NAMES[bare] ?? bare;
}

/** Pi's `thinking` or Claude Code's `effort`; `undefined` when neither, `null` when malformed. */
function thinkingOf(frontmatter: Record<string, unknown>): ThinkingLevel | undefined | null {
  const value = frontmatter.thinking ?? frontmatter.effort;
  if (value === undefined) return undefined;
  if (typeof value !== "string") return null;
  const level = value.trim().toLowerCase();
  if ((THINKING_LEVELS as readonly string[]).includes(level)) return level as ThinkingLevel;
  return EFFORTS[level] ?? null;
}
