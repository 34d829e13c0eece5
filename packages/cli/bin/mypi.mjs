#!/usr/bin/env node
// The published `mypi` bin: the compiled CLI, plain Node, no transpiler. (In a checkout of the
// repository, `mypi-dev.mjs` runs the TypeScript sources instead, with no build step.)
import module from "node:module";

// Node 22.1 and later keep V8's compiled code of the modules loaded from here on disk
// (NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache), so a second start skips compiling
// them; Node 20 has no such cache and starts without it. It never throws.
module.enableCompileCache?.();

let main;
try {
  ({ main } = await import("../dist/main.js"));
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist")) throw error;
  process.stderr.write(
    "mypi: this copy of @mypi/cli is not built (no dist/). In the repository run `npm run build`, or use packages/cli/bin/mypi-dev.mjs.\n",
  );
  process.exit(2);
}
const code = await main(process.argv.slice(2));
// Wait until stdout has taken everything, then leave even if a handle (a stdin listener, an idle
// worker) would keep the loop alive.
process.stdout.write("", () => process.exit(code));
