import { describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import { ALLOW_ONLY_RULES, BYPASS_RULES, BYPASSES, EVERYDAY, VOUCHED } from "./bypasses.ts";
import { createPermissionGate, judge, type PermissionRules } from "./index.ts";
import { readSed } from "./sed.ts";

type Row = [command: string, verdict: string];

async function verdicts(commands: string[], rules: PermissionRules): Promise<Row[]> {
  const out: Row[] = [];
  for (const c of commands) out.push([c, (await judge(c, rules)).verdict]);
  return out;
}

const commands = BYPASSES.map((b) => b.command);

describe("permission-gate on commands that reach a denied command through something else", () => {
  it("denies each form where it sees the denied command and asks where it cannot prove the form harmless", async () => {
    expect(await verdicts(commands, BYPASS_RULES)).toEqual(BYPASSES.map((b): Row => [b.command, b.deny]));
  });

  it("leaves the forms as they were with no rules: only the built-in list and what it cannot read ask", async () => {
    expect(await verdicts(commands, {})).toEqual(BYPASSES.map((b): Row => [b.command, b.none]));
  });

  it("makes nothing ask under allow rules alone that no rules would not", async () => {
    expect(await verdicts(commands, ALLOW_ONLY_RULES)).toEqual(BYPASSES.map((b): Row => [b.command, b.none]));
  });

  it("allows everyday commands under the deny rule and with no rules", async () => {
    const allowed = EVERYDAY.map((c): Row => [c, "allow"]);
    expect(await verdicts(EVERYDAY, BYPASS_RULES)).toEqual(allowed);
    expect(await verdicts(EVERYDAY, {})).toEqual(allowed);
  });

  it("lets an allow rule vouch for a runner of the project's code, and only for the command it matches", async () => {
    expect(await verdicts(VOUCHED.commands, VOUCHED.rules)).toEqual(VOUCHED.commands.map((c): Row => [c, "allow"]));
    expect(await verdicts(VOUCHED.commands, BYPASS_RULES)).toEqual(VOUCHED.commands.map((c): Row => [c, "ask"]));
    // The allow rule for python3 does not vouch for the rm it can see, nor for another runner on the line.
    expect(
      await verdicts(["python3 -c 'import os; os.system(\"rm t\")'", "python3 -c 1 && npx x"], VOUCHED.rules),
    ).toEqual([
      ["python3 -c 'import os; os.system(\"rm t\")'", "deny"],
      ["python3 -c 1 && npx x", "ask"],
    ]);
    // An allow rule for tar is not one for what its options run.
    expect(
      (await judge('tar -xf a.tar --to-command="$CMD"', { ...BYPASS_RULES, allow: ["Bash(tar:*)"] })).verdict,
    ).toBe("ask");
  });

  it("asks where an ask rule could match what runs, naming the construct and the rule", async () => {
    const d = await judge("make deploy", { ask: ["Bash(git push:*)"] });
    expect([d.verdict, d.kind, d.rule]).toEqual([
      "ask",
      "unresolved",
      "make runs the commands of a Makefile, which the gate does not read; it may run what the ask rule Bash(git push:*) matches",
    ]);
  });

  it("gives the model a reason that names what it could not see through", async () => {
    const fake = await loadFake(createPermissionGate(BYPASS_RULES));
    const call = (command: string) =>
      fake.call("tool_call", { toolCallId: "c1", toolName: "bash", input: { command } });
    expect(await call('tar -cf x.tar -I "$(cat x.sh)" f')).toEqual({
      block: true,
      reason:
        '"tar -cf x.tar -I "$(cat x.sh)" f" cannot be judged before it runs (tar -I runs $(…), known only when it runs) and there is no user to confirm it. Do it another way or ask the user to run it.',
    });
    expect(await call("x=$(cat sub); (( x ))")).toEqual({
      block: true,
      reason:
        '"x=$(cat sub); (( x ))" cannot be judged before it runs (arithmetic reads $x, whose value is known only when it runs, and an array subscript in it runs commands; it may run what the deny rule Bash(rm:*) matches) and there is no user to confirm it. Do it another way or ask the user to run it.',
    });
    expect(await call("cp /bin/rm x; ./x t")).toEqual({
      block: true,
      reason: '"cp /bin/rm x; ./x t" is denied by the rule Bash(rm:*) (permissions.deny in the settings).',
    });
    expect(await call("tar xzf a.tgz")).toBeUndefined();
  });

  it("judges sed's w like a redirection, and path rules alone make no runner ask", async () => {
    expect(
      await verdicts(["sed 's/a/b/w out.txt' f", "sed -n 'w out.txt' f", "sed s/a/b/ f", "make"], {
        deny: ["Write(out.txt)"],
      }),
    ).toEqual([
      ["sed 's/a/b/w out.txt' f", "deny"],
      ["sed -n 'w out.txt' f", "deny"],
      ["sed s/a/b/ f", "allow"],
      ["make", "allow"],
    ]);
  });
});

describe("the sed script reader", () => {
  it("finds the commands e runs, what runs the pattern space, and the files w writes", () => {
    expect(readSed("1e rm t")).toEqual({ commands: ["rm t"], writes: [] });
    expect(readSed("/x/!{ s/a/b/e }")).toEqual({
      commands: [],
      executes: "sed's s///e runs the pattern space as a command",
      writes: [],
    });
    expect(readSed("$!N;s/\\n/ /w out\np")).toEqual({ commands: [], writes: ["out"] });
    expect(readSed("1i\\\nheader e\ns|e|E|g;y/ab/ba/")).toEqual({ commands: [], writes: [] });
    expect(readSed("s/a")).toBeUndefined();
  });
});
