/**
 * The system prompt: the default text (or `SYSTEM.md`, which replaces it), then `APPEND_SYSTEM.md`
 * and each `--append-system-prompt`, then the context files (outermost first), then the skills
 * the model may load. `--system-prompt` replaces all of it. Extensions may still change it per
 * run in `before_agent_start`.
 */
import type { Resources } from "./resources/index.ts";
import { skillsPromptSection } from "./resources/skills.ts";

/** The default text. Short on purpose: the tools describe themselves. */
export function defaultSystemPrompt(options: { cwd: string; tools: readonly string[]; date?: Date }): string {
  const date = (options.date ?? new Date()).toISOString().slice(0, 10);
  const tools = options.tools.length ? options.tools.join(", ") : "none";
  return [
    "You are mypi, a coding agent working in a software project on the user's machine.",
    `Workspace: ${options.cwd}. Today: ${date}. Tools: ${tools}.`,
    "Look before you change: read the relevant files first. Make the smallest change that solves the task,",
    "check it when you can (run the tests or the program), and say briefly what you did.",
    "When a tool call is blocked by a policy, do not try to get around it: take another way or tell the user.",
  ].join("\n");
}

interface SystemPromptOptions {
  cwd: string;
  /** The tools the model is offered (after `--tools`). */
  tools: readonly string[];
  resources: Pick<Resources, "systemFile" | "appendFile" | "contextFiles" | "skills">;
  /** `--append-system-prompt` values, in order (files already read). */
  append?: readonly string[];
  date?: Date;
}

export function buildSystemPrompt(options: SystemPromptOptions): string {
  const { resources } = options;
  const parts = [resources.systemFile?.content.trim() ?? defaultSystemPrompt(options)];
  if (resources.appendFile) parts.push(resources.appendFile.content.trim());
  for (const text of options.append ?? []) parts.push(text.trim());
  if (resources.contextFiles.length > 0) {
    parts.push(
      [
        "# Project context",
        "",
        "Instructions from context files, the most general first: a later file refines an earlier one.",
        ...resources.contextFiles.map((f) => `\n## ${f.path}\n\n${f.content.trim()}`),
      ].join("\n"),
    );
  }
  // Listed only when the model can read them; `/skill:name` hands over the body either way.
  const skills = options.tools.includes("read") ? skillsPromptSection(resources.skills) : "";
  if (skills) parts.push(skills);
  return parts.filter((p) => p !== "").join("\n\n");
}
