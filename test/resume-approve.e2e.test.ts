/**
 * Approvals that wait, through the CLI (docs/resume.md#approvals): a print run with `--on-ask
 * pause` stops where permission-gate asks (exit 3), `mypi approve` answers from a second process,
 * `--continue-run` goes on in a third — the approved call runs, a denied one is answered as
 * denied. A batch task paused the same way shows as `paused`, and `mypi batch --resume` after
 * `mypi approve` finishes it, recorded once. A second process on a session being written is
 * refused.
 *
 * The gate asks because of an `ask` rule on a harmless command (`echo ship`), so nothing here
 * runs anything a policy should stop.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager, textOf } from "@mypi/kernel";
import { afterAll, describe, expect, it } from "vitest";
import { readResultLines } from "./helpers/batch.ts";
import { SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-approve-");
afterAll(() => sandbox.cleanup());
sandbox.file(join(sandbox.home, "settings.json"), JSON.stringify({ permissions: { ask: ["Bash(echo ship:*)"] } }));

const script = sandbox.file(
  "scripts/ship.json",
  JSON.stringify({
    replay: "history",
    turns: [
      {
        text: "Shipping.",
        toolCalls: [
          { name: "bash", arguments: { command: "echo ship >> shipped.log" } },
          { name: "bash", arguments: { command: "echo after >> shipped.log" } },
        ],
      },
      { text: "Over to you." },
    ],
  }),
);
const gate = ["-e", SHIPPED("permission-gate")];
const run = (session: string, ...more: string[]) =>
  sandbox.run(["--model", `scripted:${script}`, ...gate, "--session", session, "--on-ask", "pause", ...more]);
const shipped = () =>
  existsSync(join(sandbox.ws, "shipped.log")) ? readFileSync(join(sandbox.ws, "shipped.log"), "utf8") : "";
const toolResults = (file: string) =>
  SessionManager.open(file)
    .buildContext({ repair: false })
    .flatMap((m) => (m.role === "toolResult" ? [[m.toolCallId, m.isError, textOf(m.content)]] : []));

describe("a paused run, answered from another process", () => {
  it("approved: the call runs when the run goes on, then the calls it held, then the answer", {
    timeout: 180_000,
  }, async () => {
    const file = join(sandbox.root, "approved.jsonl");
    const first = await run(file, "-p", "ship it");
    expect(first.code).toBe(3);
    // The gate's question with its scopes (`mypi approve --scope` picks one).
    const question = `Allow bash: echo ship >> shipped.log? — it needs confirmation by the rule Bash(echo ship:*) (permissions.ask in ${join(sandbox.home, "settings.json")}) (Allow once / Allow for this session: Bash(echo ship:*) / Deny / Deny, and tell the model why)`;
    expect(first.stderr).toContain(`mypi: paused for approval; waiting: bash (call_1): ${question}`);
    expect(first.stderr).toContain(`then go on with: mypi --session ${file} --continue-run`);
    expect(shipped()).toBe("");

    const list = await sandbox.run(["approve", file, "--list"]);
    expect(list.stdout).toBe(`call_1  bash {"command":"echo ship >> shipped.log"} — ${question} (permission-gate)\n`);
    const approve = await sandbox.run(["approve", file, "call_1", "--scope", "session"]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain(`go on with: mypi --session ${file} --continue-run`);

    const resumed = await run(file, "--mode", "json", "--continue-run");
    expect(resumed.code).toBe(0);
    const end = resumed.events().at(-1)!;
    expect(end).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Over to you." });
    expect(shipped()).toBe("ship\nafter\n");
    expect(toolResults(file).map(([id, isError]) => [id, isError])).toEqual([
      ["call_1", false],
      ["call_2", false],
    ]);
    // The resumed process told its extensions why it started.
    expect(
      resumed
        .events()
        .filter((e) => e.type === "hook_decision" && e.extension === "permission-gate")
        .map((e) => e.outcome),
    ).toEqual(["pass", "pass"]);

    const again = await run(file, "--continue-run");
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      "mypi: Nothing to resume: the last run reached its answer and nothing is queued. Send a prompt instead.\n",
    );
  });

  it("denied: the call never runs, the model is told why, and goes on", { timeout: 180_000 }, async () => {
    const file = join(sandbox.root, "denied.jsonl");
    const before = shipped();
    expect((await run(file, "-p", "ship it")).code).toBe(3);
    const waiting = await run(file, "--continue-run");
    expect(waiting.code).toBe(3);
    expect(waiting.stderr).toMatch(/The run waits for answers on bash \(call_1\): approve\(\) or deny\(\) it first/);
    const deny = await sandbox.run(["approve", file, "--deny", "not on a Friday"]);
    expect(deny.code).toBe(0);
    const resumed = await run(file, "--continue-run");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("Over to you.\n");
    expect(shipped()).toBe(`${before}after\n`);
    expect(toolResults(file)).toEqual([
      ["call_1", true, "Not run: the call was denied: not on a Friday. Do it another way, or ask the user."],
      ["call_2", false, "(no output)"],
    ]);
  });

  it("--on-ask fail stops the run at the same point and exits 1", { timeout: 120_000 }, async () => {
    const r = await sandbox.run([
      "--model",
      `scripted:${script}`,
      ...gate,
      "--no-session",
      "--on-ask",
      "fail",
      "-p",
      "ship it",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("mypi: stopped: a check asked a person and --on-ask is fail; waiting: bash (call_1)");
  });
});

describe("one writer per session", () => {
  it("a second process on a session another one is writing is refused, and writes nothing", {
    timeout: 120_000,
  }, async () => {
    const file = join(sandbox.root, "busy.jsonl");
    const holder = sandbox.spawn(["--mode", "rpc", "--model", `scripted:${script}`, "--session", file]);
    holder.send({ id: "s", type: "get_state" });
    await holder.waitFor((l) => l.id === "s");
    const second = await sandbox.run(["--model", `scripted:${script}`, "--session", file, "-p", "hi"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `^mypi: Session ${file} is being written by process ${holder.child.pid} on \\S+: one writer at a time\\.`,
      ),
    );
    expect(existsSync(file)).toBe(false);
    holder.end();
    await holder.exit;
    // Once the first let go, the second may write.
    expect(
      (await sandbox.run(["--model", `scripted:${script}`, "--session", file, "--no-builtin-tools", "-p", "hi"])).code,
    ).toBe(0);
  });
});

describe("a batch task paused for approval", () => {
  it("shows as paused, keeps its workspace, and finishes under --resume after mypi approve, recorded once", {
    timeout: 240_000,
  }, async () => {
    const tasks = sandbox.file(
      "batch/tasks.jsonl",
      `${JSON.stringify({ id: "ship", prompt: "ship it", workspace: { files: { "a.txt": "a" } }, model: `scripted:${script}`, extensions: [SHIPPED("permission-gate")], check: "grep -q ship shipped.log" })}\n` +
        `${JSON.stringify({ id: "plain", prompt: "say hi", workspace: { files: {} }, model: `scripted:${sandbox.script([{ text: "hi" }])}` })}\n`,
    );
    const out = join(sandbox.root, "batch", "out");
    const first = await sandbox.run(["batch", tasks, "--out", out, "--on-ask", "pause", "--concurrency", "2"]);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/\[\d\/2\] ⏸ ship paused/);
    expect(first.stdout).toContain("passed 1 · failed 0 · error 0 · timeout 0 · aborted 0 · paused 1");
    const [paused] = readResultLines(join(out, "results.jsonl")).filter((r) => r.id === "ship");
    expect(paused).toMatchObject({
      status: "paused",
      stopReason: "paused",
      waiting: [{ toolCallId: "call_1", toolName: "bash" }],
      workspace: join(out, "workspaces", "ship"),
    });
    expect(existsSync(join(out, "workspaces", "ship", "a.txt"))).toBe(true);

    expect((await sandbox.run(["approve", paused!.sessionFile])).code).toBe(0);
    const second = await sandbox.run(["batch", tasks, "--out", out, "--resume", "--on-ask", "pause"]);
    expect(second.code).toBe(0);
    const results = readResultLines(join(out, "results.jsonl"));
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual([
      ["plain", "passed"],
      ["ship", "passed"],
    ]);
    expect(results.find((r) => r.id === "ship")).toMatchObject({ resumed: true, turns: 2, toolCalls: 2 });
    expect(existsSync(join(out, "workspaces", "ship"))).toBe(false);
  });
});
