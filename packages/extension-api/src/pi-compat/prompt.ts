/**
 * Pi tools describe themselves to the system prompt as well as through their schema:
 * `promptSnippet` (one line in a list of tools) and `promptGuidelines` (bullets that apply while
 * the tool is active). The host appends them to its base system prompt whenever the active
 * tools change, so `before_agent_start` handlers see them as part of the prompt, as in Pi.
 */
import type { Tool } from "@mypi/kernel";

export interface ToolPrompt {
  snippet?: string;
  guidelines: readonly string[];
}

/** Filled by `registerTool` for Pi definitions that carry a snippet or guidelines. */
export const TOOL_PROMPTS = new WeakMap<Tool, ToolPrompt>();

/** What a Pi definition adds to the prompt, or `undefined` when it adds nothing. */
export function toolPrompt(definition: { promptSnippet?: unknown; promptGuidelines?: unknown }): ToolPrompt | undefined {
  const snippet = typeof definition.promptSnippet === "string" && definition.promptSnippet.trim() ? definition.promptSnippet.trim() : undefined;
  const guidelines = Array.isArray(definition.promptGuidelines)
    ? definition.promptGuidelines.filter((g): g is string => typeof g === "string" && g.trim() !== "").map((g) => g.trim())
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
