/**
 * permission-gate in the real `mypi` process, in a throwaway workspace: forms that got past the
 * old text matcher are blocked in print mode and the folder they aimed at survives (the run exits
 * 1: a policy refused its calls); a deny rule from the project's settings blocks, and the JSON
 * events' hook_decision names what decided and the file the rule is in.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
// Its .mypi holds the test's own skills, templates and settings: the workspace is trusted.
sandbox.trustWorkspace();
afterAll(() => sandbox.cleanup());

sandbox.file("ws/victim/keep.txt", "precious\n");
sandbox.file(
  join(sandbox.ws, ".mypi", "settings.json"),
  JSON.stringify({ permissions: { deny: ["Bash(git push:*)"] } }),
);

const calls = [
  "{rm,-rf,victim}",
  "echo 'rm -rf victim' | bash",
  "R=r; $R\\m -r${X:-f} victim",
  "sudo -u root git push origin main",
  "ls victim",
];
const script = sandbox.script([
  ...calls.map((command) => ({ text: "Trying.", toolCalls: [{ name: "bash", arguments: { command } }] })),
  { text: "Done." },
]);

describe("permission-gate through the CLI", () => {
  it("blocks bypass forms in print mode without a UI, and the folder survives", { timeout: 120_000 }, async () => {
    const bypasses = sandbox.script([
      { text: "Trying.", toolCalls: calls.slice(0, 3).map((command) => ({ name: "bash", arguments: { command } })) },
      { text: "Done." },
    ]);
    const r = await sandbox.run([
      "--model",
      `scripted:${bypasses}`,
      "-e",
      SHIPPED("permission-gate"),
      "-p",
      "clean up",
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Done.");
    expect(r.stderr).toContain("mypi: 3 tool calls were refused by a policy (above); exit code 1.");
    expect(existsSync(join(sandbox.ws, "victim", "keep.txt"))).toBe(true);
  });

  it("reports each decision as hook_decision, naming the built-in check, the reason it cannot judge, or the settings rule", {
    timeout: 120_000,
  }, async () => {
    const r = await sandbox.run([
      "--mode",
      "json",
      "--model",
      `scripted:${script}`,
      "-e",
      SHIPPED("permission-gate"),
      "-p",
      "clean up",
    ]);
    const events = r.events();
    const decisions = events
      .filter((e) => e.type === "hook_decision" && e.extension === "permission-gate" && e.slot === "tool_call")
      .map((e) => [e.outcome, e.reason]);
    expect(decisions).toEqual([
      [
        "block",
        `"{rm,-rf,victim}" looks destructive (recursive rm) and there is no user to confirm it. Do it another way or ask the user to run it.`,
      ],
      [
        "block",
        `"echo 'rm -rf victim' | bash" cannot be judged before it runs (bash reads the script it runs from its standard input) and there is no user to confirm it. Do it another way or ask the user to run it.`,
      ],
      [
        "block",
        `"R=r; $R\\m -r\${X:-f} victim" looks destructive (recursive rm) and there is no user to confirm it. Do it another way or ask the user to run it.`,
      ],
      [
        "block",
        `"sudo -u root git push origin main" is denied by the rule Bash(git push:*) (permissions.deny in ${join(sandbox.ws, ".mypi", "settings.json")}).`,
      ],
      ["pass", undefined],
    ]);
    const ls = events.filter((e) => e.type === "tool_execution_end").at(-1);
    expect(ls).toMatchObject({ toolName: "bash", isError: false });
    expect(ls!.result.content[0].text).toContain("keep.txt");
    expect(existsSync(join(sandbox.ws, "victim", "keep.txt"))).toBe(true);
  });
});
