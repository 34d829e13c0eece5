// pi.exec (docs/extensions.md#5-the-rest-of-pi): no shell, never rejects, bounded in time and in memory, never crashes the host.
import { describe, expect, it } from "vitest";
import { EXEC_OUTPUT_LIMIT, exec } from "../src/exec.ts";

const node = (script: string, options = {}) => exec(process.execPath, ["-e", script], options, process.cwd());

describe("pi.exec", () => {
  it("passes stdin input and an env override to the program", async () => {
    const result = await node("process.stdin.pipe(process.stdout); process.stderr.write(process.env.MYPI_EXEC_PROBE)", {
      input: "from stdin",
      env: { MYPI_EXEC_PROBE: "from env" },
    });
    expect(result).toEqual({ stdout: "from stdin", stderr: "from env", code: 0, killed: false });
  });

  it("takes a timeout beyond what a Node timer holds (2^31 ms) as the longest one, not as none at all", async () => {
    // Node fires a timer of more than 2^31 - 1 ms after 1 ms: the program would be killed at once.
    expect(await node("process.stdout.write('done')", { timeout: 2 ** 32 })).toEqual({
      stdout: "done",
      stderr: "",
      code: 0,
      killed: false,
    });
  });

  it("answers when the program exits without reading its input (the broken pipe is not the host's crash)", async () => {
    const result = await node("process.exit(4)", { input: "x".repeat(4 * 1024 * 1024) });
    expect(result).toEqual({ stdout: "", stderr: "", code: 4, killed: false });
  });

  it("answers when the program has exited though a child it left in the background still holds its output", async () => {
    const result = await exec("sh", ["-c", "sleep 60 & echo $!"], {}, process.cwd());
    const orphan = Number(result.stdout.trim());
    try {
      expect(result).toMatchObject({ stderr: "", code: 0, killed: false });
      expect(orphan).toBeGreaterThan(0);
    } finally {
      if (orphan > 0) process.kill(orphan, "SIGKILL");
    }
  });

  it("keeps at most EXEC_OUTPUT_LIMIT characters of a stream and says at the end of stderr how much it dropped", async () => {
    const result = await node(
      `process.stdout.write("y".repeat(${EXEC_OUTPUT_LIMIT + 1000})); process.stderr.write("done")`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("y".repeat(EXEC_OUTPUT_LIMIT));
    expect(result.stderr).toBe(
      `done\n[mypi] stdout truncated: 1000 more characters dropped (pi.exec keeps ${EXEC_OUTPUT_LIMIT} per stream)`,
    );
  });

  it("does not start the program when the signal is already aborted", async () => {
    const aborted = AbortSignal.abort();
    expect(await exec("mypi-no-such-program-xyz", [], { signal: aborted }, process.cwd())).toEqual({
      stdout: "",
      stderr: "",
      code: -1,
      killed: true,
    });
  });

  it("says that the working folder does not exist rather than that the program is missing", async () => {
    const result = await exec("ls", [], { cwd: "/mypi/no/such/folder" }, process.cwd());
    expect(result).toEqual({
      stdout: "",
      stderr: "cannot run ls: the working folder /mypi/no/such/folder does not exist",
      code: 127,
      killed: false,
    });
  });

  it("keeps mypi's model API key from the program unless MYPI_PASS_ENV names it or the caller sets it", async () => {
    const saved = { key: process.env.OPENAI_API_KEY, pass: process.env.MYPI_PASS_ENV };
    const probe = "process.stdout.write(String(process.env.OPENAI_API_KEY))";
    try {
      process.env.OPENAI_API_KEY = "sk-test-not-for-programs";
      delete process.env.MYPI_PASS_ENV;
      expect((await node(probe)).stdout).toBe("undefined");
      expect((await node(probe, { env: { OTHER: "1" } })).stdout).toBe("undefined");
      expect((await node(probe, { env: { OPENAI_API_KEY: "given" } })).stdout).toBe("given");
      process.env.MYPI_PASS_ENV = "FOO, OPENAI_API_KEY";
      expect((await node(probe)).stdout).toBe("sk-test-not-for-programs");
    } finally {
      for (const [name, value] of [
        ["OPENAI_API_KEY", saved.key],
        ["MYPI_PASS_ENV", saved.pass],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
