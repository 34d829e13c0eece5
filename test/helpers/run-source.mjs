// Run a JavaScript or TypeScript file as a user with mypi installed would, against this
// repository's sources: `@mypi/*` imports resolve to the packages' TypeScript (their
// `mypi-source` condition, as the dev bin does) through jiti. Used by the docs test to run the
// examples the docs show with their output. Usage: node run-source.mjs FILE
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import { sourceAliases } from "../../packages/cli/bin/source-aliases.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
const fsCache = process.env.MYPI_JITI_CACHE || join(cacheRoot, "mypi", "jiti");
const jiti = createJiti(import.meta.url, { fsCache, alias: sourceAliases(repo) });
await jiti.import(resolve(process.argv[2]));
