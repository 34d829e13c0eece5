// Child agents under the parent's rules (docs/subagents.md): policies across the tree, redaction,
// the caps, and an abort while children run.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createBuiltinTools } from "@mypi/builtin-tools";
import { defineTool, z, type ChildEvent, type ExtensionAPI } from "@mypi/extension-api";
import {
  createScriptedModel,
  isAgentEvent,
  type ModelClient,
  type ScriptedTurn,
  type ToolResultMessage,
} from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import { redactDeep } from "../redact-secrets/index.ts";
import { treeHost, type Tree } from "./fixtures/tree.ts";

let trees: Tree[] = [];
afterEach(async () => {
  for (const t of trees) await t.dispose();
  trees = [];
});
async function tree(o: Parameters<typeof treeHost>[0]): Promise<Tree> {
  const t = await treeHost(o);
  trees.push(t);
  return t;
}

const agentCall = (args: Record<string, unknown>, id?: string) => ({
  name: "agent",
  arguments: { description: "a task", ...args },
  ...(id && { id }),
});
const toolResults = (t: Tree) => t.host.agent.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const text = (m: ToolResultMessage) => m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const HELPER_PATH = ["root", "call_2:general", "call_1:general"];

/** Blocks `rm` in bash for every agent; blocks `ls` for the main agent only. */
const policies = {
  "no-rm": (pi: ExtensionAPI) => {
    pi.on("tool_call", (event) =>
      event.toolName === "bash" && /\brm\b/.test(String(event.input.command))
        ? { block: true, reason: "rm is not allowed" }
        : undefined,
    );
  },
  "main-only": (pi: ExtensionAPI) => {
    pi.on(
      "tool_call",
      (event) =>
        event.toolName === "bash" && event.input.command === "ls"
          ? { block: true, reason: "the main agent may not list" }
          : undefined,
      { agents: "root" },
    );
  },
  "no-forbidden-prompts": (pi: ExtensionAPI) => {
    pi.on("input", (event) =>
      event.text.includes("forbidden") ? { action: "block", reason: "forbidden work" } : undefined,
    );
  },
};

describe("policies across the tree", () => {
  it("a policy that blocks a command in the parent blocks it in a grandchild, and the decision names the path; a root-only one does not apply there", async () => {
    const t = await tree({
      extensions: policies,
      models: {
        explorer: [
          { toolCalls: [agentCall({ prompt: "clean up", model: "scripted:helper" })] },
          { text: "The helper reported back." },
        ],
        helper: [
          { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
          { toolCalls: [{ name: "bash", arguments: { command: "ls" } }] },
          { text: "rm was refused; ls worked." },
        ],
      },
      root: [
        { toolCalls: [{ name: "bash", arguments: { command: "ls" } }] },
        { toolCalls: [agentCall({ prompt: "explore", model: "scripted:explorer" })] },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("go");
    expect(t.bashCommands).toEqual(["ls"]); // the grandchild's; the main agent's ls and the grandchild's rm were blocked
    const rootLs = toolResults(t)[0]!;
    expect(text(rootLs)).toBe("Tool call blocked by main-only: the main agent may not list");
    const decisions = t
      .childEvents()
      .filter(
        (e): e is Extract<ChildEvent, { type: "hook_decision" }> => e.type === "hook_decision" && e.outcome === "block",
      );
    expect(decisions).toEqual([
      expect.objectContaining({
        extension: "no-rm",
        slot: "tool_call",
        reason: "rm is not allowed",
        agentPath: HELPER_PATH,
      }),
    ]);
    // Every decision about the grandchild names its path; main-only decided nothing there.
    const grandchild = t.childEvents().filter((e) => e.type === "hook_decision" && e.agentPath.length === 3);
    expect(new Set(grandchild.map((e) => (e as { extension: string }).extension))).toEqual(
      new Set(["no-rm", "no-forbidden-prompts"]),
    );
    expect(
      grandchild.every((e) => JSON.stringify((e as { agentPath: string[] }).agentPath) === JSON.stringify(HELPER_PATH)),
    ).toBe(true);
    // The grandchild's own session records the verdict, with the path.
    const explorerResult = toolResults(t)[1]!.details as { sessionFile: string };
    const helperFile = readFileSync(explorerResult.sessionFile, "utf8"); // the explorer's transcript
    expect(helperFile).toContain("The helper reported back.");
    const grandchildFiles = t.childEvents().filter((e) => e.type === "tool_execution_end" && e.toolName === "agent");
    const helperSession = (grandchildFiles[0] as { result: { details: { sessionFile: string } } }).result.details
      .sessionFile;
    const verdicts = readFileSync(helperSession, "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { type: string; customType?: string; data?: { agentPath?: string[]; outcome?: string } },
      );
    expect(
      verdicts.filter((v) => v.customType === "mypi:hook_decision").map((v) => [v.data?.outcome, v.data?.agentPath]),
    ).toEqual([["block", HELPER_PATH]]);
    // At the deepest level allowed (maxDepth 2) the grandchild was not offered the agent tool.
    expect(t.requests.helper![0]!.tools.map((s) => s.name)).not.toContain("agent");
    expect(t.requests.explorer![0]!.tools.map((s) => s.name)).toContain("agent");
  });

  it("a check that pauses a child's call (no one can take a child's run up later) refuses it: the child ends, the parent reads why and goes on", async () => {
    const t = await tree({
      extensions: {
        "ask-first": (pi: ExtensionAPI) =>
          pi.on("tool_call", (event) =>
            event.toolName === "bash" ? { pause: true, reason: "bash needs a yes" } : undefined,
          ),
      },
      models: {
        helper: [{ toolCalls: [{ name: "bash", arguments: { command: "make" } }] }, { text: "never reached" }],
      },
      root: [
        { toolCalls: [agentCall({ prompt: "build it", model: "scripted:helper" })] },
        { text: "The helper could not build." },
      ],
    });
    const end = await t.host.agent.prompt("go");
    expect(end.stopReason).toBe("completed");
    expect(t.bashCommands).toEqual([]);
    const [result] = toolResults(t);
    expect(result!.isError).toBe(true);
    expect(text(result!)).toBe(
      "The child agent general stopped: bash (bash needs a yes) needs a person's approval, and a child agent cannot wait for one. Do it another way, or ask the user.",
    );
  });

  it("the input slot decides on a child's prompt as on the parent's", async () => {
    const t = await tree({
      extensions: policies,
      models: { helper: [{ text: "never asked" }] },
      root: [
        { toolCalls: [agentCall({ prompt: "do the forbidden thing", model: "scripted:helper" })] },
        { text: "Refused." },
      ],
    });
    await t.host.agent.prompt("go");
    const [result] = toolResults(t);
    expect(result!.isError).toBe(true);
    expect(text(result!)).toBe(
      "The task was not given to the child agent general: forbidden work (no-forbidden-prompts).",
    );
    expect(t.requests.helper ?? []).toEqual([]);
  });

  it("a child cannot be given a tool its parent was denied or does not have", async () => {
    const t = await tree({
      extensions: { narrow: (pi: ExtensionAPI) => pi.setActiveTools(["read", "agent"]) },
      models: { helper: [{ text: "read only" }] },
      root: [
        {
          toolCalls: [
            agentCall({ prompt: "p", tools: ["bash"], model: "scripted:helper" }),
            agentCall({ prompt: "p", model: "scripted:helper" }),
          ],
        },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("go");
    const [denied, defaulted] = toolResults(t);
    expect(text(denied!)).toBe(
      "The child agent was not started: MYPI_AGENT_TOOLS: the parent agent has no tool bash, so its child cannot either (the parent's tools: read, agent)",
    );
    expect(defaulted!.isError).toBe(false);
    expect(t.requests.helper![0]!.tools.map((s) => s.name)).toEqual(["read", "agent"]);
  });

  it("a child started with policies: false meets no decision handler (Pi's SDK sessions may ask for that)", async () => {
    const t = await tree({
      extensions: {
        ...policies,
        raw: (pi: ExtensionAPI) =>
          pi.registerTool(
            defineTool({
              name: "raw",
              description: "Run a child without policies",
              parameters: z.strictObject({}),
              execute: async (_args, ctx) => {
                const child = await pi.createAgent({
                  call: ctx,
                  name: "raw",
                  policies: false,
                  model: "scripted:helper",
                });
                const outcome = await child.run("clean");
                await child.close();
                return outcome.finalText ?? "";
              },
            }),
          ),
      },
      models: {
        helper: [{ toolCalls: [{ name: "bash", arguments: { command: "rm -rf tmp" } }] }, { text: "cleaned" }],
      },
      root: [{ toolCalls: [{ name: "raw", arguments: {} }] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    expect(t.bashCommands).toEqual(["rm -rf tmp"]);
  });
});

describe("redaction in children", () => {
  it("a secret a child read reaches neither its model, nor its session, nor the parent's stream", async () => {
    const token = `ghp_${"a1B2".repeat(9)}`;
    const t = await tree({
      files: [fileURLToPath(new URL("../redact-secrets/index.ts", import.meta.url))],
      redact: redactDeep,
      readable: { ".env": `GITHUB_TOKEN=${token}\n` },
      models: {
        helper: [
          { toolCalls: [{ name: "read", arguments: { path: ".env" } }] },
          { text: "The file holds a GitHub token." },
        ],
      },
      root: [
        { toolCalls: [agentCall({ prompt: "what is in .env?", model: "scripted:helper" })] },
        { text: "It holds a token." },
      ],
    });
    await t.host.agent.prompt("go");
    const childRequests = JSON.stringify(t.requests.helper);
    expect(childRequests).toContain("[REDACTED:github-token]");
    expect(childRequests).not.toContain(token);
    const { sessionFile } = toolResults(t)[0]!.details as { sessionFile: string };
    const childSession = readFileSync(sessionFile, "utf8");
    expect(childSession).toContain("[REDACTED:github-token]");
    expect(childSession).not.toContain(token);
    expect(JSON.stringify(t.events)).not.toContain(token);
    expect(readFileSync(t.host.session.file!, "utf8")).not.toContain(token);
  });
});

/** `model`, its answers costing `total` dollars each (as a client given the model's prices reports). */
function priced(model: ModelClient, total: number): ModelClient {
  return {
    id: model.id,
    async *stream(request, signal) {
      for await (const event of model.stream(request, signal)) {
        if (event.type !== "done") yield event;
        else
          yield {
            type: "done",
            message: {
              ...event.message,
              usage: {
                ...event.message.usage,
                cost: { input: total / 2, output: total / 2, cacheRead: 0, cacheWrite: 0, total },
              },
            },
          };
      }
    },
  };
}

describe("caps", () => {
  const waiting = (key: string): ScriptedTurn[] => [
    { toolCalls: [{ name: "wait", arguments: { key } }] },
    { text: `${key} done` },
  ];

  it("children at once: a call past subagents.maxConcurrent is a tool error, and the running child goes on", async () => {
    const t = await tree({
      settings: { subagents: { maxConcurrent: 1 } },
      models: { a: waiting("a"), b: waiting("b") },
      root: [
        {
          toolCalls: [agentCall({ prompt: "a", model: "scripted:a" }), agentCall({ prompt: "b", model: "scripted:b" })],
        },
        { text: "Done." },
      ],
    });
    const refused = new Promise<void>((resolve) =>
      t.host.agent.subscribe((e) => isAgentEvent(e) && e.type === "tool_execution_end" && e.isError && resolve()),
    );
    const run = t.host.agent.prompt("go");
    await Promise.all([t.started("a"), refused]);
    t.open("a");
    await run;
    const [a, b] = toolResults(t);
    expect(text(a!)).toBe("a done");
    expect(b!.isError).toBe(true);
    expect(text(b!)).toBe(
      "The child agent was not started: MYPI_AGENT_LIMIT: 1 child agents are running already, the most subagents.maxConcurrent allows (1); wait for their results, then start this one",
    );
  });

  it("children per run: past subagents.maxPerRun a call is refused until the next run", async () => {
    const quick = [{ text: "ok" }];
    const t = await tree({
      settings: { subagents: { maxPerRun: 2 } },
      models: { q: quick },
      root: [
        { toolCalls: [1, 2, 3].map((n) => agentCall({ prompt: `task ${n}`, model: "scripted:q" })) },
        { text: "Two of three." },
        { toolCalls: [agentCall({ prompt: "task 4", model: "scripted:q" })] },
        { text: "The fourth ran." },
      ],
    });
    await t.host.agent.prompt("first");
    expect(toolResults(t).map((m) => m.isError)).toEqual([false, false, true]);
    expect(text(toolResults(t)[2]!)).toBe(
      "The child agent was not started: MYPI_AGENT_LIMIT: 2 child agents were started in this run already, the most subagents.maxPerRun allows (2); finish with what they found",
    );
    await t.host.agent.prompt("second");
    expect(toolResults(t)[3]!.isError).toBe(false);
  });

  it("depth: past subagents.maxDepth no child is offered the agent tool, and starting one anyway is refused", async () => {
    const t = await tree({
      settings: { subagents: { maxDepth: 1 } },
      extensions: {
        spawn: (pi: ExtensionAPI) =>
          pi.registerTool(
            defineTool({
              name: "spawn",
              description: "Start a child of whoever calls",
              parameters: z.strictObject({}),
              execute: async (_args, ctx) => {
                await pi.createAgent({ call: ctx, model: "scripted:deep" });
                return "started";
              },
            }),
          ),
      },
      models: {
        child: [{ toolCalls: [{ name: "spawn", arguments: {} }] }, { text: "could not go deeper" }],
        deep: [{ text: "never" }],
      },
      root: [{ toolCalls: [agentCall({ prompt: "p", model: "scripted:child" })] }, { text: "Done." }],
    });
    await t.host.agent.prompt("go");
    expect(t.requests.child![0]!.tools.map((s) => s.name)).not.toContain("agent");
    const spawned = t.childEvents().find((e) => e.type === "tool_execution_end" && e.toolName === "spawn") as {
      isError: boolean;
      result: { content: { text: string }[] };
    };
    expect(spawned.isError).toBe(true);
    expect(spawned.result.content[0]!.text).toBe(
      "MYPI_AGENT_LIMIT: a child of root → call_1:general would be 2 levels deep, past subagents.maxDepth (1); do the work in this agent instead",
    );
  });

  it("a token or cost budget stops the child after the model call that passed it; the parent reads why", async () => {
    const spend = (usage: { input: number; output: number }): ScriptedTurn[] => [
      { toolCalls: [{ name: "bash", arguments: { command: "echo" } }], usage },
      { text: "never reached" },
    ];
    const t = await tree({
      settings: { subagents: { maxTokens: 100, maxCost: 0.1 } },
      models: {
        tokens: spend({ input: 90, output: 20 }),
        dollars: () => priced(createScriptedModel({ turns: spend({ input: 1, output: 1 }) }), 0.2),
      },
      root: [
        {
          toolCalls: [
            agentCall({ prompt: "p", model: "scripted:tokens" }),
            agentCall({ prompt: "p", model: "scripted:dollars" }),
          ],
        },
        { text: "Done." },
      ],
    });
    await t.host.agent.prompt("go");
    const [tokens, dollars] = toolResults(t);
    expect(text(tokens!)).toBe(
      "The child agent general was stopped: the child used 110 tokens, past its budget of 100 (subagents.maxTokens).",
    );
    expect(text(dollars!)).toBe(
      "The child agent general was stopped: the child spent $0.2000, past its budget of $0.1 (subagents.maxCost).",
    );
    expect(tokens!.details).toMatchObject({ stopReason: "aborted", usage: { turns: 1, totalTokens: 110 } });
    expect(t.bashCommands).toEqual([]);
  });
});

describe("aborting the parent", () => {
  it("aborts its three running children: each ends with one agent_end, their commands' processes are gone, the parent ends last", async () => {
    const pids = new Map<string, number>();
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    const sleeper: ScriptedTurn[] = [
      { toolCalls: [{ name: "bash", arguments: { command: "echo $$; exec sleep 60" } }] },
      { text: "never" },
    ];
    const t = await tree({
      extensions: { builtin: createBuiltinTools({ root: process.cwd() }) },
      models: { s1: sleeper, s2: sleeper, s3: sleeper },
      root: [
        { toolCalls: ["s1", "s2", "s3"].map((m) => agentCall({ prompt: "sleep", model: `scripted:${m}` })) },
        { text: "never" },
      ],
    });
    t.host.agent.subscribe(() => {
      for (const e of t.childEvents()) {
        if (e.type !== "tool_execution_update" || e.toolName !== "bash") continue;
        const out = (e.partialResult as { content: { text: string }[] }).content[0]?.text ?? "";
        const pid = Number.parseInt(out, 10);
        if (pid > 0) pids.set(e.agentPath.join("/"), pid);
      }
      if (pids.size === 3) allStarted();
    });
    const run = t.host.agent.prompt("go");
    await started;
    t.host.agent.abort();
    const end = await run;
    expect(end.stopReason).toBe("aborted");
    const ends = t.childEvents().filter((e) => e.type === "agent_end");
    expect(ends.map((e) => [e.agentPath.join("/"), (e as { stopReason: string }).stopReason]).sort()).toEqual([
      ["root/call_1:general", "aborted"],
      ["root/call_2:general", "aborted"],
      ["root/call_3:general", "aborted"],
    ]);
    expect(t.events.filter((e) => e.type === "agent_end")).toHaveLength(1);
    expect(t.events.at(-1)!.type).toBe("agent_end");
    for (const pid of pids.values()) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    expect(t.host.children.running).toBe(0);
  });
});
