// The host: the kernel Agent with the manager's chains as its slots, events fed to the observer
// bus, agent_end held until the mailboxes drain, tools and actions wired (docs/architecture.md#observers, #diagnostics; docs/extensions.md).
import {
  createScriptedModel,
  isAgentEvent,
  type ModelRequest,
  type SessionEntry,
  type ScriptedTurn,
  type StreamEvent,
  type ToolResultMessage,
} from "@mypi/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createExtensionHost,
  defineTool,
  z,
  type ExtensionErrorEvent,
  type ExtensionHost,
  type HookDecisionEvent,
} from "../src/index.ts";
import { gate, probe, release, resetProbe } from "./fixtures/probe.ts";
import { sessionTree } from "../src/context.ts";
import { managerWith } from "./helpers.ts";

const trace = () => probe().trace;
let hosts: ExtensionHost[] = [];

beforeEach(() => resetProbe());
afterEach(async () => {
  for (const h of hosts) await h.agent.close();
  hosts = [];
});

async function hostWith(
  files: string[],
  turns: ScriptedTurn[],
  extra: { compaction?: { contextWindow: number; keepRecentTokens?: number } } = {},
) {
  const diagnostics: string[] = [];
  const manager = await managerWith(files, { onDiagnostic: (d) => diagnostics.push(d) });
  const requests: ModelRequest[] = [];
  const model = createScriptedModel({ turns }, { onRequest: (r) => requests.push(r) });
  const host = createExtensionHost({ manager, model, systemPrompt: "base", ...extra });
  hosts.push(host);
  const events: StreamEvent[] = [];
  host.agent.subscribe((e) => void events.push(e));
  return { host, manager, requests, events, diagnostics };
}

/** Resolves at the next agent_end (for runs an extension starts). */
function nextEnd(host: ExtensionHost): Promise<void> {
  return new Promise((resolve) => {
    const off = host.agent.subscribe((e) => {
      if (e.type === "agent_end") {
        off();
        resolve();
      }
    });
  });
}

const twoCalls: ScriptedTurn[] = [
  {
    text: "calling",
    toolCalls: [
      { name: "echo", arguments: { text: "hi" } },
      { name: "echo", arguments: { text: "forbidden" } },
    ],
  },
  { text: "done" },
];

describe("createExtensionHost", () => {
  it("start() resolves once session_start handlers ran; a prompt sent from agent_end starts the next run when the agent is idle", async () => {
    const { host, requests, events } = await hostWith(
      ["host/planner.ts"],
      [{ text: "Step one." }, { text: "Step two." }],
    );
    const ends: string[] = [];
    const bothEnded = new Promise<void>((resolve) =>
      host.agent.subscribe((e) => {
        if (isAgentEvent(e) && e.type === "agent_end" && ends.push(e.stopReason) === 2) resolve();
      }),
    );
    await host.start();
    await host.agent.prompt("plan it");
    await bothEnded;
    expect(requests.map((r) => r.systemPrompt)).toEqual(["base RULES", "base RULES"]);
    expect(ends).toEqual(["completed", "completed"]);
    const users = host.agent.messages
      .filter((m) => m.role === "user")
      .map((m) => (m.content as { text: string }[])[0]!.text);
    expect(users).toEqual(["plan it", "next step"]);
    expect(events.filter((e) => e.type === "agent_start")).toHaveLength(2);
  });

  it("records every decision but pass, and every extension error, in the session as custom entries", async () => {
    const { host } = await hostWith(["host/guard.ts"], twoCalls);
    await host.start();
    await host.agent.prompt("go");
    const recorded = host.session.getEntries().flatMap((e) => (e.type === "custom" ? [e] : []));
    expect(
      recorded.map((e) => {
        const d = e.data as Record<string, unknown>;
        return [e.customType, d.extension, d.slot, d.outcome ?? d.error, d.toolCallId ?? d.reason];
      }),
    ).toEqual([
      ["mypi:hook_decision", "guard", "before_agent_start", "system_prompt", undefined],
      ["mypi:extension_error", "guard", "turn_start", "observer broke", undefined],
      ["mypi:hook_decision", "guard", "tool_result", "patch", "call_1"],
      ["mypi:hook_decision", "guard", "tool_call", "block", "call_2"],
      ["mypi:hook_decision", "guard", "tool_result", "patch", "call_2"],
      ["mypi:extension_error", "guard", "turn_start", "observer broke", undefined],
    ]);
    // The verdicts are part of the tree, not of the context: the model's history is unchanged.
    expect(host.session.buildContext().map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
    ]);
  });

  it("forks before a prompt and before the verdicts recorded about it, which stay with the prompt left behind", async () => {
    const { host } = await hostWith(["host/guard.ts"], [{ text: "one" }, { text: "two" }, { text: "three" }]);
    await host.start();
    await host.agent.prompt("first");
    await host.agent.prompt("second");
    const branch = host.session.getBranch();
    const second = branch.find(
      (e) =>
        e.type === "message" &&
        e.message.role === "user" &&
        (e.message.content as { text: string }[])[0]!.text === "second",
    )!;
    // The user message hangs under the verdicts recorded while it was being taken in.
    expect(host.session.getEntry(second.parentId!)).toMatchObject({
      type: "custom",
      customType: expect.stringMatching(/^mypi:/),
    });
    await host.fork(second.id);
    const leaf = host.session.getEntry(host.session.getLeafId()!)!;
    expect(leaf).toMatchObject({ type: "message", message: { role: "assistant" } });
    // Before the first prompt there are only its verdicts: the new branch is empty.
    const first = branch.find((e) => e.type === "message")!;
    expect(branch[0]!.id).not.toBe(first.id);
    await host.fork(first.id);
    expect(host.session.getLeafId()).toBeUndefined();
  });

  it("refuses fork and compact while a run is in progress, before the session moves", async () => {
    const { host } = await hostWith([], [{ text: "Slow.", delayMs: 60_000 }]);
    await host.start();
    const streaming = new Promise<void>((resolve) =>
      host.agent.subscribe(
        (e) => isAgentEvent(e) && e.type === "message_start" && e.message.role === "assistant" && resolve(),
      ),
    );
    const run = host.agent.prompt("go");
    await streaming;
    const leaf = host.session.getLeafId();
    await expect(host.fork(host.session.getEntries()[0]!.id)).rejects.toThrow("A run is in progress");
    expect(await host.compact()).toEqual({
      status: "failed",
      error: "A run is in progress: abort it or wait for it to end, then try again.",
    });
    expect(host.session.getLeafId()).toBe(leaf);
    host.agent.abort();
    expect((await run).stopReason).toBe("aborted");
  });

  it("runs the agent with the extensions' slots, tools and observers, diagnostics in the stream before agent_end", async () => {
    const { host, requests, events } = await hostWith(["host/guard.ts", "host/watcher.ts"], twoCalls);
    host.start();
    const end = await host.agent.prompt("go");
    expect(end.stopReason).toBe("completed");
    expect(requests[0]?.systemPrompt).toBe("base Be careful.");
    expect(requests[0]?.tools.map((t) => t.name)).toEqual(["echo"]);

    const results = host.agent.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((r) => [r.isError, r.content])).toEqual([
      [false, [{ type: "text", text: "hi (checked)" }]],
      [true, [{ type: "text", text: "Tool call blocked by guard: not that word (checked)" }]],
    ]);

    expect(trace()).toEqual([
      "watcher start startup",
      "input api: go",
      "watcher tool_end echo false",
      "watcher tool_end echo true",
      "watcher agent_end completed",
      "watcher done",
    ]);
    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe("agent_end");
    const errors = events.filter((e) => e.type === "extension_error") as unknown as ExtensionErrorEvent[];
    expect(errors.map((e) => [e.extension, e.slot, e.error])).toEqual([
      ["guard", "turn_start", "observer broke"],
      ["guard", "turn_start", "observer broke"],
    ]);
    // Each call's tool_call decision sits between its tool_execution_start and tool_execution_end.
    const around = (id: string) =>
      events
        .filter((e) => (e.type === "hook_decision" ? e.slot === "tool_call" : "toolCallId" in e && e.toolCallId === id))
        .map((e) => (e.type === "hook_decision" ? `decision:${e.outcome}` : e.type));
    expect(around("call_2")).toEqual(["decision:pass", "tool_execution_start", "decision:block", "tool_execution_end"]);
    // A tool call's decisions name the call they were about.
    const decisions = events.filter(
      (e) => e.type === "hook_decision" && e.slot === "tool_call",
    ) as unknown as HookDecisionEvent[];
    expect(decisions.map((d) => [d.toolCallId, d.outcome])).toEqual([
      ["call_1", "pass"],
      ["call_2", "block"],
    ]);
  });

  it("holds agent_end until every observer has it and the mailboxes are drained", async () => {
    const { host, events } = await hostWith(["host/watcher.ts"], [{ text: "hello" }]);
    probe().values.holdEnd = true;
    const run = host.agent.prompt("go");
    await gate("watcher-at-end");
    expect(events.map((e) => e.type)).not.toContain("agent_end");
    expect(host.agent.isRunning).toBe(true);
    release("let-end-go");
    await run;
    expect(events.at(-1)?.type).toBe("agent_end");
    expect(trace().at(-1)).toBe("watcher done");
  });

  it("starts a run for sendUserMessage while idle, through the input slot with source extension", async () => {
    const { host } = await hostWith(["host/guard.ts", "host/actions.ts"], [{ text: "ok" }]);
    const ended = nextEnd(host);
    await host.runCommand("say", "hello there");
    await ended;
    expect(trace()).toEqual(["input extension: hello there"]);
    expect(host.agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("starts a run with a custom message for sendMessage({triggerTurn}) while idle", async () => {
    const { host } = await hostWith(["host/actions.ts"], [{ text: "noted" }]);
    const ended = nextEnd(host);
    await host.runCommand("note", "remember the milk");
    await ended;
    expect(host.agent.messages[0]).toMatchObject({ role: "custom", customType: "note", content: "remember the milk" });
  });

  it("refuses a custom message the session could not record, naming the call (the command fails, nothing runs)", async () => {
    const { host } = await hostWith(["host/actions.ts"], [{ text: "never" }]);
    const outcome = await host.runCommand("bad-note", "");
    expect(outcome.ran).toBe(true);
    expect(outcome.error).toContain(
      'MYPI_BAD_RESULT: sendMessage({"customType":"note","content":42}): custom message: content is neither a string nor a list of blocks',
    );
    expect(host.agent.isRunning).toBe(false);
    expect(host.agent.messages).toEqual([]);
  });

  it("queues messages sent during a run: steering at the next turn boundary (through the input slot, streamingBehavior steer), follow-ups at the end", async () => {
    const { host } = await hostWith(
      ["host/guard.ts", "host/steerer.ts"],
      [
        { toolCalls: [{ name: "echo", arguments: { text: "hi" } }] },
        { text: "saw the steer" },
        { text: "saw the follow-up" },
      ],
    );
    await host.agent.prompt("go");
    expect(trace()).toEqual(["input api: go", "input extension/steer: steered"]);
    expect(
      host.agent.messages.map(
        (m) =>
          `${m.role}${m.role === "custom" ? `:${m.customType}` : ""}${m.role === "user" ? `:${JSON.stringify(m.content)}` : ""}`,
      ),
    ).toEqual([
      'user:[{"type":"text","text":"go"}]',
      "assistant",
      "toolResult",
      'user:[{"type":"text","text":"steered"}]',
      "assistant",
      "custom:later",
      "assistant",
    ]);
  });

  it("writes extension entries and the session name, and gives ctx a read-only session and the run's state", async () => {
    const { host } = await hostWith(["host/guard.ts", "host/actions.ts"], []);
    await host.runCommand("remember", "milk");
    await host.runCommand("ctx");
    expect(host.session.getEntries().filter((e) => e.type === "custom")).toMatchObject([
      { customType: "memo", data: { text: "milk" } },
    ]);
    expect(probe().values.ctx).toEqual({
      idle: true,
      systemPrompt: "base",
      sessionId: host.session.id,
      canWrite: false,
      active: ["echo"],
      all: ["echo@guard"],
      sessionName: "milk",
    });
  });

  it("registers tools added later, and narrows the active tools ignoring unknown names", async () => {
    const { host, diagnostics } = await hostWith(["host/guard.ts", "host/actions.ts"], []);
    await host.runCommand("add-tool");
    expect(host.agent.tools.list().map((t) => `${t.name}@${host.agent.tools.sourceOf(t.name)}`)).toEqual([
      "echo@guard",
      "late_tool@actions",
    ]);
    await host.runCommand("narrow");
    expect(host.agent.tools.active().map((t) => t.name)).toEqual(["late_tool"]);
    expect(diagnostics).toEqual(["actions: setActiveTools ignores unknown tool(s) no_such_tool"]);
  });

  it("takes a tool an extension unregistered out of the agent's registry, and refuses to remove the host's tools", async () => {
    const diagnostics: string[] = [];
    const manager = await managerWith(["api/unregister.ts"], { onDiagnostic: (d) => diagnostics.push(d) });
    const hostTool = defineTool({
      name: "host_tool",
      description: "The host's",
      parameters: z.strictObject({}),
      execute: () => "host",
    });
    const host = createExtensionHost({ manager, model: createScriptedModel({ turns: [] }), tools: [hostTool] });
    hosts.push(host);
    const listed = () =>
      host.agent.tools.list().map((t) => `${t.name}@${host.agent.tools.sourceOf(t.name) ?? "host"}: ${t.description}`);
    expect(listed()).toEqual([
      "host_tool@host: The host's",
      "temp@unregister: Temporary, version 1",
      "kept@unregister: Stays",
    ]);
    await host.runCommand("drop", "temp");
    expect(listed()).toEqual(["host_tool@host: The host's", "kept@unregister: Stays"]);
    await host.runCommand("readd");
    expect(listed()).toEqual([
      "host_tool@host: The host's",
      "kept@unregister: Stays",
      "temp@unregister: Temporary, version 2",
    ]);
    await host.runCommand("drop", "host_tool");
    expect(trace()).toEqual([
      "dropped temp",
      'MYPI_NOT_OWNER: unregisterTool("host_tool"): the tool was registered by the host, not by unregister; an extension can only remove its own tools (its tools: kept, temp). To hide it from the model, use setActiveTools',
    ]);
    expect(diagnostics).toEqual([]); // unregistered, then registered: nothing was replaced
  });

  it("keeps the session and the history across a reload, with the new instances' tools", async () => {
    const { host } = await hostWith(["host/guard.ts", "host/watcher.ts"], [{ text: "one" }]);
    await host.agent.prompt("go");
    const before = host.agent.messages.length;
    const oldEcho = host.agent.tools.get("echo");
    expect(await host.reload()).toEqual({ loaded: ["guard", "watcher"], failed: [] });
    expect(host.agent.messages.length).toBe(before);
    expect(host.agent.tools.get("echo")).toBeDefined();
    expect(host.agent.tools.get("echo")).not.toBe(oldEcho);
    expect(trace().slice(-1)).toEqual(["watcher start reload"]);
  });

  it("routes compaction through session_before_compact and tells observers", async () => {
    const { host } = await hostWith(
      ["slots/compact-summary.ts", "host/watcher.ts"],
      [{ text: "first answer" }, { text: "second answer" }],
      {
        compaction: { contextWindow: 100_000, keepRecentTokens: 1 },
      },
    );
    await host.agent.prompt("first question");
    await host.agent.prompt("second question");
    const outcome = await host.compact();
    expect(outcome).toMatchObject({ status: "compacted", summary: "summary of 3 messages", fromHook: true });
    expect(trace()).toContain("watcher compact fromExtension=true");
  });

  it("forks the session unless session_before_fork cancels", async () => {
    const { host } = await hostWith(["slots/fork-cancel.ts", "host/watcher.ts"], [{ text: "answer" }]);
    await host.agent.prompt("question");
    expect(await host.fork("keep")).toEqual({ cancelled: true });
    const first = host.session.getEntries()[0]!;
    expect(await host.fork(first.id)).toEqual({ cancelled: false });
    expect(host.agent.messages).toEqual([]);
    expect(trace()).toContain(`watcher fork ${first.id}`);
  });

  it("sends session_shutdown and disposes the extensions on shutdown", async () => {
    const { host, manager } = await hostWith(["host/watcher.ts"], []);
    await host.shutdown();
    expect(trace()).toEqual(["watcher shutdown"]);
    expect(manager.list()).toEqual([]);
  });

  it("shuts down a manager that never had a host the same way: session_shutdown, then disposed", async () => {
    const manager = await managerWith(["host/watcher.ts"]);
    await manager.shutdown();
    expect(trace()).toEqual(["watcher shutdown"]);
    expect(manager.list()).toEqual([]);
  });

  it("hands extensions a session they cannot change: entries, the entry list and the header are frozen, so the branch still reads", async () => {
    const { host, manager } = await hostWith([], [{ text: "one" }]);
    const tried: string[] = [];
    await manager.loadExtension((pi) => {
      pi.on("agent_end", (_event, ctx) => {
        const view = ctx.sessionManager;
        const attempts: Record<string, () => unknown> = {
          "entry.parentId": () => {
            const entry = view.getEntries().at(-1)! as { id: string; parentId: string | null };
            entry.parentId = entry.id; // made every later walk of the branch spin for ever
          },
          "a message's text": () =>
            ((view.getBranch()[0] as { message: { content: { text: string }[] } }).message.content[0]!.text =
              "rewritten"),
          "the entry list": () => (view.getEntries() as unknown[]).push({ type: "custom" }),
          "header.cwd": () => ((view.getHeader!() as { cwd: string }).cwd = "/elsewhere"),
          "the tree": () => ((view.getTree!()[0]!.entry as { id: string }).id = "x"),
        };
        for (const [what, attempt] of Object.entries(attempts)) {
          try {
            attempt();
            tried.push(`${what}: changed`);
          } catch (error) {
            tried.push(`${what}: ${(error as Error).constructor.name}`);
          }
        }
      });
    }, "vandal");
    const cwd = host.session.getHeader().cwd;
    await host.agent.prompt("hi");
    expect(tried).toEqual([
      "entry.parentId: TypeError",
      "a message's text: TypeError",
      "the entry list: TypeError",
      "header.cwd: TypeError",
      "the tree: TypeError",
    ]);
    expect(host.session.getBranch().map((e) => (e.type === "message" ? e.message.role : e.type))).toEqual([
      "user",
      "assistant",
    ]);
    expect(host.session.getHeader().cwd).toBe(cwd);
  });

  it("keeps a copy of what pi.appendEntry stored: the extension's own object stays its own to change", async () => {
    const { host, manager } = await hostWith([], []);
    const state = { count: 1, items: ["a"] };
    await manager.loadExtension((pi) => {
      pi.on("session_start", () => {
        pi.appendEntry("state", state);
        state.count = 2;
        state.items.push("b");
      });
    }, "stateful");
    await host.start();
    expect(host.session.getEntries().map((e) => (e.type === "custom" ? e.data : e.type))).toEqual([
      { count: 1, items: ["a"] },
    ]);
  });

  it("builds the tree from earlier entries only, so an entry that names itself as parent is a root, not a loop", () => {
    const entry = (id: string, parentId: string | null) =>
      ({ type: "custom", customType: "x", id, parentId, timestamp: "" }) as SessionEntry;
    const tree = sessionTree([entry("a", null), entry("b", "b"), entry("c", "a")], () => undefined);
    expect(tree.map((n) => [n.entry.id, n.children.map((c) => c.entry.id)])).toEqual([
      ["a", ["c"]],
      ["b", []],
    ]);
  });
});
