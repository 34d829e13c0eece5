/**
 * A plugin's `commands/*.md` as slash commands: `/plugin:command args` (and `/command` where no
 * other plugin has that name), expanded as Claude Code expands them — `$ARGUMENTS` (all of them
 * as typed), `$ARGUMENTS[N]` and `$N` (0-based, shell-style quoting; an index with no argument
 * stays as written), names from the `arguments` front matter, `\$` to escape, `ARGUMENTS: …`
 * appended when the text has no placeholder, `${CLAUDE_PLUGIN_ROOT}` and friends — then its
 * `` !`command` `` lines (and ` ```! ` blocks) run through `pi.callTool("bash")`, so the
 * permission gate and the sandbox apply to them as to the model's calls, and their output takes
 * their place. `UserPromptExpansion` hooks may block the expansion or add context; the result is
 * sent as the user's message — or, with `context: fork`, given as its task to a child agent (the
 * `agent` tool's: the front matter's `agent`, else a general-purpose one; its `model`), whose
 * answer then enters the conversation as the command's output.
 */
import { readFileSync } from "node:fs";
import { errorMessage, textOf } from "@mypi/kernel";
import { parseFrontmatter, type ExtensionAPI, type ExtensionContext } from "@mypi/extension-api";
import type { LoadedPlugin } from "./plugin-format.ts";

export interface CommandHost {
  cwd: string;
  say(ctx: ExtensionContext, level: "info" | "warning" | "error", text: string): void;
  /** UserPromptExpansion hooks, when the engine runs them (index.ts wires it). */
  expansion?: (
    ctx: ExtensionContext,
    fields: { command_name: string; command_args: string; prompt: string },
  ) => Promise<{ block?: string; context: string[] }>;
}

/** Front matter keys Claude Code reads that mypi does not apply, said once per command. */
const NOT_APPLIED: Record<string, string> = {
  "allowed-tools": "mypi's permission gate reads its own rules (settings' permissions)",
  hooks: "command-scoped hooks are not run",
  effort: "the session's settings are used",
};

/** The custom message a forked command's answer enters the conversation as. */
const FORK_ANSWER_TYPE = "claude-code-command";
/** The subagents extension's tool, which starts the child a forked command runs in. */
const AGENT_TOOL = "agent";

export function registerPluginCommands(pi: ExtensionAPI, plugins: readonly LoadedPlugin[], host: CommandHost): void {
  const bare = new Map<string, number>();
  for (const p of plugins) for (const c of p.commands) bare.set(c.name, (bare.get(c.name) ?? 0) + 1);
  for (const plugin of plugins) {
    for (const command of plugin.commands) {
      const scoped = `${plugin.name}:${command.name}`;
      const description = describeCommand(command.file, plugin.name);
      const handler = commandHandler(pi, plugin, command.file, scoped, host);
      pi.registerCommand(scoped, { description, handler });
      if (bare.get(command.name) === 1) pi.registerCommand(command.name, { description, handler });
    }
  }
}

function describeCommand(file: string, plugin: string): string {
  try {
    const { frontmatter, body } = parseFrontmatter(readFileSync(file, "utf8"));
    const text =
      typeof frontmatter.description === "string"
        ? frontmatter.description
        : (body.split("\n").find((l) => l.trim() !== "") ?? "").replace(/^#+\s*/, "");
    const hint = typeof frontmatter["argument-hint"] === "string" ? ` ${frontmatter["argument-hint"]}` : "";
    return `${text}${hint} (plugin ${plugin})`;
  } catch {
    return `(plugin ${plugin})`;
  }
}

function commandHandler(pi: ExtensionAPI, plugin: LoadedPlugin, file: string, name: string, host: CommandHost) {
  const told = new Set<string>();
  return async (args: string, ctx: ExtensionContext): Promise<void> => {
    // Read at each use: an edited command takes effect at once.
    let frontmatter: Record<string, unknown>;
    let body: string;
    try {
      ({ frontmatter, body } = parseFrontmatter(readFileSync(file, "utf8")));
    } catch (error) {
      host.say(ctx, "error", `/${name}: ${file}: ${errorMessage(error)}`);
      return;
    }
    const tell = (key: string, text: string) => {
      if (told.has(key)) return;
      told.add(key);
      host.say(ctx, "info", `/${name}: ${text}`);
    };
    for (const [key, why] of Object.entries(NOT_APPLIED))
      if (frontmatter[key] !== undefined) tell(key, `"${key}" is not applied (${why}).`);
    const fork = forkOf(frontmatter, pi, tell);
    const names = argumentNames(frontmatter.arguments);
    let text = expandArguments(body, args, names);
    text = substituteVariables(text, {
      CLAUDE_PLUGIN_ROOT: plugin.root,
      CLAUDE_PLUGIN_DATA: plugin.data,
      CLAUDE_PROJECT_DIR: host.cwd,
      CLAUDE_SESSION_ID: ctx.sessionManager.id,
    });
    text = await runInjections(text, (command) => shellOutput(pi, command, ctx.signal));
    const expansion = await host.expansion?.(ctx, {
      command_name: name,
      command_args: args,
      prompt: `/${name}${args ? ` ${args}` : ""}`,
    });
    if (expansion?.block !== undefined) {
      host.say(ctx, "warning", `/${name} was blocked by a UserPromptExpansion hook: ${expansion.block}`);
      return;
    }
    const context = expansion?.context ?? [];
    const prompt = context.length ? `${text}\n\n${context.join("\n\n")}` : text;
    if (fork) await runForked(pi, ctx, host, { name, args, prompt, fork });
    else pi.sendUserMessage(prompt);
  };
}

interface Fork {
  /** The front matter's `agent`; absent: a general-purpose child. */
  agent?: string;
  model?: string;
}

/**
 * `context: fork` (with `agent` and `model`): the child to run the command in, or `undefined` —
 * inline, as without it: no fork asked, or no `agent` tool to start a child with (said once).
 * `model` applies to a forked command's child; to an inline one it is said not to apply.
 */
function forkOf(
  frontmatter: Record<string, unknown>,
  pi: ExtensionAPI,
  tell: (key: string, text: string) => void,
): Fork | undefined {
  const { context, agent, model } = frontmatter;
  if (context !== undefined && context !== "fork")
    tell(
      "context",
      `"context: ${String(context)}" is not one Claude Code knows ("fork", or none to run inline); it runs inline.`,
    );
  if (context !== "fork") {
    if (agent !== undefined) tell("agent", `"agent" is read only with "context: fork"; it runs inline.`);
    if (model !== undefined) tell("model", `"model" is not applied (the session's model is used).`);
    return undefined;
  }
  if (!pi.getAllTools().some((t) => t.name === AGENT_TOOL)) {
    tell(
      "context",
      `"context: fork" needs the agent tool, which is off ("subagents": false or --no-subagents); it runs inline.`,
    );
    return undefined;
  }
  if (agent !== undefined && typeof agent !== "string")
    tell("agent", `"agent" should be an agent's name; a general-purpose agent runs.`);
  if (model !== undefined && typeof model !== "string")
    tell("model", `"model" should be a model's name; the agent's model is used.`);
  return { ...(typeof agent === "string" && { agent }), ...(typeof model === "string" && { model }) };
}

/**
 * The command's text as a child agent's task, through the `agent` tool (its caps, its agents,
 * the policies that judge any call to it); the answer enters the conversation as the command's
 * output and the main agent takes it up. Claude Code shows it without a model call; mypi has no
 * way to add a message outside a run, and one queued for later would not be seen now.
 */
async function runForked(
  pi: ExtensionAPI,
  ctx: ExtensionContext,
  host: CommandHost,
  o: { name: string; args: string; prompt: string; fork: Fork },
): Promise<void> {
  const input = {
    description: `/${o.name}`,
    prompt: o.prompt,
    ...(o.fork.agent !== undefined && { subagent_type: o.fork.agent }),
    ...(o.fork.model !== undefined && { model: o.fork.model }),
  };
  const result = await pi.callTool(AGENT_TOOL, input, { signal: ctx.signal });
  const said = textOf(result.content);
  if (result.isError) {
    host.say(ctx, "warning", `/${o.name} ran in a child agent, which did not answer: ${said}`);
    return;
  }
  const typed = `/${o.name}${o.args ? ` ${o.args}` : ""}`;
  const content = `${typed} ran in a child agent (${o.fork.agent ?? "general-purpose"}). Its answer:\n\n${said}`;
  pi.sendMessage({ customType: FORK_ANSWER_TYPE, content, display: true }, { triggerTurn: true });
}

function argumentNames(value: unknown): string[] {
  if (typeof value === "string") return value.split(/[\s,]+/).filter((n) => n !== "");
  if (Array.isArray(value)) return value.filter((n): n is string => typeof n === "string");
  return [];
}

/** Claude Code's argument placeholders (skills reference, "Available string substitutions"). */
export function expandArguments(body: string, args: string, names: readonly string[] = []): string {
  const words = splitArguments(args);
  const named = new Map(names.map((n, i) => [n, i]));
  let used = false;
  // The name group never matches when there are no names (a group that always exists keeps the callback's arguments in place).
  const namesPattern = names.length ? names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") : "(?!)";
  const pattern = new RegExp(
    `(\\\\?)\\$(?:ARGUMENTS\\[(\\d+)\\]|(ARGUMENTS)|(\\d+)|(${namesPattern})(?![A-Za-z0-9_]))`,
    "g",
  );
  const out = body.replace(
    pattern,
    (whole: string, escape: string, index?: string, all?: string, digit?: string, name?: string) => {
      if (escape) return whole.slice(1);
      used = true;
      if (all !== undefined) return args;
      if (index !== undefined || digit !== undefined) {
        const i = Number(index ?? digit);
        return i < words.length ? words[i]! : whole;
      }
      return words[named.get(name!)!] ?? "";
    },
  );
  if (!used && args.trim() !== "") return `${out.replace(/\s+$/, "")}\n\nARGUMENTS: ${args}`;
  return out;
}

/** Shell-style words: quotes group (opening only at a word's start), `\"` inside double quotes. */
export function splitArguments(args: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < args.length) {
    while (i < args.length && /\s/.test(args[i]!)) i++;
    if (i >= args.length) break;
    const quote = args[i] === '"' || args[i] === "'" ? args[i]! : undefined;
    if (quote) {
      let word = "";
      let j = i + 1;
      for (; j < args.length && args[j] !== quote; j++)
        word += args[j] === "\\" && quote === '"' && args[j + 1] === '"' ? args[++j] : args[j];
      if (j < args.length) {
        words.push(word);
        i = j + 1;
        continue;
      }
    }
    let j = i;
    while (j < args.length && !/\s/.test(args[j]!)) j++;
    words.push(args.slice(i, j));
    i = j;
  }
  return words;
}

function substituteVariables(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{(CLAUDE_[A-Z_]+)\}/g, (whole, name: string) =>
    Object.hasOwn(vars, name) ? vars[name]! : whole,
  );
}

/**
 * `` !`command` `` (at a line's start or after whitespace) and ` ```! ` blocks, each replaced by
 * its output; substitution runs once over the text, so output is never scanned again.
 */
export async function runInjections(text: string, run: (command: string) => Promise<string>): Promise<string> {
  const pattern = /^```!\s*\n([\s\S]*?)\n```[ \t]*$|(^|[ \t])!`([^`\n]+)`/gm;
  const jobs: Promise<string>[] = [];
  text.replace(pattern, (_whole, block?: string, _lead?: string, inline?: string) => {
    jobs.push(run((block ?? inline)!));
    return "";
  });
  if (jobs.length === 0) return text;
  const outputs = await Promise.all(jobs);
  let i = 0;
  return text.replace(
    pattern,
    (_whole, _block?: string, lead?: string) => `${lead ?? ""}${outputs[i++]!.replace(/\n+$/, "")}`,
  );
}

/** One shell line through the bash tool, as a call the model makes would go (gate, sandbox, redaction). */
async function shellOutput(pi: ExtensionAPI, command: string, signal: AbortSignal): Promise<string> {
  const result = await pi.callTool("bash", { command }, { signal });
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  return result.blocked ? `[not run: ${text}]` : text;
}
