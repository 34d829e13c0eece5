/**
 * Skills, per the Agent Skills standard: a folder holding `SKILL.md`, whose frontmatter has a
 * `name` and a `description`. The system prompt lists names, descriptions and file paths; the
 * model reads a skill's body with `read` when a task matches (progressive disclosure), and
 * `/skill:name args` hands the body to the model at once.
 *
 * Folders are searched recursively; a folder with `SKILL.md` is one skill (what is below it is
 * its own material, not more skills). Names starting with `.` and `node_modules` are skipped.
 * A skill that cannot be used (malformed frontmatter, no description, a name with spaces) is a
 * warning and is left out; a name that breaks the standard's rules otherwise is a warning and
 * loads. When two skills share a name the first found wins (with a warning).
 */
import { errorMessage } from "@mypi/kernel";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseFrontmatter } from "@mypi/extension-api";
import { collectByName } from "./collect.ts";

export interface Skill {
  name: string;
  description: string;
  /** The `SKILL.md` file. */
  path: string;
  /** The skill's folder: its relative paths resolve here. */
  baseDir: string;
  /** `disable-model-invocation: true`: not listed in the system prompt, still `/skill:name`. */
  disableModelInvocation: boolean;
  scope: "user" | "project" | "temporary";
}

export interface SkillSource {
  /** A folder to search, or one `SKILL.md` file (or a skill folder). */
  path: string;
  scope: Skill["scope"];
}

const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
/** Lowercase letters, digits and single hyphens between them (the standard's rule). */
const VALID_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** How deep a skills folder is searched: skills sit one or two levels down, not in whole trees. */
const MAX_DEPTH = 6;

export function loadSkills(sources: readonly SkillSource[], warn: (message: string) => void): Skill[] {
  return collectByName({
    sources,
    filesOf: (source) => skillFiles(source.path),
    read: (file, source) => readSkill(file, source.scope, warn),
    clash: (skill, first) =>
      `skill ${skill.path}: the name "${skill.name}" is taken by ${first.path}; the first one is kept`,
    warn,
  });
}

/** The `SKILL.md` files under `path`, sorted by path (the same on every machine). */
function skillFiles(path: string): string[] {
  const kind = kindOf(path);
  if (kind === "file") return [path];
  if (kind !== "dir") return [];
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    const own = join(dir, "SKILL.md");
    if (kindOf(own) === "file") return void found.push(own);
    if (depth >= MAX_DEPTH) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const child = join(dir, name);
      if (kindOf(child) === "dir") walk(child, depth + 1);
    }
  };
  walk(path, 0);
  return found;
}

function readSkill(file: string, scope: Skill["scope"], warn: (message: string) => void): Skill | undefined {
  let frontmatter: Record<string, unknown>;
  try {
    frontmatter = parseFrontmatter(readFileSync(file, "utf8")).frontmatter;
  } catch (error) {
    warn(`skill ${file}: ${errorMessage(error)}; not loaded`);
    return undefined;
  }
  const baseDir = dirname(file);
  const declared = frontmatter.name;
  let name = typeof declared === "string" && declared.trim() !== "" ? declared.trim() : basename(baseDir);
  const description = typeof frontmatter.description === "string" ? frontmatter.description.trim() : "";
  if (description === "") {
    warn(`skill ${file}: no description in its frontmatter (the model picks skills by it); not loaded`);
    return undefined;
  }
  if (/\s/.test(name)) {
    // A display name (Claude Code names such a skill's command after its folder): the folder names it here too.
    const folder = basename(baseDir);
    if (/\s/.test(folder)) {
      warn(
        `skill ${file}: the name "${name}" has spaces, and so has its folder, so /skill:${folder} cannot be typed; not loaded`,
      );
      return undefined;
    }
    warn(`skill ${file}: the name "${name}" has spaces and cannot be typed; it is /skill:${folder}, after its folder`);
    name = folder;
  }
  if (name.length > MAX_NAME || !VALID_NAME.test(name)) {
    warn(
      `skill ${file}: the name "${name}" should be at most ${MAX_NAME} lowercase letters, digits and single hyphens (Agent Skills)`,
    );
  }
  if (description.length > MAX_DESCRIPTION)
    warn(`skill ${file}: the description is longer than ${MAX_DESCRIPTION} characters`);
  return {
    name,
    description,
    path: file,
    baseDir,
    disableModelInvocation: frontmatter["disable-model-invocation"] === true,
    scope,
  };
}

/** What `/skill:name args` sends: the skill's body, where it lives, then the user's words. */
export function expandSkill(skill: Skill, args: string): string {
  let body: string;
  try {
    body = parseFrontmatter(readFileSync(skill.path, "utf8")).body.trim();
  } catch (error) {
    // Changed or removed since it was listed: the model is told, the run goes on.
    body = `(The skill's file could not be read: ${errorMessage(error)}.)`;
  }
  const block = `<skill name="${skill.name}" location="${skill.path}">\nPaths in this skill are relative to ${skill.baseDir}.\n\n${body}\n</skill>`;
  return args.trim() === "" ? block : `${block}\n\n${args.trim()}`;
}

/** The system prompt's list of skills the model may load itself; empty when there are none. */
export function skillsPromptSection(skills: readonly Skill[]): string {
  const listed = skills.filter((s) => !s.disableModelInvocation);
  if (listed.length === 0) return "";
  return [
    "# Skills",
    "",
    "A skill holds instructions for one kind of task. When a task matches a skill's description, read its file with the read tool",
    "before you start, and follow it; paths inside a skill are relative to the skill's folder.",
    "",
    ...listed.map((s) => `- ${s.name}: ${oneLine(s.description)} (file: ${s.path})`),
  ].join("\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ");
}

function kindOf(path: string): "file" | "dir" | undefined {
  try {
    const st = statSync(path); // follows links: a linked skill folder counts
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}
