/**
 * What mypi writes that no slot passes, masked when redact-secrets is loaded and kept as it is
 * without it: the verdicts (`hook_decision`, `extension_error`: an extension's `reason` and
 * `error` are its own text), as the host records them in the session and as JSON mode writes
 * them, and the progress lines of JSON mode.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-verdicts-");
afterAll(() => sandbox.cleanup());
const TOKEN = `ghp_${"v3rd1ctT0k".repeat(4)}`;
const guard = join(REPO, "test", "fixtures", "quoting-guard.ts");

/**
 * The session's verdict entries, as lines of its file, and the verdict event lines of stdout (the
 * model's own tool call keeps the token: no slot sees model output).
 */
async function verdictsAfterRun(name: string, extensions: string[]): Promise<{ file: string; stdout: string }> {
  const script = sandbox.script([
    { toolCalls: [{ name: "bash", arguments: { command: `echo ${TOKEN}` } }] },
    { text: "done" },
  ]);
  const session = join(sandbox.root, "sessions", `${name}.jsonl`);
  const r = await sandbox.run([
    ...extensions.flatMap((e) => ["-e", e]),
    "--mode",
    "json",
    "--model",
    `scripted:${script}`,
    "--session",
    session,
    "-p",
    "go",
  ]);
  // The guard refused the model's call: the run completed without doing all it was asked (exit 1).
  expect(r.code).toBe(1);
  const verdictLines = r.stdout
    .split("\n")
    .filter((l) => l.startsWith('{"type":"hook_decision"') || l.startsWith('{"type":"extension_error"'));
  return {
    file: readFileSync(session, "utf8")
      .split("\n")
      .filter((l) => l.includes('"customType":"mypi:'))
      .join("\n"),
    stdout: verdictLines.join("\n"),
  };
}

describe("verdicts recorded in the session", () => {
  it("are masked by redact-secrets when it is loaded, in the session and on stdout: the token the guard quoted is not in them", async () => {
    const { file, stdout } = await verdictsAfterRun("redacted", [SHIPPED("redact-secrets"), guard]);
    expect(file).toContain('"customType":"mypi:hook_decision"');
    expect(file).toContain("refused: echo ");
    expect(file).toContain('"customType":"mypi:extension_error"');
    expect(file).not.toContain(TOKEN);
    expect(stdout).toContain('"outcome":"block"');
    expect(stdout).toContain('{"type":"extension_error"');
    expect(stdout).toContain("refused: echo [REDACTED:github-token]");
    expect(stdout).not.toContain(TOKEN);
  });

  it("are kept as the extension wrote them without redact-secrets", async () => {
    const { file, stdout } = await verdictsAfterRun("raw", [guard]);
    expect(file).toContain(`refused: echo ${TOKEN}`);
    expect(stdout).toContain(`refused: echo ${TOKEN}`);
  });
});

describe("the model's own tool-call arguments", () => {
  async function runWriting(name: string, extensions: string[]) {
    const ws = join(sandbox.root, `args-${name}`);
    sandbox.file(join(ws, ".keep"), "");
    const script = sandbox.script([
      {
        text: `Saving ${TOKEN}.`,
        toolCalls: [{ name: "bash", arguments: { command: `printf %s ${TOKEN} > token.txt` } }],
      },
      { text: "done" },
    ]);
    const session = join(sandbox.root, "sessions", `args-${name}.jsonl`);
    const r = await sandbox.run([
      ...extensions.flatMap((e) => ["-e", e]),
      "--cwd",
      ws,
      "--model",
      `scripted:${script}`,
      "--session",
      session,
      "-p",
      "go",
    ]);
    expect(r).toMatchObject({ code: 0, stdout: "done\n" });
    const html = join(sandbox.root, `args-${name}.html`);
    expect((await sandbox.run(["export", session, html])).code).toBe(0);
    return {
      file: readFileSync(session, "utf8"),
      html: readFileSync(html, "utf8"),
      written: readFileSync(join(ws, "token.txt"), "utf8"),
    };
  }

  it("are masked in the session file and the HTML view by redact-secrets, while the tool runs with the real ones", async () => {
    const { file, html, written } = await runWriting("redacted", [SHIPPED("redact-secrets")]);
    expect(written).toBe(TOKEN);
    expect(file).toContain('"command":"printf %s [REDACTED:github-token] > token.txt"');
    expect(file).toContain("Saving [REDACTED:github-token].");
    expect(file).not.toContain(TOKEN);
    expect(html).not.toContain(TOKEN);
  });

  it("are recorded as the model wrote them without redact-secrets", async () => {
    const { file, written } = await runWriting("raw", []);
    expect(written).toBe(TOKEN);
    expect(file).toContain(`"command":"printf %s ${TOKEN} > token.txt"`);
  });
});

describe("errors of session_start handlers, written before the run starts", () => {
  it("are masked on stdout in JSON mode when redact-secrets is loaded", async () => {
    const failing = sandbox.file(
      join(sandbox.root, "start-fails.ts"),
      `export default (pi) => pi.on("session_start", () => { throw new Error("cannot use ${TOKEN}"); });\n`,
    );
    const script = sandbox.script([{ text: "done" }]);
    const run = (extensions: string[]) =>
      sandbox.run([
        ...extensions.flatMap((e) => ["-e", e]),
        "--mode",
        "json",
        "--no-session",
        "--model",
        `scripted:${script}`,
        "-p",
        "go",
      ]);
    const masked = await run([SHIPPED("redact-secrets"), failing]);
    const errorLine = masked.stdout.split("\n").find((l) => l.startsWith('{"type":"extension_error"'));
    expect(errorLine).toContain("cannot use [REDACTED:github-token]");
    expect(masked.stdout).not.toContain(TOKEN);
    expect((await run([failing])).stdout).toContain(`cannot use ${TOKEN}`);
  });
});

describe("progress lines in JSON mode", () => {
  /** A bash call that prints the token, then waits for a file the test writes once progress was seen. */
  async function progressOf(extensions: string[]): Promise<string[]> {
    // In the workspace: bash runs in the sandbox, whose /tmp is its own.
    const stop = join(sandbox.ws, `stop-${extensions.length}`);
    const script = sandbox.script([
      {
        toolCalls: [
          { name: "bash", arguments: { command: `echo ${TOKEN}; while [ ! -e ${stop} ]; do sleep 0.05; done` } },
        ],
      },
      { text: "done" },
    ]);
    const p = sandbox.spawn([
      ...extensions.flatMap((e) => ["-e", e]),
      "--mode",
      "json",
      "--no-session",
      "--model",
      `scripted:${script}`,
      "-p",
      "go",
    ]);
    await p.waitFor((l) => l.type === "tool_execution_update");
    writeFileSync(stop, "");
    expect((await p.exit).code).toBe(0);
    return p.lines.filter((l) => l.type === "tool_execution_update").map((l) => JSON.stringify(l.partialResult));
  }

  it("mask a tool's partial output with redact-secrets' patterns when it is loaded", async () => {
    const updates = await progressOf([SHIPPED("redact-secrets")]);
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.join("\n")).not.toContain(TOKEN);
    expect(updates[0]).toContain("[REDACTED:github-token]");
  });

  it("carry it as the tool printed it without redact-secrets", async () => {
    const updates = await progressOf([]);
    expect(updates[0]).toContain(TOKEN);
  });
});

describe("the session's name (RPC set_session_name)", () => {
  it("is masked by redact-secrets when it is loaded, in the session file, get_state and the export", async () => {
    const session = join(sandbox.root, "sessions", "named.jsonl");
    const script = sandbox.script([{ text: "ok" }]);
    const p = sandbox.spawn([
      "-e",
      SHIPPED("redact-secrets"),
      "--mode",
      "rpc",
      "--model",
      `scripted:${script}`,
      "--session",
      session,
    ]);
    p.send({ id: "p", type: "prompt", message: "hi" });
    await p.waitFor((l) => l.type === "agent_end");
    p.send({ id: "n", type: "set_session_name", name: `deploy with ${TOKEN}` });
    await p.waitFor((l) => l.id === "n");
    p.send({ id: "s", type: "get_state" });
    expect((await p.waitFor((l) => l.id === "s")).data.sessionName).toBe("deploy with [REDACTED:github-token]");
    const page = join(sandbox.root, "named.html");
    p.send({ id: "x", type: "export_html", outputPath: page });
    await p.waitFor((l) => l.id === "x");
    p.end();
    expect((await p.exit).code).toBe(0);
    expect(readFileSync(session, "utf8")).toContain("deploy with [REDACTED:github-token]");
    expect(readFileSync(session, "utf8")).not.toContain(TOKEN);
    expect(readFileSync(page, "utf8")).not.toContain(TOKEN);
  });
});

describe("a password in the base URL", () => {
  it("never reaches stderr or the session, with or without redact-secrets, and the error names the fix", async () => {
    const session = join(sandbox.root, "sessions", "base-url.jsonl");
    const r = await sandbox.run(
      [
        "--base-url",
        "http://ann:s3cretPassw0rd@127.0.0.1:9/v1",
        "--model",
        "openai:gpt-x",
        "--session",
        session,
        "-p",
        "hi",
      ],
      { env: { OPENAI_API_KEY: "x" } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "mypi: the base URL http://***@127.0.0.1:9/v1 carries a user name or password, which HTTP clients refuse to send in a URL: drop it from the URL and give the key as OPENAI_API_KEY (sent as a bearer token)\n",
    );
    expect(readFileSync(session, "utf8")).not.toContain("s3cretPassw0rd");
  });
});

describe("a batch check's output in results.jsonl", () => {
  it("is masked when the task loads redact-secrets (by name), and kept as printed without it", async () => {
    const script = sandbox.script([{ text: "done" }]);
    const line = (id: string, extensions: string[]) =>
      JSON.stringify({
        id,
        prompt: "go",
        workspace: { files: { "a.txt": "x" } },
        model: `scripted:${script}`,
        extensions,
        check: `echo token ${TOKEN}`,
      });
    const tasks = sandbox.file("batch/tasks.jsonl", `${line("masked", ["redact-secrets"])}\n${line("raw", [])}\n`);
    const out = join(sandbox.root, "batch", "out");
    const r = await sandbox.run(["batch", tasks, "--out", out]);
    expect(r.code).toBe(0);
    const results = readFileSync(join(out, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; check: { outputTail: string } });
    const tail = (id: string) => results.find((x) => x.id === id)!.check.outputTail;
    expect([tail("masked"), tail("raw")]).toEqual(["token [REDACTED:github-token]\n", `token ${TOKEN}\n`]);
  });
});
