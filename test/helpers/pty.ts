/**
 * mypi in a real pseudo-terminal (python3's pty module; see pty-driver.py), its screen read back
 * through a terminal emulator (vt.ts): tests type keys and wait for what the user would see.
 *
 *   const { sandbox, terminal } = ptySuite();   // a sandbox, terminals, both cleaned up after the file
 *   const t = terminal(["--model", `scripted:${script}`, "--no-session"]);
 *   await t.see(IDLE); t.type("hello\r"); await t.see(/Hi\./); t.resize(80, 24);
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, onTestFailed } from "vitest";
import { MYPI_BIN, REPO, createSandbox, type Sandbox } from "./mypi.ts";
import { jailPrefix } from "./jail.ts";
import { VirtualTerminal } from "./vt.ts";

const driver = join(REPO, "test", "helpers", "pty-driver.py");

export const SPIN = "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]";
/** The editor, empty, with the footer under it: mypi waits for input. */
export const IDLE = /\n─{20,}\n\n─{20,}\n[^\n]*(\n[^\n]*)?$/;
/** The editor holding `text` (a regexp source), the footer under it. */
export const editorWith = (text: string) => new RegExp(`\\n─{20,}\\n${text}\\n─{20,}\\n[^\\n]*(\\n[^\\n]*)?$`);

/**
 * When the running test fails (or times out), print what `describe` says then. Outside a test (a
 * `beforeAll`), nothing is registered: the hook's own failure says enough.
 */
function reportIfFailed(describe: () => string | undefined): void {
  try {
    onTestFailed(() => {
      const text = describe();
      if (text !== undefined) console.error(text);
    });
  } catch {
    // not inside a test
  }
}

export interface PtyOptions {
  env?: Record<string, string>;
  cwd?: string;
  columns?: number;
  rows?: number;
  /** Run mypi in a throwaway jail: the file system read-only but the sandbox's root (see `RunOptions.jail`). */
  jail?: boolean;
}

export function ptyTerminals(sandbox: Sandbox) {
  /** Terminals still open: a test that failed half-way leaves its mypi running; it is ended here. */
  const open = new Set<ReturnType<typeof spawn>>();
  const closeAll = () => {
    for (const child of open) child.kill("SIGKILL");
  };

  function terminal(args: string[], options: PtyOptions = {}) {
    const columns = options.columns ?? 160;
    const rows = options.rows ?? 30;
    const jail = options.jail ? jailPrefix(sandbox.root) : [];
    const child = spawn(
      "python3",
      [driver, String(columns), String(rows), ...jail, process.execPath, MYPI_BIN, ...args],
      {
        cwd: options.cwd ?? sandbox.ws,
        env: { ...sandbox.env, ...options.env },
      },
    );
    const vt = new VirtualTerminal(columns, rows);
    const waiters: { test: RegExp; resolve: () => void }[] = [];
    let written = Promise.resolve();
    let bytes = 0;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      bytes += Buffer.byteLength(d);
      written = written
        .then(() => vt.write(d))
        .then(() => {
          const screen = vt.text();
          for (const w of [...waiters]) {
            if (w.test.test(screen)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve();
            }
          }
        });
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    open.add(child);
    const exit = new Promise<number | null>((resolve) =>
      child.on("close", (code) => {
        open.delete(child);
        void written.then(() => resolve(code));
      }),
    );
    return {
      /**
       * Resolves once the screen, as the user sees it (scrollback included), matches. It has no
       * deadline of its own (a shorter one than the test's failed slow starts on a loaded
       * machine): the test's timeout ends a hang, and a failed test prints what the screen showed
       * and what it was waiting for.
       */
      see(test: RegExp): Promise<void> {
        return new Promise((resolve) => {
          if (test.test(vt.text())) return resolve();
          const waiter = { test, resolve };
          waiters.push(waiter);
          reportIfFailed(() => (waiters.includes(waiter) ? `screen never matched ${test}:\n${vt.text()}` : undefined));
        });
      },
      type: (keys: string) => void child.stdin.write(keys),
      /** Resize the terminal, as a user dragging the window does (the program gets SIGWINCH). */
      resize(newColumns: number, newRows: number) {
        vt.resize(newColumns, newRows);
        child.stdin.write(`\0resize ${newColumns} ${newRows}\n`);
      },
      screen: () => vt.text(),
      /** The rows on screen now (not the scrollback). */
      visible: () => vt.screen(),
      /** Bytes mypi wrote to the terminal so far. */
      bytes: () => bytes,
      stderr: () => stderr,
      exit,
    };
  }
  return { terminal, closeAll };
}

/** A test file's sandbox and its terminals; after the file, open terminals are killed and the sandbox removed. */
export function ptySuite(): { sandbox: Sandbox; terminal: ReturnType<typeof ptyTerminals>["terminal"] } {
  const sandbox = createSandbox();
  const { terminal, closeAll } = ptyTerminals(sandbox);
  afterAll(() => {
    closeAll();
    sandbox.cleanup();
  });
  return { sandbox, terminal };
}
