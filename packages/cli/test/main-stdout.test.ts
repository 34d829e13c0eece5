/**
 * `main()` in process, with its streams captured: where machines read stdout (`--mode json`,
 * `mypi extensions --json`), nothing but the data may land there — not even what an extension
 * prints with console.log.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../src/io.ts";
import { main } from "../src/main.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-main-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const noisy = join(dir, "noisy.ts");
writeFileSync(
  noisy,
  'console.log("loading noisy");\n' +
    'export default function (pi: any) {\n  console.info("factory noisy");\n  pi.on("session_shutdown", () => console.log("bye"));\n}\n',
);
const script = join(dir, "hello.json");
writeFileSync(script, JSON.stringify({ turns: [{ text: "Hi." }] }));

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const capture = () => {
    const stream = new PassThrough();
    let text = "";
    stream.setEncoding("utf8").on("data", (d: string) => (text += d));
    return { stream, text: () => text };
  };
  const out = capture();
  const err = capture();
  const stdin = new PassThrough();
  stdin.end();
  const io: CliIO = { stdin, stdout: out.stream, stderr: err.stream, env: {}, cwd: dir };
  const code = await main(argv, io);
  return { code, stdout: out.text(), stderr: err.text() };
}

describe("machine-read stdout", () => {
  it("keeps `mypi extensions --json` one JSON document when an extension logs", async () => {
    const r = await run(["extensions", "--json", "--no-extensions", "-e", noisy]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).loaded.map((e: { name: string }) => e.name)).toEqual([
      "builtin-tools",
      "subagents",
      "noisy",
    ]);
    expect(r.stderr).toBe("loading noisy\nfactory noisy\nbye\n");
  });

  it("keeps `--mode json` one event per line, and gives console.log back afterwards", async () => {
    const consoleLog = console.log;
    const r = await run([
      "--mode",
      "json",
      "-p",
      "hi",
      "--model",
      `scripted:${script}`,
      "--no-session",
      "--no-extensions",
      "-e",
      noisy,
    ]);
    expect(r.code).toBe(0);
    const types = r.stdout
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.at(-1)).toBe("agent_end");
    expect(r.stderr).toContain("factory noisy\n");
    expect(console.log).toBe(consoleLog);
  });
});
