import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import permissionGate, { createPermissionGate, judge, type PermissionRules } from "./index.ts";

/** [verdict, what decided] for each command under `rules`. */
async function verdicts(rules: PermissionRules, commands: string[]): Promise<[string, string, string][]> {
  const out: [string, string, string][] = [];
  for (const c of commands) {
    const d = await judge(c, rules);
    out.push([c, d.verdict, d.rule]);
  }
  return out;
}

describe("permission rules for bash", () => {
  it("rank deny over ask over allow, whatever the order they are written in", async () => {
    const rules = {
      allow: ["Bash(git push:*)"],
      ask: ["Bash(git push origin main)"],
      deny: ["Bash(git push --force:*)"],
    };
    expect(
      await verdicts(rules, ["git push origin main", "git push --force origin x", "git push origin dev", "git status"]),
    ).toEqual([
      ["git push origin main", "ask", "Bash(git push origin main)"],
      ["git push --force origin x", "deny", "Bash(git push --force:*)"],
      ["git push origin dev", "allow", "Bash(git push:*)"],
      ["git status", "allow", "no rule"],
    ]);
  });

  it("match exactly without :*, by prefix with :* or a trailing *, and on the resolved words", async () => {
    const rules = { allow: ["Bash(rm -rf build)", "Bash(npm run test:*)", "Bash(git push --force-with-lease *)"] };
    expect(
      await verdicts(rules, [
        "rm -rf build",
        "'rm' -r'f' bu\\ild",
        "rm -rf build src",
        "npm run test -- --watch",
        "npm run test:unit",
        "git push --force-with-lease origin x",
      ]),
    ).toEqual([
      ["rm -rf build", "allow", "Bash(rm -rf build)"],
      ["'rm' -r'f' bu\\ild", "allow", "Bash(rm -rf build)"],
      ["rm -rf build src", "ask", "recursive rm"],
      ["npm run test -- --watch", "allow", "Bash(npm run test:*)"],
      // Prefixes are whole words: `test:unit` is not the word `test`.
      ["npm run test:unit", "allow", "no rule"],
      ["git push --force-with-lease origin x", "allow", "Bash(git push --force-with-lease *)"],
    ]);
  });

  it("see through wrappers and shells, and an allow rule for a wrapper does not allow what it runs", async () => {
    const rules = { deny: ["Bash(rm:*)"], allow: ["Bash(sudo:*)"] };
    expect(
      await verdicts(rules, ["sudo /bin/rm x", "find . | xargs rm", "bash -c 'r\\m x'", "sudo ls", "rmdir x"]),
    ).toEqual([
      ["sudo /bin/rm x", "deny", "Bash(rm:*)"],
      ["find . | xargs rm", "deny", "Bash(rm:*)"],
      ["bash -c 'r\\m x'", "deny", "Bash(rm:*)"],
      ["sudo ls", "allow", "Bash(sudo:*)"],
      ["rmdir x", "allow", "no rule"],
    ]);
    expect(await verdicts({ allow: ["Bash(sudo:*)"] }, ["sudo rm -rf /srv"])).toEqual([
      ["sudo rm -rf /srv", "ask", "recursive rm"],
    ]);
  });

  it("never allow what cannot be resolved, and ask where a deny rule may match an unknown word", async () => {
    const rules = { allow: ["Bash(eval:*)", "Bash(npm:*)"], deny: ["Bash(npm publish:*)"] };
    expect(await verdicts(rules, ["eval ls", "npm $ACTION", "npm publish", "npm install"])).toEqual([
      ["eval ls", "ask", "eval runs text that is put together only when it runs"],
      ["npm $ACTION", "ask", "Bash(npm publish:*)"],
      ["npm publish", "deny", "Bash(npm publish:*)"],
      ["npm install", "allow", "Bash(npm:*)"],
    ]);
  });

  it("take a bare tool name as every call of that tool, what cannot be judged included", async () => {
    expect(await verdicts({ deny: ["Bash"] }, ["ls", "eval x"])).toEqual([
      ["ls", "deny", "Bash"],
      ["eval x", "deny", "Bash"],
    ]);
  });

  it("reject a pattern that is not one plain command, naming the list and the rule", async () => {
    await expect(judge("ls", { deny: ["Bash(ls; rm:*)"] })).rejects.toThrow(
      'a permission rule cannot be read: permissions.deny: "Bash(ls; rm:*)": the pattern must be one plain command\'s words (no $, *, ;, | or redirections), perhaps ending in :*',
    );
    await expect(judge("ls", { ask: ["mcp_search(x)"] })).rejects.toThrow(
      'permissions.ask: "mcp_search(x)": only Bash, Read, Write and Edit rules take a pattern',
    );
    await expect(judge("ls", { allow: ["Bash($X:*)"] })).rejects.toThrow(
      "the pattern must be one plain command's words",
    );
  });
});

describe("permission rules for paths", () => {
  const ws = mkdtempSync(join(tmpdir(), "mypi-gate-"));
  mkdirSync(join(ws, "src"));
  mkdirSync(join(ws, "docs"));
  symlinkSync(join(ws, "src"), join(ws, "link"));
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  const call = async (rules: PermissionRules, toolName: string, input: Record<string, unknown>) => {
    const fake = await loadFake(createPermissionGate(rules));
    return fake.call("tool_call", { toolCallId: "c1", toolName, input }, { cwd: ws });
  };

  it("answer write and edit alike by globs relative to the workspace, through symlinks", async () => {
    const rules = { deny: ["Write(src/**)"], ask: ["Edit(docs/**)"] };
    expect(await call(rules, "write", { path: "src/a.ts", content: "" })).toEqual({
      block: true,
      reason: 'write of "src/a.ts" is denied by the rule Write(src/**) (permissions.deny in the settings).',
    });
    expect(await call(rules, "edit", { path: join(ws, "src", "b.ts") })).toMatchObject({ block: true });
    expect(await call(rules, "write", { path: "link/c.ts", content: "" })).toMatchObject({ block: true });
    expect(await call(rules, "write", { path: "docs/x.md", content: "" })).toEqual({
      block: true,
      reason:
        'write of "docs/x.md" needs confirmation by the rule Edit(docs/**) (permissions.ask in the settings) and there is no user to confirm it. Do it another way or ask the user to run it.',
    });
    expect(await call(rules, "write", { path: "README.md", content: "" })).toBeUndefined();
  });

  it("judge a shell redirection into a path like a write", async () => {
    const rules = { deny: ["Write(src/**)"] };
    expect(await call(rules, "bash", { command: "echo x > src/a.ts" })).toMatchObject({
      block: true,
      reason: expect.stringContaining("denied by the rule Write(src/**)"),
    });
    expect(await call(rules, "bash", { command: 'echo x > "$OUT"' })).toMatchObject({
      block: true,
      reason: expect.stringContaining("may match the deny rule Write(src/**)"),
    });
    expect(await call(rules, "bash", { command: "echo x > docs/a.md" })).toBeUndefined();
  });

  it("answer read, grep, find and ls by Read rules; absolute globs match absolute paths", async () => {
    const rules = { deny: ["Read(src/secret/**)", `Read(${ws}/docs/private.md)`] };
    expect(await call(rules, "read", { path: "src/secret/key" })).toMatchObject({ block: true });
    expect(await call(rules, "grep", { pattern: "x", path: "src/secret" })).toMatchObject({ block: true });
    expect(await call(rules, "read", { path: "docs/private.md" })).toMatchObject({ block: true });
    expect(await call(rules, "read", { path: "src/a.ts" })).toBeUndefined();
    expect(await call(rules, "write", { path: "src/secret/key", content: "" })).toBeUndefined();
  });

  it("deny any tool by its bare name", async () => {
    expect(await call({ deny: ["web_fetch"] }, "web_fetch", { url: "x" })).toEqual({
      block: true,
      reason: "web_fetch is denied by the rule web_fetch (permissions.deny in the settings).",
    });
  });
});

describe("the default export", () => {
  it("reads its rules from the permissions settings", async () => {
    const fake = await loadFake(permissionGate, undefined, { permissions: { deny: ["Bash(npm publish:*)"] } });
    expect(
      await fake.call("tool_call", {
        toolCallId: "c1",
        toolName: "bash",
        input: { command: "npm publish --tag next" },
      }),
    ).toEqual({
      block: true,
      reason: '"npm publish --tag next" is denied by the rule Bash(npm publish:*) (permissions.deny in the settings).',
    });
  });

  it("blocks every call it judges, saying why, when a rule in the settings cannot be read", async () => {
    const fake = await loadFake(permissionGate, undefined, { permissions: { allow: ["Bash(ls | sh)"] } });
    expect(await fake.call("tool_call", { toolCallId: "c1", toolName: "bash", input: { command: "ls" } })).toEqual({
      block: true,
      reason:
        'permission-gate cannot judge this call: a permission rule cannot be read: permissions.allow: "Bash(ls | sh)": the pattern must be one plain command\'s words (no $, *, ;, | or redirections), perhaps ending in :*.',
    });
  });
});
