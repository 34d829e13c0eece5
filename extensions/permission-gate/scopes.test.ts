/**
 * The gate's modes, scopes and tiers through the SDK's seams: the real extension host
 * (`runConversation`), a scripted model, a UI whose answers the test sets (`createFakeUI`), and
 * tools that only record that they ran — nothing here touches a file.
 */
import { describe, expect, it } from "vitest";
import { createFakeUI, runConversation } from "@mypi/extension-api/testing";
import { defineTool, type ScriptedTurn, type Tool } from "@mypi/kernel";
import { z } from "zod";
import {
  createModeState,
  createPermissionGate,
  OPTION,
  PLAN_CHOICE,
  SESSION_ANSWER_ENTRY,
  type GateOptions,
  type RuleSet,
} from "./index.ts";
import { commandRuleFor } from "./suggest.ts";
import { readOnlyProblem } from "./read-only.ts";
import { analyzeScript } from "./commands.ts";
import { loadShellParser } from "./shell.ts";

const cwd = "/work/project";

/** Tools that record their calls: bash, write, edit, read. */
function recordingTools(ran: string[]): Tool[] {
  const make = <S extends z.ZodObject>(name: string, parameters: S, describe: (args: z.infer<S>) => string) =>
    defineTool({
      name,
      description: name,
      parameters,
      execute: (args) => {
        ran.push(`${name}: ${describe(args as z.infer<S>)}`);
        return "ok";
      },
    }) as unknown as Tool;
  const path = z.strictObject({
    path: z.string(),
    content: z.string().optional(),
    oldText: z.string().optional(),
    newText: z.string().optional(),
  });
  return [
    make(
      "bash",
      z.strictObject({ command: z.string(), unsandboxed: z.boolean().optional() }),
      (a) => `${a.command}${a.unsandboxed ? " (unsandboxed)" : ""}`,
    ),
    make("write", path, (a) => a.path),
    make("edit", path, (a) => a.path),
    make("read", path, (a) => a.path),
  ];
}

const bash = (command: string, extra: Record<string, unknown> = {}): ScriptedTurn => ({
  toolCalls: [{ name: "bash", arguments: { command, ...extra } }],
});
const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({
  toolCalls: [{ name, arguments: args }],
});

async function converse(
  options: GateOptions,
  turns: ScriptedTurn[],
  answers: { select?: (string | undefined)[]; input?: (string | undefined)[] } = {},
) {
  const ran: string[] = [];
  const ui = createFakeUI({ select: answers.select ?? [], input: answers.input ?? [] });
  const run = await runConversation({
    extensions: [{ name: "permission-gate", factory: createPermissionGate(options) }],
    tools: recordingTools(ran),
    turns: [...turns, { text: "Done." }],
    prompt: "go",
    cwd,
    ui,
  });
  const gate = run.decisions
    .filter((d) => d.extension === "permission-gate" && d.slot === "tool_call")
    .map((d) => [d.outcome, d.reason]);
  const results = run.events.flatMap((e) =>
    e.type === "tool_execution_end" && e.isError ? [(e.result.content[0] as { text: string }).text] : [],
  );
  return { ran, ui, gate, results, run };
}

describe("answers with scopes", () => {
  it("keeps 'allow for this session' as a session entry: the same command runs without asking, another still asks", async () => {
    const { ran, ui, gate, run } = await converse(
      {},
      [bash("git push --force origin a"), bash("git push --force origin b"), bash("git reset --hard")],
      {
        select: [`${OPTION.session}: Bash(git push --force:*)`, OPTION.deny],
      },
    );
    expect(ui.dialogs.map((d) => d.title)).toEqual([
      "Allow bash: git push --force origin a? — it looks destructive (git push --force)",
      "Allow bash: git reset --hard? — it looks destructive (git reset --hard)",
    ]);
    expect(ran).toEqual(["bash: git push --force origin a", "bash: git push --force origin b"]);
    expect(gate).toEqual([
      ["pass", "allowed by the user for this session (Bash(git push --force:*))"],
      ["pass", "allowed by your answer for this session (Bash(git push --force:*))"],
      ["block", 'the user declined "git reset --hard" (git reset --hard).'],
    ]);
    const kept = run.session.getEntries().filter((e) => e.type === "custom" && e.customType === SESSION_ANSWER_ENTRY);
    expect(kept.map((e) => (e as { data: unknown }).data)).toEqual([
      { rules: ["Bash(git push --force:*)"], escape: false },
    ]);
  });

  it("writes 'always allow in this project' as the narrowest rule of the part asked about, and judges the next call by it", async () => {
    const appended: string[][] = [];
    const project = {
      file: `${cwd}/.mypi/settings.local.json`,
      append: (rules: readonly string[]) => void appended.push([...rules]),
    };
    const { ran, ui, gate } = await converse(
      { project },
      [bash("cd sub && npm test -- --watch && rm -rf dist/cache"), bash("rm -rf dist")],
      {
        select: [`${OPTION.project}: Bash(rm -rf:*) (.mypi/settings.local.json)`],
      },
    );
    expect(ui.dialogs).toEqual([
      {
        kind: "select",
        title: "Allow bash: cd sub && npm test -- --watch && rm -rf dist/cache? — it looks destructive (recursive rm)",
        options: [
          OPTION.once,
          `${OPTION.session}: Bash(rm -rf:*)`,
          `${OPTION.project}: Bash(rm -rf:*) (.mypi/settings.local.json)`,
          OPTION.deny,
          OPTION.denyWithReason,
        ],
      },
    ]);
    expect(appended).toEqual([["Bash(rm -rf:*)"]]);
    expect(ran).toEqual(["bash: cd sub && npm test -- --watch && rm -rf dist/cache", "bash: rm -rf dist"]);
    expect(gate).toEqual([
      ["pass", "allowed by the user for this project (Bash(rm -rf:*))"],
      ["pass", `allowed by the rule Bash(rm -rf:*) (permissions.allow in ${cwd}/.mypi/settings.local.json)`],
    ]);
  });

  it("denies with the user's reason, which the model reads", async () => {
    const { results } = await converse({}, [bash("git clean -fdx")], {
      select: [OPTION.denyWithReason],
      input: ["keep the build cache; use make clean"],
    });
    expect(results).toEqual([
      'Tool call blocked by permission-gate: the user declined "git clean -fdx" (git clean -f): keep the build cache; use make clean',
    ]);
  });

  it("offers only 'once' for what it cannot judge, and once or session for your own ask rules (an allow rule would not lift them)", async () => {
    const { ui } = await converse(
      { rules: { ask: ["Bash(npm publish:*)"] }, project: { file: "x", append: () => undefined } },
      [bash("eval $CMD"), bash("npm publish")],
    );
    expect(ui.dialogs.map((d) => (d.kind === "select" ? d.options : []))).toEqual([
      [OPTION.once, OPTION.deny, OPTION.denyWithReason],
      [OPTION.once, `${OPTION.session}: Bash(npm publish:*)`, OPTION.deny, OPTION.denyWithReason],
    ]);
  });
});

const managed: RuleSet = {
  tier: "managed",
  file: "/etc/mypi/managed-settings.json",
  rules: { ask: ["Bash(git push:*)"], deny: ["Write(secrets/**)"] },
};
const user: RuleSet = {
  tier: "user",
  file: "/home/me/.mypi/settings.json",
  rules: { allow: ["Bash(git push:*)", "Write(secrets/**)"] },
};

describe("tiers", () => {
  it("holds a managed ask over a user's allow rule, in every mode, asking once or deny only", async () => {
    const mode = createModeState({ initial: "bypass" });
    const { ui, gate, ran } = await converse(
      { rules: [managed, user], mode },
      [bash("git push origin main"), call("write", { path: "secrets/key", content: "x" })],
      {
        select: [OPTION.once],
      },
    );
    expect(ui.dialogs.map((d) => (d.kind === "select" ? [d.title, ...d.options] : []))).toEqual([
      [
        "Allow bash: git push origin main? — it needs confirmation by the rule Bash(git push:*) (permissions.ask in the managed settings /etc/mypi/managed-settings.json)",
        OPTION.once,
        OPTION.deny,
        OPTION.denyWithReason,
      ],
    ]);
    expect(ran).toEqual(["bash: git push origin main"]);
    expect(gate[1]).toEqual([
      "block",
      'write of "secrets/key" is denied by the rule Write(secrets/**) (permissions.deny in the managed settings /etc/mypi/managed-settings.json).',
    ]);
  });
});

describe("modes", () => {
  it("plan: reading tools and read-only commands run, the rest is refused; the model is told; an accepted plan switches the mode", async () => {
    const mode = createModeState({ initial: "plan" });
    const { ran, gate, run } = await converse(
      { mode },
      [
        call("read", { path: "src/a.ts" }),
        bash("git log --oneline | head -5"),
        bash("npm install left-pad"),
        call("write", { path: "src/a.ts", content: "x" }),
        call("exit_plan_mode", { plan: "1. change a.ts" }),
        call("write", { path: "src/a.ts", content: "x" }),
      ],
      { select: [PLAN_CHOICE.acceptEdits] },
    );
    expect(ran).toEqual(["read: src/a.ts", "bash: git log --oneline | head -5", "write: src/a.ts"]);
    expect(gate.filter(([o]) => o === "block").map(([, r]) => r)).toEqual([
      '"npm install left-pad" is not allowed in plan mode (npm is not known to only read): only reading tools and read-only shell commands run until the user accepts a plan. Finish the plan and call exit_plan_mode.',
      'write of "src/a.ts" is not allowed in plan mode (write is not a reading tool): only reading tools and read-only shell commands run until the user accepts a plan. Finish the plan and call exit_plan_mode.',
    ]);
    expect(mode.mode).toBe("accept-edits");
    expect(run.requests[0]!.systemPrompt).toContain("# Plan mode");
    expect(run.requests[0]!.tools?.map((t) => t.name)).toContain("exit_plan_mode");
    expect(run.requests.at(-1)!.tools?.map((t) => t.name)).not.toContain("exit_plan_mode");
  });

  it("plan: without a user the plan cannot be accepted, and plan mode stays", async () => {
    const mode = createModeState({ initial: "plan" });
    const ran: string[] = [];
    const run = await runConversation({
      extensions: [{ name: "permission-gate", factory: createPermissionGate({ mode }) }],
      tools: recordingTools(ran),
      turns: [call("exit_plan_mode", { plan: "1. x" }), { text: "Here is the plan." }],
      prompt: "go",
      cwd,
    });
    const end = run.events.find((e) => e.type === "tool_execution_end");
    expect(end).toMatchObject({ isError: true });
    expect(mode.mode).toBe("plan");
  });

  it("accept-edits: your ask rules on file changes inside the workspace are answered yes; outside it, and other asks, still ask", async () => {
    const mode = createModeState({ initial: "accept-edits" });
    const { ran, gate } = await converse({ rules: { ask: ["Write(**)", "Edit(/etc/**)", "Bash(make:*)"] }, mode }, [
      call("write", { path: "src/a.ts", content: "x" }),
      bash("echo hi > notes.txt"),
      call("edit", { path: "/etc/hosts", oldText: "a", newText: "b" }),
      bash("make deploy"),
    ]);
    expect(ran).toEqual(["write: src/a.ts", "bash: echo hi > notes.txt"]);
    expect(gate.map(([o]) => o)).toEqual(["pass", "pass", "block", "block"]);
    expect(gate[0]![1]).toBe("allowed by accept-edits mode (Write(**))");
  });

  it("bypass: the built-in list and ask rules are lifted, deny rules hold, and a call out of the sandbox still asks unless the loud flag was given", async () => {
    const mode = createModeState({ initial: "bypass" });
    const approved: string[] = [];
    const escapes = { approve: (_id: string, command: string) => void approved.push(command) };
    const turns = [bash("rm -rf build"), bash("npm publish"), bash("npm install", { unsandboxed: true })];
    const careful = await converse({ rules: { deny: ["Bash(npm publish:*)"] }, mode, escapes }, turns, {
      select: [OPTION.deny],
    });
    expect(careful.gate.map(([o, r]) => [o, r?.split(" (")[0]])).toEqual([
      ["pass", "allowed in bypass mode"],
      ["block", '"npm publish" is denied by the rule Bash(npm publish:*)'],
      ["block", 'the user declined "npm install"'],
    ]);
    const loud = await converse({ rules: { deny: ["Bash(npm publish:*)"] }, mode, escapes, dangerous: true }, turns);
    expect(loud.ran).toEqual(["bash: rm -rf build", "bash: npm install (unsandboxed)"]);
    expect(approved).toEqual(["npm install"]);
  });
});

describe("calls out of the sandbox", () => {
  it("asks unless allow rules name every command of the line, and approves exactly the call it allowed", async () => {
    const approved: [string, string][] = [];
    const escapes = { approve: (id: string, command: string) => void approved.push([id, command]) };
    const { ui, ran, gate } = await converse(
      { rules: { allow: ["Bash(npm install:*)"] }, escapes },
      [bash("npm install", { unsandboxed: true }), bash("npm install && curl -s x", { unsandboxed: true })],
      {
        select: [OPTION.once],
      },
    );
    expect(ran).toEqual(["bash: npm install (unsandboxed)", "bash: npm install && curl -s x (unsandboxed)"]);
    expect(ui.dialogs.map((d) => d.title)).toEqual([
      "Allow bash: npm install && curl -s x? — it asks to run outside the sandbox",
    ]);
    expect(gate[0]).toEqual([
      "pass",
      "allowed by the rule Bash(npm install:*) (permissions.allow in the settings), outside the sandbox",
    ]);
    expect(approved.map(([, command]) => command)).toEqual(["npm install", "npm install && curl -s x"]);
  });
});

describe("the rule an answer keeps and what plan mode lets run", () => {
  it("keeps the command's name and up to two subcommand or option words, stopping at a file or a value", async () => {
    const parser = await loadShellParser();
    const rules = [
      "npm test",
      "npm run test:unit",
      "git push --force origin main",
      "rm -rf build",
      "sudo -u root make",
      "docker compose up -d",
      "./scripts/deploy.sh prod",
      "python3 -m pytest tests/",
    ].map((command) => [command, commandRuleFor(analyzeScript(parser, command).invocations[0]!)]);
    expect(rules).toEqual([
      ["npm test", "Bash(npm test:*)"],
      ["npm run test:unit", "Bash(npm run test:unit:*)"],
      ["git push --force origin main", "Bash(git push --force:*)"],
      ["rm -rf build", "Bash(rm -rf build:*)"],
      ["sudo -u root make", "Bash(sudo -u root:*)"],
      ["docker compose up -d", "Bash(docker compose up:*)"],
      ["./scripts/deploy.sh prod", "Bash(./scripts/deploy.sh prod:*)"],
      ["python3 -m pytest tests/", "Bash(python3 -m pytest:*)"],
    ]);
  });

  it("finds read-only shell lines read-only, and says what else a line does", async () => {
    const parser = await loadShellParser();
    const lines = [
      "ls -la src",
      "git status && git diff HEAD~1",
      "grep -rn TODO src | sort | uniq -c",
      "cat a 2>/dev/null || echo none",
      "find . -name '*.ts'",
      "git branch -a",
      "npm test",
      "echo x > out.txt",
      "find . -delete",
      "git push",
      "git branch -D old",
      "sort -o out a",
      "eval $X",
      "cat $(rm -rf x)",
      "sed -i s/a/b/ f",
    ];
    expect(lines.map((l) => [l, readOnlyProblem(analyzeScript(parser, l)) ?? "reads"])).toEqual([
      ["ls -la src", "reads"],
      ["git status && git diff HEAD~1", "reads"],
      ["grep -rn TODO src | sort | uniq -c", "reads"],
      ["cat a 2>/dev/null || echo none", "reads"],
      ["find . -name '*.ts'", "reads"],
      ["git branch -a", "reads"],
      ["npm test", "npm is not known to only read"],
      ["echo x > out.txt", "it writes to out.txt"],
      ["find . -delete", "find may delete or write files here"],
      ["git push", "git push may change the repository"],
      ["git branch -D old", "git branch may change the repository"],
      ["sort -o out a", "sort -o writes a file"],
      ["eval $X", "it cannot be judged (eval runs text that is put together only when it runs)"],
      ["cat $(rm -rf x)", "rm is not known to only read"],
      ["sed -i s/a/b/ f", "sed is not known to only read"],
    ]);
  });
});
