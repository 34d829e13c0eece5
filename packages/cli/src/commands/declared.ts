/**
 * `mypi <word> …` where an extension package declares `<word>` (docs/extensions.md#51-commands-of-the-mypi-command):
 * a command of the `mypi` command itself, run without an agent, such as the mcp extension's
 * `mypi mcp login <server>`. A package lists its commands in its manifest —
 *
 *   "mypi": { "cliCommands": { "mcp": "./mcp/cli" } }
 *
 * — each the subpath of one of the package's exports, whose default export runs the command:
 * `(argv, context) => Promise<number>` (the exit code). So the CLI reaches the package's code by
 * the package's name and the word alone, and knows nothing of what the command does. The packages
 * asked are the ones the CLI ships with; a built-in command is never shadowed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, isRecord, mypiHome } from "@mypi/kernel";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { PACKAGE_DIR } from "../workspace/shipped.ts";
import { TrustStore } from "../workspace/trust.ts";

/** What a declared command is handed besides its arguments. */
export interface CliCommandContext {
  stdin: CliIO["stdin"];
  stdout: CliIO["stdout"];
  stderr: CliIO["stderr"];
  env: NodeJS.ProcessEnv;
  /** The shell's directory. */
  cwd: string;
  /** `$MYPI_HOME` (default `~/.mypi`): where user-level files live. */
  home: string;
  /** The user's trust answer for a workspace folder (`mypi trust`); undefined when never given. */
  projectTrusted(cwd: string): boolean | undefined;
  /** The exit codes the `mypi` command uses (docs/cli.md#exit-codes). */
  exit: { ok: number; error: number; usage: number; aborted: number };
}

type CliCommand = (argv: readonly string[], context: CliCommandContext) => Promise<number>;

interface Declared {
  /** The module to import: `<package name>/<subpath>`. */
  specifier: string;
  /** Where it was declared, for the errors. */
  from: string;
}

/** The declaration of `word` in the shipped package's manifest, or undefined. */
export function findDeclaredCommand(word: string): Declared | undefined {
  const file = join(PACKAGE_DIR, "package.json");
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined; // an unreadable manifest declares nothing; loading the package reports it
  }
  if (!isRecord(pkg) || typeof pkg.name !== "string" || !isRecord(pkg.mypi)) return undefined;
  const commands = pkg.mypi.cliCommands;
  const subpath = isRecord(commands) && Object.hasOwn(commands, word) ? commands[word] : undefined;
  if (typeof subpath !== "string" || !subpath.startsWith("./")) return undefined;
  return { specifier: `${pkg.name}/${subpath.slice(2)}`, from: `${file} (mypi.cliCommands.${word})` };
}

/** Run a declared command; a module that does not load or has no command is an error that names it. */
export async function runDeclaredCommand(declared: Declared, argv: readonly string[], io: CliIO): Promise<number> {
  let command: unknown;
  try {
    const mod: unknown = await import(declared.specifier);
    command = isRecord(mod) ? mod.default : undefined;
  } catch (error) {
    io.stderr.write(
      `mypi: could not load ${declared.specifier}, declared in ${declared.from}: ${errorMessage(error)}\n`,
    );
    return EXIT.error;
  }
  if (typeof command !== "function") {
    io.stderr.write(`mypi: ${declared.specifier}, declared in ${declared.from}, has no default export to run\n`);
    return EXIT.error;
  }
  const home = mypiHome();
  const context: CliCommandContext = {
    stdin: io.stdin,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    cwd: io.cwd,
    home,
    projectTrusted: (cwd) => new TrustStore(home).lookup(cwd)?.trusted,
    exit: { ok: EXIT.ok, error: EXIT.error, usage: EXIT.usage, aborted: EXIT.aborted },
  };
  try {
    return await (command as CliCommand)(argv, context);
  } catch (error) {
    io.stderr.write(`mypi: ${declared.specifier} failed: ${errorMessage(error)}\n`);
    return EXIT.error;
  }
}
