/**
 * The host records extensions' verdicts (`hook_decision`, `extension_error`) in the session: their
 * `reason` and `error` are the extension's own text, so with redact-secrets loaded they are masked
 * like the rest of the session, and without it they are kept as written.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, SHIPPED, createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox("mypi-verdicts-");
afterAll(() => sandbox.cleanup());
const TOKEN = `ghp_${"v3rd1ctT0k".repeat(4)}`;
const guard = join(REPO, "test", "fixtures", "quoting-guard.ts");

/** The session's verdict entries, as lines of its file (the model's own tool call keeps the token: no slot sees model output). */
async function verdictsAfterRun(name: string, extensions: string[]): Promise<string> {
  const script = sandbox.script([{ toolCalls: [{ name: "bash", arguments: { command: `echo ${TOKEN}` } }] }, { text: "done" }]);
  const session = join(sandbox.root, "sessions", `${name}.jsonl`);
  const r = await sandbox.run([...extensions.flatMap((e) => ["-e", e]), "--mode", "json", "--model", `scripted:${script}`, "--session", session, "-p", "go"]);
  expect(r.code).toBe(0);
  return readFileSync(session, "utf8").split("\n").filter((l) => l.includes('"customType":"mypi:')).join("\n");
}

describe("verdicts recorded in the session", () => {
  it("are masked by redact-secrets when it is loaded: the token the guard quoted is not in them", async () => {
    const file = await verdictsAfterRun("redacted", [SHIPPED("redact-secrets"), guard]);
    expect(file).toContain('"customType":"mypi:hook_decision"');
    expect(file).toContain("refused: echo ");
    expect(file).toContain('"customType":"mypi:extension_error"');
    expect(file).not.toContain(TOKEN);
  });

  it("are kept as the extension wrote them without redact-secrets", async () => {
    const file = await verdictsAfterRun("raw", [guard]);
    expect(file).toContain(`refused: echo ${TOKEN}`);
  });
});
