/**
 * The `mypi` entry point: parse the command line, then hand over to a command.
 *
 * Only `args.ts` and `io.ts` are imported up front; the kernel, the extension system and the
 * tools (zod, openai, babel through jiti) are loaded when a command needs them, so `mypi --help`
 * and usage errors answer in the time Node takes to start.
 */
// The kernel's small value helpers, not its index: `--help` must not load the kernel (and zod).
import { errorMessage } from "@mypi/kernel/values";
import { readFileSync } from "node:fs";
import { format } from "node:util";
import { EXIT, HELP, isSubcommandWord, parseArgs, type CliArgs } from "./args.ts";
import { processIO, type CliIO } from "./io.ts";

/** Run one `mypi` invocation; resolves to the process exit code. Never throws. */
export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  // Commands that manage mypi itself take their own arguments and load nothing of an agent.
  const first = argv[0];
  if (first === "trust") {
    const { runTrustCommand } = await import("./commands/trust.ts");
    return runTrustCommand(argv.slice(1), io);
  }
  if (first === "approve") {
    const { runApproveCommand } = await import("./commands/approve.ts");
    return await runApproveCommand(argv.slice(1), io);
  }
  if (first === "replay") {
    const { runReplayCommand } = await import("./commands/replay.ts");
    return await runReplayCommand(argv.slice(1), io);
  }
  if (first === "export") {
    const { runExportCommand } = await import("./commands/export.ts");
    return runExportCommand(argv.slice(1), io);
  }
  if (first === "plugin") {
    const { runPluginCommand } = await import("./commands/plugins.ts");
    return await runPluginCommand(argv.slice(1), io);
  }
  if (first === "install" || first === "remove" || first === "list" || first === "update") {
    // A Claude Code plugin (commands/plugins.ts) is installed, removed, listed and updated beside the packages.
    const plugins = await import("./commands/plugins.ts");
    if (first === "install" || first === "remove") {
      const handled = await plugins.runPluginInstallOrRemove(first, argv.slice(1), io);
      if (handled !== undefined) return handled;
    }
    const { runPackageCommand } = await import("./commands/packages.ts");
    const code = await runPackageCommand(first, argv.slice(1), io);
    if (first === "list" && code === EXIT.ok) plugins.listPlugins(io);
    if (first === "update" && code !== EXIT.usage && argv.length === 1 && (await plugins.updatePlugins(io)) > 0)
      return EXIT.error;
    return code;
  }
  // A command an extension package declares (`mypi mcp login`): a plain word no built-in command
  // takes, looked up only then, so a prompt of several words never reads a manifest.
  if (first !== undefined && /^[a-z][a-z0-9-]*$/.test(first) && !isSubcommandWord(first)) {
    const { findDeclaredCommand, runDeclaredCommand } = await import("./commands/declared.ts");
    const declared = findDeclaredCommand(first);
    if (declared) return await runDeclaredCommand(declared, argv.slice(1), io);
  }
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    io.stderr.write(`${parsed.error}\n`);
    return EXIT.usage;
  }
  const args = parsed.args;
  if (io.env.MYPI_EXIT_WITH_PARENT) {
    const { exitWithParent } = await import("./commands/batch/parent-watch.ts");
    exitWithParent(Number(io.env.MYPI_EXIT_WITH_PARENT));
  }
  // A run may wait on something that holds no handle (an extension's promise, a dialog); without
  // this timer Node would see an empty event loop and quit mid-run (exit 13).
  const keepAlive = setInterval(() => {}, 1 << 30);
  const restoreConsole = stdoutIsData(args) ? sendConsoleTo(io.stderr) : undefined;
  try {
    switch (args.command) {
      case "help":
        io.stdout.write(HELP);
        return EXIT.ok;
      case "version":
        io.stdout.write(`mypi ${version()}\n`);
        return EXIT.ok;
      case "batch":
      case "worker": {
        const { runBatchCommand } = await import("./commands/batch/command.ts");
        return await runBatchCommand(args.batch!, io);
      }
      case "agents": {
        const { runAgentsCommand } = await import("./commands/agents.ts");
        return await runAgentsCommand(args, io);
      }
      case "demo": {
        const { runDemo } = await import("./commands/demo/run.ts");
        return await runDemo(args, io);
      }
      case "export": {
        // Pi's `--export FILE [OUT]`: `mypi export FILE [OUT]`.
        const { runExportCommand } = await import("./commands/export.ts");
        return runExportCommand(args.exportArgs ?? [], io);
      }
      default: {
        const { runCommand } = await import("./commands/run.ts");
        return await runCommand(argv, args, io);
      }
    }
  } catch (error) {
    // A bug in the host: say so in one line (with the stack when asked for), never a raw trace.
    const message = errorMessage(error);
    io.stderr.write(`mypi: internal error: ${message}. Set MYPI_DEBUG=1 for the stack, and please report it.\n`);
    if (io.env.MYPI_DEBUG && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return EXIT.error;
  } finally {
    clearInterval(keepAlive);
    restoreConsole?.();
  }
}

/** JSON events, RPC, ACP, `mypi extensions --json`, `mypi agents --json` and `mypi models`: stdout is read by a program, line by line. */
function stdoutIsData(args: CliArgs): boolean {
  return (
    args.mode === "json" ||
    args.mode === "rpc" ||
    args.mode === "acp" ||
    ((args.command === "extensions" || args.command === "agents") && args.json) ||
    args.command === "models"
  );
}

/**
 * Route `console.log` / `info` / `debug` to `stream` (extensions print with them, at load time
 * too) so that stdout carries only the data. Returns the undo.
 */
function sendConsoleTo(stream: NodeJS.WritableStream): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  const write = (...values: unknown[]) => void stream.write(`${format(...values)}\n`);
  Object.assign(console, { log: write, info: write, debug: write });
  return () => Object.assign(console, saved);
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
  return pkg.version ?? "0.0.0";
}
