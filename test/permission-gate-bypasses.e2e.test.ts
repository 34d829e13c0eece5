/**
 * Every form of extensions/permission-gate/bypasses.ts run for real, each in a throwaway folder
 * holding the target file `t`, and only ever inside a bubblewrap jail: the root read-only, a
 * private /tmp, no network, no capabilities, the folder the one writable place. (A form that
 * got past a gate once deleted system files on the machine it ran on: nothing here runs outside
 * the jail, and the test skips where bubblewrap cannot build one.)
 *
 * First without the gate, to see which forms do delete the target on this machine (a form whose
 * program is missing here, `zsh` say, cannot); then with the gate, `deny: ["Bash(rm:*)"]`, in
 * front of a bash tool that runs in the same jail, through a whole conversation: every form is
 * blocked and every target survives.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, z } from "@mypi/extension-api";
import { runConversation } from "@mypi/extension-api/testing";
import { afterAll, describe, expect, it } from "vitest";
import { BYPASS_FIXTURES, BYPASS_RULES, BYPASSES, type Bypass } from "../extensions/permission-gate/bypasses.ts";
import { createPermissionGate } from "../extensions/permission-gate/index.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-gate-jail-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** bubblewrap's arguments for a jail whose only writable place is `dir` (also its home and working folder). */
function jail(dir: string): string[] {
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--bind",
    dir,
    dir,
    "--chdir",
    dir,
    "--unshare-all",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "--setenv",
    "HOME",
    dir,
    "--setenv",
    "GIT_AUTHOR_NAME",
    "jail",
    "--setenv",
    "GIT_AUTHOR_EMAIL",
    "jail@example.test",
    "--setenv",
    "GIT_COMMITTER_NAME",
    "jail",
    "--setenv",
    "GIT_COMMITTER_EMAIL",
    "jail@example.test",
    // Without these, git filter-branch waits 10 s on a warning and npm looks for updates it cannot reach.
    "--setenv",
    "FILTER_BRANCH_SQUELCH_WARNING",
    "1",
    "--setenv",
    "npm_config_offline",
    "true",
    "--setenv",
    "npm_config_update_notifier",
    "false",
  ];
}

/** Why the jail cannot be built here, or undefined; a probe that writes outside the folder must fail. */
function jailSkipReason(): string | undefined {
  const dir = mkdtempSync(join(root, "probe-"));
  const probe = spawnSync(
    "bwrap",
    [...jail(dir), "bash", "-c", "touch ok; if touch /usr/mypi-jail-probe 2>/dev/null; then echo escaped; fi"],
    { encoding: "utf8", timeout: 20_000 },
  );
  if (probe.error) return `bubblewrap cannot run here (${probe.error.message}); apt-get install bubblewrap`;
  if (probe.status !== 0 || !existsSync(join(dir, "ok")))
    return `bubblewrap cannot build the jail here: ${probe.stderr.trim().split("\n")[0]}`;
  if (probe.stdout.includes("escaped")) throw new Error("the jail's root is writable: refusing to run the forms");
  return undefined;
}

const skipReason = jailSkipReason();
if (skipReason) console.warn(`permission-gate jail tests skipped: ${skipReason}`);

/** Run `command` with bash in the jail of `dir` (never outside it). */
function runJailed(dir: string, command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      "bwrap",
      [...jail(dir), "bash", "-c", command],
      { timeout: 30_000, maxBuffer: 4 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** A fresh folder with the fixtures and the form's setup done (in the jail). */
async function prepare(form: Bypass, label: string): Promise<string> {
  const dir = mkdtempSync(join(root, `${label}-`));
  for (const [name, text] of Object.entries(BYPASS_FIXTURES)) writeFileSync(join(dir, name), text);
  if (form.setup) {
    const setup = await runJailed(dir, form.setup);
    if (setup.code !== 0) throw new Error(`the setup of ${JSON.stringify(form.command)} failed: ${setup.output}`);
  }
  return dir;
}

const survived = (dir: string) =>
  existsSync(join(dir, "t")) && readFileSync(join(dir, "t"), "utf8") === BYPASS_FIXTURES.t;

/** `work` over `items`, `limit` at a time, results in order. */
async function pool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

describe.skipIf(skipReason !== undefined)("permission-gate bypass forms, run for real in a bubblewrap jail", () => {
  it("blocks every form under deny Bash(rm:*), and the target survives each, though most forms delete it without the gate", {
    timeout: 900_000,
  }, async () => {
    // Without the gate: which forms delete the target here.
    const live = await pool(BYPASSES, 3, async (form, i) => {
      const dir = await prepare(form, `bare-${i}`);
      await runJailed(dir, form.command);
      return !survived(dir);
    });
    const deleting = BYPASSES.filter((_, i) => live[i]).map((f) => f.command);
    console.log(
      `permission-gate jail: ${deleting.length} of ${BYPASSES.length} forms delete the target without the gate on this machine`,
    );
    // bash, coreutils, git, tar, sed, awk, perl, python3 are everywhere the tests run: most forms must be live,
    // or the jail is not running them and the gated run below would prove nothing.
    expect(deleting.length).toBeGreaterThan(BYPASSES.length / 2);
    for (const command of [
      "hash -p /bin/rm ls; ls t",
      "x='a[$(rm t)]'; echo $(( x ))",
      "cp /bin/rm x; ./x t",
      "echo | sed '1e rm t'",
      "tar -cf /dev/null f --checkpoint=1 --checkpoint-action=exec='rm t'",
    ]) {
      expect(deleting).toContain(command);
    }

    // With the gate in front of a bash tool that runs in the same jail.
    const dirs = new Map<string, string>();
    await pool(BYPASSES, 3, async (form, i) => void dirs.set(form.command, await prepare(form, `gated-${i}`)));
    const ran: string[] = [];
    const bash = defineTool({
      name: "bash",
      description: "Run a shell command in the jail",
      parameters: z.strictObject({ command: z.string() }),
      execute: async ({ command }) => {
        ran.push(command);
        const dir = dirs.get(command);
        if (!dir) throw new Error(`no folder for ${JSON.stringify(command)}`);
        return (await runJailed(dir, command)).output;
      },
    });
    const run = await runConversation({
      extensions: [{ name: "permission-gate", factory: createPermissionGate(BYPASS_RULES) }],
      tools: [bash],
      prompt: "clean up t",
      turns: [
        { toolCalls: BYPASSES.map((f) => ({ name: "bash", arguments: { command: f.command } })) },
        { text: "Done." },
      ],
    });
    expect(run.finalText).toBe("Done.");
    expect(ran).toEqual([]);
    const decisions = run.decisions.filter((d) => d.extension === "permission-gate" && d.slot === "tool_call");
    expect(decisions.map((d) => d.outcome)).toEqual(BYPASSES.map(() => "block"));
    expect(BYPASSES.filter((f) => !survived(dirs.get(f.command)!)).map((f) => f.command)).toEqual([]);
  });
});
