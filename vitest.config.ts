import { availableParallelism } from "node:os";
import { defaultServerConditions, defineConfig } from "vite";
import { defineConfig as defineTestConfig, mergeConfig } from "vitest/config";

// The tests run the TypeScript sources: the `mypi-source` export condition of each workspace
// package points at src/ (an installed copy resolves to dist/ instead).
const conditions = ["mypi-source", ...defaultServerConditions];
const cores = availableParallelism();

// The long end-to-end scenarios: each file starts mypi dozens of times (signals at every moment,
// SIGKILL chains, the permission tables run for real, installs, replays, hangs). They are the
// files that took 14 s or more on an idle 2-core machine, and the four slowest of the rest (the
// quick project was at the five-minute line without them); together about two thirds of the
// suite's time. `npm test` runs the rest (the quick project, under five minutes here);
// `npm run test:scenarios` runs these; CI runs both, and `npm run test:all` is the two at once.
const SCENARIOS = [
  "test/batch.e2e.test.ts",
  "test/claude-code-hooks.e2e.test.ts",
  "test/claude-code-plugins.e2e.test.ts",
  "test/cli-acp.e2e.test.ts",
  "test/cli-discovery.e2e.test.ts",
  "test/cli-hangs.e2e.test.ts",
  "test/cli-install-safety.e2e.test.ts",
  "test/cli-interactive-pi-tui.e2e.test.ts",
  "test/cli-interactive.e2e.test.ts",
  "test/cli-packages.e2e.test.ts",
  "test/cli-print-json.e2e.test.ts",
  "test/cli-private-files.e2e.test.ts",
  "test/cli-resources.e2e.test.ts",
  "test/cli-signals-fuzz.e2e.test.ts",
  "test/cli-signals.e2e.test.ts",
  "test/cli-trust.e2e.test.ts",
  "test/export-html.e2e.test.ts",
  "test/install.e2e.test.ts",
  "test/permission-gate-bypasses.e2e.test.ts",
  "test/permission-gate.e2e.test.ts",
  "test/permissions.e2e.test.ts",
  "test/pi-compat/pi-extensions.e2e.test.ts",
  "test/pi-compat/pi-packages.e2e.test.ts",
  "test/pi-compat/pi-providers.e2e.test.ts",
  "test/pi-compat/rpc-client.e2e.test.ts",
  "test/redaction-beyond-slots.e2e.test.ts",
  "test/replay.e2e.test.ts",
  "test/resume-approve.e2e.test.ts",
  "test/resume-queue.e2e.test.ts",
  "test/resume-sigkill.e2e.test.ts",
];

export default mergeConfig(
  defineConfig({ resolve: { conditions }, ssr: { resolve: { conditions } } }),
  defineTestConfig({
    test: {
      globalSetup: ["test/global-setup.ts"],
      projects: [
        {
          extends: true,
          test: {
            name: "quick",
            include: [
              "packages/*/test/**/*.test.ts",
              "extensions/**/*.test.ts",
              "examples/**/*.test.ts",
              "test/**/*.test.ts",
            ],
            exclude: ["**/node_modules/**", "**/dist/**", ...SCENARIOS],
          },
        },
        { extends: true, test: { name: "scenarios", include: SCENARIOS } },
      ],
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
