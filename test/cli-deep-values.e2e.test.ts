/**
 * A model answer nested thousands of levels deep, through the real `mypi`: the run ends with its
 * `agent_end` (JSON mode lost it), the call is answered with the reason, and the session keeps
 * working — for the next run and for a session file an older version wrote with such an entry.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

const deepArguments = (depth: number) => `{"content":${"[".repeat(depth)}${"]".repeat(depth)}}`;

describe("deeply nested model output", () => {
  it("ends the run with agent_end, answers the call, and the session runs again", async () => {
    const session = join(sandbox.root, "deep.jsonl");
    const script = sandbox.script([
      { toolCalls: [{ name: "write", arguments: deepArguments(3000) }] },
      { text: "Could not." },
      { text: "Still here." },
    ]);
    const first = await sandbox.run([
      "--model",
      `scripted:${script}`,
      "--session",
      session,
      "--mode",
      "json",
      "-p",
      "go",
    ]);
    expect(first.stderr).toBe("");
    const events = first.events();
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "completed", finalText: "Could not." });
    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({
      isError: true,
      result: { content: [{ text: expect.stringContaining("nested deeper than 256 levels") }] },
    });
    const again = sandbox.script([{ text: "Still here." }]);
    expect(await sandbox.run(["--model", `scripted:${again}`, "--session", session, "-p", "again"])).toMatchObject({
      code: 0,
      stdout: "Still here.\n",
      stderr: "",
    });
  });

  it("reopens a session file that already holds such an entry, saying it skipped it", async () => {
    const session = join(sandbox.root, "old.jsonl");
    const script = sandbox.script([{ text: "First." }]);
    await sandbox.run(["--model", `scripted:${script}`, "--session", session, "-p", "one"]);
    const last = readFileSync(session, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .at(-1);
    // Line 4, as an older version wrote it: the deep value as an object.
    appendFileSync(
      session,
      `{"type":"custom","id":"deep1","parentId":"${last.id}","timestamp":"2026-01-01T00:00:00.000Z","customType":"x","data":${deepArguments(3000)}}\n`,
    );
    const next = sandbox.script([{ text: "Second." }]);
    const r = await sandbox.run(["--model", `scripted:${next}`, "--session", session, "-p", "two"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Second.\n");
    expect(r.stderr).toBe("mypi: session: old.jsonl:4: the entry is nested deeper than 256 levels, skipped\n");
  });
});
