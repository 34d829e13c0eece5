/**
 * Keeps a host's system prompt, prompt expansion and resource commands in step with the files
 * (docs/resources.md): built from what is on disk, then — once the extensions have seen
 * `session_start` — again with the paths they return from `resources_discover`, and again on
 * every reload (a skill edited in the meantime is read anew). Warnings are printed once each.
 */
import type { ExtensionHost, ExtensionManager } from "@mypi/extension-api";
import { loadResources, type ResourceOptions, type Resources } from "./resources/index.ts";
import { buildSystemPrompt } from "./system-prompt.ts";

interface HostResourcesOptions {
  resources: Omit<ResourceOptions, "extraSkillPaths" | "extraPromptPaths">;
  /** `--system-prompt`: the whole prompt, fixed (no context files, no skills). */
  systemPrompt?: string;
  /** `--append-system-prompt` texts. */
  append: readonly string[];
  /**
   * The tools the model is offered, when the prompt is built: those of `manager` when given (the
   * host being refreshed: a new session's host has its own), else the first host's.
   */
  tools: (manager?: ExtensionManager) => string[];
  warn: (message: string) => void;
}

export interface HostResources {
  readonly current: Resources;
  /** For `HostOptions.expandPrompt`: `/skill:name` and `/template` prompts. */
  expand(text: string): string | undefined;
  systemPrompt(): string;
  /** Read the files again, with the paths extensions returned from `resources_discover`. */
  update(extra: { skillPaths?: string[]; promptPaths?: string[] }): Resources;
  /** After `host.start()` or `host.reload()`: ask the extensions, read the files again, update the host. */
  refresh(host: ExtensionHost, reason: "startup" | "reload"): Promise<void>;
}

export function createHostResources(options: HostResourcesOptions): HostResources {
  const said = new Set<string>();
  const load = (extra: { skillPaths?: string[]; promptPaths?: string[] }) => {
    const loaded = loadResources({
      ...options.resources,
      extraSkillPaths: extra.skillPaths ?? [],
      extraPromptPaths: extra.promptPaths ?? [],
    });
    for (const warning of loaded.warnings) {
      if (said.has(warning)) continue;
      said.add(warning);
      options.warn(warning);
    }
    return loaded;
  };
  let current = load({});
  const systemPrompt = (manager?: ExtensionManager) =>
    options.systemPrompt ??
    buildSystemPrompt({
      cwd: options.resources.cwd,
      tools: options.tools(manager),
      resources: current,
      append: options.append,
    });
  return {
    get current() {
      return current;
    },
    expand: (text) => current.expand(text),
    systemPrompt: () => systemPrompt(),
    update: (extra) => (current = load(extra)),
    async refresh(host, reason) {
      current = load(await host.discoverResources(reason));
      host.manager.setResourceCommands(current.commands());
      host.setSystemPrompt(systemPrompt(host.manager));
    },
  };
}
