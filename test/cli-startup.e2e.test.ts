/**
 * What a one-turn `mypi -p` loads before it answers: start-up is most of what a user waits for in
 * a print run (bench/startup.bench.ts times it), and every package imported at start-up is paid
 * by every run. The compiled bin runs with a preload that records each module Node loads, ESM
 * (a loader hook) and CommonJS (`require.cache`), into a file the test reads after the exit.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicResponse } from "./helpers/fake-anthropic.ts";
import { chatResponse, startFakeOpenAI } from "./helpers/fake-openai.ts";
import { createSandbox } from "./helpers/mypi.ts";

const sandbox = createSandbox();
afterAll(() => sandbox.cleanup());

const log = join(sandbox.root, "loaded.txt");
const hooks = sandbox.file(
  "probe/hooks.mjs",
  `
import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:")) appendFileSync(${JSON.stringify(log)}, url + "\\n");
  return next(url, context);
}
`,
);
const preload = sandbox.file(
  "probe/preload.mjs",
  `
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
register(${JSON.stringify(pathToFileURL(hooks).href)});
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => appendFileSync(${JSON.stringify(log)}, Object.keys(cache).map((f) => "file://" + f + "\\n").join("")));
`,
);

// Each run writes its own list.
beforeEach(() => writeFileSync(log, ""));

/** The packages (under node_modules) whose files the run loaded. */
function packagesLoaded(): string[] {
  const names = readFileSync(log, "utf8")
    .split("\n")
    .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(names)].sort();
}

/** Loaded only by the features that need them: a tool with a plain JSON Schema, a Markdown file with frontmatter, an export, the terminal UI, a provider, MCP, a user's TypeScript, the shell parser, a batch queue, Pi's extensions. */
const NOT_AT_START = [
  "ajv",
  "yaml",
  "marked",
  "@mariozechner/pi-tui",
  "openai",
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "jiti",
  "web-tree-sitter",
  "tree-sitter-bash",
  "bullmq",
  "@sinclair/typebox",
  "typebox",
];

describe("a one-turn print run", () => {
  it("loads none of the packages that only other features need", async () => {
    const script = sandbox.script([{ text: "Hello" }]);
    const r = await sandbox.run(["--model", `scripted:${script}`, "--no-session", "-p", "hi"], {
      env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` },
    });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "Hello\n" });
    const loaded = packagesLoaded();
    // The probe saw the run: zod (the tools' schemas) is loaded by every run.
    expect(loaded).toContain("zod");
    expect(loaded.filter((name) => NOT_AT_START.includes(name))).toEqual([]);
  });
});

describe("mypi --help", () => {
  it("loads no package and not the kernel: it answers in the time Node takes to start", async () => {
    const r = await sandbox.run(["--help"], { env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage");
    const files = readFileSync(log, "utf8").split("\n");
    // The probe saw the run: the CLI's own entry was loaded.
    expect(files.some((url) => url.endsWith("/cli/dist/main.js"))).toBe(true);
    expect(packagesLoaded()).toEqual([]);
    expect(files.filter((url) => url.endsWith("/kernel/dist/index.js"))).toEqual([]);
  });
});

describe("a turn against a real provider's API", () => {
  it("loads each model SDK as the few files bundled beside the compiled kernel, not the package's hundreds", async () => {
    const server = await startFakeOpenAI();
    try {
      server.push(chatResponse({ text: "from openai" }), anthropicResponse({ text: "from anthropic" }));
      // Anthropic's API at the loopback server: the provider's base URL in the user's settings.
      const anthropicURL = server.baseURL.replace(/\/v1$/, "");
      sandbox.file(
        join(sandbox.home, "settings.json"),
        JSON.stringify({ providers: { anthropic: { baseUrl: anthropicURL } } }),
      );
      const cases = [
        { model: "openai:gpt-5-mini", key: "OPENAI_API_KEY", vendor: "openai", pkg: "openai", text: "from openai" },
        {
          model: "anthropic/claude-haiku-4-5",
          key: "ANTHROPIC_API_KEY",
          vendor: "anthropic",
          pkg: "@anthropic-ai/sdk",
          text: "from anthropic",
        },
      ];
      for (const { model, key, vendor, pkg, text } of cases) {
        writeFileSync(log, "");
        const where = model.startsWith("openai:") ? ["--base-url", server.baseURL] : [];
        const r = await sandbox.run(["--model", model, ...where, "--no-session", "-p", "hi"], {
          env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, [key]: "test-key" },
        });
        expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: `${text}\n` });
        const loaded = readFileSync(log, "utf8").split("\n");
        expect(loaded.filter((url) => url.includes(`/kernel/dist/vendor/${vendor}/`)).length).toBeGreaterThan(0);
        expect(loaded.filter((url) => url.includes(`/node_modules/${pkg}/`))).toEqual([]);
      }
    } finally {
      await server.close();
    }
  });
});
