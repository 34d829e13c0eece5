/**
 * subagents — delegation to child agents (docs/subagents.md).
 *
 * One tool, `agent`, shaped like Claude Code's `Agent` (`description`, `prompt`, `subagent_type`):
 * the model hands a task to a child agent — one of the agent files (definitions.ts) by name, or a
 * general-purpose one with inline `instructions` — which works with a fresh context and a subset
 * of its parent's tools and answers with its final text; that text is all the parent's history
 * keeps. Several calls in one message run in parallel; results come back in call order.
 *
 * The children are the host's (`pi.createAgent`): in this process, under the parent's extensions'
 * policies, within the caps of the settings' `subagents`, each with its own transcript linked
 * from the call's `details.sessionFile`. Their events reach the parent's stream as progress of
 * the call, tagged with their path. `/agents` lists the agents; `"subagents": false` in the
 * settings leaves the tool out. Other extensions offer agents, and hear of the children started,
 * on the shared bus (bus.ts): installed Claude Code plugins' agents come in that way.
 */
import {
  agentLimits,
  agentPathOf,
  defineTool,
  z,
  type ChildAgent,
  type ChildRunOutcome,
  type CreateAgentOptions,
  type ExtensionAPI,
  type ExtensionUI,
  type ToolContext,
} from "@mypi/extension-api";
import { errorMessage, mypiHome, type ToolResult } from "@mypi/kernel";
import {
  AGENT_LIFECYCLE_CHANNEL,
  AGENT_SOURCES_CHANNEL,
  type AgentLifecycleEvent,
  type AgentSource,
  type AgentSourceRequest,
} from "./bus.ts";
import { CLAUDE_MODEL_ALIASES, discoverAgents, mypiToolName, type AgentDefinition } from "./definitions.ts";

export {
  discoverAgents,
  agentFolders,
  parseAgent,
  readAgentFile,
  mypiToolName,
  CLAUDE_TOOL_NAMES,
  type AgentDefinition,
  type AgentDiscovery,
} from "./definitions.ts";
export {
  AGENT_LIFECYCLE_CHANNEL,
  AGENT_SOURCES_CHANNEL,
  type AgentLifecycleEvent,
  type AgentSource,
  type AgentSourceRequest,
} from "./bus.ts";

export const AGENT_TOOL = "agent";
/** Claude Code's name for its general-purpose agent: the agent without a file here. */
const GENERAL_PURPOSE = "general-purpose";

export interface SubagentsOptions {
  /** mypi's home, where `agents/` is; default `$MYPI_HOME`, else `~/.mypi`. */
  home?: string;
  /** Where reports go when there is no UI; default stderr. */
  log?: (line: string) => void;
}

/** What every child reads after its own system prompt: it answers another agent, once. */
const CHILD_NOTE =
  "You were started by another agent to do one task. Work on your own with your tools; your final message is your whole answer to it (it sees nothing else you did), so make it complete and to the point.";

export function createSubagentsExtension(options: SubagentsOptions = {}): (pi: ExtensionAPI) => void {
  return function subagents(pi: ExtensionAPI): void {
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const home = options.home ?? mypiHome();
    const reported = new Set<string>();
    /** Once the session has a UI (interactive, RPC), reports go there: stderr would draw over the screen. */
    let ui: ExtensionUI | undefined;
    const report = (line: string) => {
      if (reported.has(line)) return;
      reported.add(line);
      if (ui) ui.notify(`subagents: ${line}`, "warning");
      else log(`mypi: subagents: ${line}`);
    };
    let agents: AgentDefinition[] = [];
    let registered = false;

    /** Read the agent files again (the workspace's once trusted, other extensions' offers) and offer the tool with them, unless the settings say no. */
    const refresh = (trusted: boolean) => {
      const sources: AgentSource[] = [];
      const request: AgentSourceRequest = { add: (source) => void sources.push(source) };
      pi.events.emit(AGENT_SOURCES_CHANNEL, request);
      const found = discoverAgents({ home, cwd: pi.cwd, trusted, sources });
      for (const p of found.problems) report(p);
      agents = found.agents;
      if (registered) pi.unregisterTool(AGENT_TOOL);
      registered = false;
      if (pi.getSettings().subagents === false) return;
      pi.registerTool(
        agentTool(
          pi,
          () => agents,
          report,
          (event) => pi.events.emit(AGENT_LIFECYCLE_CHANNEL, event),
        ),
      );
      registered = true;
    };
    refresh(pi.isProjectTrusted());
    pi.on("session_start", (_event, ctx) => {
      if (ctx.hasUI) ui = ctx.ui;
      refresh(ctx.isProjectTrusted());
    });

    pi.registerCommand("agents", {
      description: "list the agents the agent tool can start",
      handler: (_args, ctx) => {
        const text = listAgents(agents);
        if (ctx.hasUI) ctx.ui.notify(text, "info");
        else log(text);
      },
    });
  };
}

export default createSubagentsExtension();

/** The agents as `/agents` and `mypi agents` show them: name, where from, description, tools, model. */
export function listAgents(agents: readonly AgentDefinition[]): string {
  if (agents.length === 0)
    return "No agents defined: add Markdown files to ~/.mypi/agents/ or, in a trusted workspace, .mypi/agents/ or .claude/agents/, or install a Claude Code plugin with agents (docs/subagents.md). The agent tool still starts general-purpose children.";
  return agents
    .map((a) => {
      const extra = [
        a.tools ? `tools: ${a.tools.join(", ")}` : "all tools",
        ...(a.model ? [`model: ${a.model}`] : []),
        ...(a.thinking ? [`thinking: ${a.thinking}`] : []),
      ];
      return `${a.name} (${a.origin ?? a.scope}) — ${a.description}\n  ${extra.join(" · ")}\n  ${a.file}`;
    })
    .join("\n");
}

const parameters = z.strictObject({
  description: z.string().describe("A short (3-5 word) description of the task, shown to the user"),
  prompt: z.string().describe("The task for the child agent: everything it needs to know, and what to report back"),
  subagent_type: z
    .string()
    .optional()
    .describe("The name of an agent listed in this tool's description; leave it out for a general-purpose agent"),
  instructions: z
    .string()
    .optional()
    .describe("A system prompt for a general-purpose agent (instead of subagent_type)"),
  tools: z
    .array(z.string())
    .optional()
    .describe("Only these of your tools for the child (default: all the agent is allowed)"),
  model: z.string().optional().describe("A model for the child, by name (default: the agent's, else yours)"),
});
type AgentArgs = z.infer<typeof parameters>;

function describeTool(agents: readonly AgentDefinition[]): string {
  const list = agents.length
    ? ["Agents (subagent_type):", ...agents.map((a) => `- ${a.name}: ${a.description}`)]
    : ["No named agents are defined; leave subagent_type out."];
  return [
    "Start a child agent with a fresh context to do a task on its own and report back: a search across the code, a review, a plan, an investigation.",
    "It works with your tools (or fewer) under the same rules, and returns only its final answer, so put everything it needs in `prompt` and say what to report.",
    "Several calls in one message run in parallel; use that for independent questions. A child cannot see this conversation.",
    ...list,
    "Without subagent_type a general-purpose agent runs, with your system prompt or the `instructions` you give.",
  ].join("\n");
}

function agentTool(
  pi: ExtensionAPI,
  agents: () => readonly AgentDefinition[],
  report: (line: string) => void,
  announce: (event: AgentLifecycleEvent) => void,
) {
  return defineTool({
    name: AGENT_TOOL,
    description: describeTool(agents()),
    parameters,
    parallelSafe: true,
    // A child is bounded by its own model calls (maxTurns), its tools' timeouts and the caps; the
    // host's default tool timeout (ten minutes) would cut a long investigation short.
    timeoutMs: Infinity,
    execute: async (args, ctx) => {
      const plan = planChild(pi, args, agents(), ctx);
      if ("error" in plan) return failure(plan.error);
      let child: ChildAgent;
      try {
        child = await createWithFallback(pi, plan, report);
      } catch (error) {
        return failure(`The child agent was not started: ${errorMessage(error)}`);
      }
      const lifecycle = {
        path: child.path,
        agentType: plan.type,
        description: args.description,
        session: child.session,
      };
      announce({ kind: "created", ...lifecycle });
      try {
        const outcome = await child.run(args.prompt, { onUpdate: (progress) => ctx.onUpdate(progress) });
        return resultOf(child, plan.name, args.description, outcome);
      } catch (error) {
        return failure(`The child agent was not started: ${errorMessage(error)}`, {
          agentPath: child.path,
          ...(child.session.file && { sessionFile: child.session.file }),
        });
      } finally {
        await child.close();
        announce({ kind: "closed", ...lifecycle });
      }
    },
  });
}

interface ChildPlan {
  name: string;
  /** The agent as Claude Code's hooks name it (`agent_type`): the definition's name, or `general-purpose`. */
  type: string;
  options: CreateAgentOptions;
  /** A Claude Code model alias, tried first and dropped when the host cannot look it up. */
  alias?: string;
}

/** What to start for `args`, or what is wrong with them. */
function planChild(
  pi: ExtensionAPI,
  args: AgentArgs,
  agents: readonly AgentDefinition[],
  ctx: ToolContext,
): ChildPlan | { error: string } {
  // Claude Code's built-in general agent, by its name there, unless a file defines one so named.
  const type =
    args.subagent_type === GENERAL_PURPOSE && !agents.some((a) => a.name === GENERAL_PURPOSE)
      ? undefined
      : args.subagent_type;
  const def = type === undefined ? undefined : agents.find((a) => a.name === type);
  if (type !== undefined && !def) {
    const names = agents.map((a) => a.name).join(", ");
    return {
      error: `No agent named "${args.subagent_type}". ${names ? `Agents: ${names}.` : "No agents are defined."} Leave subagent_type out for a general-purpose agent.`,
    };
  }
  if (def && args.instructions !== undefined)
    return { error: "Give either subagent_type or instructions, not both: a named agent has its own system prompt." };
  const depth = agentPathOf(ctx).length;
  const { limits } = agentLimits(pi.getSettings());
  const exclude = [...(def?.disallowedTools ?? [])];
  // A child at the deepest level allowed could not start children: it is not offered the tool.
  if (depth >= limits.maxDepth) exclude.push(AGENT_TOOL);
  let tools: string[] | undefined = def?.tools;
  if (args.tools !== undefined) {
    const requested = args.tools.map(mypiToolName);
    if (def?.tools) {
      const outside = requested.filter((t) => !def.tools!.some((p) => matches(p, t)));
      if (outside.length)
        return { error: `The agent ${def.name} may use only ${def.tools.join(", ")}; not ${outside.join(", ")}.` };
    }
    tools = requested;
  }
  const model = args.model ?? def?.model;
  const name = def?.name ?? "general";
  const systemPrompt = [def?.systemPrompt || args.instructions, CHILD_NOTE]
    .filter((p) => p !== undefined && p !== "")
    .join("\n\n");
  const options: CreateAgentOptions = {
    call: ctx,
    name,
    ...(def || args.instructions !== undefined ? { systemPrompt } : {}),
    ...(tools !== undefined && { tools }),
    ...(exclude.length > 0 && { excludeTools: exclude }),
    // A definition's list may name tools this session lacks (Claude Code's WebFetch): they are left out, and said so.
    ...(args.tools === undefined && def?.tools !== undefined && { ignoreMissingTools: true }),
    ...(model !== undefined && { model }),
    ...(def?.thinking !== undefined && { thinking: def.thinking }),
    ...(def?.maxTurns !== undefined && { maxTurns: def.maxTurns }),
  };
  return {
    name,
    type: def?.name ?? GENERAL_PURPOSE,
    options,
    ...(model !== undefined && CLAUDE_MODEL_ALIASES.has(model) && { alias: model }),
  };
}

/** Start the child; a Claude Code model alias the host cannot look up falls back to the parent's model, said once. */
async function createWithFallback(
  pi: ExtensionAPI,
  plan: ChildPlan,
  report: (line: string) => void,
): Promise<ChildAgent> {
  let child: ChildAgent;
  try {
    child = await pi.createAgent(plan.options);
  } catch (error) {
    if (plan.alias === undefined || (error as { code?: string }).code !== "MYPI_AGENT_MODEL") throw error;
    report(
      `agent ${plan.name} asks for the model "${plan.alias}" (a Claude Code alias) that this host does not know; it runs on its parent's model`,
    );
    const { model: _alias, ...rest } = plan.options;
    child = await pi.createAgent(rest);
  }
  if (child.missingTools.length)
    report(`agent ${plan.name}: this session has no tool ${child.missingTools.join(", ")}; it runs without`);
  return child;
}

function matches(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return pattern === name;
  return new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  ).test(name);
}

/** The child's final answer as the parent's tool result; what it did is in `details` (for people, not the model). */
function resultOf(child: ChildAgent, name: string, description: string, outcome: ChildRunOutcome): ToolResult {
  const details = {
    agent: name,
    description,
    agentPath: child.path,
    ...(child.session.file !== undefined && { sessionFile: child.session.file }),
    sessionId: child.session.id,
    stopReason: outcome.stopReason,
    usage: outcome.usage,
    ...(outcome.limit !== undefined && { limit: outcome.limit }),
  };
  const said = outcome.finalText?.trim();
  switch (outcome.stopReason) {
    case "completed":
    case "terminated":
      return {
        content: [{ type: "text", text: said || "(The child agent finished without a final answer.)" }],
        details,
      };
    case "max_turns":
      return failure(
        `The child agent ${name} stopped after its last allowed model call (maxTurns) before it finished.${said ? ` Its last words: ${said}` : ""}`,
        details,
      );
    case "aborted":
      return failure(
        outcome.limit
          ? `The child agent ${name} was stopped: ${outcome.limit}.${said ? ` Its last words: ${said}` : ""}`
          : `The child agent ${name} was aborted.`,
        details,
      );
    case "blocked":
    case "handled":
      return failure(
        `The task was not given to the child agent ${name}: ${outcome.end.reason ?? outcome.stopReason}${outcome.end.by ? ` (${outcome.end.by})` : ""}.`,
        details,
      );
    case "error":
      return failure(`The child agent ${name} failed: ${outcome.error ?? "unknown error"}`, details);
    case "paused": {
      // A child's run cannot be taken up again later (docs/resume.md): its calls that wait for a person are refused.
      const waiting = (outcome.end.waiting ?? []).map((c) => `${c.toolName} (${c.reason})`).join("; ");
      return failure(
        `The child agent ${name} stopped: ${waiting || "a call"} needs a person's approval, and a child agent cannot wait for one. Do it another way, or ask the user.`,
        details,
      );
    }
  }
}

function failure(text: string, details?: unknown): ToolResult {
  return { content: [{ type: "text", text }], isError: true, ...(details !== undefined && { details }) };
}
