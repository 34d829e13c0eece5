/**
 * The tree of child agents under one host's main agent (docs/subagents.md): who may start a child
 * and with what (a subset of the parent's tools, the parent's model or one the host looks up),
 * the caps (at once, per run, depth; settings `subagents`), and where a child's transcript goes.
 *
 * A child is a kernel `Agent` in this process: it shares the main agent's worker pool and the
 * manager's extension chains (`manager.slotsFor(path)`), so no module loads twice and every
 * decision handler not registered with `agents: "root"` decides for it as for its parent. Its
 * tools see their agent's path in `ctx.context.agentPath`, which is how a tool running in a child
 * starts a grandchild under the right parent.
 */
import { basename, dirname, join } from "node:path";
import {
  Agent,
  errorMessage,
  type ModelClient,
  SessionManager,
  type ThinkingLevel,
  type Tool,
  ToolRegistry,
} from "@mypi/kernel";
import { ChildAgentHandle, type ChildSeat } from "./child-agent.ts";
import type { AgentLimits, ChildAgent, ChildBudget, CreateAgentOptions, ModelLookup } from "./child-types.ts";
import { ROOT_PATH } from "./context.ts";
import { ExtensionError } from "./errors.ts";
import type { ExtensionHostEvent } from "./events.ts";
import { recordVerdict, type VerdictRecorder } from "./host/verdicts.ts";
import type { ExtensionManager } from "./manager.ts";

export const DEFAULT_AGENT_LIMITS: Readonly<AgentLimits> = Object.freeze({
  maxConcurrent: 4,
  maxPerRun: 16,
  maxDepth: 2,
});

/** What the tree needs of its host. */
interface ChildAgentsHost {
  manager: ExtensionManager;
  /** The main agent (built after the tree). */
  root(): Agent<ExtensionHostEvent>;
  /** The main agent's session: children's files go next to it. */
  session: SessionManager;
  /** Turns a model's name into a client (the host's; none: only clients and `inherit`). */
  models?: ModelLookup | undefined;
  redact?: (<T>(value: T) => T) | undefined;
  /** The host's run options, which children take too. */
  maxTurns?: number | undefined;
  maxParallel?: number | undefined;
  abortGraceMs?: number | undefined;
  toolTimeoutMs?: number | undefined;
}

/** A live agent of the tree: the main one, or a child. */
interface Node {
  path: readonly string[];
  agent: Agent<ExtensionHostEvent>;
  session: SessionManager;
}

const SEGMENT_NAME = /[^A-Za-z0-9_.-]+/g;

/**
 * The caps in the settings' `subagents` object (docs/subagents.md#caps); a value of the wrong
 * kind keeps the default and is named in `problems`.
 */
export function agentLimits(settings: Readonly<Record<string, unknown>>): { limits: AgentLimits; problems: string[] } {
  const limits: AgentLimits = { ...DEFAULT_AGENT_LIMITS };
  const problems: string[] = [];
  const section = settings.subagents;
  if (section === undefined || typeof section === "boolean") return { limits, problems };
  if (typeof section !== "object" || section === null || Array.isArray(section)) {
    return {
      limits,
      problems: [
        `settings "subagents" should be false or an object of caps, got ${JSON.stringify(section)}; the defaults apply`,
      ],
    };
  }
  const s = section as Record<string, unknown>;
  for (const key of ["maxConcurrent", "maxPerRun", "maxDepth"] as const) {
    const value = s[key];
    if (value === undefined) continue;
    if (typeof value === "number" && Number.isInteger(value) && value >= 0) limits[key] = value;
    else
      problems.push(
        `settings "subagents.${key}" should be a whole number ≥ 0, got ${JSON.stringify(value)}; ${limits[key]} applies`,
      );
  }
  for (const key of ["maxTokens", "maxCost"] as const) {
    const value = s[key];
    if (value === undefined) continue;
    if (typeof value === "number" && value > 0 && Number.isFinite(value)) limits[key] = value;
    else
      problems.push(
        `settings "subagents.${key}" should be a positive number, got ${JSON.stringify(value)}; no budget applies`,
      );
  }
  return { limits, problems };
}

export class ChildAgents {
  readonly #host: ChildAgentsHost;
  readonly #live = new Map<string, { node: Node; child: ChildAgentHandle }>();
  /** Paths given out, the children still being made included (two made at once never share one). */
  readonly #paths = new Set<string>();
  #running = 0;
  #startedThisRun = 0;
  #created = 0;
  #reported = new Set<string>();

  constructor(host: ChildAgentsHost) {
    this.#host = host;
    this.#seat = {
      admit: () => {
        const { maxConcurrent } = this.limits();
        if (this.#running < maxConcurrent) return undefined;
        return limit(
          `${this.#running} child agents are running already, the most subagents.maxConcurrent allows (${maxConcurrent}); wait for their results, then start this one`,
        );
      },
      running: (_child, on) => void (this.#running += on ? 1 : -1),
      left: (child) => {
        this.#live.delete(child.path.join("/"));
        this.#paths.delete(child.path.join("/"));
      },
      diagnostic: (message) => host.manager.diagnostic(message),
      ...(host.redact && { redact: host.redact }),
    };
  }

  /** The main agent started a run: the per-run count starts again. */
  rootRunStarted(): void {
    this.#startedThisRun = 0;
  }

  /** Children running now. */
  get running(): number {
    return this.#running;
  }

  /** The caps now (the settings may change between runs). */
  limits(): AgentLimits {
    const { limits, problems } = agentLimits(this.#host.manager.settings());
    for (const p of problems) this.#once(p, p);
    return limits;
  }

  async create(options: CreateAgentOptions = {}): Promise<ChildAgent> {
    const limits = this.limits();
    const parent = this.#parentOf(options);
    const depth = parent.path.length;
    if (depth > limits.maxDepth) {
      throw limit(
        `a child of ${parent.path.join(" → ")} would be ${depth} levels deep, past subagents.maxDepth (${limits.maxDepth}); do the work in this agent instead`,
      );
    }
    if (this.#startedThisRun >= limits.maxPerRun) {
      throw limit(
        `${this.#startedThisRun} child agents were started in this run already, the most subagents.maxPerRun allows (${limits.maxPerRun}); finish with what they found`,
      );
    }
    const { tools, missing } = this.#toolsFor(parent, options);
    const name = (options.name ?? "agent").replace(SEGMENT_NAME, "-") || "agent";
    const path = this.#pathFor(parent, name, options);
    const key = path.join("/");
    // Counted before the model lookup awaits: calls of one batch are judged in the order they were made.
    this.#startedThisRun++;
    this.#created++;
    this.#paths.add(key);
    let model: ModelClient;
    try {
      model = await this.#modelFor(parent, options.model);
    } catch (error) {
      this.#startedThisRun--;
      this.#paths.delete(key);
      throw error;
    }
    if (options.thinking !== undefined) model = withThinking(model, options.thinking);
    const session = this.#sessionFor(parent, options.session);
    const host = this.#host;
    const root = host.root();
    const seat = this.#seat;
    // A child's verdicts go to its own session, written by its agent's sink as the main agent's are.
    const verdicts: VerdictRecorder = {
      session,
      isRunning: () => agent.isRunning,
      diagnostic: (m) => seat.diagnostic(m),
      ...(seat.redact && { redact: seat.redact }),
    };
    const agent = new Agent<ExtensionHostEvent>({
      model,
      tools: new ToolRegistry(tools),
      systemPrompt: options.systemPrompt ?? parent.agent.systemPrompt,
      slots: options.policies === false ? {} : host.manager.slotsFor(path),
      // `before_agent_end` decides for children too: a Stop-like check may keep a child at work.
      ...(options.policies !== false && { beforeEnd: host.manager.beforeEndFor(path) }),
      session,
      cwd: host.manager.cwd,
      workerPool: root.workerPool,
      toolContext: Object.freeze({ agentPath: path }),
      recordHostEvent: (event) => recordVerdict(verdicts, event),
      ...((options.maxTurns ?? host.maxTurns) !== undefined && { maxTurns: options.maxTurns ?? host.maxTurns }),
      ...(host.maxParallel !== undefined && { maxParallel: host.maxParallel }),
      ...(host.abortGraceMs !== undefined && { abortGraceMs: host.abortGraceMs }),
      ...(host.toolTimeoutMs !== undefined && { toolTimeoutMs: host.toolTimeoutMs }),
      onListenerError: (error) =>
        host.manager.diagnostic(`child agent ${path.join(" → ")}: a listener failed: ${errorMessage(error)}`),
    });
    const budget: ChildBudget = {
      ...((options.budget?.tokens ?? limits.maxTokens) !== undefined && {
        tokens: options.budget?.tokens ?? limits.maxTokens,
      }),
      ...((options.budget?.cost ?? limits.maxCost) !== undefined && { cost: options.budget?.cost ?? limits.maxCost }),
    };
    // Without a call, a child started while the main agent runs stops when that run is aborted.
    const signal = options.call?.signal ?? root.signal;
    const child = new ChildAgentHandle({
      path,
      name,
      agent,
      session,
      budget,
      signal,
      seat: this.#seat,
      missingTools: missing,
    });
    this.#live.set(key, { node: { path, agent, session }, child });
    return child;
  }

  /** Close every child (the host shuts down). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#live.values()].map(({ child }) => child.close()));
  }

  /** What each child asks of the tree. */
  readonly #seat: ChildSeat;

  /** The agent running `options.call` (its `ctx.context.agentPath`), else the main agent. */
  #parentOf(options: CreateAgentOptions): Node {
    const path = options.call?.context?.agentPath;
    const root: Node = { path: ROOT_PATH, agent: this.#host.root(), session: this.#host.session };
    if (!Array.isArray(path) || path.length <= 1) return root;
    const live = this.#live.get(path.join("/"));
    if (!live)
      throw new ExtensionError("MYPI_AGENT_CLOSED", `the agent ${path.join(" → ")} that asks for a child has ended`);
    return live.node;
  }

  /**
   * The parent's active tools that `options.tools` names (all by default; in the parent's order),
   * less `excludeTools`, then the caller's own; and the names the parent lacks.
   */
  #toolsFor(parent: Node, options: CreateAgentOptions): { tools: Tool[]; missing: string[] } {
    const offered = parent.agent.tools.active();
    let tools = offered;
    let missing: string[] = [];
    if (options.tools !== undefined) {
      const wanted = options.tools.map(toolMatcher);
      tools = offered.filter((t) => wanted.some((m) => m(t.name)));
      missing = options.tools.filter((n) => !n.includes("*") && !offered.some((t) => t.name === n));
      if (missing.length > 0 && !options.ignoreMissingTools) {
        const have = offered.map((t) => t.name).join(", ") || "none";
        throw new ExtensionError(
          "MYPI_AGENT_TOOLS",
          `the parent agent has no tool ${missing.join(", ")}, so its child cannot either (the parent's tools: ${have})`,
        );
      }
    }
    if (options.excludeTools?.length) {
      const excluded = options.excludeTools.map(toolMatcher);
      tools = tools.filter((t) => !excluded.some((m) => m(t.name)));
    }
    return { tools: [...tools, ...(options.extraTools ?? [])], missing };
  }

  /** `<parent path>, <toolCallId>:<name>`; without a call `agent_<n>:<name>`; `#2` when that path is taken. */
  #pathFor(parent: Node, name: string, options: CreateAgentOptions): readonly string[] {
    const base = `${options.call?.toolCallId ?? `agent_${this.#created + 1}`}:${name}`;
    let segment = base;
    for (let i = 2; this.#paths.has([...parent.path, segment].join("/")); i++) segment = `${base}#${i}`;
    return Object.freeze([...parent.path, segment]);
  }

  async #modelFor(parent: Node, model: CreateAgentOptions["model"]): Promise<ModelClient> {
    if (model === undefined || model === "inherit") return parent.agent.model;
    if (typeof model !== "string") return model;
    const lookup = this.#host.models;
    if (!lookup)
      throw new ExtensionError(
        "MYPI_AGENT_MODEL",
        `this host looks up no models by name, so "${model}" cannot be used; leave the model out (the parent's) or pass a model client`,
      );
    let found: ModelClient | string;
    try {
      found = await lookup(model);
    } catch (error) {
      found = errorMessage(error);
    }
    if (typeof found === "string") throw new ExtensionError("MYPI_AGENT_MODEL", `model "${model}": ${found}`);
    return found;
  }

  #sessionFor(parent: Node, choice: CreateAgentOptions["session"]): SessionManager {
    if (typeof choice === "object") return choice;
    const cwd = this.#host.manager.cwd;
    const file = parent.session.file;
    if (choice === "memory" || file === undefined) return SessionManager.inMemory(cwd);
    // In the parent's session folder, under the parent file's name: `--resume` lists only the main sessions.
    return SessionManager.fromBranch(parent.session, undefined, {
      cwd,
      dir: join(dirname(file), basename(file, ".jsonl")),
    });
  }

  #once(key: string, message: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#host.manager.diagnostic(message);
  }
}

/** A tool name, or a pattern where `*` matches any characters. */
function toolMatcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes("*")) return (name) => name === pattern;
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return (name) => re.test(name);
}

function limit(message: string): ExtensionError {
  return new ExtensionError("MYPI_AGENT_LIMIT", message);
}

/** `model` sending `level` with each request that names no thinking level. */
export function withThinking(model: ModelClient, level: ThinkingLevel): ModelClient {
  return {
    get id() {
      return model.id;
    },
    ...(model.api !== undefined && { api: model.api }),
    ...(model.provider !== undefined && { provider: model.provider }),
    stream: (request, signal) =>
      model.stream(request.thinking === undefined ? { ...request, thinking: level } : request, signal),
  };
}
