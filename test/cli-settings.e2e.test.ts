/**
 * Settings through the real CLI: the model named in settings.json runs, the project's key wins,
 * a flag wins over both, extensions read the merged settings, a bad file is one clear error.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

const out = join(sandbox.root, "settings-seen.json");
const probe = sandbox.file(
  "probe.ts",
  `
import { writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  const seen = pi.getSettings();
  (seen as any).mine.changed = true;
  writeFileSync(${JSON.stringify(out)}, JSON.stringify(pi.getSettings()));
}
`,
);

describe("settings.json", () => {
  it("supplies the model, merges global and project, and reaches extensions as a copy", async () => {
    const globalScript = sandbox.script([{ text: "from the global model" }], "global.json");
    const projectScript = sandbox.script([{ text: "from the project model" }], "project.json");
    sandbox.file(
      join(sandbox.home, "settings.json"),
      JSON.stringify({ model: `scripted:${globalScript}`, mine: { a: 1 } }),
    );
    sandbox.file(
      join(sandbox.ws, ".mypi", "settings.json"),
      JSON.stringify({ model: `scripted:${projectScript}`, mine: { b: 2 } }),
    );

    const r = await sandbox.run(["-e", probe, "--trust-project", "-p", "hi"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("from the project model");
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({ model: `scripted:${projectScript}`, mine: { a: 1, b: 2 } });

    const flagScript = sandbox.script([{ text: "from the flag" }], "flag.json");
    const byFlag = await sandbox.run(["--model", `scripted:${flagScript}`, "--trust-project", "-p", "hi"]);
    expect(byFlag.stdout).toContain("from the flag");
  });

  it("that is malformed stops the run with one line naming the file and the key", async () => {
    const file = sandbox.file(join(sandbox.ws, ".mypi", "settings.json"), JSON.stringify({ strictExtensions: "yes" }));
    const r = await sandbox.run(["--trust-project", "-p", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain('"strictExtensions"');
    expect(readFileSync(file, "utf8")).toBe(JSON.stringify({ strictExtensions: "yes" }));
  });
});
