/**
 * `mypi demo` (and `npm start`): the bundled scripted run, no API key needed. A temporary project,
 * the builtin tools and the four shipped extensions, rendered like interactive mode; then proof of
 * what happened (the edit landed, the gate held, the key is nowhere in the session folder), and
 * one line on how to use a real model. It runs through the same host as `mypi` itself.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager, createScriptedModel, type Message } from "@mypi/kernel";
import type { CliArgs } from "../../args.ts";
import { buildHost, describeFailures, loadExtensionSet } from "../../workspace/extension-set.ts";
import type { CliIO } from "../../io.ts";
import { COLOR, PLAIN, initialRenderState, liveLines, renderEvent, textOf } from "../../render/renderer.ts";
import { Screen } from "../../render/screen.ts";
import { shippedExtensionPath } from "../../workspace/shipped.ts";
import { defaultSystemPrompt } from "../../workspace/system-prompt.ts";
import { DEMO_PROMPT, DEMO_SECRET, demoScript, writeDemoWorkspace } from "./script.ts";

/** The shipped policy extensions the demo runs with (not mcp: the demo configures no server). */
const DEMO_EXTENSIONS = ["permission-gate", "protected-paths", "redact-secrets", "tracer"] as const;

export async function runDemo(_args: CliArgs, io: CliIO): Promise<number> {
  const style = io.stdout.isTTY && !io.env.NO_COLOR ? COLOR : PLAIN;
  const screen = new Screen(io.stdout);
  const say = (line = "") => screen.commit(`${line}\n`);

  const root = mkdtempSync(join(tmpdir(), "mypi-demo-"));
  const workspace = join(root, "workspace");
  const sessions = join(root, "sessions");
  writeDemoWorkspace(workspace);

  const loaded = await loadExtensionSet({
    cwd: workspace,
    paths: DEMO_EXTENSIONS.map(shippedExtensionPath),
    builtinTools: true,
    onDiagnostic: (message) => io.stderr.write(`mypi: ${message}\n`),
  });
  if (loaded.failures.length > 0) {
    for (const line of describeFailures(loaded.failures)) io.stderr.write(`${line}\n`);
    loaded.manager.dispose();
    return 1;
  }
  const session = SessionManager.create({ cwd: workspace, dir: sessions });
  // On a terminal the turns are paced so the spinners can be seen; piped, it runs flat out.
  const model = createScriptedModel(demoScript(io.stdout.isTTY ? 300 : 0) as never, { name: "demo" });
  const host = buildHost(loaded, session, {
    model,
    systemPrompt: defaultSystemPrompt({ cwd: workspace, tools: loaded.manager.effectiveTools().map((t) => t.name) }),
  });
  host.start();

  say(style.bold("mypi demo — a scripted model at work in a temporary project (no API key needed)"));
  say(style.dim(`workspace ${workspace}`));
  say(
    style.dim(`extensions: builtin-tools, ${DEMO_EXTENSIONS.join(", ")} (no UI here, so the permission gate blocks)`),
  );
  say();
  say(`${style.bold(">")} ${DEMO_PROMPT}`);

  let render = initialRenderState;
  let frame = 0;
  const draw = () => screen.setLive(liveLines(render, { frame, now: Date.now(), style }));
  const ticker = setInterval(() => {
    frame++;
    draw();
  }, 80);
  ticker.unref();
  const unsubscribe = host.agent.subscribe((event) => {
    const step = renderEvent(render, event, style);
    render = step.state;
    screen.commit(step.commit);
    draw();
  });

  let end;
  try {
    end = await host.agent.prompt(DEMO_PROMPT, { source: "interactive" });
  } finally {
    clearInterval(ticker);
    unsubscribe();
    screen.clearLive();
    await host.shutdown();
  }

  // Proof, from the files themselves.
  const greet = readFileSync(join(workspace, "src", "greet.js"), "utf8");
  const sessionFiles = listFiles(sessions);
  const leaks = sessionFiles.filter((f) => readFileSync(f, "utf8").includes(DEMO_SECRET));
  const grepSaw = toolResultText(host.agent.messages, "grep");
  const checks: [boolean, string][] = [
    [end.stopReason === "completed", `the run completed (${end.stopReason})`],
    [greet.includes("Hello, ${name}!") && !greet.includes("Helo"), "src/greet.js was edited: Helo → Hello"],
    [existsSync(join(workspace, "build")), "build/ is still there: the permission gate blocked `rm -rf build`"],
    [
      grepSaw.includes("[REDACTED:openai-key]") && !grepSaw.includes(DEMO_SECRET),
      `the model saw the key as: ${
        grepSaw
          .trim()
          .split("\n")
          .find((l) => l.includes("API_KEY")) ?? "?"
      }`,
    ],
    [
      sessionFiles.length > 0 && leaks.length === 0,
      `the key appears in none of the ${sessionFiles.length} files in ${sessions} (session, events, debug log)`,
    ],
  ];
  say();
  for (const [ok, text] of checks) say(`${ok ? style.green("✓") : style.red("✗")} ${text}`);
  say(style.dim(`session ${session.file ?? "(none)"}`));
  say();
  say(
    `Use a real model: export OPENAI_API_KEY=… and run ${style.bold("mypi")} in your project (or mypi -p "…"); mypi --help for more.`,
  );
  return checks.every(([ok]) => ok) ? 0 : 1;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

function toolResultText(messages: readonly Message[], toolName: string): string {
  const result = messages.find((m) => m.role === "toolResult" && m.toolName === toolName);
  return (result && textOf(result.content)) ?? "";
}
