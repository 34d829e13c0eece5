/**
 * The model registry on the command line: `mypi models` (and Pi's `--list-models`), settings
 * providers checked before anything runs, `--model provider/id[:level]` with `--thinking`, the
 * settings' `thinking` and `enabledModels`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAIServer } from "./helpers/fake-openai.ts";
import { createSandbox } from "./helpers/mypi.ts";

// Each test starts mypi processes: on a busy machine that alone can take most of vitest's default 20 s.
const SLOW = 90_000;
const sandbox = createSandbox("mypi-models-cli-");
let server!: FakeOpenAIServer;
beforeAll(async () => void (server = await startFakeOpenAI()));
afterAll(() => server.close().finally(() => sandbox.cleanup()));

/** A MYPI_HOME of its own with these settings. */
function home(name: string, settings: object): { MYPI_HOME: string } {
  const dir = join(sandbox.root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "settings.json"), JSON.stringify(settings));
  return { MYPI_HOME: dir };
}

const local = () => ({
  providers: {
    local: {
      baseUrl: server.baseURL,
      api: "openai-completions",
      apiKey: "sk-local",
      models: [
        { id: "small" },
        {
          id: "thinker",
          name: "Thinker",
          reasoning: true,
          contextWindow: 64000,
          maxTokens: 4096,
          cost: { input: 1.25, output: 10 },
        },
      ],
    },
  },
});

describe("mypi models", { timeout: SLOW }, () => {
  it("lists the usable models with Pi's columns and the list prices, searched; --list-models is the same; --json gives Pi's Model objects", async () => {
    const env = { ...home("list", local()), ANTHROPIC_API_KEY: "sk-ant" };
    const all = await sandbox.run(["models"], { env });
    expect([all.code, all.stderr]).toEqual([0, ""]);
    const rows = all.stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^provider\s+model\s+context\s+max-out\s+thinking\s+images\s+in \$\/M\s+out \$\/M$/);
    expect(rows).toContainEqual(
      expect.stringMatching(/^anthropic\s+claude-sonnet-5-5\s+1M\s+128K\s+yes\s+yes\s+2\s+10$/),
    );
    expect(rows).toContainEqual(expect.stringMatching(/^local\s+small\s+128K\s+-\s+no\s+no\s+-\s+-$/));
    expect(rows).toContainEqual(expect.stringMatching(/^local\s+thinker\s+64K\s+4.1K\s+yes\s+no\s+1.25\s+10$/));
    expect(rows.some((r) => r.startsWith("openai"))).toBe(false); // no OPENAI_API_KEY
    const search = await sandbox.run(["--list-models", "sonnet", "5-5"], { env });
    expect(
      search.stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((r) => r.split(/\s+/).slice(0, 2).join("/")),
    ).toEqual(["anthropic/claude-sonnet-5-5"]);
    const none = await sandbox.run(["models", "zzz"], { env });
    expect([none.code, none.stdout, none.stderr]).toEqual([0, "", 'No models matching "zzz"\n']);
    const json = await sandbox.run(["models", "thinker", "--json"], { env });
    expect(JSON.parse(json.stdout)).toEqual([
      {
        id: "thinker",
        name: "Thinker",
        api: "openai-completions",
        provider: "local",
        baseUrl: server.baseURL,
        reasoning: true,
        input: ["text"],
        cost: { input: 1.25, output: 10, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 64000,
        maxTokens: 4096,
      },
    ]);
  });

  it("says what to do when no model is usable, and stops at a settings provider that cannot be a model, naming the key", async () => {
    const empty = await sandbox.run(["models"], { env: home("empty", {}) });
    expect([empty.code, empty.stdout]).toEqual([0, ""]);
    expect(empty.stderr).toContain(
      'No models available: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or add a provider under "providers" in settings',
    );
    const bad = await sandbox.run(["models"], {
      env: home("bad", { providers: { local: { baseUrl: server.baseURL, models: [{ id: "m" }] } } }),
    });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'mypi: settings: providers.local: model m: no api: give the provider or the model "api": one of openai-completions, openai-responses, anthropic-messages. Fix the settings file (docs/models.md#the-model-registry).\n',
    ]);
    const shape = await sandbox.run(["models"], {
      env: home("shape", { providers: { local: { baseUrl: server.baseURL, api: "grpc" } } }),
    });
    expect(shape.code).toBe(2);
    expect(shape.stderr).toMatch(/^mypi: settings \S+settings\.json: "providers\.local\.api": Invalid option/);
  });
});

describe("provider keys", { timeout: SLOW }, () => {
  it("are kept from the commands the agent runs, as OPENAI_API_KEY is: the known providers' and the settings' own variables", async () => {
    const env = {
      ...home("keys", {
        providers: {
          work: { baseUrl: server.baseURL, api: "openai-completions", apiKey: "$WORK_KEY", models: [{ id: "w" }] },
        },
      }),
      ANTHROPIC_API_KEY: "sk-ant-secret",
      WORK_KEY: "sk-work-secret",
    };
    const script = sandbox.script([
      { toolCalls: [{ name: "bash", arguments: { command: "printenv ANTHROPIC_API_KEY WORK_KEY; echo done" } }] },
      { text: "ok" },
    ]);
    const r = await sandbox.run(["--mode", "json", "--no-session", "--model", `scripted:${script}`, "-p", "go"], {
      env,
    });
    expect(r.code).toBe(0);
    const result = r.events().find((e) => e.type === "tool_execution_end")!;
    expect(JSON.stringify(result.result.content)).toContain("done");
    expect(r.stdout).not.toContain("sk-ant-secret");
    expect(r.stdout).not.toContain("sk-work-secret");
  });
});

describe("choosing the model and level at start", { timeout: SLOW }, () => {
  /** The level a run starts at, read through RPC: cycling moves one step on from it. */
  async function startLevel(args: string[], env: Record<string, string>): Promise<unknown> {
    const p = sandbox.spawn(["--mode", "rpc", "--no-session", ...args], { env });
    p.send({ id: "c", type: "cycle_thinking_level" });
    const answer = await p.waitFor((l) => l.id === "c");
    p.end();
    expect((await p.exit).code).toBe(0);
    return answer.data;
  }

  it("takes the level from --thinking, else the :level suffix, else the settings' thinking, else medium — clamped to the model", async () => {
    const env = home("levels", { ...local(), thinking: "minimal" });
    expect(await startLevel(["--model", "local/thinker:high", "--thinking", "low"], env)).toEqual({ level: "medium" }); // low → medium
    expect(await startLevel(["--model", "thinker:high"], env)).toEqual({ level: "off" }); // high → off
    expect(await startLevel(["--model", "Thinker"], env)).toEqual({ level: "low" }); // minimal → low
    expect(await startLevel(["--model", "local/thinker"], home("levels-default", local()))).toEqual({ level: "high" }); // medium → high
    expect(await startLevel(["--model", "local/small", "--thinking", "xhigh"], env)).toBeNull(); // cannot reason: off
  });

  it("starts on the first model of enabledModels when no --model is given, and warns of a pattern that matches nothing", async () => {
    const env = home("scope", { ...local(), enabledModels: ["*think*", "nothing-here"] });
    const p = sandbox.spawn(["--mode", "rpc", "--no-session"], { env });
    p.send({ id: "l", type: "get_available_thinking_levels" });
    const levels = await p.waitFor((l) => l.id === "l");
    p.end();
    const exit = await p.exit;
    expect(levels.data).toEqual({ levels: ["off", "minimal", "low", "medium", "high"] });
    expect(exit.stderr).toBe('mypi: enabledModels: no available model matches "nothing-here"\n');
  });
});
