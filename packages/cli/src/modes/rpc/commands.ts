/**
 * The command dispatch table — every command of Pi 1.6's RpcClient — and `handleCommand`, which
 * answers each command exactly once: with the handler's result, or its error as
 * `success:false`. Before each response, what changed in the queue or the session name is told
 * (`tellChanges`), so a `steer`'s `queue_update` comes before its response, as in Pi. The model
 * commands are in `model.ts`, the session commands in `session-commands.ts`, `bash` in `bash.ts`,
 * mypi's permission-mode commands in `permission-mode.ts`.
 */
import { errorMessage } from "@mypi/kernel";
import { parseSlashCommand } from "@mypi/extension-api";
import type { ImageContent, Message, QueueMode } from "@mypi/kernel";
import { PERMISSION_MODE_HANDLERS } from "./permission-mode.ts";
import { abortBash, bash } from "./bash.ts";
import { openChildSession } from "../../child-sessions.ts";
import { CommandError, optionalString, readImages, requireString } from "./command-fields.ts";
import { queuedTexts, tellChanges } from "./events.ts";
import { MODEL_HANDLERS } from "./model.ts";
import { piMessages, piState } from "./pi-view.ts";
import { SESSION_HANDLERS } from "./session-commands.ts";
import { abortAll, abortedSince, release, respond, settled, type Command, type RpcState } from "./state.ts";

/** A handler resolves to the response's `data`, or calls `reply` itself to answer before it is done. */
type Handler = (s: RpcState, c: Command, reply: (data?: unknown) => void) => Promise<unknown> | unknown;

const HANDLERS: Record<string, Handler> = {
  prompt,
  steer: (s, c) => queue(s, c, "steer"),
  follow_up: (s, c) => queue(s, c, "followUp"),
  abort,
  abort_bash: (s) => abortBash(s),
  clear_queue: ({ target }) => {
    const cleared = target.agent.clearQueue();
    return { steering: queuedTexts(cleared.steering), followUp: queuedTexts(cleared.followUps) };
  },
  get_state: (s) => piState(s),
  get_messages: ({ target }, c) => {
    const sessionFile = optionalString(c, "sessionFile");
    if (sessionFile === undefined) return { messages: piMessages(target) };
    return { messages: childMessages(target.sessionManager.file, sessionFile) };
  },
  get_commands: ({ target }) => ({ commands: target.commands() }),
  get_last_assistant_text: ({ target }) => ({ text: lastAssistantText(target.agent.messages) }),
  set_steering_mode: ({ target }, c) => void (target.agent.steeringMode = queueMode(c)),
  set_follow_up_mode: ({ target }, c) => void (target.agent.followUpMode = queueMode(c)),
  set_auto_compaction: ({ target }, c) => {
    const enabled = requireBoolean(c, "enabled");
    try {
      target.agent.autoCompaction = enabled;
    } catch {
      throw new CommandError(
        `${target.agent.model.id} cannot compact automatically: mypi knows no context window for it.`,
      );
    }
    return undefined;
  },
  set_auto_retry: ({ target }, c) => {
    const enabled = requireBoolean(c, "enabled");
    // A model without a retry switch never retries: "off" is what it does already.
    if (target.retry) target.retry.enabled = enabled;
    return undefined;
  },
  abort_retry: ({ target }) => void target.retry?.stop(),
  resume_run: resumeRun,
  bash,
  ...PERMISSION_MODE_HANDLERS,
  ...MODEL_HANDLERS,
  ...SESSION_HANDLERS,
};

/** Run `command`'s handler and answer it once; an unknown type gets an error listing the known ones. */
export async function handleCommand(s: RpcState, command: Command): Promise<void> {
  const handler = Object.hasOwn(HANDLERS, command.type) ? HANDLERS[command.type] : undefined;
  if (!handler) {
    respond(s, command, { error: `Unknown command: ${command.type}. Known: ${Object.keys(HANDLERS).join(", ")}.` });
    return;
  }
  let replied = false;
  const reply = (data?: unknown) => {
    if (replied) return;
    replied = true;
    tellChanges(s);
    respond(s, command, { data });
  };
  try {
    const data = await handler(s, command, reply);
    reply(data);
  } catch (error) {
    if (!replied) {
      replied = true;
      tellChanges(s);
      respond(s, command, { error: errorMessage(error) });
    }
  }
}

/**
 * `prompt`: an extension command (`handled`), else a steer or follow-up while a run goes
 * (`queued`), else a new run. The run's events wait (`holding`) until it is known whether the
 * prompt started a turn (`started`) or the `input` slot handled or blocked it (`handled`: no
 * turn, as when Pi's input handler takes a prompt); then the response, then those events.
 * `target.agent` is read each time: a command may have replaced it (`newSession`).
 */
async function prompt(s: RpcState, c: Command, reply: (data?: unknown) => void): Promise<void> {
  const { target } = s;
  const message = requireString(c, "message");
  const images = readImages(c.images); // refused before anything runs, a command or a steer included
  if (await ranAsCommand(s, c, message)) return reply({ disposition: "handled" });
  if (target.agent.isRunning) return reply(queueOnRun(s, c, { message, images }));
  s.holding = [];
  const run = target.agent.prompt(message, { source: "rpc", ...(images && { images }) });
  if (abortedSince(s, c)) target.agent.abort(); // it ends at once, with its agent_end "aborted"
  const settledRun = Promise.resolve(run).then(
    () => undefined,
    () => undefined,
  );
  s.runs.add(settledRun);
  void settledRun.finally(() => s.runs.delete(settledRun));
  let disposition: "started" | "handled" = "started";
  try {
    for await (const event of run) {
      if (event.type === "turn_start") break;
      if (event.type === "agent_end") {
        if (event.stopReason === "handled" || event.stopReason === "blocked") disposition = "handled";
        break;
      }
    }
  } catch (error) {
    // No run began (the agent was closed on the way out): nothing is held, the prompt failed.
    release(s);
    throw new CommandError(errorMessage(error));
  }
  reply({ disposition });
  release(s);
}

/**
 * `resume_run` (mypi's): go on with the session's interrupted or paused run (docs/resume.md). The
 * response says where it goes on (`next`, and each call without a result with what becomes of
 * it); the run's events follow. Calls a paused run holds are judged again: the client's dialogs
 * ask about them. An error when a run is going or there is nothing to resume.
 */
function resumeRun(s: RpcState): { next: string; calls: { toolCallId: string; toolName: string; outcome: string }[] } {
  const { agent } = s.target;
  if (agent.isRunning)
    throw new CommandError("A run is going: resume_run goes on with a run that was cut off or paused.");
  const point = agent.resumePoint({ judgeWaiting: true });
  if (point === undefined)
    throw new CommandError(
      "Nothing to resume: the last run reached its answer and nothing is queued. Send a prompt instead.",
    );
  const run = agent.resume({ judgeWaiting: true });
  const settledRun = Promise.resolve(run).then(
    () => undefined,
    () => undefined,
  );
  s.runs.add(settledRun);
  void settledRun.finally(() => s.runs.delete(settledRun));
  return { next: point.next, calls: point.calls };
}

/** A `/name args` message that an extension command ran; its failure is the prompt's error. */
async function ranAsCommand(s: RpcState, c: Command, message: string): Promise<boolean> {
  const slash = parseSlashCommand(message);
  if (!slash) return false;
  const stop = new AbortController();
  if (abortedSince(s, c)) stop.abort(new DOMException("Aborted by the client", "AbortError"));
  s.commands.add(stop);
  const outcome = await s.target.runCommand(slash.name, slash.args, stop.signal).finally(() => s.commands.delete(stop));
  if (!outcome.ran) return false;
  if (outcome.error !== undefined) throw new CommandError(`/${slash.name} failed: ${outcome.error}`);
  return true;
}

/** A prompt while a run goes: queued as its `streamingBehavior` says, else refused. */
function queueOnRun(
  s: RpcState,
  c: Command,
  { message, images }: { message: string; images: ImageContent[] | undefined },
): { disposition: "queued" } {
  // Queued as text: the input slot (a redaction) sees it before it is recorded, as it sees a prompt.
  const queued = { source: "rpc", ...(images && { images }) } as const;
  const behavior = c.streamingBehavior;
  if (behavior === "steer") s.target.agent.steer(message, queued);
  else if (behavior === "followUp") s.target.agent.followUp(message, queued);
  else
    throw new CommandError(
      'The agent is already running. Send "steer" or "follow_up", or prompt with streamingBehavior "steer" | "followUp".',
    );
  return { disposition: "queued" };
}

/**
 * `steer` / `follow_up`: queued (also while idle: it joins the next run). mypi's `input` slot
 * sees the text when the loop takes it, so the answer is always `queued`.
 */
function queue(s: RpcState, c: Command, behavior: "steer" | "followUp"): { disposition: "queued" } {
  const message = requireString(c, "message");
  const images = readImages(c.images);
  const options = { source: "rpc", ...(images && { images }) } as const;
  if (behavior === "steer") s.target.agent.steer(message, options);
  else s.target.agent.followUp(message, options);
  return { disposition: "queued" };
}

/**
 * `abort`: the run and the running extension commands stop at once (this command is not
 * queued); the response comes once the agent is idle and the client was told
 * (`agent_settled`), as Pi answers it.
 */
async function abort(s: RpcState): Promise<undefined> {
  const running = s.target.agent.isRunning;
  abortAll(s, new DOMException("Aborted by the client", "AbortError"));
  if (running) await settled(s);
  return undefined;
}

function queueMode(c: Command): QueueMode {
  const mode = c.mode;
  if (mode !== "all" && mode !== "one-at-a-time")
    throw new CommandError(`"mode" must be "all" or "one-at-a-time", not ${JSON.stringify(mode) ?? "undefined"}.`);
  return mode;
}

function requireBoolean(c: Command, field: string): boolean {
  const value = c[field];
  if (typeof value !== "boolean") throw new CommandError(`"${c.type}" needs "${field}": true or false.`);
  return value;
}

/**
 * `get_messages` with `sessionFile`: the history of a child agent's transcript, as the `agent`
 * tool's `details.sessionFile` names it (docs/subagents.md); only this session's children are read.
 */
function childMessages(ownFile: string | undefined, sessionFile: string): Message[] {
  const child = openChildSession(ownFile, sessionFile);
  if (typeof child === "string") throw new CommandError(`${child[0]!.toUpperCase()}${child.slice(1)}.`);
  return child.buildContext();
}

/**
 * Pi's `get_last_assistant_text`: the text of the last assistant message that has some (an
 * aborted or failed answer without text, or one that only called tools, is skipped); null when none has.
 */
function lastAssistantText(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const text = m.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
    if (text !== "") return text;
  }
  return null;
}
