/**
 * What mypi reads around the loop besides extensions: context files, `SYSTEM.md` /
 * `APPEND_SYSTEM.md`, skills and prompt templates (docs/resources.md). `loadResources` finds
 * them; the result expands `/skill:name` and `/template` prompts and lists their commands.
 *
 * Where they come from, in order (the first of two same-named skills or templates wins):
 *   $MYPI_HOME/{skills,prompts}, ~/.agents/skills;
 *   project: <cwd>/.mypi/{skills,prompts}, .agents/skills from the workspace up to its repository root;
 *   the settings' `skills` / `prompts` paths (global ones against $MYPI_HOME, project ones against <cwd>/.mypi);
 *   the skills and prompts of installed packages (global packages, then the trusted workspace's);
 *   paths extensions return from `resources_discover` (against the workspace).
 * The project's skills, templates and system-prompt files are project configuration: `project:
 * false` (a workspace whose project code is not trusted) leaves them out, as Pi does. Context
 * files are read either way.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { CommandInfo } from "@mypi/extension-api";
import { parseSlashCommand } from "@mypi/extension-api";
import { loadContextFiles, readOptionalFile, type ContextFile } from "./context-files.ts";
import { expandTemplate, loadPromptTemplates, type PromptSource, type PromptTemplate } from "./prompts.ts";
import { expandSkill, loadSkills, type Skill, type SkillSource } from "./skills.ts";
import { readSettingsFile } from "../settings.ts";

export interface ResourceOptions {
  home: string;
  cwd: string;
  /** Read the project's skills, templates and system-prompt files (false: an untrusted workspace). */
  project: boolean;
  contextFiles: boolean;
  /** Register skills as `/skill:name` in the command lists (the `enableSkillCommands` setting); typing one works either way. */
  skillCommands: boolean;
  /** Installed packages' `skills` / `prompts` (packages/load.ts), already narrowed by their declarations. */
  packages?: { skills: readonly PackagePath[]; prompts: readonly PackagePath[] };
  /** `false` (`--no-skills`): only `cliSkillPaths` and what extensions add are read. Default true. */
  discoverSkills?: boolean;
  /** `false` (`--no-prompt-templates`): only `cliPromptPaths` and what extensions add. Default true. */
  discoverPrompts?: boolean;
  /** `--skill` / `--prompt-template` paths (absolute), read before all others. */
  cliSkillPaths?: readonly string[];
  cliPromptPaths?: readonly string[];
  /** From `resources_discover`. */
  extraSkillPaths?: readonly string[];
  extraPromptPaths?: readonly string[];
}

/** A package's skill or prompt path, with the scope of the settings file that declared the package. */
export interface PackagePath {
  path: string;
  scope: "user" | "project";
}

export interface Resources {
  contextFiles: ContextFile[];
  /** `SYSTEM.md`: replaces the default prompt (the project's wins over `$MYPI_HOME`'s). */
  systemFile?: ContextFile;
  /** `APPEND_SYSTEM.md`: added after it (likewise one of the two). */
  appendFile?: ContextFile;
  skills: Skill[];
  prompts: PromptTemplate[];
  /** One line each, for stderr. */
  warnings: string[];
  /** `/skill:name args` or `/template args` → the text the model receives; undefined = not one. */
  expand(text: string): string | undefined;
  /** The prompt and skill commands, as `get_commands` and `/help` list them. */
  commands(): CommandInfo[];
}

export function loadResources(options: ResourceOptions): Resources {
  const warnings: string[] = [];
  const warn = (message: string) => void warnings.push(message);
  const projectDir = join(options.cwd, ".mypi");
  const settingsPaths = settingsResourcePaths(options);

  // As Pi: paths given on the command line come first (and alone with --no-skills / --no-prompt-templates).
  const cli = (paths: readonly string[] | undefined) =>
    (paths ?? []).map((path) => ({ path, scope: "temporary" as const }));
  const skillSources: SkillSource[] = [
    ...cli(options.cliSkillPaths),
    ...(options.discoverSkills === false
      ? []
      : [
          { path: join(options.home, "skills"), scope: "user" as const },
          { path: join(homedir(), ".agents", "skills"), scope: "user" as const },
          ...(options.project
            ? [
                { path: join(projectDir, "skills"), scope: "project" as const },
                ...agentsSkillFolders(options.cwd).map((path) => ({ path, scope: "project" as const })),
              ]
            : []),
          ...settingsPaths.skills,
          ...packagePaths(options.packages?.skills ?? [], options.project),
        ]),
    ...(options.extraSkillPaths ?? []).map((p) => ({ path: resolve(options.cwd, p), scope: "temporary" as const })),
  ];
  const promptSources: PromptSource[] = [
    ...cli(options.cliPromptPaths),
    ...(options.discoverPrompts === false
      ? []
      : [
          { path: join(options.home, "prompts"), scope: "user" as const },
          ...(options.project ? [{ path: join(projectDir, "prompts"), scope: "project" as const }] : []),
          ...settingsPaths.prompts,
          ...packagePaths(options.packages?.prompts ?? [], options.project),
        ]),
    ...(options.extraPromptPaths ?? []).map((p) => ({ path: resolve(options.cwd, p), scope: "temporary" as const })),
  ];
  const skills = loadSkills(skillSources, warn);
  const prompts = loadPromptTemplates(promptSources, warn);
  const systemFile =
    readOptional(options.project ? join(projectDir, "SYSTEM.md") : undefined, warn) ??
    readOptional(join(options.home, "SYSTEM.md"), warn);
  const appendFile =
    readOptional(options.project ? join(projectDir, "APPEND_SYSTEM.md") : undefined, warn) ??
    readOptional(join(options.home, "APPEND_SYSTEM.md"), warn);
  const contextFiles = options.contextFiles
    ? loadContextFiles({ home: options.home, cwd: options.cwd, onWarning: warn })
    : [];

  const skillByName = new Map(skills.map((s) => [s.name, s]));
  const promptByName = new Map(prompts.map((p) => [p.name, p]));
  return {
    contextFiles,
    ...(systemFile && { systemFile }),
    ...(appendFile && { appendFile }),
    skills,
    prompts,
    warnings,
    expand(text) {
      const slash = parseSlashCommand(text);
      if (!slash) return undefined;
      if (slash.name.startsWith("skill:")) {
        const skill = skillByName.get(slash.name.slice("skill:".length));
        return skill && expandSkill(skill, slash.args);
      }
      const template = promptByName.get(slash.name);
      return template && expandTemplate(template, slash.args);
    },
    commands() {
      const info = (path: string, scope: Skill["scope"]) => ({
        path,
        sourceInfo: { path, source: "local" as const, scope, origin: "top-level" as const },
      });
      return [
        ...prompts.map(
          (p): CommandInfo => ({
            name: p.name,
            description: p.description,
            source: "prompt",
            ...(p.argumentHint !== undefined && { argumentHint: p.argumentHint }),
            ...info(p.path, p.scope),
          }),
        ),
        ...(options.skillCommands
          ? skills.map(
              (s): CommandInfo => ({
                name: `skill:${s.name}`,
                description: s.description,
                source: "skill",
                ...info(s.path, s.scope),
              }),
            )
          : []),
      ];
    },
  };
}

/**
 * The settings' `skills` and `prompts` lists of each file, each resolved against its own
 * folder (`$MYPI_HOME` or `<cwd>/.mypi`), all combined — not the merged object, where the
 * project's list would replace the user's.
 */
function settingsResourcePaths(options: ResourceOptions): { skills: SkillSource[]; prompts: PromptSource[] } {
  const out = { skills: [] as SkillSource[], prompts: [] as PromptSource[] };
  const files = [
    { dir: options.home, scope: "user" as const },
    ...(options.project ? [{ dir: join(options.cwd, ".mypi"), scope: "project" as const }] : []),
  ];
  for (const { dir, scope } of files) {
    const read = readSettingsFile(join(dir, "settings.json"));
    if (!read || "error" in read) continue; // checked (and reported) when the settings were loaded
    const at = (p: string) =>
      p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : isAbsolute(p) ? p : resolve(dir, p);
    for (const p of read.value.skills ?? []) out.skills.push({ path: at(p), scope });
    for (const p of read.value.prompts ?? []) out.prompts.push({ path: at(p), scope });
  }
  return out;
}

/** The package paths that load: a workspace package's only once the workspace is trusted. */
function packagePaths(paths: readonly PackagePath[], project: boolean): PackagePath[] {
  return paths.filter((p) => p.scope === "user" || project);
}

/** `.agents/skills` in the workspace and its parents, up to the repository root (a folder with `.git`), nearest first. */
function agentsSkillFolders(cwd: string): string[] {
  const dirs: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    dirs.push(join(dir, ".agents", "skills"));
    if (existsSync(join(dir, ".git"))) return dirs;
    if (dirname(dir) === dir) return dirs.slice(0, 1); // no repository: only the workspace's own
  }
}

function readOptional(path: string | undefined, warn: (message: string) => void): ContextFile | undefined {
  return path === undefined ? undefined : readOptionalFile(path, warn);
}
