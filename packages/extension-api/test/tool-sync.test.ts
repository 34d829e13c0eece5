// The extensions' tools as the agent gets them (docs/extensions.md#5-the-rest-of-pi, docs/architecture.md#loading): a reload registers every tool
// again without calling that a replacement; setActiveTools from a factory counts the extension's
// own tools, before a host is bound, while one is bound, and across a reload.
import { createScriptedModel } from "@mypi/kernel";
import { afterEach, describe, expect, it } from "vitest";
import {
  ExtensionManager,
  createExtensionHost,
  defineTool,
  z,
  type ExtensionAPI,
  type ExtensionHost,
} from "../src/index.ts";

let hosts: ExtensionHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.agent.close();
  hosts = [];
});

const tool = (name: string, description = name) =>
  defineTool({ name, description, parameters: z.strictObject({}), execute: () => name });

/** A manager that records its diagnostics, and a host bound to it on demand. */
function setup() {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({ cwd: "/", onDiagnostic: (d) => diagnostics.push(d) });
  const bind = (tools = [tool("host_tool")]) => {
    const host = createExtensionHost({ manager, model: createScriptedModel({ turns: [] }), tools });
    hosts.push(host);
    return host;
  };
  return { manager, diagnostics, bind };
}

/** Loads `factory` as `name`, failing the test if it does not load. */
async function load(manager: ExtensionManager, name: string, factory: (pi: ExtensionAPI) => void): Promise<void> {
  expect((await manager.loadExtension(factory, name)).failed).toEqual([]);
}

const names = (host: ExtensionHost) => host.agent.tools.active().map((t) => t.name);

describe("reload and tool clashes", () => {
  it("fails a later extension that takes another's tool name, and reports nothing when a reload registers the same tools again", async () => {
    const { manager, diagnostics, bind } = setup();
    await load(manager, "a", (pi) => {
      pi.registerTool(tool("a_tool"));
      pi.registerTool(tool("shared", "from a"));
    });
    const clash = await manager.loadExtension((pi) => pi.registerTool(tool("shared", "from b")), "b");
    expect(clash.failed.map((f) => [f.name, f.code])).toEqual([["b", "MYPI_CONFLICT"]]);
    await load(manager, "c", (pi) => pi.registerTool(tool("c_tool")));
    const host = bind();

    expect(await host.reload()).toEqual({ loaded: ["a", "c"], failed: [expect.objectContaining({ name: "b" })] });
    expect(diagnostics).toEqual([]);
    expect(
      host.agent.tools.list().map((t) => `${t.name}@${host.agent.tools.sourceOf(t.name)}: ${t.description}`),
    ).toEqual(["host_tool@undefined: host_tool", "a_tool@a: a_tool", "shared@a: from a", "c_tool@c: c_tool"]);
  });

  it("keeps the first tool when a reload brings in a clash, and says so once", async () => {
    const { manager, diagnostics, bind } = setup();
    let clash = false;
    await load(manager, "a", (pi) => pi.registerTool(tool(clash ? "b_tool" : "a_tool", "from a")));
    await load(manager, "b", (pi) => pi.registerTool(tool("b_tool", "from b")));
    const host = bind();
    clash = true;
    await host.reload();
    await host.reload();
    expect(diagnostics).toEqual(["tool 'b_tool' from b is not used: a registered it first; rename one of them"]);
    expect(host.agent.tools.get("b_tool")?.description).toBe("from a");
  });

  it("keeps the first of two tools registered after loading, and lets an extension's tool replace the host's", async () => {
    const { manager, diagnostics, bind } = setup();
    let late: ((name: string) => void) | undefined;
    await load(manager, "a", (pi) => pi.registerTool(tool("shared", "from a")));
    bind([tool("host_tool")]);
    await load(manager, "b", (pi) => {
      late = (name) => pi.registerTool(tool(name, "b's version"));
    });
    late!("shared");
    late!("host_tool");
    expect(diagnostics).toEqual([
      "tool 'shared' from b is not used: a registered it first; rename one of them",
      "tool 'host_tool' from b replaces the one the host registered",
    ]);
  });
});

describe("setActiveTools while the extension loads", () => {
  /** An extension that narrows the agent's tools to one it has just registered. */
  const narrowing = (trace: string[]) => (pi: ExtensionAPI) => {
    pi.registerTool(tool("t9"));
    pi.registerTool(tool("t10"));
    pi.setActiveTools(["t9"]);
    trace.push(`asked: ${pi.getActiveTools().join(", ")}`);
  };

  it("counts the extension's own tools, and the agent gets the set it asked for", async () => {
    const { manager, diagnostics, bind } = setup();
    const trace: string[] = [];
    await load(manager, "narrow", narrowing(trace));
    const host = bind();
    expect(names(host)).toEqual(["t9"]);
    expect(host.agent.tools.schemas().map((s) => s.name)).toEqual(["t9"]);
    expect(trace).toEqual(["asked: t9"]);
    expect(diagnostics).toEqual([]);
  });

  it("does the same for an extension loaded while a host is bound, and again after a reload", async () => {
    const { manager, diagnostics, bind } = setup();
    const host = bind();
    await load(manager, "narrow", narrowing([]));
    expect(names(host)).toEqual(["t9"]);
    host.agent.tools.setActive(undefined);
    await host.reload();
    expect(names(host)).toEqual(["t9"]);
    expect(diagnostics).toEqual([]);
  });

  it("still ignores names no one registered, with a diagnostic, and drops the request of a load that failed", async () => {
    const { manager, diagnostics, bind } = setup();
    await load(manager, "typo", (pi) => {
      pi.registerTool(tool("t9"));
      pi.setActiveTools(["t9", "nope"]);
    });
    const failed = await manager.loadExtension((pi) => {
      pi.registerTool(tool("t11"));
      pi.setActiveTools(["t11"]);
      throw new Error("broken after narrowing");
    }, "broken");
    expect(failed.failed.map((f) => f.name)).toEqual(["broken"]);
    const host = bind();
    expect(names(host)).toEqual(["t9"]);
    expect(diagnostics).toEqual(["typo: setActiveTools ignores unknown tool(s) nope"]);
  });
});
