// Approvals that wait (docs/resume.md#approvals): a headless host's UI turns a tool_call handler's
// dialog into a pause; a resumed, approved call gets its dialogs answered yes; elsewhere nothing changes.
import { createScriptedModel, SessionManager, type ScriptedTurn, type StreamEvent } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  createExtensionHost,
  defineTool,
  ExtensionManager,
  headlessUI,
  z,
  type ExtensionAPI,
  type ExtensionHost,
  type HookDecisionEvent,
} from "../src/index.ts";

const hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.shutdown();
});

let ran: string[] = [];
const shell = defineTool({
  name: "shell",
  description: "runs",
  parameters: z.strictObject({ cmd: z.string() }),
  execute: ({ cmd }) => (ran.push(cmd), `ran ${cmd}`),
});

/** A gate that asks for `rm` as permission-gate asks (ctx.ui.confirm), and what it saw of the UI. */
function askingGate(seen: { hasUI: boolean[]; answers: unknown[] }) {
  return (pi: ExtensionAPI) => {
    pi.registerTool(shell);
    pi.on("session_start", (_e, ctx) => void seen.hasUI.push(ctx.hasUI));
    pi.on("tool_call", async (event, ctx) => {
      seen.hasUI.push(ctx.hasUI);
      if (!String(event.input.cmd).startsWith("rm")) return undefined;
      if (!ctx.hasUI) return { block: true, reason: "rm needs a yes and there is no user" };
      const ok = await ctx.ui.confirm("Run a destructive command?", String(event.input.cmd));
      seen.answers.push(ok);
      return ok ? undefined : { block: true, reason: "declined" };
    });
  };
}

async function hostWith(
  ui: ReturnType<typeof headlessUI>,
  session: SessionManager,
  turns: ScriptedTurn[],
  seen = { hasUI: [] as boolean[], answers: [] as unknown[] },
) {
  const manager = new ExtensionManager({ cwd: "/tmp", ...(ui && { ui }) });
  await manager.loadExtension(askingGate(seen), "gate");
  const host = createExtensionHost({ manager, model: createScriptedModel({ turns }), session });
  hosts.push(host);
  const events: StreamEvent[] = [];
  host.agent.subscribe((e) => void events.push(e));
  await host.start();
  return { host, events, seen };
}

const rmThenLs: ScriptedTurn[] = [
  {
    toolCalls: [
      { name: "shell", arguments: { cmd: "rm -rf build" } },
      { name: "shell", arguments: { cmd: "ls" } },
    ],
  },
];

describe("--on-ask deny (no UI, as before)", () => {
  it("the gate refuses what needs a yes", async () => {
    ran = [];
    const { host } = await hostWith(headlessUI("deny"), SessionManager.inMemory("/tmp"), [...rmThenLs, { text: "ok" }]);
    const end = await host.agent.prompt("clean");
    expect(end.stopReason).toBe("completed");
    expect(ran).toEqual(["ls"]);
  });
});

describe("--on-ask pause", () => {
  it("a dialog in a tool_call handler pauses the call: the run ends paused, the hook_decision says pause, ctx.hasUI is false elsewhere", async () => {
    ran = [];
    const session = SessionManager.inMemory("/tmp");
    const { host, events, seen } = await hostWith(headlessUI("pause"), session, rmThenLs);
    const end = await host.agent.prompt("clean");
    expect(end.error).toBeUndefined();
    expect(end.stopReason).toBe("paused");
    expect(end.waiting).toEqual([
      {
        toolCallId: "call_1",
        toolName: "shell",
        input: { cmd: "rm -rf build" },
        reason: "Run a destructive command? rm -rf build",
        by: "gate",
      },
    ]);
    expect(ran).toEqual([]); // ls waits behind rm: a one-by-one batch keeps its order
    expect(seen.hasUI).toEqual([false, true]); // session_start: nobody to ask; the tool call: someone answers
    const decisions = events.filter(
      (e): e is HookDecisionEvent & { timestamp: number } => e.type === "hook_decision" && e.slot === "tool_call",
    );
    expect(decisions.map((d) => [d.outcome, d.reason])).toEqual([["pause", "Run a destructive command? rm -rf build"]]);
    expect(events.filter((e) => e.type === "extension_error")).toEqual([]);
    // The verdict is recorded with the others.
    expect(
      session
        .getEntries()
        .filter((e) => e.type === "custom" && e.customType === "mypi:hook_decision")
        .map((e) => (e as { data: { outcome: string } }).data.outcome),
    ).toEqual(["pause"]);
  });

  it("approved and resumed in another host: the gate's dialog is answered yes for the person, and the held call runs after it", async () => {
    ran = [];
    const session = SessionManager.inMemory("/tmp");
    const first = await hostWith(headlessUI("pause"), session, rmThenLs);
    await first.host.agent.prompt("clean");
    const later = await hostWith(headlessUI("pause"), session, [{ text: "cleaned" }]);
    later.host.agent.approve();
    const end = await later.host.agent.resume();
    expect(end.stopReason).toBe("completed");
    expect(ran).toEqual(["rm -rf build", "ls"]);
    expect(later.seen.answers).toEqual([true]);
  });

  it("a handler that spreads its ctx ({...ctx}) still asks through the call's UI, so it pauses too", async () => {
    ran = [];
    const manager = new ExtensionManager({ cwd: "/tmp", ui: headlessUI("pause")! });
    await manager.loadExtension((pi: ExtensionAPI) => {
      pi.registerTool(shell);
      pi.on("tool_call", async (_event, ctx) => {
        const copy = { ...ctx };
        return (await copy.ui.confirm("Run it?", "")) ? undefined : { block: true, reason: "declined" };
      });
    }, "spreader");
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: rmThenLs }),
      session: SessionManager.inMemory("/tmp"),
    });
    hosts.push(host);
    await host.start();
    const end = await host.agent.prompt("clean");
    expect(end.stopReason).toBe("paused");
    expect(end.waiting?.map((c) => c.reason)).toEqual(["Run it?"]);
    expect(ran).toEqual([]);
  });

  it("select: an approved call picks the option that names the approval's scope, never a refusing one", async () => {
    const ui = headlessUI("pause")!;
    const options = ["Deny", "Allow once", "Allow for this session", "Always allow in this project"];
    const call = (scope?: string) => ({
      toolCallId: "c",
      toolName: "shell",
      input: {},
      approval: scope === undefined ? {} : { scope },
    });
    expect(await ui.forToolCall!(call("session")).select("Allow?", options)).toBe("Allow for this session");
    expect(await ui.forToolCall!(call("project")).select("Allow?", options)).toBe("Always allow in this project");
    expect(await ui.forToolCall!(call()).select("Allow?", options)).toBe("Allow once");
    expect(await ui.forToolCall!(call()).select("Allow?", ["No", "Yes"])).toBe("Yes");
    await expect(
      ui.forToolCall!({ toolCallId: "c", toolName: "shell", input: {} }).select("Allow?", options),
    ).rejects.toMatchObject({ code: "MYPI_PAUSE" });
    // Outside a tool call: the defaults of no UI.
    expect(await ui.confirm("x", "y")).toBe(false);
    expect(await ui.select("x", ["a"])).toBeUndefined();
  });

  it("a handler may answer pause itself; a block from an earlier handler wins", async () => {
    const manager = new ExtensionManager({ cwd: "/tmp" });
    await manager.loadExtension((pi) => {
      pi.registerTool(shell);
      pi.on("tool_call", (event) => (event.input.cmd === "both" ? { block: true, reason: "no" } : undefined));
      pi.on("tool_call", () => ({ pause: true, reason: "a person decides" }));
    }, "policy");
    const r1 = await manager.slots.tool_call(
      { toolCallId: "a", toolName: "shell", input: { cmd: "x" } },
      { signal: new AbortController().signal, emit: () => {} },
    );
    expect(r1).toEqual({ pause: true, reason: "a person decides", by: "policy" });
    const r2 = await manager.slots.tool_call(
      { toolCallId: "b", toolName: "shell", input: { cmd: "both" } },
      { signal: new AbortController().signal, emit: () => {} },
    );
    expect(r2).toMatchObject({ block: true, reason: "no" });
  });
});
