/**
 * The bundled demo: a tiny project with a typo, a deploy config holding an API key, and a stale
 * build folder; and a scripted model that fixes the typo (parallel reads, an edit, a check with
 * bash), looks for the API key (the result is redacted before the model and the session file
 * see it) and tries `rm -rf build` (blocked by the permission gate: nobody can confirm).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Built from parts so that secret scanners do not flag the repository. Fake, of course. */
export const DEMO_SECRET = ["sk", "proj", "mypiDemo7c1e0b5f9a2d4e6b8c0a1f3e5d7b9c2a"].join("-");

export const DEMO_PROMPT =
  "Fix the greeting typo in this project, check where the API key is configured, and clear the stale build folder.";

const DEMO_FILES: Readonly<Record<string, string>> = {
  "README.md": "# tiny-greeter\n\nPrints a greeting: `node src/greet.js <name>`.\n",
  "src/greet.js": [
    "export function greet(name) {",
    "  return `Helo, ${name}!`;",
    "}",
    "",
    'console.log(greet(process.argv[2] ?? "world"));',
    "",
  ].join("\n"),
  "package.json": '{ "name": "tiny-greeter", "type": "module", "private": true }\n',
  "config/deploy.env": `REGION=eu-west-1\nOPENAI_API_KEY=${DEMO_SECRET}\n`,
  "build/greet.min.js": "console.log('stale build')\n",
};

/** Write the demo project into `dir` (created when missing). */
export function writeDemoWorkspace(dir: string): void {
  for (const [path, text] of Object.entries(DEMO_FILES)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

/**
 * The scripted model's turns (docs/kernel.md#the-scripted-model). `delayMs` only paces the show on a terminal; the
 * tests run it with 0.
 */
export function demoScript(delayMs = 0): { turns: unknown[] } {
  const turn = (text: string, toolCalls?: { name: string; arguments: Record<string, unknown> }[]) => ({
    text,
    ...(toolCalls ? { toolCalls } : {}),
    ...(delayMs > 0 ? { delayMs } : {}),
  });
  return {
    turns: [
      turn("Let me look at the project first.", [
        { name: "read", arguments: { path: "README.md" } },
        { name: "read", arguments: { path: "src/greet.js" } },
      ]),
      turn('The greeting says "Helo". Fixing it.', [
        { name: "edit", arguments: { path: "src/greet.js", oldText: "Helo", newText: "Hello" } },
      ]),
      turn("Checking that it works.", [{ name: "bash", arguments: { command: "node src/greet.js Ada" } }]),
      turn("Now, where is the API key configured?", [{ name: "grep", arguments: { pattern: "API_KEY" } }]),
      turn("Found it. Last, the stale build folder.", [{ name: "bash", arguments: { command: "rm -rf build" } }]),
      turn(
        'Done. src/greet.js now prints "Hello, Ada!". The API key is set in config/deploy.env — ' +
          "I only saw it as [REDACTED:openai-key]. Clearing build/ was refused by the permission gate " +
          "(nobody was there to confirm), so it is still there.",
      ),
    ],
  };
}
