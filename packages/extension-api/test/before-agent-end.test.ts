// The host's `before_agent_end` decision (the kernel's `beforeEnd`) and handler labels
// (docs/extensions.md §1, §2).
import { createScriptedModel, isAgentEvent, textOf, type ModelRequest } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  createExtensionHost,
  ExtensionManager,
  type ExtensionFactory,
  type ExtensionHost,
  type ExtensionStreamEvent,
} from "../src/index.ts";

const hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.shutdown();
});

async function hostWith(extensions: [string, ExtensionFactory][], texts: string[]) {
  const manager = new ExtensionManager({ cwd: process.cwd() });
  for (const [name, factory] of extensions) expect((await manager.loadExtension(factory, name)).failed).toEqual([]);
  const requests: ModelRequest[] = [];
  const model = createScriptedModel({ turns: texts.map((text) => ({ text })) }, { onRequest: (r) => requests.push(r) });
  const host = createExtensionHost({ manager, model });
  hosts.push(host);
  const events: ExtensionStreamEvent[] = [];
  host.agent.subscribe((e) => void events.push(e));
  return { host, manager, requests, events };
}

describe("before_agent_end", () => {
  it("a handler's message continues the same run; it sees the last answer and how often the run was continued", async () => {
    const seen: [string, number][] = [];
    const { host, requests, events } = await hostWith(
      [
        [
          "stop-guard",
          (pi) =>
            pi.on("before_agent_end", (event) => {
              seen.push([event.finalText, event.continuations]);
              return event.continuations === 0
                ? { message: { customType: "stop-guard", content: "Run the tests before you finish." } }
                : undefined;
            }),
        ],
      ],
      ["I am done.", "Tests pass; done."],
    );
    const end = await host.agent.prompt("fix it");
    expect(end).toMatchObject({ stopReason: "completed", finalText: "Tests pass; done." });
    expect(seen).toEqual([
      ["I am done.", 0],
      ["Tests pass; done.", 1],
    ]);
    // The second model call saw the nudge as the last (user) message.
    expect(textOf(requests[1]!.messages.at(-1)!.content)).toBe("Run the tests before you finish.");
    const decisions = events.filter((e) => e.type === "hook_decision").map((e) => [e.slot, e.extension, e.outcome]);
    expect(decisions).toEqual([
      ["before_agent_end", "stop-guard", "message"],
      ["before_agent_end", "stop-guard", "pass"],
    ]);
    expect(events.filter((e) => isAgentEvent(e) && e.type === "agent_end")).toHaveLength(1);
  });

  it("messages of several extensions accumulate in order; a failing handler is skipped and reported", async () => {
    const { host, requests, events } = await hostWith(
      [
        [
          "first",
          (pi) =>
            pi.on("before_agent_end", (e) =>
              e.continuations === 0 ? { message: { customType: "a", content: "one" } } : undefined,
            ),
        ],
        [
          "broken",
          (pi) =>
            pi.on("before_agent_end", () => {
              throw new Error("no");
            }),
        ],
        [
          "second",
          (pi) =>
            pi.on("before_agent_end", (e) =>
              e.continuations === 0 ? { messages: [{ customType: "b", content: "two" }] } : undefined,
            ),
        ],
      ],
      ["a", "b"],
    );
    await host.agent.prompt("go");
    expect(requests[1]!.messages.slice(-2).map((m) => textOf(m.content))).toEqual(["one", "two"]);
    expect(events.filter((e) => e.type === "extension_error").map((e) => [e.extension, e.slot, e.error])).toEqual([
      ["broken", "before_agent_end", "no"],
      ["broken", "before_agent_end", "no"],
    ]);
  });

  it("decides for a child agent's run too, with the child's path; a handler for the main agent only is not asked there", async () => {
    const seen: [string, readonly string[], string][] = [];
    const { host, events } = await hostWith(
      [
        [
          "guard",
          (pi) => {
            pi.on("before_agent_end", (e, ctx) => {
              seen.push(["all", ctx.agentPath, e.finalText]);
              return ctx.agentPath.length > 1 && e.continuations === 0
                ? { message: { customType: "guard", content: "Check once more." } }
                : undefined;
            });
            pi.on("before_agent_end", (e, ctx) => void seen.push(["root", ctx.agentPath, e.finalText]), {
              agents: "root",
            });
          },
        ],
      ],
      ["parent done"],
    );
    const childRequests: ModelRequest[] = [];
    const childModel = createScriptedModel(
      { turns: [{ text: "first look" }, { text: "checked again" }] },
      { onRequest: (r) => childRequests.push(r) },
    );
    const child = await host.children.create({ name: "helper", model: childModel });
    const childEvents: ExtensionStreamEvent[] = [];
    child.subscribe((e) => void childEvents.push(e));
    const outcome = await child.run("look");
    await child.close();
    expect(outcome).toMatchObject({ stopReason: "completed", finalText: "checked again" });
    expect(textOf(childRequests[1]!.messages.at(-1)!.content)).toBe("Check once more.");
    const path = ["root", "agent_1:helper"];
    expect(seen).toEqual([
      ["all", path, "first look"],
      ["all", path, "checked again"],
    ]);
    expect(childEvents.filter((e) => e.type === "hook_decision").map((e) => [e.slot, e.outcome, e.agentPath])).toEqual([
      ["before_agent_end", "message", path],
      ["before_agent_end", "pass", path],
    ]);
    await host.agent.prompt("go");
    expect(seen.slice(2)).toEqual([
      ["all", ["root"], "parent done"],
      ["root", ["root"], "parent done"],
    ]);
    expect(events.filter((e) => e.type === "hook_decision").every((e) => e.agentPath === undefined)).toBe(true);
  });

  it("a child started with policies: false is asked nothing when it would end", async () => {
    let asked = 0;
    const { host } = await hostWith([["guard", (pi) => pi.on("before_agent_end", () => void asked++)]], []);
    const child = await host.children.create({
      model: createScriptedModel({ turns: [{ text: "done" }] }),
      policies: false,
    });
    expect((await child.run("go")).stopReason).toBe("completed");
    await child.close();
    expect(asked).toBe(0);
  });

  it("without handlers the run completes as before", async () => {
    const { host, requests } = await hostWith([], ["done"]);
    expect((await host.agent.prompt("go")).stopReason).toBe("completed");
    expect(requests).toHaveLength(1);
  });
});

describe("handler labels", () => {
  it("name the handler in hook_decision, extension_error and the handler order", async () => {
    const { host, manager, events } = await hostWith(
      [
        [
          "hooks",
          (pi) => {
            pi.on("input", () => undefined, { label: "UserPromptSubmit ← settings.json" });
            pi.on(
              "input",
              () => {
                throw new Error("broke");
              },
              { label: "second hook" },
            );
            pi.on(
              "agent_end",
              () => {
                throw new Error("observer broke");
              },
              { label: "Stop observer" },
            );
            pi.on("input", () => undefined);
          },
        ],
      ],
      ["ok"],
    );
    await host.agent.prompt("hi");
    await manager.drain();
    const decisions = events.filter((e) => e.type === "hook_decision").map((e) => [e.extension, e.handler, e.outcome]);
    expect(decisions).toEqual([
      ["hooks", "UserPromptSubmit ← settings.json", "pass"],
      ["hooks", "second hook", "fail_open"],
      ["hooks", undefined, "pass"],
    ]);
    const errors = events.flatMap((e) => (e.type === "extension_error" ? [e] : []));
    expect(errors.map((e) => [e.slot, e.handler])).toEqual([
      ["input", "second hook"],
      ["agent_end", "Stop observer"],
    ]);
    expect(manager.handlerOrder().input).toEqual([
      "hooks[UserPromptSubmit ← settings.json]",
      "hooks[second hook]",
      "hooks",
    ]);
  });

  it("a label that is not a non-empty string is refused at registration", async () => {
    const manager = new ExtensionManager({ cwd: process.cwd() });
    const r = await manager.loadExtension((pi) => pi.on("input", () => undefined, { label: "" }), "bad");
    expect(r.failed.map((f) => [f.code, f.message])).toEqual([
      ["MYPI_INVALID_OPTIONS", expect.stringContaining("label must be a non-empty string")],
    ]);
  });
});
