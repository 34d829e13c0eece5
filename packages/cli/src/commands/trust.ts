import { resolve } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { TrustStore } from "../workspace/trust.ts";
import { isDirectory } from "../workspace/files.ts";

const USAGE = "usage: mypi trust [DIR] [--deny | --revoke] · mypi trust --list";

export function runTrustCommand(argv: readonly string[], io: CliIO): number {
  const fail = (message: string) => (io.stderr.write(`mypi: ${message}\n`), EXIT.usage);
  const flags = argv.filter((a) => a.startsWith("-"));
  const words = argv.filter((a) => !a.startsWith("-"));
  const unknown = flags.find((f) => !["--deny", "--revoke", "--list"].includes(f));
  if (unknown !== undefined) return fail(`unknown option ${unknown}. ${USAGE}`);
  if (flags.length > 1 || words.length > 1 || (flags[0] === "--list" && words.length > 0)) return fail(USAGE);
  const store = new TrustStore(mypiHome());

  if (flags[0] === "--list") {
    const saved = store.list();
    if (saved.length === 0) io.stdout.write("No saved trust decisions.\n");
    for (const [path, trusted] of saved) io.stdout.write(`${trusted ? "trusted  " : "untrusted"}  ${path}\n`);
    return EXIT.ok;
  }
  const dir = resolve(io.cwd, words[0] ?? ".");
  if (!isDirectory(dir)) return fail(`${words[0]}: no such folder.`);
  if (flags[0] === "--revoke") {
    const path = store.set(dir, undefined);
    io.stdout.write(
      `Forgot the trust decision for ${path}; mypi asks again (interactive) or skips its code (other modes).\n`,
    );
    return EXIT.ok;
  }
  const trusted = flags[0] !== "--deny";
  const path = store.set(dir, trusted);
  io.stdout.write(
    trusted
      ? `Trusted ${path} and the folders under it: their .mypi/extensions, .mypi/settings.json and project packages load.\n`
      : `Saved: ${path} and the folders under it are not trusted; their own code and settings are skipped.\n`,
  );
  return EXIT.ok;
}
