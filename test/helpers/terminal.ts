/**
 * mypi in a real pseudo-terminal (python3's pty module, `pty-driver.py`), its screen kept by a
 * virtual terminal (`vt.ts`). `see` waits for a screen state — never for time.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { MYPI_BIN, REPO, type Sandbox } from "./mypi.ts";
import { VirtualTerminal } from "./vt.ts";

const driver = join(REPO, "test", "helpers", "pty-driver.py");

export interface Terminal {
  /**
   * Resolves once the screen, as the user sees it, matches. The timer only turns a hang into a
   * readable failure (the screen at that moment); it never paces the test.
   */
  see(test: RegExp): Promise<void>;
  type(keys: string): void;
  screen(): string;
  stderr(): string;
  exit: Promise<number | null>;
}

/** Opens terminals in `sandbox`'s workspace; `closeAll` ends those a failed test left open. */
export function terminals(sandbox: Sandbox, size = { columns: 160, rows: 30 }) {
  const open = new Set<ReturnType<typeof spawn>>();
  const terminal = (args: string[]): Terminal => {
    const child = spawn("python3", [driver, String(size.columns), String(size.rows), process.execPath, MYPI_BIN, ...args], { cwd: sandbox.ws, env: sandbox.env });
    const vt = new VirtualTerminal(size.columns);
    const waiters: { test: RegExp; resolve: () => void }[] = [];
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      vt.write(d);
      const screen = vt.text();
      for (const w of [...waiters]) {
        if (w.test.test(screen)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    open.add(child);
    const exit = new Promise<number | null>((resolve) =>
      child.on("close", (code) => {
        open.delete(child);
        resolve(code);
      }),
    );
    return {
      see(test) {
        return new Promise((resolve, reject) => {
          if (test.test(vt.text())) return resolve();
          const timer = setTimeout(() => reject(new Error(`screen never matched ${test}:\n${vt.text()}`)), 10_000);
          waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
        });
      },
      type: (keys) => void child.stdin.write(keys),
      screen: () => vt.text(),
      stderr: () => stderr,
      exit,
    };
  };
  return {
    terminal,
    closeAll: () => {
      for (const child of open) child.kill("SIGKILL");
    },
  };
}
