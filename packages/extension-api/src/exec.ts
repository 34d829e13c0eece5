/**
 * `pi.exec(cmd, args, opts)`: run a program without a shell. Never rejects: a program that
 * cannot start answers `code: 127` with the reason in `stderr`; a timeout or abort kills the
 * whole process group and answers `killed: true`.
 */
import { spawn } from "node:child_process";
import type { ExecOptions, ExecResult } from "./types.ts";

export function exec(command: string, args: readonly string[], options: ExecOptions, defaultCwd: string): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve) => {
    let stdout = "";
    let stderr = "";
    let killed = false;
    let settled = false;
    const ownGroup = process.platform !== "win32";
    const child = spawn(command, [...args], {
      cwd: options.cwd ?? defaultCwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: ownGroup,
      shell: false,
    });
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
    const timer = options.timeout !== undefined && options.timeout > 0 ? setTimeout(kill, options.timeout) : undefined;
    if (options.signal?.aborted) kill();
    options.signal?.addEventListener("abort", kill, { once: true });
    const finish = (result: ExecResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", kill);
      resolve(result);
    };
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    if (options.input !== undefined) child.stdin?.end(options.input);
    child.on("error", (error) => finish({ stdout, stderr: stderr + error.message, code: 127, killed }));
    child.on("close", (code) => finish({ stdout, stderr, code: code ?? -1, killed }));
  });
}
