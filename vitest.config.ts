import { availableParallelism } from "node:os";
import { defaultServerConditions, defineConfig } from "vite";
import { defineConfig as defineTestConfig, mergeConfig } from "vitest/config";

// The tests run the TypeScript sources: the `mypi-source` export condition of each workspace
// package points at src/ (an installed copy resolves to dist/ instead).
const conditions = ["mypi-source", ...defaultServerConditions];
const cores = availableParallelism();

export default mergeConfig(
  defineConfig({ resolve: { conditions }, ssr: { resolve: { conditions } } }),
  defineTestConfig({
    test: {
      globalSetup: ["test/global-setup.ts"],
      include: [
        "packages/*/test/**/*.test.ts",
        "extensions/**/*.test.ts",
        "examples/**/*.test.ts",
        "test/**/*.test.ts",
      ],
      exclude: ["**/node_modules/**", "**/dist/**"],
      testTimeout: 20_000,
      hookTimeout: 20_000,
      // A file per core. Vitest's default leaves one core to its main process, which on a 2-core
      // machine meant one file at a time: the end-to-end files mostly wait on the processes they
      // spawn, and the second core stayed idle.
      maxWorkers: Math.max(2, cores - 1),
      // At most one concurrent test per core in a file. A test's timeout runs from when it
      // starts, and a test waiting for a free slot has not started; with more concurrent tests
      // than cores, each one's time included the others' work (the e2e timeouts under load).
      maxConcurrency: Math.max(2, cores),
    },
  }),
);
