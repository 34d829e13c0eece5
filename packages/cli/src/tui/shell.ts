/**
 * `!cmd` in interactive mode: the user's own shell command, run in the workspace with `bash -c`
 * (the user typed it, so it runs as the user would run it in their shell; it is not the model's
 * `bash` tool and not sandboxed). Its output is shown as a block; with `!` (not `!!`) it also goes
 * to the model with the next prompt, as Pi does.
 *
 * Escape or Ctrl+C stops it: the whole process group gets SIGTERM, then SIGKILL if it lingers.
 */
import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";

/** Output kept per command; the rest is cut (the block says how much). */
const MAX_OUTPUT = 64 * 1024;
const KILL_AFTER_MS = 2000;

export interface ShellResult {
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
}

/** `!cmd` → run and share; `!!cmd` → run only; anything else → undefined. */
export function parseShellLine(line: string): { command: string; excludeFromContext: boolean } | undefined {
  const m = /^(!!?)\s*([^]+)$/.exec(line.trim());
  if (!m || !m[2]!.trim()) return undefined;
  return { command: m[2]!.trim(), excludeFromContext: m[1] === "!!" };
}

/** `onOutput` sees every chunk of output as it comes, also past what is kept (RPC `bash_execution_update`). */
export function runShell(
  command: string,
  cwd: string,
  signal: AbortSignal,
  onOutput?: (text: string) => void,
): Promise<ShellResult> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let truncated = false;
    let cancelled = false;
    const take = (text: string) => {
      if (text === "") return;
      onOutput?.(text);
      if (output.length >= MAX_OUTPUT) return void (truncated = true);
      output += text;
      if (output.length > MAX_OUTPUT) {
        output = output.slice(0, MAX_OUTPUT);
        truncated = true;
      }
    };
    // A decoder per stream keeps a character split between two chunks whole.
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder("utf8");
      stream.on("data", (chunk: Buffer) => take(decoder.write(chunk)));
      stream.on("end", () => take(decoder.end()));
    }
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // Already gone.
      }
    };
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      cancelled = true;
      group("SIGTERM");
      killTimer = setTimeout(() => group("SIGKILL"), KILL_AFTER_MS);
      killTimer.unref();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      output += `${output ? "\n" : ""}${error.message}`;
    });
    child.on("close", (code) => {
      if (killTimer) clearTimeout(killTimer);
      signal.removeEventListener("abort", onAbort);
      resolve({ output, exitCode: code, cancelled, truncated });
    });
  });
}

/** How a command and its output go to the model with the next prompt. */
export function shellContext(command: string, r: ShellResult): string {
  const status = r.cancelled ? "cancelled" : `exit code ${r.exitCode ?? "?"}`;
  return `I ran \`${command}\` (${status}):\n\`\`\`\n${r.output.replace(/\n$/, "")}${r.truncated ? "\n[output truncated]" : ""}\n\`\`\``;
}
