/**
 * Context files, skills, prompt templates, resources_discover, --tools and --session <id prefix>
 * through the real CLI. A probe extension writes what the model is about to receive at each
 * model call (the `context` slot: `ctx.getSystemPrompt()`, the messages, the active tools) and
 * the raw text the `input` slot saw.
 */
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
// Its .mypi holds the test's own skills, templates and settings: the workspace is trusted.
sandbox.trustWorkspace();
afterAll(() => sandbox.cleanup());
// ~/.agents/skills is read too: the real home must not leak in.
const env = { HOME: join(sandbox.root, "user-home") };

const log = join(sandbox.root, "probe.jsonl");
const probe = sandbox.file(
  "probe.ts",
  `
import { appendFileSync } from "node:fs";
import type { ExtensionAPI } from "@mypi/extension-api";
const write = (value: unknown) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(value) + "\\n");
export default function (pi: ExtensionAPI) {
  pi.on("input", (event) => void write({ input: event.text }));
  pi.on("context", (event, ctx) => void write({ systemPrompt: ctx.getSystemPrompt(), tools: pi.getActiveTools(), messages: event.messages }));
}
`,
);
interface Seen {
  input?: string;
  systemPrompt?: string;
  tools?: string[];
  messages?: { role: string; content: unknown }[];
}
const seen = (): Seen[] =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Seen)
    : [];
const calls = () => seen().filter((s) => s.systemPrompt !== undefined);
const textOf = (m: { content: unknown }) =>
  typeof m.content === "string"
    ? m.content
    : (m.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
const answer = sandbox.script([{ text: "ok" }], "answer.json");

beforeEach(() => {
  rmSync(log, { force: true });
  for (const dir of [join(sandbox.ws, ".mypi"), join(sandbox.ws, ".agents")])
    rmSync(dir, { recursive: true, force: true });
  for (const name of [
    "AGENTS.md",
    "CLAUDE.md",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    "settings.json",
    "skills",
    "prompts",
    "sessions",
  ]) {
    rmSync(join(sandbox.home, name), { recursive: true, force: true });
  }
  for (const name of ["AGENTS.md", "CLAUDE.md"]) rmSync(join(sandbox.ws, name), { force: true });
  rmSync(join(sandbox.root, "AGENTS.md"), { force: true });
});

describe("context files and the system prompt", () => {
  it("joins $MYPI_HOME's, then the folders' from / down to the workspace, after SYSTEM.md and the appended text; --no-context-files drops them", async () => {
    sandbox.file(join(sandbox.home, "AGENTS.md"), "HOME-RULE");
    sandbox.file(join(sandbox.root, "AGENTS.md"), "PARENT-RULE");
    sandbox.file(join(sandbox.ws, "CLAUDE.md"), "WORKSPACE-RULE");
    sandbox.file(join(sandbox.ws, ".mypi", "SYSTEM.md"), "PROJECT-SYSTEM");
    sandbox.file(join(sandbox.home, "APPEND_SYSTEM.md"), "HOME-APPEND");
    const appendFile = sandbox.file("append.md", "FILE-APPEND");

    const r = await sandbox.run(
      [
        "--model",
        `scripted:${answer}`,
        "--no-session",
        "-e",
        probe,
        "--append-system-prompt",
        "FLAG-APPEND",
        "--append-system-prompt",
        appendFile,
        "-p",
        "hi",
      ],
      { env },
    );
    expect(r.stderr).toBe("");
    const prompt = calls()[0]!.systemPrompt!;
    const order = [
      "PROJECT-SYSTEM",
      "HOME-APPEND",
      "FLAG-APPEND",
      "FILE-APPEND",
      "HOME-RULE",
      "PARENT-RULE",
      "WORKSPACE-RULE",
    ].map((t) => prompt.indexOf(t));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBe(0);
    expect(prompt).toContain(`## ${join(sandbox.ws, "CLAUDE.md")}`);
    expect(prompt).not.toContain("You are mypi"); // SYSTEM.md replaced the default

    rmSync(log);
    await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "--no-context-files", "-p", "hi"],
      { env },
    );
    expect(calls()[0]!.systemPrompt).toBe("PROJECT-SYSTEM\n\nHOME-APPEND");

    rmSync(log);
    await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "--system-prompt", "ONLY-THIS", "-p", "hi"],
      { env },
    );
    expect(calls()[0]!.systemPrompt).toBe("ONLY-THIS");
  }, 60_000); // three runs of the real bin, one after the other
});

describe("skills", () => {
  it("are listed with their file, read by the model with the read tool, and a bad one is a warning", async () => {
    const skill = sandbox.file(
      join(sandbox.ws, ".mypi", "skills", "deploy", "SKILL.md"),
      "---\nname: deploy\ndescription: Ship the app. Use when asked to deploy.\n---\nRun ./ship.sh --prod and report the URL.\n",
    );
    sandbox.file(
      join(sandbox.home, "skills", "hidden", "SKILL.md"),
      "---\nname: hidden\ndescription: Only by command.\ndisable-model-invocation: true\n---\nHidden body.\n",
    );
    sandbox.file(join(sandbox.home, "skills", "bad", "SKILL.md"), "---\nname: bad\n---\nNo description.\n");
    const script = sandbox.script([
      { toolCalls: [{ name: "read", arguments: { path: skill } }] },
      { text: "Deployed." },
    ]);

    const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session", "-e", probe, "-p", "deploy it"], {
      env,
    });
    expect(r.stdout).toContain("Deployed.");
    expect(r.stderr).toBe(
      `mypi: skill ${join(sandbox.home, "skills", "bad", "SKILL.md")}: no description in its frontmatter (the model picks skills by it); not loaded\n`,
    );
    const [first, second] = calls();
    expect(first!.systemPrompt).toContain(`- deploy: Ship the app. Use when asked to deploy. (file: ${skill})`);
    expect(first!.systemPrompt).not.toContain("hidden");
    expect(first!.messages!.map(textOf).join("\n")).not.toContain("ship.sh"); // progressive: the body is not in the prompt
    const result = second!.messages!.at(-1)!;
    expect(result.role).toBe("toolResult");
    expect(textOf(result)).toContain("Run ./ship.sh --prod and report the URL.");
  });

  it("/skill:name args sends the body and the words, after the input slot saw the raw text; a hidden skill works by command", async () => {
    const skill = sandbox.file(
      join(sandbox.home, "skills", "hidden", "SKILL.md"),
      "---\nname: hidden\ndescription: Only by command.\ndisable-model-invocation: true\n---\nHidden body.\n",
    );
    const r = await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "-p", "/skill:hidden check the logs"],
      { env },
    );
    expect(r.code).toBe(0);
    expect(seen()[0]).toEqual({ input: "/skill:hidden check the logs" });
    const user = calls()[0]!.messages!.at(-1)!;
    expect(textOf(user)).toBe(
      `<skill name="hidden" location="${skill}">\nPaths in this skill are relative to ${join(sandbox.home, "skills", "hidden")}.\n\nHidden body.\n</skill>\n\ncheck the logs`,
    );
  });
});

describe("prompt templates", () => {
  const review = () =>
    sandbox.file(
      join(sandbox.ws, ".mypi", "prompts", "review.md"),
      '---\ndescription: Review a change\nargument-hint: "<file> [focus]"\n---\nReview $1 for ${2:-bugs}; context: ${@:2}.\n',
    );

  it("expand /name args with placeholders after the input slot saw the raw text", async () => {
    review();
    const r = await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "-p", '/review src/a.ts "error paths" and tests'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(seen()[0]).toEqual({ input: '/review src/a.ts "error paths" and tests' });
    expect(textOf(calls()[0]!.messages!.at(-1)!)).toBe(
      "Review src/a.ts for error paths; context: error paths and tests.\n",
    );
  });

  it("are listed by mypi extensions (text and --json) and RPC get_commands, skills after them", async () => {
    const file = review();
    sandbox.file(
      join(sandbox.ws, ".mypi", "skills", "deploy", "SKILL.md"),
      "---\nname: deploy\ndescription: Ship it.\n---\nBody\n",
    );

    const listing = await sandbox.run(["extensions", "--no-builtin-tools"], { env });
    expect(listing.stdout).toContain(
      `Prompt templates and skills (2):\n  /review        Review a change  ${file}\n  /skill:deploy  Ship it.  ${join(sandbox.ws, ".mypi", "skills", "deploy", "SKILL.md")}\n`,
    );
    const json = JSON.parse((await sandbox.run(["extensions", "--json"], { env })).stdout) as { commands: unknown[] };
    expect(json.commands).toEqual([
      {
        name: "review",
        description: "Review a change",
        source: "prompt",
        argumentHint: "<file> [focus]",
        path: file,
        sourceInfo: { path: file, source: "local", scope: "project", origin: "top-level" },
      },
      expect.objectContaining({ name: "skill:deploy", source: "skill" }),
    ]);

    const p = sandbox.spawn(["--mode", "rpc", "--model", `scripted:${answer}`, "--no-session"], { env });
    p.send({ id: "1", type: "get_commands" });
    const response = await p.waitFor((l) => l.id === "1");
    p.end();
    await p.exit;
    expect(response.data.commands.map((c: { name: string; source: string }) => [c.name, c.source])).toEqual([
      ["agents", "extension"],
      ["review", "prompt"],
      ["skill:deploy", "skill"],
    ]);
  }, 60_000); // three runs of the real bin

  it("with enableSkillCommands false, skills are not listed as commands but /skill:name still works", async () => {
    sandbox.file(join(sandbox.home, "settings.json"), JSON.stringify({ enableSkillCommands: false }));
    sandbox.file(
      join(sandbox.home, "skills", "deploy", "SKILL.md"),
      "---\nname: deploy\ndescription: Ship it.\n---\nDEPLOY-BODY\n",
    );
    const json = JSON.parse((await sandbox.run(["extensions", "--json"], { env })).stdout) as { commands: unknown[] };
    expect(json.commands).toEqual([]);
    await sandbox.run(["--model", `scripted:${answer}`, "--no-session", "-e", probe, "-p", "/skill:deploy"], { env });
    expect(textOf(calls()[0]!.messages!.at(-1)!)).toContain("DEPLOY-BODY");
  }, 40_000);
});

describe("resources_discover", () => {
  it("adds the skill and prompt folders extensions return, at startup", async () => {
    sandbox.file(
      join(sandbox.root, "extra", "skills", "lint", "SKILL.md"),
      "---\nname: lint\ndescription: Lint the code.\n---\nLINT-BODY\n",
    );
    sandbox.file(join(sandbox.root, "extra", "prompts", "fix.md"), "Fix $@ now.");
    const provider = sandbox.file(
      "provider.ts",
      `
import type { ExtensionAPI } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  pi.on("resources_discover", (event) => ({
    skillPaths: [${JSON.stringify(join(sandbox.root, "extra", "skills"))}],
    promptPaths: [${JSON.stringify(join(sandbox.root, "extra", "prompts"))}],
    ...(event.reason !== "startup" && { skillPaths: [] }),
  }));
}
`,
    );
    await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "-e", provider, "-p", "/fix the build"],
      { env },
    );
    const call = calls()[0]!;
    expect(textOf(call.messages!.at(-1)!)).toBe("Fix the build now.");
    expect(call.systemPrompt).toContain("- lint: Lint the code.");

    const listing = await sandbox.run(["extensions", "--no-builtin-tools", "-e", provider], { env });
    expect(listing.stdout).toContain(
      `Prompt templates and skills (2):\n  /fix         Fix $@ now.  ${join(sandbox.root, "extra", "prompts", "fix.md")}\n  /skill:lint  Lint the code.`,
    );
  }, 40_000);
});

describe("--tools", () => {
  it("offers only the named tools; --no-tools none; the settings' tools apply and the flag wins", async () => {
    await sandbox.run(["--model", `scripted:${answer}`, "--no-session", "-e", probe, "--tools", "read", "-p", "hi"], {
      env,
    });
    expect(calls()[0]!.tools).toEqual(["read"]);
    expect(calls()[0]!.systemPrompt).toContain("Tools: read.");

    rmSync(log);
    await sandbox.run(["--model", `scripted:${answer}`, "--no-session", "-e", probe, "--no-tools", "-p", "hi"], {
      env,
    });
    expect(calls()[0]!.tools).toEqual([]);

    rmSync(log);
    sandbox.file(join(sandbox.ws, ".mypi", "settings.json"), JSON.stringify({ tools: ["ls", "grep"] }));
    await sandbox.run(["--model", `scripted:${answer}`, "--no-session", "-e", probe, "-p", "hi"], { env });
    expect(calls()[0]!.tools).toEqual(["grep", "ls"]);

    rmSync(log);
    const r = await sandbox.run(
      ["--model", `scripted:${answer}`, "--no-session", "-e", probe, "--tools", "read,nope", "-p", "hi"],
      { env },
    );
    expect(calls()[0]!.tools).toEqual(["read"]);
    expect(r.stderr).toContain(
      "mypi: no tool named nope (registered: read, write, edit, bash, grep, find, ls, agent); the others are offered",
    );
  }, 80_000); // four runs
});

describe("--session <id prefix>", () => {
  const sessionDir = () => join(sandbox.home, "sessions", readdirSync(join(sandbox.home, "sessions"))[0]!);

  it("resumes the workspace's session whose id starts with it", async () => {
    const script = sandbox.script([{ text: "first answer" }, { text: "second answer" }]);
    await sandbox.run(["--model", `scripted:${script}`, "-p", "remember 42"], { env });
    const [file] = readdirSync(sessionDir());
    const id = file!.slice(file!.indexOf("_") + 1, -".jsonl".length);

    const next = sandbox.script([{ text: "resumed" }]);
    const r = await sandbox.run(
      ["--model", `scripted:${next}`, "-e", probe, "--session", id.slice(0, 8), "-p", "what did I say?"],
      { env },
    );
    expect(r.code).toBe(0);
    expect(calls()[0]!.messages!.map(textOf)).toEqual(["remember 42", "first answer", "what did I say?"]);
    expect(readdirSync(sessionDir())).toEqual([file]);
  });

  it("that matches several sessions, or none, is a usage error and creates nothing", async () => {
    await sandbox.run(["--model", `scripted:${answer}`, "-p", "start"], { env });
    const dir = sessionDir();
    for (const id of ["abc111", "abc222"]) writeFileSync(join(dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`), "");
    const before = readdirSync(dir).sort();

    const many = await sandbox.run(["--model", `scripted:${answer}`, "--session", "abc", "-p", "hi"], { env });
    expect(many.code).toBe(2);
    expect(many.stderr).toBe(
      "mypi: --session abc matches 2 sessions; give more of the id: 2026-01-01T00-00-00-000Z_abc111.jsonl, 2026-01-01T00-00-00-000Z_abc222.jsonl\n",
    );

    const none = await sandbox.run(["--model", `scripted:${answer}`, "--session", "zzz", "-p", "hi"], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('mypi: --session zzz: no session of this workspace has an id starting with "zzz"');
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(existsSync(join(sandbox.ws, "zzz"))).toBe(false);
  });
});
