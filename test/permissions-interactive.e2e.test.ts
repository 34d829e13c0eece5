/**
 * Permissions in a real terminal (pty): each scope of an answer picked in the gate's dialog and
 * honoured as promised (once: asked again; this session: not asked again; always in this project:
 * written to .mypi/settings.local.json and not asked by the next process; deny with a reason the
 * model reads), the mode switched with
 * Alt+M and /mode, and a plan accepted through exit_plan_mode. mypi runs in a throwaway jail (the
 * file system read-only but the test's folder).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probeSandbox } from "@mypi/builtin-tools";
import { IDLE, ptySuite } from "./helpers/pty.ts";

const probe = await probeSandbox();
const { sandbox, terminal } = ptySuite();
const DOWN = "\x1b[B";

/** One prompt's turns: a tool call, then a line of text. */
const step = (name: string, args: Record<string, unknown>, text: string) => [
  { toolCalls: [{ name, arguments: args }] },
  { text },
];

describe.skipIf(!probe.ok)("permissions in interactive mode", () => {
  it("honours once, this session and always in this project as promised, and gives the model the reason of a denial", {
    timeout: 300_000,
  }, async () => {
    const ws = join(sandbox.root, "scopes");
    mkdirSync(join(ws, "build"), { recursive: true });
    const script = sandbox.script([
      ...step("bash", { command: "rm -rf build" }, "One."),
      ...step("bash", { command: "mkdir build && rm -rf build" }, "Two."),
      ...step("bash", { command: "mkdir build && rm -rf build" }, "Three."),
      ...step("bash", { command: "git push --force origin main" }, "Four."),
      ...step("bash", { command: "git reset --hard" }, "Five."),
    ]);
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--cwd", ws, "-e", "permission-gate"], {
      jail: true,
    });
    await t.see(IDLE);
    await t.see(/permission gate: on \(-e permission-gate\) · mode: default \(Alt\+M or \/mode switches\)/);

    t.type("one\r");
    await t.see(
      /\? Allow bash: rm -rf build\? — it looks destructive \(recursive rm\)\n→ Allow once\n {2}Allow for this session: Bash\(rm -rf build:\*\)\n/,
    );
    t.type("\r"); // allow once
    await t.see(/\nOne\.\n/);
    expect(existsSync(join(ws, "build"))).toBe(false);

    t.type("two\r");
    await t.see(/\? Allow bash: mkdir build && rm -rf build\? — it looks destructive \(recursive rm\)\n→ Allow once\n/);
    t.type(`${DOWN}\r`); // allow for this session
    await t.see(
      /\? Allow bash: mkdir build && rm -rf build\? — it looks destructive \(recursive rm\) Allow for this session: Bash\(rm -rf build:\*\)\nTwo\.\n/,
    );

    t.type("three\r");
    await t.see(/\nThree\.\n/);
    expect(t.screen().match(/\? Allow bash/g)).toHaveLength(2); // the session's answer held: no third question

    t.type("four\r");
    await t.see(/\? Allow bash: git push --force origin main\? — it looks destructive \(git push --force\)\n/);
    t.type(`${DOWN}${DOWN}\r`); // always allow in this project
    await t.see(/\nFour\.\n/);
    await t.see(
      /permission-gate: added Bash\(git push --force:\*\) to permissions\.allow in [^\n]*settings\.local\.json/,
    );

    t.type("five\r");
    await t.see(/\? Allow bash: git reset --hard\? — it looks destructive \(git reset --hard\)\n/);
    t.type(`${DOWN}${DOWN}${DOWN}${DOWN}\r`); // deny, and tell the model why
    await t.see(/Tell the model why \(or what to do instead\)/);
    t.type("keep my changes\r");
    await t.see(/the user declined "git reset --hard" \(git reset --hard\): keep my changes/);
    await t.see(/\nFive\.\n/);
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
    expect(JSON.parse(readFileSync(join(ws, ".mypi", "settings.local.json"), "utf8"))).toEqual({
      permissions: { allow: ["Bash(git push --force:*)"] },
    });

    // The next process: no -e, the rule in the local file switches the gate on, and nothing is asked.
    const again = sandbox.script(step("bash", { command: "git push --force origin next" }, "Six."));
    const next = terminal(["--model", `scripted:${again}`, "--no-session", "--cwd", ws], { jail: true });
    await next.see(IDLE);
    await next.see(/permission gate: on \(rules in [^\n]*settings\.local\.json\)/);
    next.type("six\r");
    await next.see(/\nSix\.\n/);
    expect(next.screen()).not.toMatch(/\? Allow bash/);
    next.type("/quit\r");
    expect(await next.exit).toBe(0);
  });

  it("switches modes with Alt+M and /mode, refuses in plan mode what does more than read, and leaves plan mode when the plan is accepted", {
    timeout: 300_000,
  }, async () => {
    const ws = join(sandbox.root, "modes");
    mkdirSync(ws, { recursive: true });
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "too early\n" } }] },
      { toolCalls: [{ name: "exit_plan_mode", arguments: { plan: "1. write plan.txt" } }] },
      ...step("write", { path: "plan.txt", content: "done\n" }, "Written."),
    ]);
    // No rules: the gate is dormant until a mode applies.
    const t = terminal(["--model", `scripted:${script}`, "--no-session", "--cwd", ws], { jail: true });
    await t.see(IDLE);
    await t.see(
      /permission gate: dormant \(no rules and default mode: it decides nothing until a mode or a rule applies\) · mode: default/,
    );
    t.type("\x1bm"); // Alt+M
    await t.see(/permission mode: accept-edits: file changes inside the workspace are not asked about \(Alt\+M\)/);
    await t.see(/⏵ accept-edits mode \(Alt\+M\)/);
    t.type("/mode plan\r");
    await t.see(/permission mode: plan: reading only, until you accept the plan \(\/mode\)/);
    await t.see(/⏵ plan mode \(Alt\+M\)/);

    t.type("plan it\r");
    await t.see(/⛔ blocked by permission-gate: write of "plan\.txt" is not allowed in plan mode/);
    await t.see(
      /\? Accept this plan\? \(shown in the exit_plan_mode call above\)\n→ Yes, and accept edits without asking\n {2}Yes, ask as the rules say\n {2}No, keep planning\n/,
    );
    t.type(`${DOWN}\r`); // yes, default mode
    await t.see(/permission mode: default: your rules and the built-in list decide \(exit_plan_mode\)/);
    await t.see(/\nWritten\.\n/);
    expect(readFileSync(join(ws, "plan.txt"), "utf8")).toBe("done\n");
    t.type("/mode bypass\r");
    await t.see(/permission mode: bypass: everything runs but what deny rules and managed ask rules stop \(\/mode\)/);
    t.type("/mode\r");
    await t.see(
      /permission mode: bypass: everything runs but what deny rules and managed ask rules stop \(\/mode\); \/mode default\|accept-edits\|plan\|bypass switches, Alt\+M cycles/,
    );
    t.type("/quit\r");
    expect(await t.exit).toBe(0);
  });
});
