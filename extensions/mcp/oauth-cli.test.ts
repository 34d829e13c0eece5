// OAuth end to end through the real `mypi`: a run without a token says which command logs in,
// `mypi mcp login` completes the flow against a local authorization server (the test plays the
// browser), the next run uses and refreshes the token, `/mcp login` does the same inside an RPC
// session, and `mypi mcp logout` forgets it.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MYPI_BIN, REPO, createSandbox } from "../../test/helpers/mypi.ts";
import { ASKING_SCRIPT, startOAuthFixture, type HttpFixture } from "./fixtures/harness.ts";
import type { JsonObject } from "../../test/helpers/json.ts";

const s = createSandbox("mypi-mcp-oauth-cli-");
let fixture: HttpFixture;
// Kept so that afterAll stops a fixture that came up only after the hook had timed out.
let starting: Promise<HttpFixture> | undefined;

beforeAll(async () => {
  fixture = await (starting = startOAuthFixture());
  s.file(
    "home/mcp.json",
    JSON.stringify({
      servers: { guarded: { url: fixture.url }, plain: { command: process.execPath, args: [ASKING_SCRIPT] } },
    }),
  );
}, 30_000);

afterAll(async () => {
  await (await starting?.catch(() => undefined))?.stop();
  s.cleanup();
});

const origin = () => new URL(fixture.url).origin;
const stats = async () => (await (await fetch(`${origin()}/control/stats`)).json()) as Record<string, number>;
const callScript = () => s.script([{ toolCalls: [{ name: "guarded__whoami", arguments: {} }] }, { text: "Done." }]);
const jsonRun = () =>
  s.run(["--mode", "json", "--model", `scripted:${callScript()}`, "--no-session", "-e", "mcp", "-p", "go"], {
    cwd: REPO,
  });

/** Play the browser: follow the authorization URL to mypi's loopback callback. */
async function browse(url: string): Promise<string> {
  const approved = await fetch(url, { redirect: "manual" });
  return (await (await fetch(approved.headers.get("location")!)).text()).trim();
}

/** `mypi mcp …` as a plain process (its output is text, not JSON lines); the browser is played when a URL shows up. */
function mcpCommand(
  args: string[],
  atUrl: "browse" | "interrupt" = "browse",
): Promise<{ code: number | null; stdout: string; stderr: string; page?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MYPI_BIN, "mcp", ...args], { cwd: REPO, env: s.env });
    let stdout = "";
    let stderr = "";
    let page: Promise<string> | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const url = /^ {2}(http\S+)$/m.exec(stderr)?.[1];
      if (url && !page) page = atUrl === "browse" ? browse(url) : Promise.resolve(String(child.kill("SIGINT")));
    });
    child.on("error", reject);
    child.on("close", async (code) => resolve({ code, stdout, stderr, ...(page && { page: await page }) }));
  });
}

const toolEnds = (events: JsonObject[]) =>
  events.filter((e) => e.type === "tool_execution_end").map((e) => [e.toolName, e.isError, e.result.content[0].text]);

describe("OAuth through the CLI", () => {
  it("a run without a token reports the server failed with the command that logs in", async () => {
    const run = await jsonRun();
    expect(run.stderr).toContain(
      'mcp: server "guarded" failed: needs an OAuth login: run "mypi mcp login guarded" (or "/mcp login guarded" in an interactive or RPC session); its tools are unavailable (see mcp_status)',
    );
    expect(toolEnds(run.events())[0]?.[1]).toBe(true);
  });

  // The tests below run in order: each uses the tokens the login before it stored. Each starts
  // one mypi (the login, then the run that refreshes, then the logout), so that each is timed on
  // its own process rather than several in one budget (which timed out on a loaded machine).
  it("mypi mcp login shows the URL, takes the browser's return and stores the tokens owner-only", async () => {
    const result = await mcpCommand(["login", "guarded", "--no-browser"]);
    const dir = join(s.home, "mcp-oauth");
    const [file] = readdirSync(dir);
    expect(result).toMatchObject({ code: 0, page: "mypi: logged in. You can close this tab." });
    expect(result.stderr).toMatch(
      /^Open this URL in a browser to log in to MCP server "guarded":\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+\nWaiting for the browser to come back \(Ctrl-C stops\) …\n$/,
    );
    expect(result.stdout).toBe(`Logged in to MCP server "guarded" (1 tool); the tokens are in ${join(dir, file!)}.\n`);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, file!)).mode & 0o777).toBe(0o600);
  });

  it("the next run after mypi mcp login refreshes the expired tokens", async () => {
    await fetch(`${origin()}/control/expire`, { method: "POST" });
    const before = (await stats()).refreshes!;
    const run = await jsonRun();
    expect(run.stderr).toBe("");
    expect(toolEnds(run.events())).toEqual([["guarded__whoami", false, "authorized"]]);
    expect((await stats()).refreshes).toBe(before + 1);
  });

  it("/mcp login in an RPC session notifies the URL, logs in and reconnects the server", async () => {
    const rpc = s.spawn(["--mode", "rpc", "--model", `scripted:${callScript()}`, "--no-session", "-e", "mcp"], {
      cwd: REPO,
    });
    rpc.send({ id: "l", type: "prompt", message: "/mcp login guarded" });
    const shown = await rpc.waitFor(
      (l) =>
        l.type === "extension_ui_request" && l.method === "notify" && String(l.message).startsWith("Open this URL"),
    );
    const url = /: (http\S+)$/.exec(shown.message)![1]!;
    expect(await browse(url)).toBe("mypi: logged in. You can close this tab.");
    const done = await rpc.waitFor(
      (l) => l.type === "extension_ui_request" && l.method === "notify" && String(l.message).startsWith("Logged in"),
    );
    expect(done.message).toMatch(
      /^Logged in to MCP server "guarded" \(1 tool\); the tokens are in .+\. MCP server "guarded" restarted with 1 tools\.$/,
    );
    rpc.end();
    expect((await rpc.exit).code).toBe(0);
  });

  it("mypi mcp logout forgets the tokens", async () => {
    const out = await mcpCommand(["logout", "guarded"]);
    expect(out).toMatchObject({ code: 0, stdout: 'Logged out of MCP server "guarded": its tokens are deleted.\n' });
    expect(readdirSync(join(s.home, "mcp-oauth"))).toEqual([]);
  });

  it.for([
    {
      name: "login nope: no such server",
      args: ["login", "nope"],
      expected: {
        code: 1,
        stderr:
          'mypi: there is no MCP server "nope" (the workspace\'s .mypi/mcp.json was not read: it is not trusted; add --trust-project); HTTP servers configured: guarded\n',
      },
    },
    {
      name: "login plain: a stdio server",
      args: ["login", "plain"],
      expected: {
        code: 1,
        stderr:
          'mypi: MCP server "plain" runs over stdio; OAuth is for HTTP servers (give a stdio server its secrets in "env")\n',
      },
    },
    { name: "login: no server named", args: ["login"], expected: { code: 2 } },
  ])("mypi mcp $name is refused, naming the choices", async ({ args, expected }) => {
    expect(await mcpCommand(args)).toMatchObject(expected);
  });

  it("mypi mcp login stops at Ctrl-C", async () => {
    const interrupted = await mcpCommand(["login", "guarded", "--no-browser"], "interrupt");
    expect(interrupted).toMatchObject({ code: 130 });
    expect(interrupted.stderr).toMatch(
      /\nmypi: could not log in to MCP server "guarded": the login was interrupted\n$/,
    );
    expect(existsSync(join(s.home, "mcp-oauth"))).toBe(true);
  });
});
