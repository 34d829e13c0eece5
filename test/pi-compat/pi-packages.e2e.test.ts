/**
 * What published Pi packages lean on beyond Pi's examples, through the real `mypi` process
 * (docs/pi-compat.md): registering a tool or command again, spreading `ctx`, the theme's data,
 * `/clear`- and `/exit`-style commands (`ctx.newSession`, `ctx.shutdown`), a package whose only
 * entry is `main`, two extensions that want the same names, and Pi's command-line flags.
 *
 * The fixtures are copied out of the repository first, so only the host's virtual modules can
 * resolve their Pi imports.
 */
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../helpers/mypi.ts";
import type { JsonObject } from "../helpers/json.ts";

const sandbox = createSandbox("mypi-pi-packages-");
afterAll(() => sandbox.cleanup());

const FIXTURES = join(import.meta.dirname, "fixtures");
const EXT = join(sandbox.root, "pi-extensions");
mkdirSync(EXT);
for (const file of ["refresher.ts", "session-control.ts", "conflict-a.ts", "conflict-b.ts"])
  copyFileSync(join(FIXTURES, file), join(EXT, file));
const ext = (name: string) => ["-e", join(EXT, `${name}.ts`)];

function workspace(name: string): string {
  const dir = join(sandbox.root, "workspaces", name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

type Event = JsonObject;
const text = (content: { type: string; text?: string }[]) =>
  content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
const entries = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Event);

// One test at a time: each starts up to four mypi processes at once, and the machine has two cores.
describe("published Pi packages' habits, through the CLI", { timeout: 90_000 }, () => {
  it("a tool and a command registered again replace the earlier ones, and the model's next call gets the new tool; ctx spreads whole and the theme's fields are data", async () => {
    const cwd = workspace("refresh");
    const script = sandbox.script(
      [{ toolCalls: [{ name: "lookup", arguments: {} }] }, { text: "Found it again." }],
      "refresh.json",
    );
    const file = join(cwd, "session.jsonl");
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "--cwd",
      cwd,
      ...ext("refresher"),
      "--session",
      file,
      "-p",
      "/refresh",
    ]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const end = r.events().find((e) => e.type === "tool_execution_end")!;
    expect([end.isError, text(end.result.content)]).toEqual([false, "lookup v2"]);
    const ctx = {
      keys: ["ui", "cwd", "sessionManager", "hasUI", "signal", "model", "modelRegistry", "abort", "isIdle"],
      notify: "function",
      entries: "function",
      available: "function",
      aborted: false,
    };
    expect(end.result.details).toEqual({
      ctx,
      theme: { name: "plain", sourcePath: null, border: "function", fg: "x" },
    });
    const refreshed = entries(file).find((e) => e.type === "custom" && e.customType === "refreshed");
    expect(refreshed?.data).toEqual({ ctx, command: ["newSession", "waitForIdle", "reload"] });
  });

  it("a /clear-style command starts a new, empty session in RPC mode (setup and withSession run there), and an /exit-style command ends the process once idle, exit 0", async () => {
    const cwd = workspace("rpc-session");
    const script = sandbox.script([{ text: "First answer." }], "rpc-session.json");
    const p = sandbox.spawn([
      "--mode",
      "rpc",
      "--model",
      `scripted:${script}`,
      "--cwd",
      cwd,
      ...ext("session-control"),
    ]);
    p.send({ id: "1", type: "prompt", message: "hello" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "s1", type: "get_state" });
    const before = (await p.waitFor((l) => l.id === "s1")).data;
    p.send({ id: "2", type: "prompt", message: "/wipe keep the plan" });
    expect(await p.waitFor((l) => l.id === "2")).toMatchObject({ success: true });
    p.send({ id: "s2", type: "get_state" });
    const after = (await p.waitFor((l) => l.id === "s2")).data;
    expect([before.messageCount, after.messageCount, after.sessionId === before.sessionId]).toEqual([3, 0, false]);
    const notice = await p.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify");
    expect(notice.message).toBe(`new session ${after.sessionId}`);
    p.send({ id: "3", type: "prompt", message: "/bye" });
    const exit = await p.exit;
    expect([exit.code, exit.signal]).toEqual([0, null]);
    expect(p.lines.some((l) => l.id === "4")).toBe(false);
    const next = entries(after.sessionFile);
    expect(next[0]).toMatchObject({ type: "session", id: after.sessionId, parentSession: before.sessionFile });
    expect(next.filter((e) => e.type === "custom").map((e) => [e.customType, e.data])).toEqual([
      ["started", { reason: "new" }],
      ["wiped", { note: "keep the plan" }],
    ]);
  });

  it("the same commands work in print mode: /wipe replaces the session, /bye ends with exit 0", async () => {
    const cwd = workspace("print-session");
    const script = sandbox.script([], "print-session.json");
    const [wipe, bye] = await Promise.all([
      sandbox.run(["--model", `scripted:${script}`, "--cwd", cwd, ...ext("session-control"), "-p", "/wipe"]),
      sandbox.run([
        "--model",
        `scripted:${script}`,
        "--cwd",
        cwd,
        ...ext("session-control"),
        "--no-session",
        "-p",
        "/bye",
      ]),
    ]);
    expect([wipe.code, wipe.stderr, bye.code, bye.stderr]).toEqual([0, "", 0, ""]);
  });

  it("a local package folder with only a main entry installs and loads under its package name", async () => {
    const pkg = join(sandbox.root, "only-main");
    sandbox.file(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@acme/only-main", version: "1.0.0", type: "module", main: "lib/main.js" }),
    );
    sandbox.file(
      join(pkg, "lib", "main.js"),
      'export default function (pi) { pi.registerCommand("greet", { handler: async () => console.log("hello from main") }); }\n',
    );
    const cwd = workspace("only-main");
    const script = sandbox.script([], "only-main.json");
    const installed = await sandbox.run(["install", pkg], { cwd });
    expect([installed.code, installed.stderr]).toEqual([0, ""]);
    const [greet, listed] = await Promise.all([
      sandbox.run(["--model", `scripted:${script}`, "--cwd", cwd, "--no-session", "-p", "/greet"], { cwd }),
      sandbox.run(["extensions", "--json", "--cwd", cwd], { cwd }),
    ]);
    expect([greet.code, greet.stdout, greet.stderr]).toEqual([0, "hello from main\n", ""]);
    expect(JSON.parse(listed.stdout).loaded.map((e: Event) => e.name)).toContain("@acme/only-main");
  });

  it("two extensions registering one command run as /hi:1 and /hi:2; one taking another's tool name fails to load, as in Pi", async () => {
    const cwd = workspace("conflict");
    const script = sandbox.script([], "conflict.json");
    const both = [...ext("conflict-a"), ...ext("conflict-b")];
    const [first, second, bare, tool] = await Promise.all([
      sandbox.run(["--model", `scripted:${script}`, "--cwd", cwd, ...both, "--no-session", "-p", "/hi:1"]),
      sandbox.run(["--model", `scripted:${script}`, "--cwd", cwd, ...both, "--no-session", "-p", "/hi:2"]),
      sandbox.run([
        "--model",
        `scripted:${script}`,
        "--cwd",
        cwd,
        ...both,
        "--no-session",
        "--mode",
        "json",
        "-p",
        "/hi",
      ]),
      sandbox.run(
        [
          "--model",
          `scripted:${script}`,
          "--cwd",
          cwd,
          ...ext("refresher"),
          ...ext("conflict-b"),
          "--no-session",
          "-p",
          "x",
        ],
        { env: { CONFLICT_TOOL: "1" } },
      ),
    ]);
    expect([first.code, first.stdout, second.stdout]).toEqual([0, "hi from a\n", "hi from b\n"]);
    expect(first.stderr).toBe(
      "mypi: command /hi is registered by conflict-a and conflict-b: run them as /hi:1 and /hi:2\n",
    );
    // `/hi` is no command then: it goes to the model as text (this script has no answer for it).
    expect(bare.events().find((e) => e.type === "message_end")?.message).toMatchObject({
      role: "user",
      content: [{ type: "text", text: "/hi" }],
    });
    expect(tool.code).toBe(2);
    expect(tool.stderr).toContain(
      `mypi: extension conflict-b failed to load: ${join(EXT, "conflict-b.ts")}: MYPI_CONFLICT: tool "lookup" conflicts with refresher (${join(EXT, "refresher.ts")}), which registered it first`,
    );
  });

  it("takes Pi's tool flags: -xt patterns and +/- entries narrow what the model is offered; --list-models lists the registry's models; --theme is refused by name", async () => {
    const cwd = workspace("flags");
    const script = sandbox.script(
      [{ toolCalls: [{ name: "bash", arguments: { command: "echo no" } }] }, { text: "ok" }],
      "flags.json",
    );
    const [excluded, minus, listModels, theme] = await Promise.all([
      sandbox.run([
        "--model",
        `scripted:${script}`,
        "--cwd",
        cwd,
        "--no-session",
        "--mode",
        "json",
        "-xt",
        "b*,wr*",
        "-p",
        "run",
      ]),
      sandbox.run([
        "--model",
        `scripted:${script}`,
        "--cwd",
        cwd,
        "--no-session",
        "--mode",
        "json",
        "-t",
        "-bash",
        "-p",
        "run",
      ]),
      sandbox.run(["--list-models", "gpt-4.1"], { env: { OPENAI_API_KEY: "sk-test" } }),
      sandbox.run(["--theme", "dark.json", "-p", "x"]),
    ]);
    for (const r of [excluded, minus]) {
      const end = r.events().find((e) => e.type === "tool_execution_end")!;
      expect([end.toolName, end.isError, text(end.result.content)]).toEqual([
        "bash",
        true,
        expect.stringContaining("bash"),
      ]);
      expect(text(end.result.content)).not.toContain("no\n");
    }
    expect([listModels.code, listModels.stderr, listModels.stdout]).toEqual([
      0,
      "",
      expect.stringMatching(/openai\s+gpt-4\.1\b/),
    ]);
    expect([theme.code, theme.stderr]).toEqual([2, expect.stringContaining("mypi: --theme: mypi has no themes")]);
  });
});
