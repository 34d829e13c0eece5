/**
 * The parts of `mypi batch` that need no `mypi` process: the task file's checks, the command
 * line, the results file's durability rules, how an event stream is counted, workspaces.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseArgs } from "../src/args.ts";
import { parseBatchArgs } from "../src/commands/batch/args.ts";
import { ResultsWriter, readResults, rewriteResults, type TaskResult } from "../src/commands/batch/results.ts";
import { Progress } from "../src/commands/batch/progress.ts";
import { blankResult, countEvent } from "../src/commands/batch/run-task.ts";
import { summary } from "../src/commands/batch/progress.ts";
import { DEFAULT_TIMEOUT_MS, parseTasks } from "../src/commands/batch/tasks.ts";
import { prepareWorkspace } from "../src/commands/batch/workspace.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-batch-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const parse = (lines: string[], timeoutMs?: number) =>
  parseTasks(lines.join("\n"), {
    name: "tasks.jsonl",
    baseDir: "/data/set",
    ...(timeoutMs !== undefined && { timeoutMs }),
  });

describe("the task file", () => {
  it("resolves relative paths against the task file's folder, keeps shipped extensions' names, and fills in the default timeout", () => {
    const { tasks, errors } = parse([
      JSON.stringify({
        id: "a",
        prompt: "go",
        workspace: { copy: "repo" },
        extensions: ["../gate.ts", "redact-secrets", "./permission-gate"],
        model: "scripted:s/one.json",
        check: "npm test",
      }),
      "",
      JSON.stringify({
        id: "b",
        prompt: "go",
        workspace: { git: "../r.git", ref: "v1" },
        timeoutMs: 5000,
        maxTurns: 3,
      }),
      JSON.stringify({
        id: "c",
        prompt: "go",
        workspace: { git: "https://example.invalid/x.git" },
        model: "openai:gpt-4.1-mini",
      }),
      JSON.stringify({ id: "d", prompt: "go", workspace: { files: { "src/a.ts": "x" } } }),
    ]);
    expect(errors).toEqual([]);
    expect(tasks).toEqual([
      {
        id: "a",
        prompt: "go",
        workspace: { copy: "/data/set/repo" },
        extensions: ["/data/gate.ts", "redact-secrets", "/data/set/permission-gate"],
        model: "scripted:/data/set/s/one.json",
        timeoutMs: DEFAULT_TIMEOUT_MS,
        check: "npm test",
      },
      {
        id: "b",
        prompt: "go",
        workspace: { git: "/data/r.git", ref: "v1" },
        extensions: [],
        maxTurns: 3,
        timeoutMs: 5000,
      },
      {
        id: "c",
        prompt: "go",
        workspace: { git: "https://example.invalid/x.git" },
        extensions: [],
        model: "openai:gpt-4.1-mini",
        timeoutMs: DEFAULT_TIMEOUT_MS,
      },
      {
        id: "d",
        prompt: "go",
        workspace: { files: { "src/a.ts": "x" } },
        extensions: [],
        timeoutMs: DEFAULT_TIMEOUT_MS,
      },
    ]);
  });

  it("reports every problem of every line with its line number, and keeps no task of a bad line", () => {
    const { tasks, errors } = parse(
      [
        "{not json",
        JSON.stringify({ id: "ok", prompt: "go", workspace: { files: {} } }),
        JSON.stringify({ id: "../x", prompt: "", workspace: { copy: "a", git: "b" }, timeout: 5 }),
        JSON.stringify({ id: "ok", prompt: "again", workspace: { files: { "../escape": "x", "/abs": 1 } } }),
        JSON.stringify({
          id: "t",
          prompt: "go",
          workspace: { files: {} },
          timeoutMs: "5s",
          maxTurns: 0,
          model: "gpt-4",
          check: "",
          extensions: "a.ts",
        }),
        "[1, 2]",
      ],
      1000,
    );
    expect(tasks.map((t) => t.id)).toEqual(["ok"]);
    expect(tasks[0]!.timeoutMs).toBe(1000);
    expect(errors).toEqual([
      expect.stringMatching(/^tasks\.jsonl:1: not JSON/),
      'tasks.jsonl:3: unknown field "timeout" (fields: id, prompt, workspace, extensions, model, maxTurns, timeoutMs, check)',
      'tasks.jsonl:3: "id" must be a string of letters, digits, ".", "_" or "-" starting with a letter or digit, at most 128 (got "../x")',
      'tasks.jsonl:3: "prompt" must be a non-empty string (got "")',
      'tasks.jsonl:3: "workspace" must be {"copy": "dir"}, {"git": "url", "ref": "…"} or {"files": {"path": "content"}} (got {"copy":"a","git":"b"})',
      'tasks.jsonl:4: "workspace.files": "../escape" leaves the workspace or is not a file',
      'tasks.jsonl:4: "workspace.files": "/abs" is absolute; give a path inside the workspace',
      'tasks.jsonl:4: "workspace.files": the content of "/abs" must be a string (got 1)',
      'tasks.jsonl:4: id "ok" is already used on line 2; ids must be unique',
      'tasks.jsonl:5: "extensions" must be an array of paths or names of shipped extensions (got "a.ts")',
      'tasks.jsonl:5: "model" must be "openai:<name>" or "scripted:<file>" (got "gpt-4")',
      'tasks.jsonl:5: "maxTurns" must be a whole number ≥ 1 (got 0)',
      'tasks.jsonl:5: "timeoutMs" must be a whole number of milliseconds ≥ 1 (got "5s")',
      'tasks.jsonl:5: "check" must be a shell command (got "")',
      'tasks.jsonl:6: a task is a JSON object {"id", "prompt", "workspace", …} (got [1,2])',
    ]);
  });

  it("says so when the file holds no task", () => {
    expect(parse(["", "  "]).errors).toEqual([
      'tasks.jsonl: no tasks (one JSON object a line: {"id", "prompt", "workspace"})',
    ]);
  });
});

describe("the command line of batch and worker", () => {
  it("parses the batch options and leaves the single-run options alone", () => {
    const parsed = parseArgs([
      "batch",
      "t.jsonl",
      "--concurrency",
      "4",
      "--out=o",
      "--resume",
      "--timeout",
      "900",
      "--queue",
      "redis://127.0.0.1:6379",
    ]);
    expect(parsed).toMatchObject({
      ok: true,
      args: {
        command: "batch",
        batch: {
          tasksFile: "t.jsonl",
          concurrency: 4,
          out: "o",
          resume: true,
          timeoutMs: 900,
          queue: "redis://127.0.0.1:6379",
          attempts: 3,
        },
      },
    });
  });

  it.each([
    [["batch"], "mypi batch: give the task file: mypi batch tasks.jsonl. Run `mypi batch --help`."],
    [["batch", "a", "b"], "mypi batch: one task file, got 2: a b. Run `mypi batch --help`."],
    [
      ["batch", "t", "--resume"],
      "mypi batch: --resume needs --out DIR, the folder of the batch to resume. Run `mypi batch --help`.",
    ],
    [
      ["batch", "t", "--concurrency", "0"],
      'mypi batch: --concurrency must be a whole number ≥ 1 (got "0"). Run `mypi batch --help`.',
    ],
    [["batch", "t", "-p"], "mypi batch: unknown option -p. Run `mypi batch --help`."],
    [
      ["batch", "t", "--queue", "localhost:6379"],
      'mypi batch: --queue must be a redis:// or rediss:// URL (got "localhost:6379"). Run `mypi batch --help`.',
    ],
    [["worker"], "mypi worker: needs --queue redis://host:port. Run `mypi worker --help`."],
    [["worker", "--queue", "redis://h", "--out", "x"], "mypi worker: unknown option --out. Run `mypi worker --help`."],
  ])("rejects %j with one line", (argv, error) => {
    expect(parseArgs(argv)).toEqual({ ok: false, error });
  });

  it("takes --help without the rest", () => {
    expect(parseBatchArgs("worker", ["--help"])).toMatchObject({ ok: true, args: { help: true } });
  });
});

const result = (id: string, status: TaskResult["status"] = "passed"): TaskResult => ({
  ...blankResult({ id } as never, status),
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 1,
});

describe("results.jsonl", () => {
  it("drops a torn last line when read, and cuts it off before the next append", () => {
    const file = join(dir, "torn.jsonl");
    writeFileSync(file, `${JSON.stringify(result("a"))}\n${JSON.stringify(result("b")).slice(0, 30)}`);
    const read = readResults(file);
    expect([...read.results.keys()]).toEqual(["a"]);
    expect(read.warnings).toEqual([
      `${file}: the last line was cut short (the batch was killed while writing it); that task runs again`,
    ]);

    const writer = new ResultsWriter(file);
    writer.append(result("b"));
    writer.close();
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).map((l) => JSON.parse(l).id)).toEqual(["a", "b"]);
  });

  it("rewrites the file to exactly the given results", () => {
    const file = join(dir, "rewrite.jsonl");
    writeFileSync(file, `${JSON.stringify(result("a", "aborted"))}\n${JSON.stringify(result("b"))}\n{"id":"c`);
    rewriteResults(file, [result("b")]);
    expect(readFileSync(file, "utf8")).toBe(`${JSON.stringify(result("b"))}\n`);
  });

  it("reads a missing file as no results", () => {
    expect(readResults(join(dir, "none.jsonl"))).toEqual({ results: new Map(), warnings: [] });
  });
});

describe("counting a run's events", () => {
  it("counts turns, tool calls, tokens and per-extension blocks and rewrites; the last agent_end wins", () => {
    const stats = { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} } as Parameters<
      typeof countEvent
    >[0];
    const lines = [
      { type: "turn_start" },
      { type: "message_end", message: { role: "user" } },
      { type: "message_end", message: { role: "assistant", usage: { input: 10, output: 4 } } },
      { type: "hook_decision", slot: "tool_call", extension: "gate", outcome: "block" },
      { type: "hook_decision", slot: "tool_call", extension: "gate", outcome: "pass" },
      { type: "hook_decision", slot: "tool_result", extension: "redact", outcome: "patch" },
      { type: "hook_decision", slot: "tool_call", extension: "fix", outcome: "rewrite" },
      { type: "tool_execution_end" },
      { type: "turn_start" },
      { type: "message_end", message: { role: "assistant", usage: { input: 20, output: 6 } } },
      { type: "agent_end", stopReason: "error", error: "first" },
      { type: "agent_end", stopReason: "completed", finalText: "Done." },
    ].map((e) => JSON.stringify(e));
    for (const line of [...lines, "not json", "42"]) countEvent(stats, line);
    expect(stats).toEqual({
      turns: 2,
      toolCalls: 1,
      tokens: { input: 30, output: 10 },
      extensions: {
        gate: { blocked: 1, rewrote: 0 },
        redact: { blocked: 0, rewrote: 1 },
        fix: { blocked: 0, rewrote: 1 },
      },
      stopReason: "completed",
      finalText: "Done.",
      error: undefined,
    });
  });

  it("sums the assistant messages' usage.cost into the task's cost, and the summary into the batch's", () => {
    const stats = { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} } as Parameters<
      typeof countEvent
    >[0];
    const priced = (total: number) =>
      JSON.stringify({
        type: "message_end",
        message: {
          role: "assistant",
          usage: { input: 1, output: 1, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total } },
        },
      });
    for (const line of [
      priced(0.25),
      JSON.stringify({ type: "message_end", message: { role: "assistant", usage: { input: 1, output: 1 } } }),
      priced(0.5),
    ])
      countEvent(stats, line);
    expect(stats.cost).toBe(0.75);
    const result = (id: string, cost?: number) => ({
      ...blankResult({ id, prompt: "p", timeoutMs: 1 } as never, "passed"),
      ...(cost !== undefined && { cost }),
    });
    expect(summary([result("a", 0.75), result("b", 1.5), result("c")], 3, 1000)).toContain(
      "tokens in 0 / out 0 · cost $2.25 (1 tasks without prices)",
    );
    expect(summary([result("c")], 1, 1000)).not.toContain("cost");
  });

  it("counts the child agents a run started from the progress that carries their events, their blocks with the extensions'", () => {
    const stats = { turns: 0, toolCalls: 0, tokens: { input: 0, output: 0 }, extensions: {} } as Parameters<
      typeof countEvent
    >[0];
    const child = (agentEvent: Record<string, unknown>, path = ["root", "call_1:explorer"]) => ({
      type: "tool_execution_update",
      toolName: "agent",
      partialResult: { content: [], details: { agentEvent: { ...agentEvent, agentPath: path } } },
    });
    const lines = [
      { type: "turn_start" },
      child({ type: "agent_start" }),
      child({ type: "turn_start" }),
      child({ type: "message_end", message: { role: "assistant", usage: { input: 7, output: 3 } } }),
      child({ type: "hook_decision", extension: "gate", outcome: "block" }),
      child({ type: "tool_execution_end" }),
      child({ type: "agent_start" }, ["root", "call_1:explorer", "call_1:helper"]),
      child({ type: "agent_end", stopReason: "completed" }),
      { type: "tool_execution_update", partialResult: { content: [{ type: "text", text: "bash output" }] } },
      { type: "tool_execution_end" },
      { type: "agent_end", stopReason: "completed", finalText: "Done." },
    ].map((e) => JSON.stringify(e));
    for (const line of lines) countEvent(stats, line);
    expect(stats).toMatchObject({
      turns: 1,
      toolCalls: 1,
      extensions: { gate: { blocked: 1, rewrote: 0 } },
      children: { started: 2, turns: 1, toolCalls: 1, tokens: { input: 7, output: 3 } },
      stopReason: "completed",
    });
  });
});

describe("task workspaces", () => {
  const signal = new AbortController().signal;

  it("copies a folder, keeping symbolic links as links", async () => {
    const src = join(dir, "src-copy");
    mkdirSync(join(src, "sub"), { recursive: true });
    writeFileSync(join(src, "sub", "a.txt"), "a");
    symlinkSync("/etc/hostname", join(src, "link"));
    const ws = join(dir, "ws-copy");
    await prepareWorkspace({ copy: src }, ws, signal);
    expect(readFileSync(join(ws, "sub", "a.txt"), "utf8")).toBe("a");
    expect(readlinkSync(join(ws, "link"))).toBe("/etc/hostname");
    await expect(prepareWorkspace({ copy: join(dir, "nope") }, join(dir, "ws-nope"), signal)).rejects.toThrow(
      `workspace.copy: ${join(dir, "nope")} is not a folder this machine can read`,
    );
  });

  it("clones a git repository at a ref", async () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
        cwd: repo,
      });
    git("init", "-q");
    writeFileSync(join(repo, "v.txt"), "one");
    git("add", ".");
    git("commit", "-qm", "one");
    git("tag", "v1");
    writeFileSync(join(repo, "v.txt"), "two");
    git("commit", "-qam", "two");
    await prepareWorkspace({ git: repo, ref: "v1" }, join(dir, "ws-git"), signal);
    expect(readFileSync(join(dir, "ws-git", "v.txt"), "utf8")).toBe("one");
    await prepareWorkspace({ git: repo }, join(dir, "ws-git-head"), signal);
    expect(readFileSync(join(dir, "ws-git-head", "v.txt"), "utf8")).toBe("two");
    await expect(prepareWorkspace({ git: repo, ref: "no-such-ref" }, join(dir, "ws-git-bad"), signal)).rejects.toThrow(
      /^git checkout failed \(exit 128\): fatal: /,
    );
  });

  it("writes the given files and refuses a path outside the workspace", async () => {
    await prepareWorkspace({ files: { "a/b.txt": "x", "c.txt": "y" } }, join(dir, "ws-files"), signal);
    expect(readFileSync(join(dir, "ws-files", "a", "b.txt"), "utf8")).toBe("x");
    await expect(prepareWorkspace({ files: { "../out.txt": "x" } }, join(dir, "ws-escape"), signal)).rejects.toThrow(
      'workspace.files: "../out.txt" leaves the workspace or is not a file',
    );
    expect(existsSync(join(dir, "out.txt"))).toBe(false);
  });
});

describe("loading", () => {
  it("imports bullmq only from the queue modules, and those only lazily, so mypi --help and mypi -p never load it", () => {
    const src = join(import.meta.dirname, "..", "src");
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const importers = files.filter((f) => /from "bullmq"/.test(readFileSync(join(src, f), "utf8"))).sort();
    expect(importers).toEqual(["commands/batch/queue.ts", "commands/batch/worker.ts"]);
    const staticImports = files.filter((f) =>
      /^import [^;]*from "\.\/(queue|worker)\.ts"/m.test(readFileSync(join(src, f), "utf8")),
    );
    expect(staticImports).toEqual(["commands/batch/worker.ts"]); // the worker uses the queue's helpers; both are loaded together
    expect(readFileSync(join(src, "commands", "batch", "command.ts"), "utf8")).toMatch(
      /await import\("\.\/queue\.ts"\)[^]*await import\("\.\/worker\.ts"\)/,
    );
  });
});

describe("progress", () => {
  const sink = () => {
    let text = "";
    return { stream: { write: (s: string) => void (text += s) } as unknown as NodeJS.WritableStream, text: () => text };
  };

  it("writes one plain line per finished task when stdout is not a terminal", () => {
    const out = sink();
    const progress = new Progress(2, out.stream, false);
    progress.start();
    progress.finish(result("a"));
    progress.finish({ ...result("b", "error"), error: "mypi was killed\nby SIGKILL" });
    progress.close();
    expect(out.text()).toBe("[1/2] ✓ a passed 0.0s\n[2/2] ✗ b error 0.0s — mypi was killed ⏎ by SIGKILL\n");
  });

  it("on a terminal, redraws one status line and prints only the tasks that did not pass above it", () => {
    const out = sink();
    const progress = new Progress(3, out.stream, true);
    progress.start();
    progress.start();
    progress.finish(result("a"));
    progress.finish(result("b", "timeout"));
    const text = out.text();
    expect(text).not.toContain("✓ a");
    expect(text).toContain("\r\x1b[2K✗ b timeout 0.0s\n");
    expect(text.split("\r\x1b[2K").at(-1)).toMatch(/^done 2\/3 · not passed 1 · running 0 · ETA \d+:\d\d$/);
  });
});
