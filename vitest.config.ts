import { defaultServerConditions, defineConfig } from "vite";
import { defineConfig as defineTestConfig, mergeConfig } from "vitest/config";

// The tests run the TypeScript sources: the `mypi-source` export condition of each workspace
// package points at src/ (an installed copy resolves to dist/ instead).
const conditions = ["mypi-source", ...defaultServerConditions];

export default mergeConfig(
  defineConfig({ resolve: { conditions }, ssr: { resolve: { conditions } } }),
  defineTestConfig({
    test: {
      globalSetup: ["test/global-setup.ts"],
      include: ["packages/*/test/**/*.test.ts", "extensions/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
      exclude: ["**/node_modules/**", "**/dist/**"],
      testTimeout: 20_000,
      hookTimeout: 20_000,
    },
  }),
);
