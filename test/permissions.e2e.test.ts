/**
 * Policies that hold by default, through the real `mypi` process. Every run that executes a
 * command a policy should stop runs in a throwaway jail (`jail: true`: the whole file system
 * read-only but the test's temporary folder), and mypi's own bash sandbox is on as by default.
 *
 * - rules in a settings file switch the gate on: no flag; the exit code and stderr say why;
 * - an untrusted workspace's deny rules apply and its allow rules do not;
 * - a managed rule holds over a user and a project that both try to loosen it;
 * - each mode against one fixed table of 40 tool calls (MYPI_PRINT_TABLE=1 prints it as measured);
 * - the scopes of an answer over RPC: once, this session (kept when the session is resumed),
 *   always in this project (kept by the next process), deny with a reason the model reads;
 * - a call out of the sandbox: stopped commands are explained, and leave only with an approval;
 * - the mode read and switched over RPC (get_permission_mode, set_permission_mode), each change told;
 * - every decision a hook_decision naming its source.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probeSandbox } from "@mypi/builtin-tools";
import { createSandbox, type Sandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const probe = await probeSandbox();
if (!probe.ok) console.warn(`permission e2e tests skipped: ${probe.reason} (they run mypi in a bubblewrap jail)`);

const sandbox = createSandbox("mypi-permissions-");
afterAll(() => sandbox.cleanup());
const managedDir = join(sandbox.root, "managed");
const env = { MYPI_MANAGED_DIR: managedDir };

/** A fresh workspace under the sandbox's root, with these files. */
function workspace(name: string, files: Record<string, string>): string {
  const ws = join(sandbox.root, name);
  for (const [path, text] of Object.entries(files)) sandbox.file(join(ws, path), text);
  mkdirSync(ws, { recursive: true });
  return ws;
}

type Call = { name: string; arguments: Record<string, unknown> };
const bash = (command: string, extra: Record<string, unknown> = {}): Call => ({
  name: "bash",
  arguments: { command, ...extra },
});

/** The permission gate's tool_call decisions of a JSON run, in order: [outcome, reason]. */
function gateDecisions(events: JsonObject[]): [string, string | undefined][] {
  return events
    .filter((e) => e.type === "hook_decision" && e.extension === "permission-gate" && e.slot === "tool_call")
    .map((e) => [e.outcome, e.reason]);
}

function runJson(s: Sandbox, cwd: string, calls: Call[], extra: string[] = [], runEnv: Record<string, string> = env) {
  const script = s.script([{ toolCalls: calls }, { text: "Done." }]);
  return s.run(
    ["--mode", "json", "--model", `scripted:${script}`, "--no-session", "--cwd", cwd, ...extra, "-p", "go"],
    { env: runEnv, jail: true },
  );
}

describe.skipIf(!probe.ok)("rules hold without a flag", () => {
  it("switch the gate on from a trusted workspace's settings: the denied write is not made, exit 1, stderr names the rule and its file", async () => {
    const ws = workspace("rules-on", {
      ".mypi/settings.json": JSON.stringify({ permissions: { deny: ["Write(.github/**)"] } }),
    });
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: ".github/workflows/x.yml", content: "on: push\n" } }] },
      { text: "Done." },
    ]);
    const r = await sandbox.run(
      ["--trust-project", "--model", `scripted:${script}`, "--no-session", "--cwd", ws, "-p", "add CI"],
      { env, jail: true },
    );
    expect(existsSync(join(ws, ".github"))).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("Done.\n");
    expect(r.stderr).toBe(
      `mypi: permission-gate refused a tool call: write of ".github/workflows/x.yml" is denied by the rule Write(.github/**) (permissions.deny in ${join(ws, ".mypi", "settings.json")}).\n` +
        "mypi: decisions: permission-gate blocked 1 (--verbose shows each)\n" +
        "mypi: a tool call was refused by a policy (above); exit code 1.\n",
    );
  });

  it("apply an untrusted workspace's deny and ask rules but not its allow rules, and say which were applied and skipped", async () => {
    const settings = {
      permissions: {
        deny: ["Bash(npm publish:*)", "Read(secrets/**)"],
        ask: ["Bash(touch:*)"],
        allow: ["Bash(rm -rf victim:*)"],
      },
      permissionMode: "bypass",
    };
    const ws = workspace("untrusted", {
      ".mypi/settings.json": JSON.stringify(settings),
      "victim/keep.txt": "precious\n",
      "secrets/token.txt": "s3cret\n",
    });
    const r = await runJson(sandbox, ws, [
      bash("npm publish"),
      { name: "read", arguments: { path: "secrets/token.txt" } },
      bash("touch marker"),
      bash("rm -rf victim"),
    ]);
    expect(existsSync(join(ws, "victim", "keep.txt"))).toBe(true);
    expect(existsSync(join(ws, "marker"))).toBe(false);
    const file = join(ws, ".mypi", "settings.json");
    expect(gateDecisions(r.events())).toEqual([
      ["block", `"npm publish" is denied by the rule Bash(npm publish:*) (permissions.deny in ${file}).`],
      ["block", `read of "secrets/token.txt" is denied by the rule Read(secrets/**) (permissions.deny in ${file}).`],
      [
        "block",
        `"touch marker" needs confirmation by the rule Bash(touch:*) (permissions.ask in ${file}) and there is no user to confirm it. Do it another way or ask the user to run it.`,
      ],
      [
        "block",
        '"rm -rf victim" looks destructive (recursive rm) and there is no user to confirm it. Do it another way or ask the user to run it.',
      ],
    ]);
    expect(r.stderr).toBe(
      `mypi: workspace ${ws} is not trusted: applied its 2 deny rules, 1 ask rule (.mypi/settings.json), which only tighten; ` +
        "skipped permissions.allow (1 rule), permissionMode (.mypi/settings.json). Allow the rest with --trust-project (this run) or `mypi trust` (from now on).\n",
    );
    expect(r.code).toBe(1);
  });
});

describe.skipIf(!probe.ok)("the managed tier", () => {
  it("holds its deny rule over a user and a project that both try to loosen it, and its extension loads whatever the command line says", {
    timeout: 120_000,
  }, async () => {
    const s = createSandbox("mypi-managed-");
    try {
      const managed = join(s.root, "managed");
      s.file(
        join(managed, "managed-settings.json"),
        JSON.stringify({ permissions: { deny: ["Bash(git push:*)"] }, allowedPermissionModes: ["default", "plan"] }),
      );
      s.file(
        join(managed, "extensions", "audit.ts"),
        `export default function (pi) { pi.on("tool_call", (e) => e.toolName === "ls" ? { block: true, reason: "audit: no ls" } : undefined); }\n`,
      );
      s.file(
        join(s.home, "settings.json"),
        JSON.stringify({ permissions: { allow: ["Bash(git push:*)"] }, permissionGate: false }),
      );
      s.file(
        join(s.ws, ".mypi", "settings.json"),
        JSON.stringify({ permissions: { allow: ["Bash(git push:*)"] }, permissionMode: "bypass" }),
      );
      s.trustWorkspace();
      const managedEnv = { MYPI_MANAGED_DIR: managed };
      const bypass = await runJson(s, s.ws, [bash("git push origin main")], ["--no-extensions"], managedEnv);
      expect(bypass.code).toBe(2);
      expect(bypass.stderr).toContain(
        `mypi: permissionMode in ${join(s.ws, ".mypi", "settings.json")}: the managed settings (${join(managed, "managed-settings.json")}) allow only default, plan.`,
      );
      const r = await runJson(
        s,
        s.ws,
        [bash("git push origin main"), { name: "ls", arguments: {} }],
        ["--no-extensions", "--permission-mode", "default"],
        managedEnv,
      );
      expect(r.stderr).toBe(
        `mypi: permissionGate: false in ${join(s.home, "settings.json")} is overruled: the managed settings have permission rules, which always hold.\n`,
      );
      expect(
        r
          .events()
          .filter((e) => e.type === "hook_decision" && e.slot === "tool_call" && e.outcome === "block")
          .map((e) => [e.extension, e.reason]),
      ).toEqual([
        [
          "permission-gate",
          `"git push origin main" is denied by the rule Bash(git push:*) (permissions.deny in the managed settings ${join(managed, "managed-settings.json")}).`,
        ],
        ["audit", "audit: no ls"],
      ]);
      const listed = JSON.parse(
        (await s.run(["extensions", "--json", "--no-extensions"], { env: managedEnv })).stdout,
      ) as { loaded: { name: string; origin?: string }[]; policies: string[] };
      expect(listed.loaded.map((e) => [e.name, e.origin])).toEqual([
        ["builtin-tools", undefined],
        ["audit", "managed"],
        ["subagents", undefined],
        ["permission-gate", undefined],
      ]);
      expect(listed.policies[0]).toBe(
        `permission gate: on (rules in ${join(managed, "managed-settings.json")}, ${join(s.home, "settings.json")}, ${join(s.ws, ".mypi", "settings.json")} · mode bypass (permissionMode in ${join(s.ws, ".mypi", "settings.json")}))`,
      );
    } finally {
      s.cleanup();
    }
  });
});

/** The table's rules, in the user's settings. */
const TABLE_RULES = {
  allow: ["Bash(npm test:*)", "Bash(git push --force-with-lease:*)"],
  ask: ["Bash(git push:*)", "Write(package.json)", "Edit(**/*.lock)"],
  deny: ["Bash(npm publish:*)", "Write(.github/**)", "Read(secrets/**)", "Bash(curl:*)"],
};

type D = "allow" | "ask" | "deny";
/** 40 calls, each with the expected decision in default, accept-edits, plan and bypass mode. */
const TABLE: [label: string, call: Call, expected: [D, D, D, D]][] = [
  ["read src/a.ts", { name: "read", arguments: { path: "src/a.ts" } }, ["allow", "allow", "allow", "allow"]],
  [
    "read secrets/token.txt",
    { name: "read", arguments: { path: "secrets/token.txt" } },
    ["deny", "deny", "deny", "deny"],
  ],
  [
    "grep TODO src",
    { name: "grep", arguments: { pattern: "TODO", path: "src" } },
    ["allow", "allow", "allow", "allow"],
  ],
  ["find *.ts", { name: "find", arguments: { pattern: "*.ts" } }, ["allow", "allow", "allow", "allow"]],
  ["ls .", { name: "ls", arguments: { path: "." } }, ["allow", "allow", "allow", "allow"]],
  ["ls secrets", { name: "ls", arguments: { path: "secrets" } }, ["deny", "deny", "deny", "deny"]],
  ["bash: ls -la src", bash("ls -la src"), ["allow", "allow", "allow", "allow"]],
  ["bash: git status", bash("git status"), ["allow", "allow", "allow", "allow"]],
  ["bash: cat src/a.ts | wc -l", bash("cat src/a.ts | wc -l"), ["allow", "allow", "allow", "allow"]],
  ["bash: grep -rn TODO src", bash("grep -rn TODO src"), ["allow", "allow", "allow", "allow"]],
  ["bash: echo hello > notes.txt", bash("echo hello > notes.txt"), ["allow", "allow", "deny", "allow"]],
  ["bash: mkdir -p out && touch out/x", bash("mkdir -p out && touch out/x"), ["allow", "allow", "deny", "allow"]],
  ["bash: npm test", bash("npm test"), ["allow", "allow", "deny", "allow"]],
  ["bash: npm publish", bash("npm publish"), ["deny", "deny", "deny", "deny"]],
  ["bash: curl -s https://example.com", bash("curl -s https://example.com"), ["deny", "deny", "deny", "deny"]],
  ["bash: git push origin main", bash("git push origin main"), ["ask", "ask", "deny", "allow"]],
  [
    "bash: git push --force-with-lease origin main",
    bash("git push --force-with-lease origin main"),
    ["ask", "ask", "deny", "allow"],
  ],
  ["bash: git push --force origin main", bash("git push --force origin main"), ["ask", "ask", "deny", "allow"]],
  ["bash: rm -rf build", bash("rm -rf build"), ["ask", "ask", "deny", "allow"]],
  ["bash: rm build/out.js", bash("rm build/out.js"), ["allow", "allow", "deny", "allow"]],
  ["bash: sudo true", bash("sudo true"), ["ask", "ask", "deny", "allow"]],
  ["bash: git reset --hard", bash("git reset --hard"), ["ask", "ask", "deny", "allow"]],
  ["bash: chmod 777 src", bash("chmod 777 src"), ["ask", "ask", "deny", "allow"]],
  ['bash: eval "$CMD"', bash('eval "$CMD"'), ["ask", "ask", "deny", "allow"]],
  ["bash: echo ls | bash", bash("echo ls | bash"), ["ask", "ask", "deny", "allow"]],
  ["bash: cat secrets/token.txt", bash("cat secrets/token.txt"), ["allow", "allow", "allow", "allow"]],
  [
    "bash: echo x > .github/workflows/ci.yml",
    bash("echo x > .github/workflows/ci.yml"),
    ["deny", "deny", "deny", "deny"],
  ],
  ["bash: echo {} > package.json", bash("echo '{}' > package.json"), ["ask", "allow", "deny", "allow"]],
  [
    "write src/new.ts",
    { name: "write", arguments: { path: "src/new.ts", content: "x\n" } },
    ["allow", "allow", "deny", "allow"],
  ],
  [
    "write package.json",
    { name: "write", arguments: { path: "package.json", content: "{}\n" } },
    ["ask", "allow", "deny", "allow"],
  ],
  [
    "write .github/workflows/x.yml",
    { name: "write", arguments: { path: ".github/workflows/x.yml", content: "x\n" } },
    ["deny", "deny", "deny", "deny"],
  ],
  [
    "edit src/a.ts",
    { name: "edit", arguments: { path: "src/a.ts", oldText: "TODO", newText: "DONE" } },
    ["allow", "allow", "deny", "allow"],
  ],
  [
    "edit yarn.lock",
    { name: "edit", arguments: { path: "yarn.lock", oldText: "v1", newText: "v2" } },
    ["ask", "allow", "deny", "allow"],
  ],
  ["bash (unsandboxed): make build", bash("make build", { unsandboxed: true }), ["ask", "ask", "deny", "ask"]],
  ["bash (unsandboxed): npm test", bash("npm test", { unsandboxed: true }), ["allow", "allow", "deny", "allow"]],
  ["bash: find . -name '*.tmp' -delete", bash("find . -name '*.tmp' -delete"), ["ask", "ask", "deny", "allow"]],
  ["bash: git branch -a", bash("git branch -a"), ["allow", "allow", "allow", "allow"]],
  // Code the gate cannot read asks while a deny or ask rule is in force: it could run what they match.
  ["bash: python3 -c 'print(1)'", bash("python3 -c 'print(1)'"), ["ask", "ask", "deny", "allow"]],
  ["grep x secrets", { name: "grep", arguments: { pattern: "x", path: "secrets" } }, ["deny", "deny", "deny", "deny"]],
  [
    "bash: git log --oneline -3 && rm -rf build",
    bash("git log --oneline -3 && rm -rf build"),
    ["ask", "ask", "deny", "allow"],
  ],
];
const MODES = ["default", "accept-edits", "plan", "bypass"] as const;

const TABLE_FILES = {
  "src/a.ts": "// TODO: a\n",
  "build/out.js": "stale\n",
  "secrets/token.txt": "s3cret\n",
  "yarn.lock": "v1\n",
  "package.json": "{}\n",
};

// One test per mode, run side by side: each mode is its own process over its own copy of the
// files, and the four runs are independent (they were one test of four runs in a row).
describe.skipIf(!probe.ok)("permission modes against one table of 40 tool calls", { concurrent: true }, () => {
  const measured = new Map<(typeof MODES)[number], D[]>();
  afterAll(() => {
    if (!process.env.MYPI_PRINT_TABLE || measured.size < MODES.length) return;
    const rows = TABLE.map(
      ([label], i) => `| ${i + 1} | \`${label}\` | ${MODES.map((m) => measured.get(m)![i]).join(" | ")} |`,
    );
    console.log(
      ["| # | call | default | accept-edits | plan | bypass |", "|---|---|---|---|---|---|", ...rows].join("\n"),
    );
  });

  it.for(MODES.map((mode, column) => [mode, column] as const))(
    "decides each call as the table says, in %s mode",
    { timeout: 120_000 },
    async ([mode, column]) => {
      const s = createSandbox(`mypi-table-${mode}-`);
      try {
        s.file(join(s.home, "settings.json"), JSON.stringify({ permissions: TABLE_RULES }));
        const ws = join(s.root, "ws");
        for (const [path, text] of Object.entries(TABLE_FILES)) s.file(join(ws, path), text);
        const r = await runJson(
          s,
          ws,
          TABLE.map(([, call]) => call),
          ["--permission-mode", mode],
        );
        const decisions = gateDecisions(r.events());
        expect(decisions).toHaveLength(TABLE.length);
        const decided: D[] = decisions.map(([outcome, reason]) =>
          outcome === "pass" ? "allow" : /there is no user to confirm it/.test(reason ?? "") ? "ask" : "deny",
        );
        measured.set(mode, decided);
        expect(TABLE.map(([label], i) => [label, decided[i]])).toEqual(
          TABLE.map(([label, , expected]) => [label, expected[column]]),
        );
      } finally {
        s.cleanup();
      }
    },
  );
});

/** An RPC mypi in the jail; `prompt` answers each question with the option that starts with the given text. */
function rpcSession(s: Sandbox, cwd: string, script: string, extra: string[] = []) {
  const live = s.spawn(["--mode", "rpc", "--model", `scripted:${script}`, "--cwd", cwd, ...extra], { env, jail: true });
  // A line that never comes fails the test with what came instead (the timer never paces it).
  const waitFor = (test: (line: JsonObject) => boolean) =>
    new Promise<JsonObject>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no such line within 120 s; got:\n${live.lines.map((l) => JSON.stringify(l).slice(0, 300)).join("\n")}`,
            ),
          ),
        120_000,
      );
      void live.waitFor(test).then((line) => (clearTimeout(timer), resolve(line)));
    });
  const p = { ...live, waitFor };
  const questions: string[][] = [];
  let asked = 0;
  return {
    p,
    questions,
    /** Send a prompt; answer each select question with `answers` in turn; resolve at agent_end. */
    async prompt(message: string, answers: string[] = []): Promise<JsonObject> {
      const ends = p.lines.filter((l) => l.type === "agent_end").length;
      p.send({ type: "prompt", message });
      for (const start of answers) {
        const ask = await p.waitFor(
          (l) => l.type === "extension_ui_request" && l.method === "select" && Number(String(l.id).slice(3)) > asked,
        );
        asked = Number(String(ask.id).slice(3));
        questions.push([ask.title, ...ask.options]);
        p.send({
          type: "extension_ui_response",
          id: ask.id,
          value: (ask.options as string[]).find((o) => o.startsWith(start)),
        });
        if (start === "Deny, and tell") {
          const input = await p.waitFor((l) => l.type === "extension_ui_request" && l.method === "input");
          asked = Number(String(input.id).slice(3));
          p.send({ type: "extension_ui_response", id: input.id, value: "use the staging remote" });
        }
      }
      return p.waitFor(
        (l) => l.type === "agent_end" && p.lines.filter((x) => x.type === "agent_end").indexOf(l) === ends,
      );
    },
    async close() {
      p.end();
      return p.exit;
    },
  };
}

describe.skipIf(!probe.ok)("answers with scopes over RPC", () => {
  it("allow once asks again; allow for this session holds for the session and the resumed session, not a new one", {
    timeout: 120_000,
  }, async () => {
    const ws = workspace("scopes-session", {});
    const session = join(sandbox.root, "scopes.jsonl");
    const turns = (...commands: string[]) =>
      sandbox.script(
        commands.flatMap((command) => [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "ok" }]),
      );
    // -e: without rules, the gate of an RPC run is dormant (it wakes for a mode or a rule); here it judges.
    const first = rpcSession(
      sandbox,
      ws,
      turns(
        "git push --force origin a",
        "git push --force origin b",
        "git push --force origin c",
        "git push --force origin d",
      ),
      ["--session", session, "-e", "permission-gate"],
    );
    await first.prompt("one", ["Allow once"]);
    await first.prompt("two", ["Allow for this session"]);
    await first.prompt("three"); // no question: the session's answer holds
    await first.close();
    expect(first.questions).toEqual([
      [
        "Allow bash: git push --force origin a? — it looks destructive (git push --force)",
        "Allow once",
        "Allow for this session: Bash(git push --force:*)",
        "Always allow in this project: Bash(git push --force:*) (.mypi/settings.local.json)",
        "Deny",
        "Deny, and tell the model why",
      ],
      [
        "Allow bash: git push --force origin b? — it looks destructive (git push --force)",
        "Allow once",
        "Allow for this session: Bash(git push --force:*)",
        "Always allow in this project: Bash(git push --force:*) (.mypi/settings.local.json)",
        "Deny",
        "Deny, and tell the model why",
      ],
    ]);
    expect(gateDecisions(first.p.lines).map(([, reason]) => reason)).toEqual([
      "allowed once by the user (git push --force)",
      "allowed by the user for this session (Bash(git push --force:*))",
      "allowed by your answer for this session (Bash(git push --force:*))",
    ]);
    // The resumed session keeps the answer: no question.
    const resumed = rpcSession(sandbox, ws, turns("git push --force origin e"), [
      "--session",
      session,
      "-e",
      "permission-gate",
    ]);
    await resumed.prompt("four");
    await resumed.close();
    expect(resumed.questions).toEqual([]);
    expect(gateDecisions(resumed.p.lines)).toEqual([
      ["pass", "allowed by your answer for this session (Bash(git push --force:*))"],
    ]);
    // A new session does not: asked, denied with a reason the model reads.
    const fresh = rpcSession(sandbox, ws, turns("git push --force origin f"), [
      "--no-session",
      "-e",
      "permission-gate",
    ]);
    await fresh.prompt("five", ["Deny, and tell"]);
    await fresh.close();
    const result = fresh.p.lines.find((l) => l.type === "tool_execution_end");
    expect(result?.result.content[0].text).toBe(
      'Tool call blocked by permission-gate: the user declined "git push --force origin f" (git push --force): use the staging remote',
    );
  });

  it("always allow in this project writes the rule to .mypi/settings.local.json, and the next process does not ask", {
    timeout: 120_000,
  }, async () => {
    const ws = workspace("scopes-project", { "build/x": "x\n", "dist/y": "y\n" });
    const script = (command: string) =>
      sandbox.script([{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "ok" }]);
    const first = rpcSession(sandbox, ws, script("rm -rf build"), ["--no-session", "-e", "permission-gate"]);
    await first.prompt("clean", ["Always allow in this project"]);
    await first.close();
    expect(existsSync(join(ws, "build"))).toBe(false);
    expect(JSON.parse(readFileSync(join(ws, ".mypi", "settings.local.json"), "utf8"))).toEqual({
      permissions: { allow: ["Bash(rm -rf build:*)"] },
    });
    expect(readFileSync(join(ws, ".mypi", ".gitignore"), "utf8")).toBe("settings.local.json\n");
    expect(
      first.p.lines.some(
        (l) =>
          l.type === "extension_ui_request" &&
          l.method === "notify" &&
          l.message ===
            `permission-gate: added Bash(rm -rf build:*) to permissions.allow in ${join(ws, ".mypi", "settings.local.json")}`,
      ),
    ).toBe(true);
    // The next process, without -e: the rule in the local file switches the gate on; the workspace
    // is not trusted, and the rule the user gave still holds.
    mkdirSync(join(ws, "build"));
    const next = rpcSession(sandbox, ws, script("rm -rf build"), ["--no-session"]);
    await next.prompt("clean again");
    await next.close();
    expect(next.questions).toEqual([]);
    expect(gateDecisions(next.p.lines)).toEqual([
      [
        "pass",
        `allowed by the rule Bash(rm -rf build:*) (permissions.allow in ${join(ws, ".mypi", "settings.local.json")})`,
      ],
    ]);
    expect(existsSync(join(ws, "build"))).toBe(false);
    // A rule the repository put in the same file does not hold for an untrusted workspace.
    writeFileSync(
      join(ws, ".mypi", "settings.local.json"),
      JSON.stringify({ permissions: { allow: ["Bash(rm -rf build:*)", "Bash(rm -rf dist:*)"] } }),
    );
    const shipped = await runJson(sandbox, ws, [bash("rm -rf dist")]);
    expect(gateDecisions(shipped.events())[0]![0]).toBe("block");
    expect(existsSync(join(ws, "dist", "y"))).toBe(true);
  });
});

describe.skipIf(!probe.ok)("calls out of the sandbox", () => {
  it("explain a command the sandbox stopped, refuse to leave it without an approval, and leave it when a rule names the command", {
    timeout: 120_000,
  }, async () => {
    // The workspace's agent folder is read-only in the sandbox: a write there is stopped.
    const ws = workspace("escape", { ".mypi/notes.txt": "mine\n" });
    const marker = join(ws, ".mypi", "marker");
    const stopped = await runJson(sandbox, ws, [bash("touch .mypi/marker")], ["-e", "permission-gate"]);
    const text = stopped.events().find((e) => e.type === "tool_execution_end")!.result.content[0].text as string;
    expect(text).toContain("Read-only file system");
    expect(text).toContain(
      "[sandbox] The sandbox may have stopped this command: it tried to write where the sandbox allows no writes (writable: ",
    );
    expect(text).toContain('call bash again with the same command and "unsandboxed": true: the user is asked first.');
    // Asked to leave, with nobody to ask: refused.
    const refused = await runJson(
      sandbox,
      ws,
      [bash("touch .mypi/marker", { unsandboxed: true })],
      ["-e", "permission-gate"],
    );
    expect(gateDecisions(refused.events())).toEqual([
      [
        "block",
        '"touch .mypi/marker" asks to run outside the sandbox and there is no user to confirm it. Do it another way or ask the user to run it.',
      ],
    ]);
    expect(existsSync(marker)).toBe(false);
    // A rule that names the command lets it out.
    const home = join(sandbox.root, "escape-home");
    sandbox.file(join(home, "settings.json"), JSON.stringify({ permissions: { allow: ["Bash(touch .mypi/marker)"] } }));
    const allowed = await runJson(sandbox, ws, [bash("touch .mypi/marker", { unsandboxed: true })], [], {
      ...env,
      MYPI_HOME: home,
    });
    expect(gateDecisions(allowed.events())).toEqual([
      [
        "pass",
        `allowed by the rule Bash(touch .mypi/marker) (permissions.allow in ${join(home, "settings.json")}), outside the sandbox`,
      ],
    ]);
    expect(existsSync(marker)).toBe(true);
  });
});

/** Send an RPC command to a session and resolve to its response, less `type` and `id`. */
async function command(
  s: ReturnType<typeof rpcSession>,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const id = `c${s.p.lines.length}-${String(body.type)}`;
  s.p.send({ id, ...body });
  const { type: _type, id: _id, ...rest } = await s.p.waitFor((l) => l.type === "response" && l.id === id);
  return rest;
}

describe.skipIf(!probe.ok)("permission modes over RPC", () => {
  it("get_permission_mode and set_permission_mode read and switch the mode, the next call is judged by it, every change is told, and a mode that may not be set is refused with the reason", {
    timeout: 120_000,
  }, async () => {
    const ws = workspace("rpc-modes", {});
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "x\n" } }] },
      { toolCalls: [{ name: "exit_plan_mode", arguments: { plan: "1. write plan.txt" } }] },
      { text: "Planned." },
    ]);
    // No rules: the gate is dormant, and wakes when the mode is switched.
    const s = rpcSession(sandbox, ws, script, ["--no-session"]);
    expect(await command(s, { type: "get_permission_mode" })).toEqual({
      command: "get_permission_mode",
      success: true,
      data: { mode: "default", source: "default" },
    });
    expect(await command(s, { type: "set_permission_mode", mode: "plan" })).toEqual({
      command: "set_permission_mode",
      success: true,
      data: { mode: "plan", previous: "default" },
    });
    expect(await command(s, { type: "get_permission_mode" })).toEqual({
      command: "get_permission_mode",
      success: true,
      data: { mode: "plan", source: "set_permission_mode" },
    });
    expect(await command(s, { type: "set_permission_mode", mode: "yolo" })).toEqual({
      command: "set_permission_mode",
      success: false,
      error: "Unknown permission mode: yolo. Known: default, accept-edits, plan, bypass.",
    });
    await s.prompt("plan it", ["Yes, ask as the rules say"]);
    expect(existsSync(join(ws, "plan.txt"))).toBe(false);
    expect(gateDecisions(s.p.lines)[0]).toEqual([
      "block",
      expect.stringMatching(/^write of "plan\.txt" is not allowed in plan mode/),
    ]);
    // Claude Code's spelling is taken.
    expect(await command(s, { type: "set_permission_mode", mode: "acceptEdits" })).toEqual({
      command: "set_permission_mode",
      success: true,
      data: { mode: "accept-edits", previous: "default" },
    });
    // Every change is told, the accepted plan's too.
    expect(s.p.lines.filter((l) => l.type === "permission_mode_changed")).toEqual([
      { type: "permission_mode_changed", mode: "plan", previous: "default", by: "set_permission_mode" },
      { type: "permission_mode_changed", mode: "default", previous: "plan", by: "exit_plan_mode" },
      { type: "permission_mode_changed", mode: "accept-edits", previous: "default", by: "set_permission_mode" },
    ]);
    await s.close();

    // Without the sandbox, bypass is refused, and the mode stays.
    const off = rpcSession(sandbox, ws, script, ["--no-session", "--no-sandbox"]);
    expect(await command(off, { type: "set_permission_mode", mode: "bypass" })).toMatchObject({
      success: false,
      error: expect.stringMatching(/^Permission mode bypass cannot be set: .*sandbox/),
    });
    expect(await command(off, { type: "get_permission_mode" })).toMatchObject({
      data: { mode: "default", source: "default" },
    });
    await off.close();
  });
});
