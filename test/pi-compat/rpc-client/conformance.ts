/**
 * Pi 1.6's own `RpcClient` drives an agent in RPC mode through a whole session — prompt and
 * streaming, steering and follow-ups, abort, state, messages, model and thinking queries, queue
 * modes, session name, bash, stats, compaction, fork, clone, entries and tree, export, switch,
 * new session, an extension dialog — and every check is written as one line of a report. The
 * same script runs against real Pi 1.6 (`--target pi`) and against mypi (`--target mypi`): what
 * it checks is what Pi 1.6 does, so a check that fails against mypi is a difference from Pi.
 *
 * It runs under Node 22 (Pi 1.6 needs it; the client spawns `node` from PATH, so this process's
 * own Node is put first), with a loopback OpenAI-compatible server (`fake-openai.ts`) as the
 * model: "Reply to: <the last user text>", and a reply held open while the last user text
 * starts with "[hold]" (released by the script), so that steering and abort meet a run in
 * progress. Nothing leaves the machine: Pi runs offline, with the server as its only provider.
 *
 *   node22 test/pi-compat/rpc-client/conformance.ts --target mypi|pi --pi <pi-coding-agent folder> [--report file.json]
 *
 * Exit 0 when every check holds, 1 otherwise; the last line on stdout is the JSON summary.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  chatFrames,
  chatResponse,
  sse,
  startFakeOpenAI,
  type FakeResponse,
  type RecordedRequest,
} from "../../helpers/fake-openai.ts";

type Json = Record<string, unknown>;
type Event = Json & { type: string };

/** The part of Pi 1.6's `RpcClient` (dist/modes/rpc/rpc-client.js) this script uses. */
interface RpcClient {
  start(): Promise<void>;
  stop(): Promise<void>;
  onEvent(listener: (event: Event) => void): () => void;
  getStderr(): string;
  prompt(message: string, images?: unknown[], streamingBehavior?: "steer" | "followUp"): Promise<string>;
  steer(message: string): Promise<string>;
  followUp(message: string): Promise<string>;
  abort(): Promise<void>;
  clearQueue(): Promise<{ steering: string[]; followUp: string[] }>;
  newSession(parentSession?: string): Promise<{ cancelled: boolean }>;
  getState(): Promise<Json>;
  setModel(provider: string, modelId: string): Promise<Json>;
  cycleModel(): Promise<Json | null>;
  getAvailableModels(): Promise<Json[]>;
  setThinkingLevel(level: string): Promise<void>;
  cycleThinkingLevel(): Promise<{ level: string } | null>;
  getAvailableThinkingLevels(): Promise<string[]>;
  setSteeringMode(mode: string): Promise<void>;
  setFollowUpMode(mode: string): Promise<void>;
  compact(customInstructions?: string): Promise<Json>;
  setAutoCompaction(enabled: boolean): Promise<void>;
  setAutoRetry(enabled: boolean): Promise<void>;
  abortRetry(): Promise<void>;
  bash(command: string): Promise<Json>;
  abortBash(): Promise<void>;
  getSessionStats(): Promise<Json>;
  exportHtml(outputPath?: string): Promise<{ path: string }>;
  switchSession(sessionPath: string): Promise<{ cancelled: boolean }>;
  fork(entryId: string): Promise<{ text?: string; cancelled: boolean }>;
  clone(): Promise<{ cancelled: boolean }>;
  getForkMessages(): Promise<{ entryId: string; text: string }[]>;
  getEntries(since?: string): Promise<{ entries: Json[]; leafId: string | null }>;
  getTree(): Promise<{ tree: TreeNode[]; leafId: string | null }>;
  getLastAssistantText(): Promise<string | null>;
  setSessionName(name: string): Promise<void>;
  getMessages(): Promise<Json[]>;
  getCommands(): Promise<Json[]>;
  waitForIdle(timeout?: number): Promise<void>;
  collectEvents(timeout?: number): Promise<Event[]>;
}
interface TreeNode {
  entry: Json & { id: string };
  children: TreeNode[];
}
type RpcClientClass = new (options: {
  cliPath: string;
  cwd: string;
  env: Record<string, string>;
  args: string[];
}) => RpcClient;

/** Every check, in the order the session reaches it: a check never reached counts as failed. */
const CHECKS = [
  "starts",
  "get_state.model is Pi's model object",
  "get_state.thinkingLevel is off",
  "get_state.isStreaming and isCompacting are false when idle",
  "get_state has the queue modes",
  "get_state.autoCompactionEnabled is a boolean",
  "get_state names the session (id and file)",
  "get_state counts no messages before the first prompt",
  "get_messages is empty before the first prompt",
  "get_available_models lists the current model",
  "get_available_thinking_levels includes off",
  "set_thinking_level off is accepted",
  "cycle_thinking_level answers null for a model without reasoning",
  "set_model to the current model returns it",
  "set_model to an unknown model fails with Model not found",
  "cycle_model answers null or a model",
  "prompt answers disposition started",
  "the run ends with agent_settled (aborted false)",
  "the run streams agent, turn and message events",
  "message_update carries assistantMessageEvent text deltas with usage",
  "the text block opens with text_start and closes with text_end",
  "the streamed text is the answer",
  "agent_end carries the run's messages",
  "get_last_assistant_text is the answer",
  "get_messages starts with the system message",
  "get_messages holds the prompt and the answer",
  "get_state.messageCount counts get_messages",
  "steer during a run answers queued",
  "follow_up during a run answers queued",
  "prompt with streamingBehavior followUp answers queued",
  "queue_update lists the queued texts",
  "get_state during a run: streaming, three pending",
  "waitForIdle resolves once the run settled",
  "steering and follow-ups reach the conversation in order",
  "the queue is empty after delivery (queue_update)",
  "abort during a run resolves after agent_settled with aborted true",
  "the aborted run's answer ends aborted",
  "clear_queue returns the queued texts and empties the queue",
  "set_steering_mode and set_follow_up_mode show in get_state",
  "set_session_name sends session_info_changed and shows in get_state",
  "set_session_name with an empty name keeps the name",
  "set_auto_compaction shows in get_state",
  "set_auto_retry and abort_retry are accepted",
  "bash runs the command and answers its output",
  "bash streams bash_execution_update with the command's id",
  "abort_bash is accepted with nothing running",
  "get_session_stats counts messages and tokens",
  "get_commands lists the extension command",
  "an extension command answers disposition handled",
  "an extension dialog crosses the wire and its answer comes back",
  "compact answers Pi's compaction result",
  "compact sends compaction_start and compaction_end",
  "get_messages after compaction starts with the system message and the summary",
  "get_fork_messages lists the user messages of the branch",
  "fork answers the text of the message and opens a new session file",
  "the forked session ends before that message",
  "clone copies the branch into another new session file",
  "get_entries lists the entries and the leaf",
  "get_entries since an entry lists only later ones; an unknown one fails",
  "get_tree holds every entry under its roots, and the leaf",
  "export_html writes the session as HTML",
  "switch_session goes back to the first session file",
  "new_session starts an empty session in a new file",
  "a prompt in the new session runs and settles",
] as const;
type CheckName = (typeof CHECKS)[number];

interface Options {
  target: "mypi" | "pi";
  piPackage: string;
  report: string | undefined;
}

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");

function parseOptions(argv: string[]): Options {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const target = value("--target");
  const piPackage = value("--pi");
  if ((target !== "mypi" && target !== "pi") || !piPackage) {
    throw new Error(
      "usage: conformance.ts --target mypi|pi --pi <folder of @earendil-works/pi-coding-agent> [--report file.json]",
    );
  }
  return { target, piPackage, report: value("--report") };
}

/** The last user text of a chat request (what the fake model answers to). */
function lastUserText(request: RecordedRequest): string {
  const body = request.body as { messages?: { role: string; content: unknown }[] } | undefined;
  const user = [...(body?.messages ?? [])].reverse().find((m) => m.role === "user");
  const content = user?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? "").join("");
  return "";
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const results = new Map<CheckName, { ok: boolean; detail?: string }>();
  const check = (name: CheckName, ok: boolean, detail?: unknown) => {
    results.set(name, {
      ok,
      ...(!ok &&
        detail !== undefined && {
          detail: typeof detail === "string" ? detail : JSON.stringify(detail)?.slice(0, 400),
        }),
    });
  };

  const root = mkdtempSync(join(tmpdir(), `rpc-conformance-${options.target}-`));
  const ws = join(root, "ws");
  mkdirSync(ws);
  const server = await startFakeOpenAI();
  const holds: (() => void)[] = [];
  const release = () => holds.splice(0).forEach((open) => open());
  const route = (request: RecordedRequest): FakeResponse => {
    const text = lastUserText(request);
    if (!text.startsWith("[hold]")) return chatResponse({ text: `Reply to: ${text.slice(0, 60)}` });
    const frames = chatFrames({ text: `Held reply to: ${text}` });
    const gate = new Promise<void>((open) => holds.push(open));
    return sse([frames[0]!, frames[1]!, { wait: gate }, ...frames.slice(2)]);
  };
  server.push(...Array.from({ length: 200 }, () => route));

  const { RpcClient } = (await import(
    pathToFileURL(join(options.piPackage, "dist", "modes", "rpc", "rpc-client.js")).href
  )) as { RpcClient: RpcClientClass };
  const extension = join(here, "ask-extension.ts");
  // The client spawns `node`: this Node (22) first on the PATH, for Pi and mypi alike.
  const path = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`;
  const client =
    options.target === "pi"
      ? piClient(RpcClient, { root, ws, path, baseURL: server.baseURL, piPackage: options.piPackage, extension })
      : mypiClient(RpcClient, { root, ws, path, baseURL: server.baseURL, extension });

  const events: Event[] = [];
  const waiters: { from: number; test: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  client.onEvent((event) => {
    events.push(event);
    for (const w of [...waiters]) {
      if (events.length - 1 >= w.from && w.test(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  });
  /** The first event at or after `from` that passes `test`. */
  const waitEvent = (test: (e: Event) => boolean, from = events.length): Promise<Event> => {
    const found = events.slice(from).find(test);
    if (found) return Promise.resolve(found);
    return within(new Promise<Event>((resolve) => waiters.push({ from, test, resolve })), "an event");
  };

  try {
    await client.start();
    check("starts", true);
    await session(client, { check, events, waitEvent, release, root, ws });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`conformance: stopped early: ${message.slice(0, 2000)}\n`);
  } finally {
    release();
    await client.stop().catch(() => undefined);
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }

  const lines = CHECKS.map((name) => ({ name, ...(results.get(name) ?? { ok: false, detail: "not reached" }) }));
  for (const line of lines)
    process.stdout.write(`${line.ok ? "ok  " : "FAIL"} ${line.name}${line.detail ? ` — ${line.detail}` : ""}\n`);
  const summary = {
    target: options.target,
    passed: lines.filter((l) => l.ok).length,
    total: lines.length,
    checks: lines,
  };
  if (options.report) writeFileSync(options.report, JSON.stringify(summary, null, 2));
  process.stdout.write(`${JSON.stringify({ target: summary.target, passed: summary.passed, total: summary.total })}\n`);
  return summary.passed === summary.total ? 0 : 1;
}

interface ClientSetup {
  root: string;
  ws: string;
  path: string;
  baseURL: string;
  extension: string;
}

function piClient(Client: RpcClientClass, s: ClientSetup & { piPackage: string }): RpcClient {
  const agentDir = join(s.root, "pi-agent");
  mkdirSync(agentDir);
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        fake: { baseUrl: s.baseURL, api: "openai-completions", apiKey: "fake", models: [{ id: "fake-model" }] },
      },
    }),
  );
  // A small kept tail, so that a short conversation has something to compact.
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  return new Client({
    cliPath: join(s.piPackage, "dist", "cli.js"),
    cwd: s.ws,
    env: {
      PATH: s.path,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
    },
    args: ["--provider", "fake", "--model", "fake-model", "--session-dir", join(s.root, "sessions"), "-e", s.extension],
  });
}

function mypiClient(Client: RpcClientClass, s: ClientSetup): RpcClient {
  const home = join(s.root, "mypi-home");
  mkdirSync(home);
  writeFileSync(join(home, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  return new Client({
    cliPath: join(repo, "packages", "cli", "bin", "mypi.mjs"),
    cwd: s.ws,
    env: { PATH: s.path, MYPI_HOME: home, OPENAI_API_KEY: "fake" },
    args: ["--model", "openai:fake-model", "--base-url", s.baseURL, "-e", s.extension],
  });
}

/** No step may hang the script: each wait is bounded, and a wait that runs out fails its check. */
function within<T>(work: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)),
  );
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** `work`, with its rejection marked as handled: a part that fails early leaves it unawaited. */
function guarded<T>(work: Promise<T>): Promise<T> {
  work.catch(() => undefined);
  return work;
}

/** What `fn` rejects with, or undefined when it resolves. */
async function failure(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const textOf = (message: Json | undefined): string => {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : ""))
    .join("");
};
const userTexts = (messages: Json[]) => messages.filter((m) => m.role === "user").map(textOf);
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

interface Session {
  check: (name: CheckName, ok: boolean, detail?: unknown) => void;
  events: Event[];
  waitEvent: (test: (e: Event) => boolean, from?: number) => Promise<Event>;
  release: () => void;
  root: string;
  ws: string;
}

async function session(client: RpcClient, t: Session): Promise<void> {
  const { check, events, waitEvent } = t;
  // What later parts need of earlier ones (a part that failed leaves them empty).
  let firstFile = "";
  let sessionId = "";
  let provider = "";
  let forkState: Json = {};
  let cloneState: Json = {};
  let from = 0;
  /** One part of the session: a failure is told on stderr and the next part still runs. */
  const part = async (name: string, steps: () => Promise<void>) => {
    try {
      await steps();
    } catch (error) {
      process.stderr.write(
        `conformance: ${name}: ${error instanceof Error ? error.message.slice(0, 500) : String(error)}\n`,
      );
    }
  };

  await part("State before anything ran", async () => {
    const state = await client.getState();
    const model = state.model;
    check(
      "get_state.model is Pi's model object",
      isRecord(model) &&
        model.id === "fake-model" &&
        typeof model.provider === "string" &&
        typeof model.api === "string" &&
        typeof model.name === "string" &&
        typeof model.contextWindow === "number" &&
        typeof model.maxTokens === "number" &&
        typeof model.reasoning === "boolean" &&
        Array.isArray(model.input) &&
        isRecord(model.cost),
      model,
    );
    check("get_state.thinkingLevel is off", state.thinkingLevel === "off", state.thinkingLevel);
    check(
      "get_state.isStreaming and isCompacting are false when idle",
      state.isStreaming === false && state.isCompacting === false,
      state,
    );
    const modes = ["all", "one-at-a-time"];
    check(
      "get_state has the queue modes",
      modes.includes(state.steeringMode as string) && modes.includes(state.followUpMode as string),
      state,
    );
    check(
      "get_state.autoCompactionEnabled is a boolean",
      typeof state.autoCompactionEnabled === "boolean",
      state.autoCompactionEnabled,
    );
    check(
      "get_state names the session (id and file)",
      typeof state.sessionId === "string" && typeof state.sessionFile === "string",
      state,
    );
    check(
      "get_state counts no messages before the first prompt",
      state.messageCount === 0 && state.pendingMessageCount === 0,
      state,
    );
    firstFile = state.sessionFile as string;
    sessionId = state.sessionId as string;
    provider = isRecord(model) ? String(model.provider) : "";

    const before = await client.getMessages();
    check("get_messages is empty before the first prompt", Array.isArray(before) && before.length === 0, before);
  });

  await part("Model and thinking", async () => {
    const models = await client.getAvailableModels();
    check(
      "get_available_models lists the current model",
      Array.isArray(models) && models.some((m) => m.provider === provider && m.id === "fake-model"),
      models.length,
    );
    const levels = await client.getAvailableThinkingLevels();
    check("get_available_thinking_levels includes off", Array.isArray(levels) && levels.includes("off"), levels);
    const setLevel = await failure(() => client.setThinkingLevel("off"));
    check(
      "set_thinking_level off is accepted",
      setLevel === undefined && (await client.getState()).thinkingLevel === "off",
      setLevel,
    );
    const cycledLevel = await client.cycleThinkingLevel();
    check("cycle_thinking_level answers null for a model without reasoning", cycledLevel === null, cycledLevel);
    const set = await client.setModel(provider, "fake-model");
    check("set_model to the current model returns it", set.id === "fake-model" && set.provider === provider, set);
    const unknown = await failure(() => client.setModel("no-such-provider", "no-such-model"));
    check(
      "set_model to an unknown model fails with Model not found",
      unknown !== undefined && /Model not found/.test(unknown),
      unknown,
    );
    const cycled = await client.cycleModel();
    check(
      "cycle_model answers null or a model",
      cycled === null || (isRecord(cycled) && isRecord(cycled.model) && typeof cycled.isScoped === "boolean"),
      cycled,
    );
    // Pi cycles through its whole catalogue: back to the loopback model before anything runs.
    if (cycled !== null) await client.setModel(provider, "fake-model");
  });

  await part("A prompt, streamed", async () => {
    const collected = guarded(client.collectEvents(20_000));
    const disposition = await client.prompt("hello");
    check("prompt answers disposition started", disposition === "started", disposition);
    const run = await within(collected, "agent_settled after the first prompt");
    const last = run.at(-1);
    check(
      "the run ends with agent_settled (aborted false)",
      last?.type === "agent_settled" && last.aborted === false,
      last,
    );
    const types = run.map((e) => e.type);
    check(
      "the run streams agent, turn and message events",
      ["agent_start", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"].every(
        (type) => types.includes(type),
      ) &&
        types.indexOf("agent_start") < types.indexOf("turn_end") &&
        types.indexOf("agent_end") < types.indexOf("agent_settled"),
      types,
    );
    const updates = run
      .filter((e) => e.type === "message_update")
      .map((e) => ({ usage: e.usage, event: e.assistantMessageEvent as Json | undefined }));
    const deltas = updates.filter((u) => u.event?.type === "text_delta");
    check(
      "message_update carries assistantMessageEvent text deltas with usage",
      deltas.length > 0 &&
        deltas.every(
          (u) => typeof u.event!.delta === "string" && typeof u.event!.contentIndex === "number" && isRecord(u.usage),
        ),
      updates.slice(0, 3),
    );
    const kinds = updates.map((u) => u.event?.type);
    const end = updates.find((u) => u.event?.type === "text_end")?.event;
    check(
      "the text block opens with text_start and closes with text_end",
      kinds[0] === "text_start" && kinds.at(-1) === "text_end" && end?.content === "Reply to: hello",
      kinds,
    );
    const streamed = deltas.map((u) => u.event!.delta).join("");
    check("the streamed text is the answer", streamed === "Reply to: hello", streamed);
    const agentEnd = run.find((e) => e.type === "agent_end");
    check(
      "agent_end carries the run's messages",
      Array.isArray(agentEnd?.messages) && (agentEnd.messages as Json[]).some((m) => m.role === "assistant"),
      agentEnd,
    );
    const lastText = await client.getLastAssistantText();
    check("get_last_assistant_text is the answer", lastText === "Reply to: hello", lastText);
    const messages = await client.getMessages();
    check("get_messages starts with the system message", messages[0]?.role === "system", messages[0]?.role);
    check(
      "get_messages holds the prompt and the answer",
      userTexts(messages).includes("hello") &&
        messages.some((m) => m.role === "assistant" && textOf(m) === "Reply to: hello"),
      messages.map((m) => m.role),
    );
    const counted = await client.getState();
    check("get_state.messageCount counts get_messages", counted.messageCount === messages.length, {
      messageCount: counted.messageCount,
      messages: messages.length,
    });
  });

  await part("Steering and follow-ups while a run is held", async () => {
    await client.setSteeringMode("one-at-a-time");
    await client.setFollowUpMode("one-at-a-time");
    from = events.length;
    const held = guarded(client.collectEvents(20_000));
    await client.prompt("[hold] long task");
    await waitEvent((e) => e.type === "message_update", from);
    const steered = await client.steer("steer now");
    check("steer during a run answers queued", steered === "queued", steered);
    const followed = await client.followUp("follow later");
    check("follow_up during a run answers queued", followed === "queued", followed);
    const viaPrompt = await client.prompt("via prompt", undefined, "followUp");
    check("prompt with streamingBehavior followUp answers queued", viaPrompt === "queued", viaPrompt);
    const queued = events
      .slice(from)
      .filter((e) => e.type === "queue_update")
      .at(-1);
    check(
      "queue_update lists the queued texts",
      JSON.stringify(queued?.steering) === JSON.stringify(["steer now"]) &&
        JSON.stringify(queued?.followUp) === JSON.stringify(["follow later", "via prompt"]),
      queued,
    );
    const busy = await client.getState();
    check(
      "get_state during a run: streaming, three pending",
      busy.isStreaming === true && busy.pendingMessageCount === 3,
      busy,
    );
    const idle = guarded(client.waitForIdle(20_000));
    t.release();
    const idleError = await failure(() => idle);
    check("waitForIdle resolves once the run settled", idleError === undefined, idleError);
    await within(held, "the held run's events");
    const afterSteer = userTexts(await client.getMessages());
    check(
      "steering and follow-ups reach the conversation in order",
      JSON.stringify(afterSteer.slice(-4)) ===
        JSON.stringify(["[hold] long task", "steer now", "follow later", "via prompt"]),
      afterSteer,
    );
    const emptied = events
      .slice(from)
      .filter((e) => e.type === "queue_update")
      .at(-1);
    check(
      "the queue is empty after delivery (queue_update)",
      Array.isArray(emptied?.steering) &&
        (emptied.steering as unknown[]).length === 0 &&
        (emptied.followUp as unknown[]).length === 0,
      emptied,
    );
  });

  await part("Abort", async () => {
    from = events.length;
    await client.prompt("[hold] to be aborted");
    await waitEvent((e) => e.type === "message_update", from);
    await within(client.abort(), "the abort response");
    const settledAt = events.slice(from).findIndex((e) => e.type === "agent_settled");
    const settled = events[from + settledAt];
    check(
      "abort during a run resolves after agent_settled with aborted true",
      settledAt >= 0 && settled?.aborted === true,
      events.slice(from).map((e) => e.type),
    );
    t.release();
    const afterAbort = await client.getMessages();
    const aborted = afterAbort.filter((m) => m.role === "assistant").at(-1);
    check(
      "the aborted run's answer ends aborted",
      aborted?.stopReason === "aborted" && (await client.getState()).isStreaming === false,
      aborted,
    );
    // Pi keeps what was queued for an aborted run, mypi hands it back: neither is in play here.
  });

  await part("The queue while idle, queue modes, name, switches", async () => {
    from = events.length;
    await client.steer("queued while idle");
    const cleared = await client.clearQueue();
    const clearedUpdate = events
      .slice(from)
      .filter((e) => e.type === "queue_update")
      .at(-1);
    check(
      "clear_queue returns the queued texts and empties the queue",
      JSON.stringify(cleared) === JSON.stringify({ steering: ["queued while idle"], followUp: [] }) &&
        (clearedUpdate?.steering as unknown[] | undefined)?.length === 0 &&
        (await client.getState()).pendingMessageCount === 0,
      cleared,
    );
    await client.setSteeringMode("all");
    await client.setFollowUpMode("all");
    const allModes = await client.getState();
    await client.setSteeringMode("one-at-a-time");
    await client.setFollowUpMode("one-at-a-time");
    const oneModes = await client.getState();
    check(
      "set_steering_mode and set_follow_up_mode show in get_state",
      allModes.steeringMode === "all" &&
        allModes.followUpMode === "all" &&
        oneModes.steeringMode === "one-at-a-time" &&
        oneModes.followUpMode === "one-at-a-time",
      [allModes.steeringMode, allModes.followUpMode, oneModes.steeringMode, oneModes.followUpMode],
    );
    from = events.length;
    await client.setSessionName("conformance");
    const named = await waitEvent((e) => e.type === "session_info_changed", from).catch(() => undefined);
    check(
      "set_session_name sends session_info_changed and shows in get_state",
      named?.name === "conformance" && (await client.getState()).sessionName === "conformance",
      named,
    );
    // RpcClient does not read the answer of set_* commands: what shows is the state.
    await client.setSessionName("   ");
    const kept = (await client.getState()).sessionName;
    check("set_session_name with an empty name keeps the name", kept === "conformance", { kept: kept ?? null });
    await client.setAutoCompaction(false);
    const off = (await client.getState()).autoCompactionEnabled;
    await client.setAutoCompaction(true);
    const on = (await client.getState()).autoCompactionEnabled;
    check("set_auto_compaction shows in get_state", off === false && on === true, { off, on });
    const retry =
      (await failure(() => client.setAutoRetry(false))) ??
      (await failure(() => client.abortRetry())) ??
      (await failure(() => client.setAutoRetry(true)));
    check("set_auto_retry and abort_retry are accepted", retry === undefined, retry);
  });

  await part("bash", async () => {
    from = events.length;
    const bash = await client.bash("echo conformance");
    check(
      "bash runs the command and answers its output",
      bash.output === "conformance\n" && bash.exitCode === 0 && bash.cancelled === false && bash.truncated === false,
      bash,
    );
    const chunk = events.slice(from).find((e) => e.type === "bash_execution_update");
    check(
      "bash streams bash_execution_update with the command's id",
      typeof chunk?.id === "string" && String(chunk.delta).includes("conformance"),
      chunk,
    );
    const abortBash = await failure(() => client.abortBash());
    check("abort_bash is accepted with nothing running", abortBash === undefined, abortBash);
  });

  await part("Stats and commands", async () => {
    const stats = await client.getSessionStats();
    const tokens = stats.tokens as Json | undefined;
    check(
      "get_session_stats counts messages and tokens",
      stats.sessionId === sessionId &&
        stats.sessionFile === firstFile &&
        Number(stats.userMessages) >= 5 &&
        Number(stats.assistantMessages) >= 3 &&
        typeof stats.toolCalls === "number" &&
        typeof stats.totalMessages === "number" &&
        isRecord(tokens) &&
        Number(tokens.total) > 0 &&
        typeof stats.cost === "number",
      stats,
    );
    const commands = await client.getCommands();
    check(
      "get_commands lists the extension command",
      commands.some((c) => c.name === "ask" && c.source === "extension"),
      commands,
    );
  });

  await part("An extension command and its dialog", async () => {
    from = events.length;
    const asking = client.prompt("/ask sure?");
    const request = await waitEvent((e) => e.type === "extension_ui_request" && e.method === "confirm", from);
    answer(client, { type: "extension_ui_response", id: request.id, confirmed: true });
    const handled = await within(asking, "the /ask response");
    check("an extension command answers disposition handled", handled === "handled", handled);
    const told = await waitEvent((e) => e.type === "extension_ui_request" && e.method === "notify", from);
    check(
      "an extension dialog crosses the wire and its answer comes back",
      request.title === "Proceed?" && request.message === "sure?" && told.message === "confirmed",
      { request, told },
    );
  });

  await part("Compaction", async () => {
    from = events.length;
    const compacted = await client.compact();
    check(
      "compact answers Pi's compaction result",
      typeof compacted.summary === "string" &&
        typeof compacted.firstKeptEntryId === "string" &&
        typeof compacted.tokensBefore === "number" &&
        typeof compacted.estimatedTokensAfter === "number",
      compacted,
    );
    const start = events.slice(from).find((e) => e.type === "compaction_start");
    const finish = events.slice(from).find((e) => e.type === "compaction_end");
    check(
      "compact sends compaction_start and compaction_end",
      start?.reason === "manual" &&
        finish?.reason === "manual" &&
        finish.aborted === false &&
        isRecord(finish.result) &&
        finish.result.firstKeptEntryId === compacted.firstKeptEntryId,
      { start, finish },
    );
    const summarized = await client.getMessages();
    check(
      "get_messages after compaction starts with the system message and the summary",
      summarized[0]?.role === "system" && summarized[1]?.role === "compactionSummary",
      summarized.map((m) => m.role),
    );
  });

  await part("Fork, clone, entries, tree", async () => {
    const forkable = await client.getForkMessages();
    check(
      "get_fork_messages lists the user messages of the branch",
      ["hello", "[hold] long task", "[hold] to be aborted"].every((text) =>
        forkable.some((m) => m.text === text && typeof m.entryId === "string"),
      ),
      forkable,
    );
    const target = forkable.find((m) => m.text === "[hold] to be aborted")!;
    const forked = await client.fork(target.entryId);
    forkState = await client.getState();
    check(
      "fork answers the text of the message and opens a new session file",
      forked.cancelled === false &&
        forked.text === target.text &&
        typeof forkState.sessionFile === "string" &&
        forkState.sessionFile !== firstFile,
      { forked, file: forkState.sessionFile },
    );
    const forkedTexts = userTexts(await client.getMessages());
    check(
      "the forked session ends before that message",
      forkedTexts.includes("hello") && !forkedTexts.includes(target.text),
      forkedTexts,
    );
    const cloned = await client.clone();
    cloneState = await client.getState();
    check(
      "clone copies the branch into another new session file",
      cloned.cancelled === false &&
        cloneState.sessionFile !== forkState.sessionFile &&
        cloneState.sessionFile !== firstFile &&
        cloneState.messageCount === forkState.messageCount,
      { cloned, forkCount: forkState.messageCount, cloneCount: cloneState.messageCount },
    );
    const entries = await client.getEntries();
    check(
      "get_entries lists the entries and the leaf",
      entries.entries.length > 0 && entries.leafId === entries.entries.at(-1)?.id,
      { count: entries.entries.length, leafId: entries.leafId },
    );
    const since = await client.getEntries(String(entries.entries[0]!.id));
    const noSuch = await failure(() => client.getEntries("no-such-entry"));
    check(
      "get_entries since an entry lists only later ones; an unknown one fails",
      since.entries.length === entries.entries.length - 1 && noSuch !== undefined,
      { since: since.entries.length, noSuch },
    );
    const tree = await client.getTree();
    const ids: string[] = [];
    const walk = [...tree.tree];
    while (walk.length > 0) {
      const node = walk.pop()!;
      ids.push(node.entry.id);
      walk.push(...node.children);
    }
    check(
      "get_tree holds every entry under its roots, and the leaf",
      ids.length === entries.entries.length && tree.leafId === entries.leafId && ids.includes(tree.leafId ?? ""),
      { ids: ids.length, entries: entries.entries.length },
    );
  });

  await part("Export, switch, new session", async () => {
    const out = join(t.root, "exported.html");
    const exported = await client.exportHtml(out);
    check(
      "export_html writes the session as HTML",
      exported.path === out && existsSync(out) && /<html/i.test(readFileSync(out, "utf8")),
      exported,
    );
    const switched = await client.switchSession(firstFile);
    const back = await client.getState();
    check(
      "switch_session goes back to the first session file",
      switched.cancelled === false && back.sessionFile === firstFile && back.sessionName === "conformance",
      { switched, file: back.sessionFile },
    );
    const fresh = await client.newSession();
    const freshState = await client.getState();
    check(
      "new_session starts an empty session in a new file",
      fresh.cancelled === false &&
        freshState.messageCount === 0 &&
        typeof freshState.sessionFile === "string" &&
        ![firstFile, forkState.sessionFile, cloneState.sessionFile].includes(freshState.sessionFile),
      { fresh, freshState },
    );
    const finalRun = await within(
      (async () => {
        const done = guarded(client.collectEvents(20_000));
        await client.prompt("once more");
        return done;
      })(),
      "the last run",
    );
    check(
      "a prompt in the new session runs and settles",
      finalRun.at(-1)?.type === "agent_settled" && (await client.getLastAssistantText()) === "Reply to: once more",
      finalRun.at(-1),
    );
  });
}

/** An extension_ui_response written straight to the agent's stdin (RpcClient has no method for it). */
function answer(client: RpcClient, response: Json): void {
  const child = (client as unknown as { process: { stdin: NodeJS.WritableStream } | null }).process;
  child?.stdin.write(`${JSON.stringify(response)}\n`);
}

process.exitCode = await main();
