/// <reference types="node" preserve="true" />
/**
 * `mypi mcp login <server>` / `mypi mcp logout <server>`: OAuth for the HTTP servers of
 * mcp.json (docs/mcp.md "OAuth"). The package declares this module as the `mcp` command of the
 * `mypi` command (`mypi.cliCommands` in its package.json, docs/extensions.md); the CLI hands it the
 * arguments after `mcp` and a context: the shell's streams and directory, `$MYPI_HOME`, the
 * user's trust answers and the exit codes. What a login is lives in login-command.ts.
 */
import { resolve } from "node:path";
import { loginToServer, logoutFromServer, openBrowser } from "./login-command.ts";

/** What the `mypi` command hands a command a package declares (docs/extensions.md). */
export interface CliCommandContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  home: string;
  projectTrusted(cwd: string): boolean | undefined;
  exit: { ok: number; error: number; usage: number; aborted: number };
}

const USAGE =
  "usage: mypi mcp login <server> [--cwd DIR] [--trust-project] [--no-browser] · mypi mcp logout <server> [--cwd DIR] [--trust-project]";

export default async function runMcpCommand(argv: readonly string[], context: CliCommandContext): Promise<number> {
  const { stdout, stderr, exit } = context;
  const fail = (message: string) => (stderr.write(`mypi: ${message}\n`), exit.usage);
  const [verb, ...rest] = argv;
  if (verb !== "login" && verb !== "logout")
    return fail(verb === undefined ? USAGE : `unknown mcp command "${verb}". ${USAGE}`);
  const words: string[] = [];
  let cwd = context.cwd;
  let trustFlag: boolean | undefined;
  let browser = true;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--cwd") {
      const dir = rest[++i];
      if (dir === undefined) return fail(`--cwd needs a folder. ${USAGE}`);
      cwd = resolve(context.cwd, dir);
    } else if (arg === "--trust-project") trustFlag = true;
    else if (arg === "--no-trust-project") trustFlag = false;
    else if (arg === "--no-browser" && verb === "login") browser = false;
    else if (arg.startsWith("-")) return fail(`unknown option ${arg}. ${USAGE}`);
    else words.push(arg);
  }
  if (words.length !== 1) return fail(USAGE);
  // The workspace's mcp.json names servers to send the user's browser to: read only when trusted.
  const project = trustFlag ?? context.projectTrusted(cwd) ?? false;
  const options = { server: words[0]!, cwd, home: context.home, env: context.env, project };

  const interrupt = new AbortController();
  const result =
    verb === "logout"
      ? logoutFromServer(options)
      : await withInterrupt(interrupt, (signal) =>
          loginToServer({
            ...options,
            signal,
            onAuthorizationUrl: (url) => {
              stderr.write(
                `Open this URL in a browser to log in to MCP server "${options.server}":\n  ${url}\nWaiting for the browser to come back (Ctrl-C stops) …\n`,
              );
              if (browser && stdout.isTTY) openBrowser(url);
            },
          }),
        );
  if (!result.ok) {
    stderr.write(`mypi: ${result.message}\n`);
    return interrupt.signal.aborted ? exit.aborted : exit.error;
  }
  stdout.write(`${result.message}\n`);
  return exit.ok;
}

/** Ctrl-C stops the wait for the browser (the login then fails with "interrupted", exit 130). */
async function withInterrupt<T>(controller: AbortController, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  try {
    return await run(controller.signal);
  } finally {
    process.off("SIGINT", onSignal);
  }
}
