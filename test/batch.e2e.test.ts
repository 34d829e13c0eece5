/**
 * `mypi batch` on this machine, end to end: real `mypi -p` children with scripted models, a
 * crashing task, a hanging one past its timeout, a failing check; a batch killed with SIGKILL
 * and resumed; Ctrl+C.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processesMentioning, readResultLines, startMypi, waitFor } from "./helpers/batch.ts";
import { REPO, SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-batch-");
afterAll(() => sandbox.cleanup());

const writeScript = sandbox.script(
  [
    {
      text: "Writing.",
      toolCalls: [{ name: "write", arguments: { path: "out.txt", content: "done\n" } }],
      usage: { input: 100, output: 10 },
    },
    { text: "Done.", usage: { input: 120, output: 5 } },
  ],
  "write.json",
);
const blockedScript = sandbox.script(
  [{ text: "Cleaning.", toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] }, { text: "Left it." }],
  "blocked.json",
);
const hangScript = sandbox.script([{ text: "Thinking…", delayMs: 600_000 }], "hang.json");
const crash = join(REPO, "test", "fixtures", "batch", "crash-extension.ts");

function taskFile(name: string, tasks: object[]): string {
  return sandbox.file(`${name}/tasks.jsonl`, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
}
const writeTask = (id: string, extra: object = {}) => ({
  id,
  prompt: "write out.txt",
  workspace: { files: { "README.md": `task ${id}\n` } },
  model: `scripted:${writeScript}`,
  check: "grep -q done out.txt",
  ...extra,
});

describe("mypi batch", () => {
  it("runs 20 tasks 4 at a time; a crash, a hang and a failing check are recorded and stop nothing", async () => {
    const tasks = [
      ...Array.from({ length: 15 }, (_, i) => writeTask(`w${String(i).padStart(2, "0")}`)),
      writeTask("gated1", {
        model: `scripted:${blockedScript}`,
        extensions: [SHIPPED("permission-gate")],
        check: "test ! -e out.txt",
      }),
      writeTask("gated2", {
        model: `scripted:${blockedScript}`,
        extensions: [SHIPPED("permission-gate")],
        check: "test ! -e out.txt",
      }),
      writeTask("crash", { extensions: [crash] }),
      writeTask("hang", { model: `scripted:${hangScript}`, timeoutMs: 2_000 }),
      writeTask("bad-check", { check: "echo 'expected 3 files, found 1' >&2; exit 3" }),
    ];
    const file = taskFile("twenty", tasks);
    const out = join(sandbox.root, "twenty", "out");
    const batch = startMypi(["batch", file, "--concurrency", "4", "--out", out], { cwd: sandbox.ws, env: sandbox.env });
    const { code } = await batch.exit;
    expect(code).toBe(1);

    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => r.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    const byId = new Map(results.map((r) => [r.id, r]));
    for (const t of tasks.filter((t) => t.id.startsWith("w"))) {
      expect(byId.get(t.id)).toMatchObject({
        status: "passed",
        stopReason: "completed",
        finalText: "Done.",
        turns: 2,
        toolCalls: 1,
        tokens: { input: 220, output: 15 },
        exitCode: 0,
        check: { exitCode: 0, outputTail: "" },
        extensions: {},
        sessionFile: join(out, "sessions", `${t.id}.jsonl`),
      });
    }
    // The session of a task is its own, and reopens: a header and the run's four messages.
    const session = readFileSync(join(out, "sessions", "w00.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(session.map((e) => (e.type === "message" ? e.message.role : e.type))).toEqual([
      "session",
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(byId.get("gated1")).toMatchObject({
      status: "passed",
      toolCalls: 1,
      extensions: { "permission-gate": { blocked: 1, rewrote: 0 } },
    });
    expect(byId.get("crash")).toMatchObject({ status: "error", signal: "SIGKILL", exitCode: null, turns: 0 });
    expect(byId.get("crash")!.error).toMatch(/^mypi was killed by SIGKILL before the run ended/);
    expect(byId.get("hang")).toMatchObject({ status: "timeout", error: "the task ran past its 2000 ms" });
    expect(byId.get("bad-check")).toMatchObject({
      status: "failed",
      stopReason: "completed",
      check: { exitCode: 3, outputTail: "expected 3 files, found 1\n" },
    });
    // Workspaces are removed unless asked to keep them.
    expect(existsSync(join(out, "workspaces", "w00"))).toBe(false);

    // Never more than 4 at once (each result's span, as the batch measured it).
    const spans = results.map((r) => [Date.parse(r.startedAt), Date.parse(r.startedAt) + r.durationMs] as const);
    const overlap = Math.max(...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length));
    expect(overlap).toBeLessThanOrEqual(4);
    expect(overlap).toBeGreaterThan(1);

    const stdout = batch.lines.join("\n");
    expect(stdout).toContain("20 of 20 tasks recorded");
    expect(stdout).toContain("passed 17 · failed 1 · error 1 · timeout 1 · aborted 0");
    expect(stdout).toMatch(/permission-gate\s+2\s+0\s+2/);
    // Plain lines when stdout is not a terminal: one per task, numbered.
    expect(batch.lines.filter((l) => /^\[\d+\/20\] /.test(l))).toHaveLength(20);
  }, 120_000);

  it("keeps every finished line when killed with SIGKILL, its tasks stop by themselves, and --resume runs each remaining task once", async () => {
    // One lane hangs (no timeout in sight); the other gets through the rest.
    const tasks = [
      writeTask("hang", { model: `scripted:${hangScript}` }),
      ...Array.from({ length: 5 }, (_, i) => writeTask(`k${i}`)),
    ];
    const file = taskFile("killed", tasks);
    const out = join(sandbox.root, "killed", "out");
    const first = startMypi(["batch", file, "--concurrency", "2", "--out", out], { cwd: sandbox.ws, env: sandbox.env });
    await first.waitForLine((l) => l.startsWith("[3/6]"));
    first.child.kill("SIGKILL");
    await first.exit;
    // Its running tasks lead their own process groups, so the kill did not reach them, and the
    // hanging one has nobody left to enforce a timeout: they notice their parent is gone.
    await waitFor(() => processesMentioning(out).length === 0, "the killed batch's tasks to end");
    const kept = readResultLines(join(out, "results.jsonl"));
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(6);
    expect(kept.map((r) => r.id)).not.toContain("hang");
    // A kill in the middle of a write leaves half a line; make sure there is one.
    const torn = tasks.find((t) => t.id !== "hang" && !kept.some((r) => r.id === t.id)) ?? tasks[0]!;
    appendFileSync(join(out, "results.jsonl"), JSON.stringify({ id: torn.id, status: "passed" }).slice(0, 20));

    const again = startMypi(["batch", file, "--concurrency", "2", "--out", out], { cwd: sandbox.ws, env: sandbox.env });
    expect((await again.exit).code).toBe(2);
    expect(again.lines.join("\n")).toContain(
      "results.jsonl already has results: add --resume to go on with that batch",
    );

    // The user fixes the hanging task and resumes: only ids decide what has run.
    taskFile("killed", [writeTask("hang"), ...tasks.slice(1)]);
    const resumed = startMypi(["batch", file, "--concurrency", "2", "--out", out, "--resume"], {
      cwd: sandbox.ws,
      env: sandbox.env,
    });
    expect((await resumed.exit).code).toBe(0);
    expect(resumed.lines.join("\n")).toContain("the last line was cut short");
    expect(resumed.lines).toContain(
      `resuming ${out}: ${kept.length} of 6 tasks have a result, ${6 - kept.length} to run`,
    );
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => r.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(results.every((r) => r.status === "passed")).toBe(true);
    expect(results.slice(0, kept.length)).toEqual(kept);
  }, 120_000);

  it("stops on Ctrl+C: running tasks are recorded aborted, the rest is left for --resume", async () => {
    const gate = join(sandbox.root, "ctrl-c", "gate");
    const tasks = Array.from({ length: 4 }, (_, i) =>
      writeTask(`c${i}`, { check: `while [ ! -e '${gate}' ]; do sleep 0.05; done` }),
    );
    const file = taskFile("ctrl-c", tasks);
    const out = join(sandbox.root, "ctrl-c", "out");
    const batch = startMypi(["batch", file, "--concurrency", "2", "--out", out], { cwd: sandbox.ws, env: sandbox.env });
    // Both lanes are in their checks once the two sessions hold the final answer.
    await waitFor(
      () => ["c0", "c1"].every((id) => sessionHas(join(out, "sessions", `${id}.jsonl`), "Done.")),
      "two tasks to reach their check",
    );
    batch.child.kill("SIGINT");
    expect((await batch.exit).code).toBe(130);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual([
      ["c0", "aborted"],
      ["c1", "aborted"],
    ]);
    expect(processesMentioning(out)).toEqual([]);

    writeFileSync(gate, "");
    const resumed = startMypi(["batch", file, "--out", out, "--resume"], { cwd: sandbox.ws, env: sandbox.env });
    expect((await resumed.exit).code).toBe(0);
    const after = readResultLines(join(out, "results.jsonl"));
    expect(after.map((r) => [r.id, r.status]).sort()).toEqual(tasks.map((t) => [t.id, "passed"]));
  }, 120_000);

  it("loads shipped extensions named in a task as -e does; a task whose extensions fail says which and why, and names no session file", async () => {
    const file = taskFile("shipped", [
      writeTask("named", {
        model: `scripted:${blockedScript}`,
        extensions: ["redact-secrets", "permission-gate"],
        check: "test ! -e out.txt",
      }),
      writeTask("broken", { extensions: ["./missing-guard.ts", "redact-secret"] }),
    ]);
    const out = join(sandbox.root, "shipped", "out");
    const { code } = await startMypi(["batch", file, "--out", out], { cwd: sandbox.ws, env: sandbox.env }).exit;
    expect(code).toBe(1);
    const byId = new Map(readResultLines(join(out, "results.jsonl")).map((r) => [r.id, r]));
    expect(byId.get("named")).toMatchObject({
      status: "passed",
      stopReason: "completed",
      extensions: { "permission-gate": { blocked: 1, rewrote: 0 } },
      sessionFile: join(out, "sessions", "named.jsonl"),
    });
    expect(existsSync(byId.get("named")!.sessionFile)).toBe(true);
    const broken = byId.get("broken")!;
    expect(broken).toMatchObject({ status: "error", exitCode: 2 });
    expect(broken.error).toMatch(
      /^mypi exited with code 2 before the run ended: extension missing-guard failed to load: .*missing-guard\.ts.* · extension redact-secret failed to load: .*redact-secret.* · mypi: not running without the 2 extensions above/,
    );
    expect(broken).not.toHaveProperty("sessionFile");
    expect(existsSync(join(out, "sessions", "broken.jsonl"))).toBe(false);
  });

  it("runs nothing when a line of the task file is invalid, and names the line", async () => {
    const file = taskFile("invalid", [writeTask("a"), { id: "b", prompt: "go" }]);
    const r = await sandbox.run(["batch", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `${file}:2: "workspace" must be {"copy": "dir"}, {"git": "url", "ref": "…"} or {"files": {"path": "content"}} (got nothing)\n` +
        "mypi batch: the task file has 1 problem; nothing was run.\n",
    );
  });
});

function sessionHas(file: string, text: string): boolean {
  return existsSync(file) && readFileSync(file, "utf8").includes(text);
}
