/**
 * Where a command reads and writes. Its own file, below every command and mode, so that they can
 * name it without importing the entry point that dispatches to them.
 */

/** Where a command reads and writes; the process's own by default, replaceable in tests. */
export interface CliIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The shell's directory. */
  cwd: string;
}

export function processIO(): CliIO {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}
