/**
 * Commands of the `mypi` command that an extension package declares (`mypi.cliCommands` in its
 * manifest): the CLI finds them by word in the shipped package's manifest, imports the declared
 * export and runs its default export with the arguments and a context — knowing nothing of the
 * command itself. What cannot run is an error that names the module and where it was declared.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it, vi } from "vitest";
import { findDeclaredCommand, runDeclaredCommand } from "../src/commands/declared.ts";
import type { CliIO } from "../src/io.ts";
import { main } from "../src/main.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-declared-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
vi.stubEnv("MYPI_HOME", join(dir, "home"));

function captureIO(): { io: CliIO; stdout: () => string; stderr: () => string } {
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
  return {
    io: { stdin, stdout: out.stream, stderr: err.stream, env: {}, cwd: dir },
    stdout: out.text,
    stderr: err.text,
  };
}

function module(name: string, text: string): { specifier: string; from: string } {
  const file = join(dir, name);
  writeFileSync(file, text);
  return { specifier: file, from: "a test's manifest" };
}

describe("declared commands", () => {
  it("finds the mcp command in the shipped package's manifest, as an export of that package", () => {
    expect(findDeclaredCommand("mcp")).toMatchObject({ specifier: "@mypi/extensions/mcp/cli" });
    expect(findDeclaredCommand("hello")).toBeUndefined();
    expect(findDeclaredCommand("toString")).toBeUndefined();
  });

  it("runs `mypi mcp` through the declaration: the extension's own usage errors and exit codes come back", async () => {
    const bare = captureIO();
    expect(await main(["mcp"], bare.io)).toBe(2);
    expect(bare.stderr()).toContain("usage: mypi mcp login <server>");
    const unknown = captureIO();
    expect(await main(["mcp", "logout", "nowhere"], unknown.io)).toBe(1);
    expect(unknown.stderr()).toMatch(/MCP server "nowhere"/);
  });

  it("hands the command its arguments and a context with the home folder, trust answers and exit codes", async () => {
    const echo = module(
      "echo.mjs",
      "export default async (argv, ctx) => { ctx.stdout.write(JSON.stringify({ argv, home: ctx.home, cwd: ctx.cwd, trusted: ctx.projectTrusted(ctx.cwd) ?? null, exit: ctx.exit })); return 7; };\n",
    );
    const run = captureIO();
    expect(await runDeclaredCommand(echo, ["a", "--b"], run.io)).toBe(7);
    expect(JSON.parse(run.stdout())).toEqual({
      argv: ["a", "--b"],
      home: join(dir, "home"),
      cwd: dir,
      trusted: null,
      exit: { ok: 0, error: 1, usage: 2, aborted: 130 },
    });
  });

  it("reports a module that does not load, has no default export or throws, naming it, with exit 1", async () => {
    const missing = captureIO();
    expect(await runDeclaredCommand({ specifier: join(dir, "absent.mjs"), from: "m" }, [], missing.io)).toBe(1);
    expect(missing.stderr()).toContain(`could not load ${join(dir, "absent.mjs")}, declared in m`);
    const bare = captureIO();
    expect(await runDeclaredCommand(module("bare.mjs", "export const x = 1;\n"), [], bare.io)).toBe(1);
    expect(bare.stderr()).toContain("has no default export to run");
    const thrower = captureIO();
    const boom = module("boom.mjs", 'export default async () => { throw new Error("boom"); };\n');
    expect(await runDeclaredCommand(boom, [], thrower.io)).toBe(1);
    expect(thrower.stderr()).toContain("failed: boom");
  });
});
