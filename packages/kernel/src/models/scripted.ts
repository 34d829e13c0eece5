/**
 * The scripted model (docs/kernel.md#the-scripted-model): replays a JSON script, one turn per
 * model call, and streams each turn the way a real provider does — text in word-sized deltas,
 * tool-call arguments as fragments of their JSON — so that tests, benchmarks and the demo run
 * the same code paths as a live model. Used by tests for scripts; never by anything at random.
 */
import { errnoCode, errorMessage } from "../values.ts";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type {
  AssistantContent,
  AssistantMessage,
  ModelClient,
  ModelRequest,
  ModelStreamEvent,
  StopReason,
  ToolCall,
  Usage,
} from "../types.ts";

// ─── Script format ───────────────────────────────────────────────────────────────────────────

export interface ScriptedToolCall {
  name: string;
  /** An object, or a raw string sent as is (so malformed or truncated JSON can be scripted). */
  arguments?: Record<string, unknown> | string;
  /** Default `call_<n>`, where n counts every tool call of the script from 1. */
  id?: string;
}

export interface ScriptedTurn {
  text?: string;
  thinking?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `"toolUse"` when the turn has tool calls, else `"stop"`. */
  stopReason?: StopReason;
  /** Waits this long before the first event; an abort ends the wait at once. */
  delayMs?: number;
  usage?: Partial<Usage>;
  /** The call fails: the stream ends with an `error` event carrying this message. */
  error?: string;
}

export interface ModelScript {
  turns: ScriptedTurn[];
  /**
   * Which turn a call gets: the next one (`"calls"`, the default), or the one numbered by the
   * assistant messages already in its request (`"history"`), so that a run resumed in another
   * process (docs/resume.md) goes on where the script stopped.
   */
  replay?: "calls" | "history";
}

export interface ScriptedModelOptions {
  /** Names the script in the model id and in errors (`loadScriptedModel` passes the file). Default `"inline"`. */
  name?: string;
  /** Sees each request as it arrives (tests check what the model was sent). */
  onRequest?: (request: ModelRequest) => void;
}

export interface ScriptedModel extends ModelClient {
  /** Model calls made so far (including the ones that found no turn left). */
  readonly calls: number;
  /** Turns not yet replayed. */
  readonly remaining: number;
}

/** Longest piece of a tool call's argument JSON sent in one `toolcall_delta`. */
const FRAGMENT_CHARS = 8;
const STOP_REASONS: ReadonlySet<string> = new Set<StopReason>(["stop", "toolUse", "length", "aborted", "error"]);
const ABORTED_TEXT = "Request aborted by user";

// ─── Construction ────────────────────────────────────────────────────────────────────────────

/** A turn with everything that does not depend on the moment of the call worked out once. */
interface PreparedTurn {
  /** The turn's fields, copied out of the script so that every prepared turn has one shape. */
  text: string | undefined;
  thinking: string | undefined;
  error: string | undefined;
  delayMs: number | undefined;
  usage: Partial<Usage> | undefined;
  /** Every delta of the turn, in order (frozen: shared by nobody else, changed by nobody). */
  deltas: readonly ModelStreamEvent[];
  /** The iterator results that hand out `deltas`, one each. */
  steps: readonly IteratorResult<ModelStreamEvent>[];
  calls: { id: string; name: string; json: string }[];
  stopReason: StopReason;
}

/** Throws a `TypeError` naming the script and the turn when the script is malformed. */
export function createScriptedModel(script: ModelScript, options: ScriptedModelOptions = {}): ScriptedModel {
  const name = options.name ?? "inline";
  const turns = prepareScript(script, name);
  const id = `scripted:${name === "inline" ? "inline" : basename(name)}`;
  const onRequest = options.onRequest;
  const byHistory = script.replay === "history";
  let next = 0;
  let calls = 0;

  return {
    id,
    get calls() {
      return calls;
    },
    get remaining() {
      return turns.length - next;
    },
    stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent> {
      calls++;
      onRequest?.(request);
      if (byHistory) next = request.messages.reduce((n, m) => (m.role === "assistant" ? n + 1 : n), 0);
      const prepared = turns[next];
      if (prepared !== undefined) next++;
      return new ScriptedStream(
        prepared,
        id,
        signal,
        prepared === undefined ? outOfTurns(name, turns.length, calls) : undefined,
      );
    },
  };
}

/** Reads and checks a script file. Rejects with a message naming the file (missing, bad JSON, bad shape). */
export async function loadScriptedModel(
  file: string,
  options: Omit<ScriptedModelOptions, "name"> = {},
): Promise<ScriptedModel> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    const why = code === "ENOENT" ? "no such file" : errorMessage(error);
    throw new Error(`Cannot read the scripted model file ${file}: ${why}`, { cause: error });
  }
  let script: unknown;
  try {
    script = JSON.parse(text);
  } catch (error) {
    throw new Error(`The scripted model file ${file} is not valid JSON: ${errorMessage(error)}`, { cause: error });
  }
  return createScriptedModel(script as ModelScript, { ...options, name: file });
}

function outOfTurns(name: string, turnCount: number, callNumber: number): string {
  const where = name === "inline" ? "The inline scripted model" : `The scripted model ${name}`;
  return `${where} has no turn left for model call ${callNumber}: the script has ${turnCount} turn${turnCount === 1 ? "" : "s"}. Add turns to the script.`;
}

function prepareScript(script: ModelScript, name: string): PreparedTurn[] {
  const fail = (where: string, what: string): never => {
    throw new TypeError(`Scripted model (${name}): ${where}${what}`);
  };
  if (typeof script !== "object" || script === null || !Array.isArray(script.turns)) {
    return fail("", 'the script must be an object with a "turns" array');
  }
  if (script.replay !== undefined && script.replay !== "calls" && script.replay !== "history")
    fail("", '"replay" must be "calls" or "history"');
  let callNumber = 0;
  return script.turns.map((turn, t) => {
    const at = `turn ${t + 1}: `;
    if (typeof turn !== "object" || turn === null || Array.isArray(turn)) return fail(at, "must be an object");
    for (const key of ["text", "thinking", "error"] as const) {
      if (turn[key] !== undefined && typeof turn[key] !== "string") fail(at, `"${key}" must be a string`);
    }
    if (turn.stopReason !== undefined && !STOP_REASONS.has(turn.stopReason)) {
      fail(at, `"stopReason" must be one of ${[...STOP_REASONS].join(", ")}`);
    }
    if (turn.delayMs !== undefined && !(typeof turn.delayMs === "number" && turn.delayMs >= 0)) {
      fail(at, `"delayMs" must be a number ≥ 0`);
    }
    if (turn.usage !== undefined) {
      if (typeof turn.usage !== "object" || turn.usage === null) fail(at, `"usage" must be an object`);
      for (const [k, v] of Object.entries(turn.usage))
        if (typeof v !== "number") fail(at, `"usage.${k}" must be a number`);
    }
    if (turn.toolCalls !== undefined && !Array.isArray(turn.toolCalls)) fail(at, `"toolCalls" must be an array`);
    const calls = (turn.toolCalls ?? []).map((call, c) => {
      callNumber++;
      const cat = `${at}toolCalls[${c}]: `;
      if (typeof call !== "object" || call === null) return fail(cat, "must be an object");
      if (typeof call.name !== "string" || call.name === "") fail(cat, `"name" must be a non-empty string`);
      if (call.id !== undefined && typeof call.id !== "string") fail(cat, `"id" must be a string`);
      const args = call.arguments;
      if (
        args !== undefined &&
        typeof args !== "string" &&
        (typeof args !== "object" || args === null || Array.isArray(args))
      ) {
        fail(cat, `"arguments" must be an object or a string`);
      }
      const json = typeof args === "string" ? args : JSON.stringify(args ?? {});
      return { id: call.id ?? `call_${callNumber}`, name: call.name, json };
    });
    const deltas: ModelStreamEvent[] = [];
    for (const delta of words(turn.thinking ?? "")) deltas.push({ type: "thinking_delta", delta });
    for (const delta of words(turn.text ?? "")) deltas.push({ type: "text_delta", delta });
    calls.forEach((call, index) => {
      deltas.push({ type: "toolcall_start", index, id: call.id, name: call.name });
      for (const delta of fragments(call.json)) deltas.push({ type: "toolcall_delta", index, delta });
    });
    const frozen = deltas.map((d) => Object.freeze(d));
    return {
      text: turn.text,
      thinking: turn.thinking,
      error: turn.error,
      delayMs: turn.delayMs,
      usage: turn.usage,
      deltas: frozen,
      steps: frozen.map((value) => Object.freeze({ value, done: false })),
      calls,
      stopReason: turn.stopReason ?? (calls.length > 0 ? "toolUse" : "stop"),
    };
  });
}

/** Word-sized deltas: each word with the whitespace after it ("Reading it." → "Reading ", "it."). */
function words(text: string): string[] {
  return text === "" ? [] : (text.match(/\s*\S+\s*/g) ?? [text]);
}

/** Fixed-size pieces of the argument JSON, never splitting a surrogate pair. */
function fragments(json: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < json.length) {
    let end = Math.min(i + FRAGMENT_CHARS, json.length);
    const code = json.charCodeAt(end - 1);
    if (end < json.length && code >= 0xd800 && code <= 0xdbff) end++;
    out.push(json.slice(i, end));
    i = end;
  }
  return out;
}

// ─── Replay ──────────────────────────────────────────────────────────────────────────────────

const DONE: IteratorResult<ModelStreamEvent> = Object.freeze({ value: undefined, done: true });

/**
 * One model call. A hand-written iterator rather than an async generator: the events are known
 * in advance, so each step is one resolved promise — an instant model should cost next to nothing
 * in the benchmarks that use it.
 */
class ScriptedStream implements AsyncIterableIterator<ModelStreamEvent> {
  readonly #prepared: PreparedTurn | undefined;
  readonly #model: string;
  readonly #signal: AbortSignal;
  /** Set when the script had no turn left for this call. */
  readonly #missing: string | undefined;
  /** Deltas handed out so far; -1 before the delay. */
  #next = -1;
  #finished = false;

  constructor(prepared: PreparedTurn | undefined, model: string, signal: AbortSignal, missing: string | undefined) {
    this.#prepared = prepared;
    this.#model = model;
    this.#signal = signal;
    this.#missing = missing;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ModelStreamEvent>> {
    if (this.#finished) return Promise.resolve(DONE);
    const prepared = this.#prepared;
    if (prepared === undefined) {
      return this.#last({ type: "error", message: finalMessage(this.#model, [], "error", undefined, this.#missing) });
    }
    if (this.#next === -1) {
      this.#next = 0;
      const delay = prepared.delayMs;
      if (delay !== undefined && delay > 0) {
        return sleep(delay, this.#signal).then((slept) => (slept ? this.next() : this.#aborted()));
      }
    }
    if (this.#signal.aborted) return this.#aborted();
    const steps = prepared.steps;
    if (prepared.error !== undefined) {
      return this.#last({
        type: "error",
        message: finalMessage(this.#model, [], "error", prepared.usage, prepared.error),
      });
    }
    if (this.#next < steps.length) return Promise.resolve(steps[this.#next++]!);
    const content: AssistantContent[] = [];
    if (prepared.thinking) content.push({ type: "thinking", thinking: prepared.thinking });
    if (prepared.text) content.push({ type: "text", text: prepared.text });
    const calls = prepared.calls;
    for (let i = 0; i < calls.length; i++) content.push(toolCall(calls[i]!.id, calls[i]!.name, calls[i]!.json));
    return this.#last({
      type: "done",
      message: finalMessage(this.#model, content, prepared.stopReason, prepared.usage),
    });
  }

  return(): Promise<IteratorResult<ModelStreamEvent>> {
    this.#finished = true;
    return Promise.resolve(DONE);
  }

  #last(event: ModelStreamEvent): Promise<IteratorResult<ModelStreamEvent>> {
    this.#finished = true;
    return Promise.resolve({ value: event, done: false });
  }

  /** The message of an abort carries what had been streamed. */
  #aborted(): Promise<IteratorResult<ModelStreamEvent>> {
    const content: AssistantContent[] = [];
    const prepared = this.#prepared!;
    for (let i = 0; i < Math.max(0, this.#next); i++) {
      const delta = prepared.deltas[i]!;
      const last = content[content.length - 1];
      if (delta.type === "thinking_delta") {
        if (last?.type === "thinking") last.thinking += delta.delta;
        else content.push({ type: "thinking", thinking: delta.delta });
      } else if (delta.type === "text_delta") {
        if (last?.type === "text") last.text += delta.delta;
        else content.push({ type: "text", text: delta.delta });
      } else if (delta.type === "toolcall_start") {
        content.push({ type: "toolCall", id: delta.id, name: delta.name, arguments: {}, rawArguments: "" });
      } else if (delta.type === "toolcall_delta" && last?.type === "toolCall") {
        last.rawArguments += delta.delta;
      }
    }
    const settledContent = content.map((b) =>
      b.type === "toolCall" ? toolCall(b.id, b.name, b.rawArguments ?? "") : b,
    );
    return this.#last({
      type: "error",
      message: finalMessage(this.#model, settledContent, "aborted", undefined, ABORTED_TEXT),
    });
  }
}

/** docs/architecture.md#messages: JSON that does not parse, or parses to a non-object, is kept raw with `arguments: {}`. */
function toolCall(id: string, name: string, json: string): ToolCall {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return { type: "toolCall", id, name, arguments: value as Record<string, unknown> };
    }
  } catch {
    // kept raw below
  }
  return { type: "toolCall", id, name, arguments: {}, rawArguments: json };
}

function finalMessage(
  model: string,
  content: AssistantContent[],
  stopReason: StopReason,
  usage: Partial<Usage> | undefined,
  errorMessage?: string,
): AssistantMessage {
  const message: AssistantMessage = {
    role: "assistant",
    content,
    stopReason,
    usage: usage === undefined ? { input: 0, output: 0 } : { input: 0, output: 0, ...usage },
    model,
    timestamp: Date.now(),
  };
  if (errorMessage !== undefined) message.errorMessage = errorMessage;
  return message;
}

/** Resolves true after `ms`, false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
