/**
 * Extension discovery through the real `mypi extensions` command: builtin-tools, then
 * $MYPI_HOME/extensions, then <cwd>/.mypi/extensions (each sorted; *.d.ts, dot-files and other
 * files ignored; folders with index.ts), then -e paths in order; a file given twice loads once.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MYPI_DEV_BIN, createSandbox, type RunResult } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

/** An extension that shows up in the tool_call chain and registers a tool named after itself. */
const ext = (name: string, order?: "pre" | "post") => `
import type { ExtensionAPI } from "@mypi/extension-api";
import { defineTool, z } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  pi.on("tool_call", () => undefined${order ? `, { order: "${order}" }` : ""});
  pi.registerTool(defineTool({ name: "${name.replace(/-/g, "_")}", description: "from ${name}", parameters: z.strictObject({}), execute: () => "ok" }));
}
`;

const globalDir = join(sandbox.home, "extensions");
const projectDir = join(sandbox.ws, ".mypi", "extensions");
sandbox.file(join(globalDir, "b-global.ts"), ext("b-global"));
sandbox.file(join(globalDir, "a-global.ts"), ext("a-global"));
sandbox.file(join(globalDir, "types.d.ts"), "export type X = 1;\n");
sandbox.file(join(globalDir, ".hidden.ts"), ext("hidden"));
sandbox.file(join(globalDir, "notes.md"), "# not an extension\n");
sandbox.file(join(globalDir, "c-folder", "index.ts"), ext("c-folder"));
sandbox.file(join(globalDir, "d-no-index", "helper.ts"), ext("d-no-index"));
sandbox.file(join(projectDir, "p-project.ts"), ext("p-project", "post"));
sandbox.file(join(projectDir, "q-broken.ts"), "export default function (pi) {\n  pi.on(\n}\n");
const cliExt = sandbox.file("cli/z-cli.ts", ext("z-cli", "pre"));
const shutdownLog = join(sandbox.root, "shutdown.log");
const shutdownExt = sandbox.file(
  "cli/on-shutdown.ts",
  `
import { appendFileSync } from "node:fs";
import type { ExtensionAPI } from "@mypi/extension-api";
export default function (pi: ExtensionAPI) {
  pi.on("session_shutdown", () => appendFileSync(${JSON.stringify(shutdownLog)}, "session_shutdown\\n"));
}
`,
);

// The project folder loads for a trusted workspace only (cli-trust.e2e.test.ts): every run here trusts it.
const list = async (args: string[]) => {
  const r = await sandbox.run(["extensions", "--json", "--trust-project", ...args]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as {
    loaded: { name: string }[];
    failed: { name: string; path: string; line?: number; code: string }[];
    order: Record<string, string[]>;
    tools: { name: string; source: string }[];
  };
};

describe.concurrent("extension discovery", () => {
  it("loads builtin-tools, the home folder, the project folder, then -e paths, each folder sorted", async () => {
    const r = await list(["-e", cliExt, "-e", join(globalDir, "a-global.ts")]);
    expect(r.loaded.map((e) => e.name)).toEqual([
      "builtin-tools",
      "subagents",
      "a-global",
      "b-global",
      "c-folder",
      "p-project",
      "z-cli",
    ]);
    expect(r.failed.map((f) => [f.name, f.path, f.line, f.code])).toEqual([
      ["q-broken", join(projectDir, "q-broken.ts"), 3, "MYPI_SYNTAX_ERROR"],
    ]);
    // "pre" first, then unmarked in load order, then "post".
    expect(r.order.tool_call).toEqual(["z-cli", "a-global", "b-global", "c-folder", "p-project"]);
    expect(r.tools.map((t) => `${t.name}@${t.source}`)).toEqual([
      "read@builtin-tools",
      "write@builtin-tools",
      "edit@builtin-tools",
      "bash@builtin-tools",
      "grep@builtin-tools",
      "find@builtin-tools",
      "ls@builtin-tools",
      "agent@subagents",
      "a_global@a-global",
      "b_global@b-global",
      "c_folder@c-folder",
      "p_project@p-project",
      "z_cli@z-cli",
    ]);
  });

  it("skips both folders with --no-extensions but still loads -e paths", async () => {
    const r = await list(["--no-extensions", "-e", cliExt]);
    expect(r.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents", "z-cli"]);
    expect(r.failed).toEqual([]);
  });

  it("leaves the builtin tools out with --no-builtin-tools, and the agent tool with --no-subagents", async () => {
    const [noBuiltins, neither] = await Promise.all([
      list(["--no-builtin-tools", "--no-extensions"]),
      list(["--no-builtin-tools", "--no-subagents", "--no-extensions"]),
    ]);
    expect(noBuiltins.loaded.map((e) => e.name)).toEqual(["subagents"]);
    expect(noBuiltins.tools.map((t) => t.name)).toEqual(["agent"]);
    expect(neither.loaded).toEqual([]);
    expect(neither.tools).toEqual([]);
  });

  it("prints the effective order per slot in the text listing, each pre / post handler marked", async () => {
    const r = await sandbox.run(["extensions", "--trust-project", "-e", cliExt]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\n {2}tool_call +z-cli \(pre\) → a-global → b-global → c-folder → p-project \(post\)\n/);
    expect(r.stdout).toContain('a gate that must judge the input that runs goes last, with order: "post")');
    expect(r.stdout).toContain("Failed (1):");
    expect(r.stdout).toContain(`q-broken  ${join(projectDir, "q-broken.ts")}:3`);
  });

  // One test per command line: each one's time is its own process, not the sum of five at once.
  const failure = /^mypi: extension q-broken failed to load: .*q-broken\.ts:3:\d+: MYPI_SYNTAX_ERROR: syntax error/;
  const lastLine = (r: RunResult) => r.stderr.trim().split("\n").at(-1);
  const stopped = (r: RunResult) => {
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(""); // no run started: no events, no model call
    expect(r.stderr).toMatch(failure);
    expect(lastLine(r)).toBe(
      "mypi: not running without the extension above: fix it, or pass --allow-failed-extensions to run anyway.",
    );
  };
  it.for<[string, string[], (r: RunResult) => void]>([
    ["print mode stops", [], stopped],
    ["JSON mode stops", ["--mode", "json"], stopped],
    [
      "--allow-failed-extensions runs",
      ["--allow-failed-extensions"],
      (r) => {
        expect(r.code).toBe(0);
        expect(r.stdout).toBe("fine\n");
        expect(r.stderr).toMatch(failure);
        expect(lastLine(r)).toBe("mypi: warning: running without the extension above (--allow-failed-extensions).");
      },
    ],
    [
      "--strict-extensions stops",
      ["--strict-extensions"],
      (r) => {
        expect(r.code).toBe(2);
        expect(r.stdout).toBe("");
        expect(lastLine(r)).toBe("mypi: --strict-extensions: fix the extension above or drop the flag.");
      },
    ],
    [
      "both flags are refused",
      ["--strict-extensions", "--allow-failed-extensions"],
      (r) => {
        expect(r).toMatchObject({
          code: 2,
          stderr: "mypi: choose one of --strict-extensions and --allow-failed-extensions.\n",
        });
      },
    ],
  ])(
    "an extension that failed to load: %s (a print or JSON run stops before any model call, exit 2, unless --allow-failed-extensions)",
    async ([, extra, check]) => {
      const script = sandbox.script([{ text: "fine" }]);
      check(
        await sandbox.run(["--model", `scripted:${script}`, "--no-session", "--trust-project", ...extra, "-p", "hi"]),
      );
    },
  );

  it("takes allowFailedExtensions from the settings, and --strict-extensions wins over it", async () => {
    const home = join(sandbox.root, "home-allowing");
    sandbox.file(join(home, "settings.json"), JSON.stringify({ allowFailedExtensions: true }));
    const script = sandbox.script([{ text: "fine" }]);
    const run = (extra: string[]) =>
      sandbox.run(["--model", `scripted:${script}`, "--no-session", "--trust-project", ...extra, "-p", "hi"], {
        env: { MYPI_HOME: home },
      });
    const [allowed, strict] = await Promise.all([run([]), run(["--strict-extensions"])]);
    expect(allowed).toMatchObject({ code: 0, stdout: "fine\n" });
    expect(allowed.stderr.trim().split("\n").at(-1)).toBe(
      "mypi: warning: running without the extension above (--allow-failed-extensions).",
    );
    expect(strict).toMatchObject({ code: 2, stdout: "" });
  });

  it("RPC mode goes on, tells the client in a notification and lists the failure in every get_state", {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    const p = sandbox.spawn([
      "--mode",
      "rpc",
      "--model",
      `scripted:${sandbox.script([{ text: "fine" }])}`,
      "--no-session",
      "--trust-project",
    ]);
    onTestFinished(() => void p.child.kill("SIGKILL"));
    const notice = await p.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify");
    expect(notice).toMatchObject({ notifyType: "error" });
    expect(notice.message).toMatch(/^mypi: extension q-broken failed to load: /);
    p.send({ id: "s", type: "get_state" });
    const state = await p.waitFor((l) => l.type === "response" && l.id === "s");
    expect(state.data.extensionErrors).toEqual([{ extension: "q-broken", error: notice.message }]);
    p.end();
    expect((await p.exit).code).toBe(0);
  });

  it("RPC mode with --strict-extensions does not start", async () => {
    const r = await sandbox.run([
      "--mode",
      "rpc",
      "--model",
      `scripted:${sandbox.script([{ text: "fine" }])}`,
      "--no-session",
      "--trust-project",
      "--strict-extensions",
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
  });
});

describe.concurrent("names, shutdown and the jiti cache", () => {
  it("names an extension given as dir/index.ts after its folder, as when the folder is given", async () => {
    const r = await list(["--no-extensions", "-e", join(globalDir, "c-folder", "index.ts")]);
    expect(r.loaded.map((e) => e.name)).toEqual(["builtin-tools", "subagents", "c-folder"]);
  });

  it("sends session_shutdown to the extensions before `mypi extensions` exits", async () => {
    await list(["--no-extensions", "-e", shutdownExt]);
    expect(readFileSync(shutdownLog, "utf8")).toBe("session_shutdown\n");
  });

  // The dev bin (the TypeScript sources through jiti) runs `--version`, which imports only the
  // entry and the argument parser: with an empty cache, a command that loads the whole framework
  // would have jiti compile every source module (~10 s of CPU) to prove the same thing.
  it("keeps jiti's cache in MYPI_JITI_CACHE for the dev bin's own modules and for extensions alike", async () => {
    const cache = join(sandbox.root, "jiti-cache");
    const [dev, extension] = await Promise.all([
      sandbox.run(["--version"], { env: { MYPI_JITI_CACHE: cache }, bin: MYPI_DEV_BIN }),
      sandbox.run(["extensions", "--json", "--no-extensions", "-e", cliExt], { env: { MYPI_JITI_CACHE: cache } }),
    ]);
    expect([dev.code, extension.code]).toEqual([0, 0]);
    const files = readdirSync(cache);
    // jiti names a cached module <folder>-<file>.<hash>: the CLI's src/main.ts (the bin) and cli/z-cli.ts (the loader).
    expect([
      files.some((f) => /^src-main\.\w+\.mjs$/.test(f)),
      files.some((f) => /^cli-z-cli\.\w+\.mjs$/.test(f)),
    ]).toEqual([true, true]);
  });

  it("keeps the worker pool's cache in MYPI_JITI_CACHE too", { timeout: 90_000 }, async () => {
    const cache = join(sandbox.root, "jiti-cache-worker");
    // A worker tool whose module only the worker thread loads (the main thread never imports it).
    const workerExt = sandbox.file(
      "worker/ext.ts",
      `
import { defineTool, z } from "@mypi/extension-api";
export default function (pi) {
  pi.registerTool(defineTool({ name: "square", description: "n squared, in a worker", parameters: z.strictObject({ n: z.number() }),
    worker: { module: new URL("./only-in-worker.ts", import.meta.url).href, export: "square" } }));
}
`,
    );
    sandbox.file(
      "worker/only-in-worker.ts",
      "export function square(args: { n: number }): string { return String(args.n * args.n); }\n",
    );
    const script = sandbox.script(
      [{ toolCalls: [{ name: "square", arguments: { n: 7 } }] }, { text: "done" }],
      "square.json",
    );
    const r = await sandbox.run(
      [
        "--mode",
        "json",
        "--no-extensions",
        "--no-session",
        "-e",
        workerExt,
        "--model",
        `scripted:${script}`,
        "-p",
        "go",
      ],
      {
        env: { MYPI_JITI_CACHE: cache },
      },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"text":"49"');
    expect(readdirSync(cache).some((f) => /only-in-worker\.\w+\.mjs$/.test(f))).toBe(true);
  });
});
