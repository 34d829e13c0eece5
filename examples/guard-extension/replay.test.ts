import { replay } from "@mypi/extension-api/testing";
import { describe, expect, it } from "vitest";

const GUARD = new URL("./index.ts", import.meta.url);
// Recorded by `mypi -e ./examples/guard-extension --session …` with a scripted model.
const SESSION = new URL("./sessions/lock-and-push.jsonl", import.meta.url);

describe("the guard over a recorded session", () => {
  it("decides today as it did when the session was recorded", async () => {
    const replayed = await replay(SESSION, [GUARD]);
    expect(replayed.differences).toEqual([]);
  });

  it("without it, the lock file would be written and the push would run", async () => {
    const replayed = await replay(SESSION, []);
    expect(replayed.differences.map((d) => [d.kind, d.toolName, d.input, d.extension])).toEqual([
      ["newly_allowed", "write", { path: "package-lock.json", content: "{}\n" }, "guard-extension"],
      ["newly_allowed", "bash", { command: "git push origin main" }, "guard-extension"],
    ]);
  });
});
