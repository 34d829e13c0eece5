/**
 * mypi as a user gets it: every workspace package built and packed, the tarballs installed into
 * an empty project with `npm install --prefer-offline` (the npm cache that `npm ci` filled
 * serves the dependencies). Used by test/install.e2e.test.ts and bench/startup.bench.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./mypi.ts";

export const WORKSPACES = [
  "packages/kernel",
  "packages/extension-api",
  "packages/builtin-tools",
  "extensions",
  "packages/cli",
] as const;

export interface PackedInstall {
  /** The project folder the tarballs were installed into. */
  project: string;
  /** Its `node_modules/.bin/mypi`. */
  bin: string;
  /** The tarballs, one per workspace package. */
  tarballs: string[];
}

export function installPacked(
  root: string,
  options: {
    extraPackages?: string[];
    env?: NodeJS.ProcessEnv;
    /** False when the packages are built already (the tests' global setup built them). */
    build?: boolean;
  } = {},
): PackedInstall {
  const env = { ...process.env, ...options.env, npm_config_update_notifier: "false" };
  const run = (command: string, args: string[], cwd: string) =>
    execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 });
  const tarballDir = join(root, "tarballs");
  const project = join(root, "project");
  mkdirSync(tarballDir, { recursive: true });
  mkdirSync(project, { recursive: true });
  if (options.build !== false) run("npm", ["run", "build", "--silent"], REPO);
  // One npm for all five (each npm start is a second of CPU).
  run(
    "npm",
    ["pack", "--ignore-scripts", "--silent", "--pack-destination", tarballDir, ...WORKSPACES.flatMap((w) => ["-w", w])],
    REPO,
  );
  const tarballs = readdirSync(tarballDir).map((f) => join(tarballDir, f));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true, type: "module" }));
  run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      ...tarballs,
      ...(options.extraPackages ?? []),
    ],
    project,
  );
  return { project, bin: join(project, "node_modules", ".bin", "mypi"), tarballs };
}
