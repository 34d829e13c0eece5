/**
 * `mypi mcp login <server>` / `mypi mcp logout <server>`: OAuth for the HTTP servers of
 * mcp.json (docs/mcp.md "OAuth"). The command line, project trust, the browser and the exit code
 * are decided here; what a login is belongs to the mcp extension (`@mypi/extensions/mcp/login`).
 */
import { resolve } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { TrustStore } from "../workspace/trust.ts";

const USAGE =
  "usage: mypi mcp login <server> [--cwd DIR] [--trust-project] [--no-browser] · mypi mcp logout <server> [--cwd DIR] [--trust-project]";

export async function runMcpCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const fail = (message: string) => (io.stderr.write(`mypi: ${message}\n`), EXIT.usage);
  const [verb, ...rest] = argv;
  if (verb !== "login" && verb !== "logout")
    return fail(verb === undefined ? USAGE : `unknown mcp command "${verb}". ${USAGE}`);
  const words: string[] = [];
  let cwd = io.cwd;
  let trustFlag: boolean | undefined;
  let browser = true;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--cwd") {
      const dir = rest[++i];
      if (dir === undefined) return fail(`--cwd needs a folder. ${USAGE}`);
      cwd = resolve(io.cwd, dir);
    } else if (arg === "--trust-project") trustFlag = true;
    else if (arg === "--no-trust-project") trustFlag = false;
    else if (arg === "--no-browser" && verb === "login") browser = false;
    else if (arg.startsWith("-")) return fail(`unknown option ${arg}. ${USAGE}`);
    else words.push(arg);
  }
  if (words.length !== 1) return fail(USAGE);
  const home = mypiHome();
  // The workspace's mcp.json names servers to send the user's browser to: read only when trusted.
  const project = trustFlag ?? new TrustStore(home).lookup(cwd)?.trusted ?? false;
  const options = { server: words[0]!, cwd, home, env: io.env, project };
  const { loginToServer, logoutFromServer, openBrowser } = await import("@mypi/extensions/mcp/login");

  const interrupt = new AbortController();
  const result =
    verb === "logout"
      ? logoutFromServer(options)
      : await withInterrupt(interrupt, (signal) =>
          loginToServer({
            ...options,
            signal,
            onAuthorizationUrl: (url) => {
              io.stderr.write(
                `Open this URL in a browser to log in to MCP server "${options.server}":\n  ${url}\nWaiting for the browser to come back (Ctrl-C stops) …\n`,
              );
              if (browser && io.stdout.isTTY) openBrowser(url);
            },
          }),
        );
  if (!result.ok) {
    io.stderr.write(`mypi: ${result.message}\n`);
    return interrupt.signal.aborted ? EXIT.aborted : EXIT.error;
  }
  io.stdout.write(`${result.message}\n`);
  return EXIT.ok;
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
