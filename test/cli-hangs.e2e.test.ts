/**
 * Issue 19, item 7: nothing an extension tool does hangs a headless run. A tool whose `execute`
 * never settles ends at the default tool timeout (`--tool-timeout`, settings `toolTimeout`;
 * ten minutes by default) with a clear error result and the run goes on; a tool that aborts the
 * run from inside its own `execute` and never settles ends the run aborted.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-hangs-");
afterAll(() => sandbox.cleanup());

const tools = sandbox.file(
  "hanging-tools.ts",
  `
  export default function (pi: any) {
    const schema = { type: "object", properties: {}, additionalProperties: false };
    pi.registerTool({ name: "forever", description: "never answers", parameters: schema, execute: () => new Promise(() => {}) });
    pi.registerTool({ name: "quitter", description: "aborts the run, never answers", parameters: schema,
      execute: (_id: string, _params: unknown, _signal: unknown, _onUpdate: unknown, ctx: any) => { ctx.abort(); return new Promise(() => {}); } });
  }
`,
);

describe("a tool that never answers", () => {
  it("ends with a timed-out error result after --tool-timeout, and the run goes on to complete", {
    timeout: 60_000,
  }, async () => {
    const script = sandbox.script([{ toolCalls: [{ name: "forever", arguments: {} }] }, { text: "went on" }]);
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--no-session",
      "-e",
      tools,
      "--tool-timeout",
      "0.2",
      "-p",
      "go",
    ]);
    expect(r.code).toBe(0);
    const end = r.events().find((e) => e.type === "tool_execution_end")!;
    expect(end).toMatchObject({ toolName: "forever", isError: true });
    expect(end.result.content[0].text).toBe(
      'Tool "forever" timed out after 200 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.',
    );
    expect(r.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "went on" });
  });

  it("takes the timeout from the settings' toolTimeout when no flag is given", { timeout: 60_000 }, async () => {
    const home = sandbox.file("home/settings.json", JSON.stringify({ toolTimeout: 0.1 }));
    try {
      const script = sandbox.script([{ toolCalls: [{ name: "forever", arguments: {} }] }, { text: "went on" }]);
      const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session", "-e", tools, "-p", "go"]);
      expect(r).toMatchObject({ code: 0, stdout: "went on\n" });
    } finally {
      sandbox.file(home, "{}");
    }
  });
});

describe("a tool that aborts the run from inside its execute", () => {
  it("does not hang: the call is answered interrupted, one agent_end aborted, exit 130", {
    timeout: 60_000,
  }, async () => {
    const script = sandbox.script([{ toolCalls: [{ name: "quitter", arguments: {} }] }, { text: "never said" }]);
    // No default timeout: only the abort may end this call.
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--no-session",
      "-e",
      tools,
      "--tool-timeout",
      "0",
      "-p",
      "go",
    ]);
    expect(r.code).toBe(130);
    expect(r.events().filter((e) => e.type === "agent_end")).toHaveLength(1);
    expect(r.events().at(-1)).toMatchObject({ type: "agent_end", stopReason: "aborted" });
    expect(r.events().find((e) => e.type === "tool_execution_end")!.result.content[0].text).toBe(
      "Tool call interrupted by user",
    );
  });
});
