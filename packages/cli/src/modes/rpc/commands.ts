/**
 * The command dispatch table: one handler per command `type`, and `handleCommand`, which answers
 * each command exactly once — with the handler's result, or its error as `success:false`.
 */
import { parseSlashCommand } from "@mypi/extension-api";
import type { ImageContent, Message } from "@mypi/kernel";
import { resolve } from "node:path";
import { defaultExportPath, exportSession } from "../../export/command.ts";
import { PERMISSION_MODES, parsePermissionMode } from "@mypi/extensions/permission-gate/modes";
import { CommandError, optionalString, readImages, requireString } from "./command-fields.ts";
import { abortAll, abortedSince, respond, type Command, type RpcState } from "./state.ts";

/** A handler resolves to the response's `data`, or calls `reply` itself to answer before it is done. */
type Handler = (s: RpcState, c: Command, reply: (data?: unknown) => void) => Promise<unknown> | unknown;

const HANDLERS: Record<string, Handler> = {
  prompt,
  steer: ({ target }, c) => void target.agent.steer(requireString(c, "message"), { source: "rpc" }),
  follow_up: ({ target }, c) => void target.agent.followUp(requireString(c, "message"), { source: "rpc" }),
  abort: (s) => abortAll(s, new DOMException("Aborted by the client", "AbortError")),
  get_state: ({ target }) => target.state(),
  get_messages: ({ target }) => ({ messages: target.agent.messages as readonly Message[] }),
  get_commands: ({ target }) => ({ commands: target.commands() }),
  new_session: ({ target }) => target.newSession(),
  compact: async ({ target }, c) => {
    const result = await target.compact(optionalString(c, "customInstructions"));
    if (result.status === "failed") throw new CommandError(`Compaction failed: ${result.error ?? "unknown error"}`);
    return result;
  },
  set_session_name: ({ target }, c) => void target.setSessionName(requireString(c, "name")),
  fork: ({ target }, c) => target.fork(requireString(c, "entryId")),
  get_fork_messages: ({ target }) => ({ messages: target.forkMessages() }),
  switch_session: ({ target }, c) => target.switchSession(requireString(c, "sessionPath")),
  export_html: ({ target }, c) => {
    const m = target.sessionManager;
    const asked = optionalString(c, "outputPath");
    return { path: exportSession(m, asked !== undefined ? resolve(asked) : defaultExportPath(process.cwd(), m)) };
  },
  get_last_assistant_text: ({ target }) => ({ text: lastAssistantText(target.agent.messages) }),
  set_permission_mode: setPermissionMode,
  get_permission_mode: ({ target }) => ({ mode: target.permissionMode?.mode ?? null, source: target.permissionMode?.source ?? null }),
};

/**
 * `set_permission_mode {mode}` (a mypi addition to Pi's protocol): switch the permission mode;
 * `{mode, previous}`. `get_permission_mode`: `{mode, source}`, both null when the gate is off.
 */
function setPermissionMode({ target }: RpcState, c: Command): { mode: string; previous: string } {
  const state = target.permissionMode;
  if (!state) throw new CommandError("Permission modes need the permission gate, which is off in this run (`mypi extensions` says why).");
  const wanted = parsePermissionMode(requireString(c, "mode"));
  if (!wanted) throw new CommandError(`Unknown permission mode: ${String(c.mode)}. Known: ${PERMISSION_MODES.join(", ")}.`);
  const previous = state.mode;
  const refused = state.set(wanted, "set_permission_mode");
  if (refused !== undefined) throw new CommandError(`Permission mode ${wanted} cannot be set: ${refused}.`);
  return { mode: state.mode, previous };
}

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
    respond(s, command, { data });
  };
  try {
    const data = await handler(s, command, reply);
    reply(data);
  } catch (error) {
    if (!replied) respond(s, command, { error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * `prompt`: an extension command, else steering or a follow-up while a run goes, else a new run.
 * `target.agent` is read each time: a command may have replaced it (`newSession`).
 */
async function prompt(s: RpcState, c: Command, reply: (data?: unknown) => void): Promise<undefined> {
  const { target } = s;
  const message = requireString(c, "message");
  const images = readImages(c.images); // refused before anything runs, a command or a steer included
  if (await ranAsCommand(s, c, message)) return undefined;
  if (target.agent.isRunning) return queueOnRun(s, c, { message, images });
  // Answer first: the run's events follow the response (the run starts on the next microtask).
  reply();
  const run = target.agent.prompt(message, { source: "rpc", ...(images && { images }) });
  if (abortedSince(s, c)) target.agent.abort(); // it ends at once, with its agent_end "aborted"
  const settled = Promise.resolve(run).then(
    () => undefined,
    () => undefined,
  );
  s.runs.add(settled);
  void settled.finally(() => s.runs.delete(settled));
  return undefined;
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
function queueOnRun(s: RpcState, c: Command, { message, images }: { message: string; images: ImageContent[] | undefined }): undefined {
  // Queued as text: the input slot (a redaction) sees it before it is recorded, as it sees a prompt.
  const queued = { source: "rpc", ...(images && { images }) } as const;
  const behavior = c.streamingBehavior;
  if (behavior === "steer") return void s.target.agent.steer(message, queued);
  if (behavior === "followUp") return void s.target.agent.followUp(message, queued);
  throw new CommandError('The agent is already running. Send "steer" or "follow_up", or prompt with streamingBehavior "steer" | "followUp".');
}

/** Pi's `get_last_assistant_text`: the text of the history's last assistant message, or null. */
function lastAssistantText(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant") return m.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  }
  return null;
}
