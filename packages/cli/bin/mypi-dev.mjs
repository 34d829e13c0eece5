#!/usr/bin/env node
// The `mypi` bin of a repository checkout (`npm start`, the tests, the benchmarks): the CLI's
// TypeScript sources through jiti, with no build step. Each workspace package's `mypi-source`
// export condition says where its sources are; they become jiti aliases, so `@mypi/kernel` is
// packages/kernel/src/index.ts here and dist/index.js in an installed copy. The fs cache follows
// the rule of the extension loader (`jitiCacheDir()` in @mypi/kernel): MYPI_JITI_CACHE, else
// $XDG_CACHE_HOME/mypi/jiti, else ~/.cache/mypi/jiti.
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import { sourceAliases } from "./source-aliases.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const alias = sourceAliases(join(here, "..", "..", ".."));
const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
const fsCache = process.env.MYPI_JITI_CACHE || join(cacheRoot, "mypi", "jiti");
const jiti = createJiti(import.meta.url, { fsCache, alias });

const { main } = await jiti.import(join(here, "..", "src", "main.ts"));
const code = await main(process.argv.slice(2));
process.stdout.write("", () => process.exit(code));
