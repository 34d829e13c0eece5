/**
 * What a run's host reads besides the extensions (docs/resources.md): skills, prompt templates,
 * context files and the system prompt (`runResources`), with the texts `--system-prompt` and
 * `--append-system-prompt` name, read from a file when they name one (`appendedPrompts`). Apart
 * from `run.ts` (the run's steps in order): this is what one of those steps builds, and from what.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { errnoCode, errorMessage, mypiHome } from "@mypi/kernel";
import type { CliArgs } from "../args.ts";
import type { LoadedWorkspace } from "../workspace/extension-loading.ts";
import { createHostResources, type HostResources } from "../workspace/host-resources.ts";
import type { CliIO } from "../io.ts";
import type { PackagePath } from "../workspace/resources/index.ts";
import type { WatchedRun } from "./run-command-line.ts";
import { isFile } from "../workspace/files.ts";

/** Skills, prompt templates, context files and the system prompt for this run (`host-resources.ts`). */
export function runResources(
  run: WatchedRun,
  r: { cwd: string; ws: LoadedWorkspace; args: CliArgs; append: string[]; allowedTools: readonly string[] | undefined },
): HostResources {
  const { ws, args, allowedTools } = r;
  const offeredTools = (manager = ws.loaded.manager) =>
    manager
      .effectiveTools()
      .map((t) => t.name)
      .filter((name) => !allowedTools || allowedTools.includes(name));
  return createHostResources({
    resources: {
      home: mypiHome(),
      cwd: r.cwd,
      // Project skills, templates and SYSTEM.md are project configuration, like its extensions:
      // they load only for a trusted workspace.
      project: ws.trusted,
      contextFiles: !args.noContextFiles,
      skillCommands: ws.settings.enableSkillCommands !== false,
      discoverSkills: !args.noSkills,
      discoverPrompts: !args.noPromptTemplates,
      cliSkillPaths: args.skills.map((p) => resolve(run.io.cwd, p)),
      cliPromptPaths: args.promptTemplates.map((p) => resolve(run.io.cwd, p)),
      packages: {
        skills: [...scoped(ws.globalPackages.skills, "user"), ...scoped(ws.projectPackages.skills, "project")],
        prompts: [...scoped(ws.globalPackages.prompts, "user"), ...scoped(ws.projectPackages.prompts, "project")],
      },
    },
    ...(args.systemPrompt !== undefined && { systemPrompt: args.systemPrompt }),
    append: r.append,
    tools: offeredTools,
    warn: (message) => ws.diagnostic(message),
  });
}

/** A package's skill or prompt paths, tagged with the scope of the settings file that declared them. */
function scoped(paths: readonly string[], scope: PackagePath["scope"]): PackagePath[] {
  return paths.map((path) => ({ path, scope }));
}

/**
 * `--append-system-prompt` values, and `--system-prompt`'s (Pi reads a file for both): an
 * existing file (against the shell's directory) is read, anything else is text. A string is the error.
 */
export function appendedPrompts(args: CliArgs, io: CliIO): { append: string[]; system?: string } | string {
  const read = (flag: string, value: string): { text: string } | { error: string } => {
    const path = resolve(io.cwd, value);
    if (!isFile(path)) return { text: value };
    try {
      return { text: readFileSync(path, "utf8") };
    } catch (error) {
      return {
        error: `--${flag} ${value}: cannot be read (${errnoCode(error) ?? errorMessage(error)}).`,
      };
    }
  };
  const append: string[] = [];
  for (const value of args.appendSystemPrompt) {
    const r = read("append-system-prompt", value);
    if ("error" in r) return r.error;
    append.push(r.text);
  }
  if (args.systemPrompt === undefined) return { append };
  const system = read("system-prompt", args.systemPrompt);
  return "error" in system ? system.error : { append, system: system.text };
}
