/**
 * Pi tools describe themselves to the system prompt as well as through their schema:
 * `promptSnippet` (one line in a list of tools) and `promptGuidelines` (bullets that apply while
 * the tool is active). The host appends them to its base system prompt whenever the active
 * tools change, so `before_agent_start` handlers see them as part of the prompt, as in Pi.
 */
import type { Tool } from "@mypi/kernel";

interface ToolPrompt {
  snippet?: string;
  guidelines: readonly string[];
}

/** Filled by `registerTool` for Pi definitions that carry a snippet or guidelines. */
export const TOOL_PROMPTS = new WeakMap<Tool, ToolPrompt>();

/** What a Pi definition adds to the prompt, or `undefined` when it adds nothing. */
export function toolPrompt(definition: {
  promptSnippet?: unknown;
  promptGuidelines?: unknown;
}): ToolPrompt | undefined {
  const snippet =
    typeof definition.promptSnippet === "string" && definition.promptSnippet.trim()
      ? definition.promptSnippet.trim()
      : undefined;
  const guidelines = Array.isArray(definition.promptGuidelines)
    ? definition.promptGuidelines
        .filter((g): g is string => typeof g === "string" && g.trim() !== "")
        .map((g) => g.trim())
    : [];
  if (snippet === undefined && guidelines.length === 0) return undefined;
  return snippet === undefined ? { guidelines } : { snippet, guidelines };
}

/** The section for the active tools (`""` when none has a snippet or guidelines). */
export function toolPromptSection(active: readonly Tool[]): string {
  const snippets: string[] = [];
  const guidelines: string[] = [];
  for (const tool of active) {
    const prompt = TOOL_PROMPTS.get(tool);
    if (!prompt) continue;
    if (prompt.snippet !== undefined) snippets.push(`- ${tool.name}: ${prompt.snippet}`);
    for (const g of prompt.guidelines) guidelines.push(`- ${g}`);
  }
  let section = "";
  if (snippets.length) section += `\n\nExtension tools:\n${snippets.join("\n")}`;
  if (guidelines.length) section += `\n\nTool guidelines:\n${guidelines.join("\n")}`;
  return section;
}

/**
 * Pi 1.x's `systemPromptOptions` (on `before_agent_start`, and command ctx's
 * `getSystemPromptOptions()`): what the prompt is built from, as far as mypi has it — the
 * workspace, the active tools and the snippets and guidelines of Pi tools. mypi builds its
 * prompt itself (docs/resources.md), so the collections Pi fills from its own resources are
 * empty, and changing the object changes nothing: a handler changes the prompt by returning
 * `systemPrompt`.
 */
interface PiSystemPromptOptions {
  cwd: string;
  selectedTools: string[];
  hiddenTools: string[];
  toolSnippets: Record<string, string>;
  toolGuidelines: Record<string, string[]>;
  promptGuidelines: string[];
  appendSystemPrompt: string;
  sections: Record<string, string>;
  contextFiles: { path: string; content: string }[];
  skills: unknown[];
}

/** `active`: the names of the active tools (the host's too); `tools`: the extensions' tools. */
export function systemPromptOptions(
  cwd: string,
  active: readonly string[],
  tools: readonly Tool[],
): PiSystemPromptOptions {
  const toolSnippets: Record<string, string> = {};
  const toolGuidelines: Record<string, string[]> = {};
  for (const tool of tools) {
    if (!active.includes(tool.name)) continue;
    const prompt = TOOL_PROMPTS.get(tool);
    if (prompt?.snippet !== undefined) toolSnippets[tool.name] = prompt.snippet;
    if (prompt?.guidelines.length) toolGuidelines[tool.name] = [...prompt.guidelines];
  }
  return {
    cwd,
    selectedTools: [...active],
    hiddenTools: [],
    toolSnippets,
    toolGuidelines,
    promptGuidelines: [],
    appendSystemPrompt: "",
    sections: {},
    contextFiles: [],
    skills: [],
  };
}
