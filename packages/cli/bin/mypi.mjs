#!/usr/bin/env node
// The `mypi` bin: loads the TypeScript source through jiti (Node 20 cannot run .ts itself).
// The fs cache lives at <repo>/node_modules/.cache/jiti — jiti's own default would land in the
// system temp folder — and makes start-up 4–7× faster once warm. MYPI_JITI_CACHE overrides the
// folder (the start-up benchmark points it at an empty one to measure a cold start).
// The extension loader decides its folder with the same rule (`jitiCacheDir()` in
// packages/extension-api/src/loader.ts, which this plain module cannot import before jiti
// exists); test/cli-discovery.e2e.test.ts checks that both land in MYPI_JITI_CACHE.
import { createJiti } from "jiti";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const fsCache = process.env.MYPI_JITI_CACHE || join(repo, "node_modules", ".cache", "jiti");
const jiti = createJiti(import.meta.url, { fsCache });

const { main } = await jiti.import(join(here, "..", "src", "main.ts"));
const code = await main(process.argv.slice(2));
// Wait until stdout has taken everything, then leave even if a handle (a stdin listener, an idle
// worker) would keep the loop alive.
process.stdout.write("", () => process.exit(code));
