/**
 * The nine forms that deleted a folder past the pattern-matching permission gate (issue 23), run
 * through the bash tool against folders outside the workspace. Without the sandbox each one
 * deletes its folder — so the forms are real, and the builtin guard lets them all through; with
 * the sandbox on, none does.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBashTool } from "../src/index.ts";
import { call, seen } from "./helpers.ts";
import { sandboxSkipReason, sandboxTree } from "./sandbox-helpers.ts";

const tree = sandboxTree();
afterAll(() => tree.cleanup());

/** Each form deletes the folder `V` (an absolute path, no spaces). */
const forms: [string, (v: string) => string][] = [
  ["brace expansion", (v) => `{rm,-rf,${v}}`],
  ["${IFS} for spaces", (v) => `rm\${IFS}-rf\${IFS}${v}`],
  ["an alias", (v) => `shopt -s expand_aliases\nalias nuke='rm -rf'\nnuke ${v}`],
  ["a here-string to bash", (v) => `bash <<< 'rm -rf ${v}'`],
  ["a pipe into bash", (v) => `echo 'rm -rf ${v}' | bash`],
  ["an escaped letter", (v) => `r\\m -rf ${v}`],
  ["a git ! alias", (v) => `git -c alias.nuke='!rm -rf ${v}' nuke`],
  ["source of a process substitution", (v) => `source <(echo 'rm -rf ${v}')`],
  ["a ${VAR:-default}", (v) => `\${RM:-rm} -rf ${v}`],
];

function victim(name: string): string {
  const dir = join(tree.outside, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "precious.txt"), "precious\n");
  return dir;
}

describe("the bypass forms", () => {
  it("each delete a folder outside the workspace when bash is not sandboxed", async () => {
    const plain = createBashTool(tree.ws);
    const survived: string[] = [];
    for (const [i, [name, form]] of forms.entries()) {
      const dir = victim(`plain-${i}`);
      await call(plain, { command: form(dir) });
      if (existsSync(dir)) survived.push(name);
    }
    expect(survived).toEqual([]);
  });

  it.skipIf(sandboxSkipReason !== undefined)("delete nothing outside the workspace with the sandbox on", async () => {
    // The victims' folder is shown read-only (the private /tmp would hide it otherwise).
    const sandboxed = createBashTool(tree.ws, { sandbox: { home: tree.home, allowRead: [tree.outside] } });
    const outcomes: [string, boolean, string][] = [];
    for (const [i, [name, form]] of forms.entries()) {
      const dir = victim(`sandboxed-${i}`);
      const result = await call(sandboxed, { command: form(dir) });
      outcomes.push([
        name,
        existsSync(join(dir, "precious.txt")),
        seen(result).text.includes("Read-only file system") ? "read-only" : seen(result).text,
      ]);
    }
    expect(outcomes).toEqual(forms.map(([name]) => [name, true, "read-only"]));
  });
});
