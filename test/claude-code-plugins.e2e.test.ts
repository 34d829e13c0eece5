/**
 * Claude Code plugins through the real CLI: a plugin folder of our own installed from its path and
 * from a local git repository, and a marketplace repository (a plugin inside it, another in a
 * repository of its own); its commands (`$ARGUMENTS`, `$0`, `` !`cmd` `` through the bash tool and
 * the tool_call chain), its hooks (`CLAUDE_PLUGIN_ROOT`, `CLAUDE_PLUGIN_DATA`), its MCP server
 * (`mcp__plugin_<plugin>_<server>__<tool>` in hooks), its `bin/`, enable / disable, remove.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox, REPO, type Sandbox } from "./helpers/mypi.ts";
import type { JsonObject } from "./helpers/json.ts";

const FORMATTER = join(REPO, "test", "fixtures", "claude-code", "plugins", "formatter");
const made: Sandbox[] = [];
afterAll(() => {
  for (const s of made) s.cleanup();
});

function sandbox() {
  const s = createSandbox("mypi-claude-plugins-");
  made.push(s);
  const env = { HOME: join(s.root, "user") };
  const mypi = (args: string[]) => s.run(args, { env });
  const json = (turns: unknown[], prompt: string, extra: string[] = []) =>
    mypi(["--mode", "json", "--model", `scripted:${s.script(turns)}`, "--no-session", ...extra, "-p", prompt]);
  const settings = () => JSON.parse(readFileSync(join(s.home, "settings.json"), "utf8")) as JsonObject;
  return { s, mypi, json, settings };
}

/** A bare repository holding a copy of `folder` (one commit). */
function bareRepository(root: string, name: string, fill: (dir: string) => void): string {
  const work = join(root, `${name}-work`);
  fill(work);
  const git = (args: string[], cwd: string) =>
    execFileSync("git", args, {
      cwd,
      stdio: "pipe",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "t",
        GIT_AUTHOR_EMAIL: "t@t",
        GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@t",
      },
    });
  git(["init", "--quiet", "-b", "main"], work);
  git(["add", "-A"], work);
  git(["commit", "--quiet", "-m", "plugin"], work);
  const bare = join(root, `${name}.git`);
  git(["clone", "--quiet", "--bare", work, bare], root);
  rmSync(work, { recursive: true, force: true });
  return bare;
}

/** The formatter plugin without its MCP server (a copy outside the repository cannot import the SDK). */
function copyFormatter(dest: string): void {
  cpSync(FORMATTER, dest, { recursive: true });
  rmSync(join(dest, ".mcp.json"));
  rmSync(join(dest, "scripts", "notes-server.mjs"));
}

const texts = (events: JsonObject[], role: string) =>
  events
    .filter((e) => e.type === "message_end" && e.message.role === role)
    .map((e) =>
      typeof e.message.content === "string"
        ? e.message.content
        : e.message.content.map((c: { text?: string }) => c.text ?? "").join(" | "),
    );

describe("a Claude Code plugin installed from its folder", { timeout: 300_000 }, () => {
  it("brings its commands, hooks, MCP server and bin; mypi list shows where each piece came from", async () => {
    const p = sandbox();
    const installed = await p.mypi(["install", FORMATTER]);
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`Installed plugin formatter 1.2.0 → ${join(p.s.home, "settings.json")}`);
    expect(p.settings().plugins).toEqual([{ name: "formatter", source: FORMATTER, root: FORMATTER }]);

    const listed = await p.mypi(["list"]);
    expect(listed.stdout).toContain(`  formatter 1.2.0  enabled  ${FORMATTER}  ${FORMATTER}`);
    expect(listed.stdout).toContain(
      "commands: /formatter:fmt (commands/fmt.md), /formatter:tools:lint (commands/tools/lint.md)",
    );
    expect(listed.stdout).toContain("agents: formatter:reviewer (agents/reviewer.md)");
    expect(listed.stdout).toContain("hooks: PreToolUse, PostToolUse (hooks/hooks.json)");
    expect(listed.stdout).toContain("MCP servers: notes → tools mcp__plugin_formatter_notes__* (.mcp.json)");

    const r = await p.json(
      [
        {
          toolCalls: [
            { name: "plugin_formatter_notes__note", arguments: { text: "hi" } },
            { name: "bash", arguments: { command: "printenv SECRET" } },
            { name: "bash", arguments: { command: "formatter-version" } },
          ],
        },
        { text: "done" },
      ],
      '/formatter:fmt src/a.ts "house style"',
    );
    expect(r.code).toBe(0);
    const events = r.events();
    // The command, expanded as Claude Code expands it; its !`cmd` ran through the bash tool and the tool_call chain.
    expect(texts(events, "user")).toEqual([
      `Format src/a.ts in the house style style ($1 is written $1). All arguments: src/a.ts "house style".\nThe plugin lives in ${FORMATTER}.\nTool version: formatter-tool-2.0\n`,
    ]);
    expect(
      events
        .filter((e) => e.type === "hook_decision" && e.slot === "tool_call" && e.toolCallId === "ext_1")
        .map((e) => e.handler),
    ).toEqual([expect.stringMatching(/^PreToolUse Bash ← plugin formatter#0\.0$/)]);
    expect(texts(events, "toolResult")).toEqual([
      `noted: hi (root ${FORMATTER}) | PostToolUse hook additional context: formatter saw mcp__plugin_formatter_notes__note`,
      `Tool call blocked by claude-code: formatter refuses to print secrets (root: ${FORMATTER})`,
      "formatter bin 1.2.0",
    ]);
    // CLAUDE_PLUGIN_DATA: the plugin's own folder under the scope, kept across updates.
    const data = join(p.s.home, "plugins", "data", "formatter", "guard.jsonl");
    expect(readFileSync(data, "utf8")).toContain('"tool_name":"Bash"');
  });

  it("does nothing once disabled, and comes back when enabled", async () => {
    const p = sandbox();
    await p.mypi(["install", FORMATTER]);
    expect((await p.mypi(["plugin", "disable", "formatter"])).stdout).toBe(
      `Plugin formatter disabled in ${join(p.s.home, "settings.json")}\n`,
    );
    const off = await p.json(
      [{ toolCalls: [{ name: "bash", arguments: { command: "printenv SECRET" } }] }, { text: "done" }],
      "go",
    );
    expect(texts(off.events(), "toolResult")).toEqual([expect.not.stringContaining("refuses")]);
    expect(off.events().some((e) => e.type === "hook_decision" && e.extension === "claude-code")).toBe(false);
    await p.mypi(["plugin", "enable", "formatter"]);
    expect(p.settings().plugins).toEqual([{ name: "formatter", source: FORMATTER, root: FORMATTER }]);
  });
});

describe("a Claude Code plugin from a git repository, and from a marketplace", { timeout: 400_000 }, () => {
  it("installs from a local git repository into the plugins folder and runs its hook from there", async () => {
    const p = sandbox();
    const bare = bareRepository(p.s.root, "formatter", copyFormatter);
    const r = await p.mypi(["install", bare]);
    expect(r.code).toBe(0);
    const entry = p.settings().plugins[0];
    expect(entry).toMatchObject({
      name: "formatter",
      source: `git:file://${bare}`,
      root: expect.stringMatching(/^plugins\/git\//),
    });
    const root = join(p.s.home, entry.root);
    expect(existsSync(join(root, ".claude-plugin", "plugin.json"))).toBe(true);
    const run = await p.json(
      [{ toolCalls: [{ name: "bash", arguments: { command: "printenv SECRET" } }] }, { text: "done" }],
      "go",
    );
    expect(texts(run.events(), "toolResult")).toEqual([
      `Tool call blocked by claude-code: formatter refuses to print secrets (root: ${root})`,
    ]);
    // `mypi remove` undeclares it and deletes the clone.
    expect((await p.mypi(["remove", "formatter"])).code).toBe(0);
    expect(existsSync(root)).toBe(false);
    expect(p.settings().plugins).toBeUndefined();
  });

  it("adds a marketplace from a git repository; installs a plugin inside it and one it names by URL", async () => {
    const p = sandbox();
    const greeter = bareRepository(p.s.root, "greeter", (dir) => {
      p.s.file(join(dir, ".claude-plugin", "plugin.json"), JSON.stringify({ name: "greeter", version: "0.1.0" }));
      p.s.file(join(dir, "commands", "hello.md"), "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS.\n");
    });
    const market = bareRepository(p.s.root, "market", (dir) => {
      copyFormatter(join(dir, "plugins", "formatter"));
      p.s.file(
        join(dir, ".claude-plugin", "marketplace.json"),
        JSON.stringify({
          name: "acme-tools",
          owner: { name: "Acme" },
          plugins: [
            { name: "formatter", source: "./plugins/formatter", description: "Formatting" },
            { name: "greeter", source: { source: "url", url: `file://${greeter}` } },
          ],
        }),
      );
    });
    const added = await p.mypi(["plugin", "marketplace", "add", market]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("Added marketplace acme-tools");
    expect(added.stdout).toContain("formatter  Formatting   (mypi install formatter@acme-tools)");
    expect((await p.mypi(["install", "formatter@acme-tools"])).code).toBe(0);
    expect((await p.mypi(["install", "greeter@acme-tools"])).code).toBe(0);
    expect(p.settings().plugins.map((e: Record<string, string>) => [e.name, e.source, e.marketplace])).toEqual([
      ["formatter", "formatter@acme-tools", "acme-tools"],
      ["greeter", "greeter@acme-tools", "acme-tools"],
    ]);
    const run = await p.json([{ text: "hello!" }], "/hello the team");
    expect(texts(run.events(), "user")).toEqual(["Say hello to the team.\n"]);

    const unknown = await p.mypi(["install", "nope@acme-tools"]);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining("the marketplace acme-tools has no plugin named nope (it has: formatter, greeter)"),
    ]);
    const noMarket = await p.mypi(["install", "x@elsewhere"]);
    expect(noMarket.stderr).toContain('there is no marketplace named "elsewhere"');

    // Removing the marketplace uninstalls what came from it, as in Claude Code.
    const removed = await p.mypi(["plugin", "marketplace", "remove", "acme-tools"]);
    expect(removed.stdout).toContain("Removed marketplace acme-tools and its plugins formatter, greeter");
    expect(p.settings().plugins).toBeUndefined();
    expect(p.settings().pluginMarketplaces).toBeUndefined();
  });
});
