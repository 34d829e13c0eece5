/**
 * `pi.exec(cmd, args, opts)`: run a program without a shell. Never rejects: a program that
 * cannot start answers `code: 127` with the reason in `stderr`; a timeout or abort kills the
 * whole process group and answers `killed: true`. Bounded in memory (`EXEC_OUTPUT_LIMIT` per
 * stream) and in time once the program has exited (a child left in the background holding its
 * output does not keep the answer waiting).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { errnoCode, timerDelay, toolEnvironment, trackProcessGroup } from "@mypi/kernel";
import type { Readable } from "node:stream";
import type { ExecOptions, ExecResult } from "./types.ts";

/** Characters kept per stream; the rest is read and dropped, and `stderr` ends with a line saying so. */
export const EXEC_OUTPUT_LIMIT = 10 * 1024 * 1024;
/** After the program exited, how long its output may stay open (held by a background child) before the answer goes without it. */
const OUTPUT_GRACE_MS = 100;

export function exec(
  command: string,
  args: readonly string[],
  options: ExecOptions,
  defaultCwd: string,
): Promise<ExecResult> {
  if (options.signal?.aborted) return Promise.resolve({ stdout: "", stderr: "", code: -1, killed: true });
  const cwd = options.cwd ?? defaultCwd;
  return new Promise<ExecResult>((resolve) => {
    let killed = false;
    let settled = false;
    let afterExit: ReturnType<typeof setTimeout> | undefined;
    const ownGroup = process.platform !== "win32";
    const child = spawn(command, [...args], {
      cwd,
      // Without the model's API key, as for the bash tool; what the caller sets explicitly it gets.
      env: options.env ? { ...toolEnvironment(), ...options.env } : toolEnvironment(),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: ownGroup,
      shell: false,
    });
    // Killed at the process's exit while the call is in progress (the CLI's exit watcher).
    const untrack = ownGroup && child.pid !== undefined ? trackProcessGroup(child.pid) : () => {};
    const stdout = collect(child.stdout);
    const stderr = collect(child.stderr);
    const kill = () => {
      if (killed || child.exitCode !== null) return;
      killed = true;
      try {
        if (ownGroup && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer =
      options.timeout !== undefined && options.timeout > 0 ? setTimeout(kill, timerDelay(options.timeout)) : undefined;
    options.signal?.addEventListener("abort", kill, { once: true });
    const finish = (code: number, problem?: string) => {
      if (settled) return;
      settled = true;
      untrack();
      clearTimeout(timer);
      clearTimeout(afterExit);
      options.signal?.removeEventListener("abort", kill);
      child.stdout?.destroy();
      child.stderr?.destroy();
      const notes = [stdout.note("stdout"), stderr.note("stderr")].filter((n) => n !== undefined);
      const err = [stderr.text + (problem ?? ""), ...notes].filter((part) => part !== "").join("\n");
      resolve({ stdout: stdout.text, stderr: err, code, killed });
    };
    if (options.input !== undefined) {
      child.stdin?.on("error", () => {}); // a program that exits without reading its input: EPIPE is no failure of exec
      child.stdin?.end(options.input);
    }
    child.on("error", (error) => {
      const gone = errnoCode(error) === "ENOENT" && !existsSync(cwd);
      finish(127, gone ? `cannot run ${command}: the working folder ${cwd} does not exist` : error.message);
    });
    child.on("close", (code) => finish(code ?? -1));
    // 'close' waits for the output to end, which a background child may hold open for ever: once the
    // program has exited, give the output a moment, then answer (setImmediate: after one more poll for what is buffered).
    child.on("exit", (code) => {
      afterExit = setTimeout(() => setImmediate(() => finish(code ?? -1)), OUTPUT_GRACE_MS);
    });
  });
}

/** One output stream, kept up to `EXEC_OUTPUT_LIMIT` characters. */
function collect(stream: Readable | null) {
  let text = "";
  let dropped = 0;
  stream?.setEncoding("utf8").on("data", (chunk: string) => {
    const room = EXEC_OUTPUT_LIMIT - text.length;
    if (chunk.length <= room) text += chunk;
    else {
      text += chunk.slice(0, room);
      dropped += chunk.length - room;
    }
  });
  return {
    get text() {
      return text;
    },
    note: (name: string) =>
      dropped
        ? `[mypi] ${name} truncated: ${dropped} more characters dropped (pi.exec keeps ${EXEC_OUTPUT_LIMIT} per stream)`
        : undefined,
  };
}
