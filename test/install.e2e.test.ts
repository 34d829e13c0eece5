/**
 * mypi as a user installs it: every workspace package built and packed, the tarballs installed
 * into an empty project (`npm install --prefer-offline`), and used there — the bin, the demo, the
 * SDK from plain `.mjs`, an extension type-checked under `module: nodenext` with the installed
 * types, a dropped-in `.mypi/extensions/*.ts`, an npm-installed extension package by name, and an
 * MCP server configured by `mcp.json` alone. Nothing here reads the repository's sources.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "./helpers/mypi.ts";
import { installPacked } from "./helpers/packed.ts";
import type { JsonObject } from "./helpers/json.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-install-"));
const home = join(root, "home");
let project = "";
let bin = "";
let tarballs: string[] = [];
let typeCheck: ReturnType<typeof startTypeCheck>;
/** Project code runs only in a trusted workspace (docs/packages.md): these workspaces are the test's own. */
const TRUST = ["--trust-project"];
const env = { ...process.env, MYPI_HOME: home, OPENAI_API_KEY: "", NO_COLOR: "1", npm_config_update_notifier: "false" };

function sh(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, {
    cwd,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 300_000,
  });
}

function mypi(args: string[], options: { cwd?: string } = {}) {
  return spawnSync(bin, args, { cwd: options.cwd ?? project, env, encoding: "utf8", timeout: 120_000 });
}

function write(path: string, text: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

beforeAll(() => {
  mkdirSync(home, { recursive: true });
  // No @types/node of the project's own: the packages depend on the Node types their declarations use.
  // test/global-setup.ts built the packages.
  ({ project, bin, tarballs } = installPacked(root, { env, build: false }));
  typeCheck = startTypeCheck();
  // A rejection is the test's to report; unobserved until then, it must not end the run.
  typeCheck.catch(() => {});
}, 600_000);

afterAll(async () => {
  await typeCheck?.catch(() => {}); // never a tsc left running in a removed folder
  rmSync(root, { recursive: true, force: true });
}, 120_000);

/**
 * tsc over an extension, its test and every entry point of the installed packages, with
 * TypeScript's current defaults. Checking every declaration file it reaches (some 600, the
 * dependencies' too) is the heaviest step of this file, and it needs nothing the other tests
 * do: it starts as soon as the packages are installed and runs beside them; its test awaits it.
 */
function startTypeCheck(): Promise<{ entries: string[]; status: number | null; output: string }> {
  write(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        module: "nodenext",
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: [],
      },
      include: ["ext"],
    }),
  );
  const entries = tarballs.flatMap((file) => {
    const manifest = JSON.parse(sh("tar", ["xzf", file, "-O", "package/package.json"], root)) as {
      name: string;
      exports: Record<string, unknown>;
    };
    return Object.keys(manifest.exports)
      .filter((e) => e !== "./package.json")
      .map((e) => manifest.name + e.slice(1));
  });
  write(
    join(project, "ext", "entries.ts"),
    entries.map((e, i) => `import * as entry${i} from "${e}";\nvoid entry${i};\n`).join(""),
  );
  write(
    join(project, "ext", "guard.ts"),
    `
import { defineTool, z, type ExtensionAPI, type ToolResult } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  pi.on("tool_call", (event) => (event.toolName === "bash" ? { block: true, reason: "no shell here" } : undefined));
  pi.registerTool(defineTool({ name: "now", description: "time", parameters: z.strictObject({}), execute: (): ToolResult => ({ content: [{ type: "text", text: "noon" }] }) }));
}
`,
  );
  write(
    join(project, "ext", "guard.check.ts"),
    `
import { createFakeUI, loadExtensions } from "@mypi/extension-api/testing";
const ext = await loadExtensions(new URL("./guard.js", import.meta.url), { ui: createFakeUI({ confirm: [true] }) });
const decision = await ext.callSlot("tool_call", { toolCallId: "c", toolName: "bash", input: {} });
if (decision && decision.block === true) { const reason: string = decision.reason; void reason; }
// @ts-expect-error: a tool_call decision has no "action"
void decision?.action;
`,
  );
  write(
    join(project, "ext", "host.check.ts"),
    `
import { createExtensionHost, ExtensionManager } from "@mypi/extension-api";
import { createHostSession, type HostSession } from "@mypi/extension-api/host";
import { createScriptedModel, type SessionManager } from "@mypi/kernel";
const hostOver = (session?: SessionManager) =>
  createExtensionHost({ manager: new ExtensionManager({ cwd: "." }), model: createScriptedModel({ turns: [] }), ...(session && { session }) });
const hs: HostSession = createHostSession(hostOver(), async (session) => hostOver(session), { listSessions: () => [] });
const name: string | undefined = hs.state().sessionName;
void name;
`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", project], {
      cwd: project,
      env,
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", reject);
    child.on("close", (status) => resolve({ entries, status, output }));
  });
}

/** A run's stdout as JSON (one document or JSON lines), after checking that it succeeded. */
function output(r: ReturnType<typeof mypi>, lines: true): JsonObject[];
function output(r: ReturnType<typeof mypi>, lines?: false): JsonObject;
function output(r: ReturnType<typeof mypi>, lines = false): JsonObject | JsonObject[] {
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  return lines
    ? r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    : JSON.parse(r.stdout);
}

describe("an installed mypi", () => {
  it("packs only what a user needs: no tests, no build info", () => {
    expect(tarballs).toHaveLength(5);
    for (const file of tarballs) {
      const listing = sh("tar", ["tzf", file], root);
      expect(listing, file).not.toMatch(/\.test\.ts|\/test\/|tsbuildinfo|fixtures\//);
      expect(listing, file).toMatch(/package\/dist\/.*index\.js/);
    }
  });

  it("answers --help", () => {
    const r = mypi(["--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("mypi");
  });

  it("runs the demo with its shipped extensions", () => {
    const r = mypi(["demo"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("the permission gate blocked `rm -rf build`");
  });

  it("runs a batch: each task is a child of the installed bin, not of the repository's sources", () => {
    const dir = join(project, "batch");
    write(
      join(dir, "s.json"),
      JSON.stringify({
        turns: [
          { text: "Writing.", toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "a" } }] },
          { text: "Done." },
        ],
      }),
    );
    const task = (id: string) =>
      JSON.stringify({
        id,
        prompt: "write a.txt",
        workspace: { files: {} },
        model: "scripted:s.json",
        check: "test -f a.txt",
      });
    write(join(dir, "tasks.jsonl"), `${task("one")}\n${task("two")}\n`);
    const r = mypi(["batch", "tasks.jsonl", "--out", "out"], { cwd: dir });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    const results = readFileSync(join(dir, "out", "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(results.map((x) => [x.id, x.status, x.finalText]).sort()).toEqual([
      ["one", "passed", "Done."],
      ["two", "passed", "Done."],
    ]);
  });

  it("serves the SDK to a plain .mjs script", () => {
    write(
      join(project, "app.mjs"),
      `
import { Agent, createScriptedModel, defineTool } from "@mypi/kernel";
import { z } from "@mypi/extension-api";
const add = defineTool({ name: "add", description: "Add", parameters: z.strictObject({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });
const model = createScriptedModel({ turns: [{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "five" }] });
const agent = new Agent({ model, tools: [add] });
for await (const e of agent.prompt("2 + 3?")) if (e.type === "tool_execution_end") console.log("result", e.result.content[0].text);
await agent.close();
`,
    );
    expect(sh(process.execPath, ["app.mjs"], project).trim()).toBe("result 5");
  });

  // TypeScript's current defaults (`types: []`: no global types unless a file asks for them;
  // `skipLibCheck: false`: every declaration file is checked, the packages' and their dependencies').
  it("type-checks every entry point's declarations, an extension and its test, and a host session under TypeScript's defaults (types [], skipLibCheck false), module nodenext, strict", async () => {
    const { entries, status, output } = await typeCheck;
    expect(entries).toContain("@mypi/extension-api/testing");
    expect(entries).toContain("@mypi/extension-api/host");
    expect(output).toBe("");
    expect(status).toBe(0);
  });

  it("loads a dropped-in .mypi/extensions/*.ts, an npm package by name, and a shipped extension by name", () => {
    const ws = join(root, "ws-extensions");
    write(
      join(ws, ".mypi", "extensions", "shout.ts"),
      `
import type { ExtensionAPI } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  pi.on("tool_result", (event) => ({ content: event.content.map((c) => (c.type === "text" ? { ...c, text: c.text.toUpperCase() } : c)) }));
}
`,
    );
    const pkg = join(ws, "node_modules", "mypi-hello");
    write(
      join(pkg, "package.json"),
      JSON.stringify({ name: "mypi-hello", version: "1.0.0", type: "module", mypi: { extensions: ["./hello.js"] } }),
    );
    write(
      join(pkg, "hello.js"),
      `
import { defineTool, z } from "@mypi/extension-api";
export default (pi) => pi.registerTool(defineTool({ name: "hello", description: "greets", parameters: z.strictObject({}), execute: () => "hello there" }));
`,
    );
    write(
      join(ws, "script.json"),
      JSON.stringify({ turns: [{ toolCalls: [{ name: "hello", arguments: {} }] }, { text: "greeted" }] }),
    );
    const events = output(
      mypi(
        [
          "--mode",
          "json",
          "--no-session",
          ...TRUST,
          "-e",
          "mypi-hello",
          "-e",
          "permission-gate",
          "--model",
          "scripted:script.json",
          "-p",
          "hi",
        ],
        { cwd: ws },
      ),
      true,
    );
    const end = events.find((e) => e.type === "tool_execution_end");
    expect(end?.result.content[0].text).toBe("HELLO THERE");
    const listed = output(
      mypi(["extensions", "--json", ...TRUST, "-e", "mypi-hello", "-e", "permission-gate"], { cwd: ws }),
    );
    expect(listed.loaded.map((e: { name: string }) => e.name)).toEqual([
      "builtin-tools",
      "subagents",
      "shout",
      "mypi-hello",
      "permission-gate",
    ]);
  });

  it("starts an MCP server configured by mcp.json alone", () => {
    const ws = join(root, "ws-mcp");
    write(
      join(ws, "server.mjs"),
      `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "tiny", version: "1.0.0" });
server.registerTool("twice", { description: "doubles", inputSchema: { n: z.number() } }, async ({ n }) => ({ content: [{ type: "text", text: String(n * 2) }] }));
await server.connect(new StdioServerTransport());
`,
    );
    // The server resolves the SDK from the project, where mypi installed it.
    write(join(ws, "package.json"), JSON.stringify({ type: "module" }));
    rmSync(join(ws, "node_modules"), { force: true, recursive: true });
    execFileSync("ln", ["-s", join(project, "node_modules"), join(ws, "node_modules")]);
    write(
      join(ws, ".mypi", "mcp.json"),
      JSON.stringify({ servers: { tiny: { command: process.execPath, args: ["server.mjs"] } } }),
    );
    write(
      join(ws, "script.json"),
      JSON.stringify({ turns: [{ toolCalls: [{ name: "tiny__twice", arguments: { n: 21 } }] }, { text: "done" }] }),
    );
    const listed = output(mypi(["extensions", "--json", ...TRUST], { cwd: ws }));
    const mcp = listed.loaded.find((e: { name: string }) => e.name === "mcp");
    expect(mcp.note).toContain("mcp.json");
    const events = output(
      mypi(["--mode", "json", "--no-session", ...TRUST, "--model", "scripted:script.json", "-p", "double 21"], {
        cwd: ws,
      }),
      true,
    );
    const end = events.find((e) => e.type === "tool_execution_end");
    expect(end?.result.content[0].text).toBe("42");
  });
});
