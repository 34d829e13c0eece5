/**
 * The contract floor of kernel-loop.bench.ts: a hand-written loop that does, for any scenario,
 * the observable work mypi's documented contract asks of an `Agent` run — and nothing else.
 *
 *   - every event of docs/architecture.md#events, in mypi's order and number (the bench checks
 *     the count against mypi's), each a frozen object with a timestamp;
 *   - per streamed delta a frozen block and a frozen shallow snapshot of the partial message
 *     (the cheapest way known: a copy of a short content list; for 32 blocks or more the same
 *     lazily built `content` mypi uses, so that wide messages stay O(1) per delta);
 *   - the arguments of each call validated against its tool's schema, the tool run, its result
 *     frozen; every message deep-frozen as it enters the history;
 *   - delivered to one listener, or (the `iterator` reading) through a buffered async iterator
 *     that a `for await` reads, as `prompt()` is read.
 *
 * No aborts, slots, session, model view, timeouts, depth limits or repair: what Pi / contract says
 * is the best ratio any implementation of the contract could reach on this machine.
 */
import type {
  AssistantContent,
  AssistantMessage,
  Message,
  ModelClient,
  ToolCall,
  ToolResultMessage,
} from "@mypi/kernel";
import type { Runner, Timed, Work } from "./work.ts";

/** A tool as the floor runs it: a schema (zod's `safeParse`), whether it may run alongside others, the function. */
export interface ContractTool {
  schema: { safeParse(value: unknown): { success: boolean; data?: unknown } };
  parallelSafe: boolean;
  run(args: Record<string, unknown>): string;
}

type Emit = (event: object) => void;
const NEVER_ABORTED = new AbortController().signal;
const NO_USAGE = Object.freeze({ input: 0, output: 0 });
const NO_ARGUMENTS = Object.freeze({});
const EAGER_BLOCKS = 32;

export function contractRunners(
  createModel: (turns: Work["turns"]) => ModelClient,
  tools: Record<string, ContractTool>,
): { listener: Runner; iterator: Runner } {
  const listener: Runner = async (work, counters, timed) => {
    const count: Emit = () => void counters.events++;
    await each(work, timed, createModel(work.turns), (run) => run(count));
  };
  const iterator: Runner = async (work, counters, timed) => {
    await each(work, timed, createModel(work.turns), async (run) => {
      const queue = new EventQueue();
      const done = run((event) => queue.push(event));
      for await (const _event of queue) counters.events++;
      await done;
    });
  };
  /** Runs every prompt of `work`, each through `read`, the timed ones inside `timed`. */
  async function each(
    work: Work,
    timed: Timed,
    model: ModelClient,
    read: (run: (emit: Emit) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const history: Message[] = structuredClone(work.seed);
    for (const m of history) deepFreeze(m);
    const prompt = (p: number) =>
      read(async (emit) => {
        await contractRun(model, tools, history, `Question ${p}`, emit);
      });
    for (let p = 0; p < work.untimedPrompts; p++) await prompt(p);
    await timed(async () => {
      for (let p = work.untimedPrompts; p < work.prompts; p++) await prompt(p);
    });
  }
  return { listener, iterator };
}

/** One run: the prompt, then turns until the model calls no tool. */
async function contractRun(
  model: ModelClient,
  tools: Record<string, ContractTool>,
  history: Message[],
  prompt: string,
  sink: Emit,
): Promise<void> {
  const emit = (event: object) => sink(Object.freeze(event));
  const added: Message[] = [];
  const record = (message: Message, now: number) => {
    deepFreeze(message);
    emit({ type: "message_start", message, timestamp: now });
    emit({ type: "message_end", message, timestamp: now });
    history.push(message);
    added.push(message);
  };
  let now = Date.now();
  emit({ type: "agent_start", timestamp: now });
  let incoming: Message[] = [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: now }];
  let finalText: string | undefined;
  for (let turnIndex = 0; ; turnIndex++) {
    emit({ type: "turn_start", turnIndex, timestamp: now });
    for (const m of incoming) record(m, now);
    const message = await streamAnswer(model, history, now, emit);
    history.push(message);
    added.push(message);
    const calls = message.content.filter((b): b is ToolCall => b.type === "toolCall");
    const results = runCalls(calls, tools, emit, record);
    now = Date.now();
    emit({ type: "turn_end", turnIndex, message, toolResults: Object.freeze(results), timestamp: now });
    if (calls.length === 0) {
      finalText = message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      break;
    }
    incoming = [];
  }
  emit({
    type: "agent_end",
    messages: Object.freeze(added),
    stopReason: "completed",
    finalText,
    timestamp: Date.now(),
  });
}

/** The model's answer: `message_start`, a `message_update` per delta, `message_end`. */
async function streamAnswer(
  model: ModelClient,
  history: Message[],
  now: number,
  emit: Emit,
): Promise<AssistantMessage> {
  const done: AssistantContent[] = [];
  let last: AssistantContent | undefined;
  const callAt: number[] = [];
  const snapshot = () => partialSnapshot(done, last, now);
  emit({ type: "message_start", message: snapshot(), timestamp: now });
  let final: AssistantMessage | undefined;
  for await (const event of model.stream({ messages: history as never, tools: [] }, NEVER_ABORTED)) {
    let contentIndex: number;
    switch (event.type) {
      case "text_delta":
        if (last?.type === "text") last = Object.freeze({ type: "text", text: last.text + event.delta });
        else last = push(done, last, Object.freeze({ type: "text", text: event.delta }));
        contentIndex = done.length;
        break;
      case "toolcall_start":
        callAt[event.index] = done.length + (last === undefined ? 0 : 1);
        last = push(
          done,
          last,
          Object.freeze({
            type: "toolCall",
            id: event.id,
            name: event.name,
            arguments: NO_ARGUMENTS,
            rawArguments: "",
          }),
        );
        contentIndex = done.length;
        break;
      case "toolcall_delta": {
        const call = last as ToolCall;
        last = Object.freeze({
          type: "toolCall",
          id: call.id,
          name: call.name,
          arguments: NO_ARGUMENTS,
          rawArguments: call.rawArguments + event.delta,
        });
        contentIndex = callAt[event.index]!;
        break;
      }
      case "done":
        final = deepFreeze(event.message);
        continue;
      default:
        continue;
    }
    emit({ type: "message_update", message: snapshot(), delta: event, contentIndex, timestamp: Date.now() });
  }
  emit({ type: "message_end", message: final, timestamp: Date.now() });
  return final!;
}

function push(done: AssistantContent[], last: AssistantContent | undefined, block: AssistantContent): AssistantContent {
  if (last !== undefined) done.push(last);
  return block;
}

/** Validate and run the calls: all at once when every tool is parallel-safe, else one after another. */
function runCalls(
  calls: ToolCall[],
  tools: Record<string, ContractTool>,
  emit: Emit,
  record: (m: Message, now: number) => void,
): ToolResultMessage[] {
  const results: ToolResultMessage[] = [];
  const start = (call: ToolCall, now: number) =>
    emit({
      type: "tool_execution_start",
      toolCallId: call.id,
      toolName: call.name,
      args: call.arguments,
      timestamp: now,
    });
  const finish = (call: ToolCall) => {
    const tool = tools[call.name]!;
    const checked = tool.schema.safeParse(call.arguments);
    const text = checked.success ? tool.run(checked.data as Record<string, unknown>) : "invalid arguments";
    const result = Object.freeze({
      content: Object.freeze([Object.freeze({ type: "text" as const, text })]),
      isError: !checked.success,
    });
    const now = Date.now();
    emit({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result,
      isError: result.isError,
      timestamp: now,
    });
    const message: ToolResultMessage = {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: result.content as never,
      isError: result.isError,
      timestamp: now,
    };
    record(message, now);
    results.push(message);
  };
  if (calls.length > 1 && calls.every((call) => tools[call.name]!.parallelSafe)) {
    const now = Date.now();
    for (const call of calls) start(call, now);
    for (const call of calls) finish(call);
  } else {
    for (const call of calls) {
      start(call, Date.now());
      finish(call);
    }
  }
  return results;
}

function partialSnapshot(
  done: readonly AssistantContent[],
  last: AssistantContent | undefined,
  timestamp: number,
): AssistantMessage {
  if (done.length >= EAGER_BLOCKS)
    return new LazySnapshot(done, done.length, last, timestamp) as unknown as AssistantMessage;
  const blocks = done.slice();
  if (last !== undefined) blocks.push(last);
  return Object.freeze({
    role: "assistant",
    content: Object.freeze(blocks),
    stopReason: "stop",
    usage: NO_USAGE,
    model: "scripted",
    timestamp,
  }) as AssistantMessage;
}

/** A frozen snapshot whose own enumerable `content` is built on first read (one shared accessor). */
class LazySnapshot {
  readonly #done: readonly AssistantContent[];
  readonly #count: number;
  readonly #last: AssistantContent | undefined;
  #content: readonly AssistantContent[] | undefined;

  constructor(done: readonly AssistantContent[], count: number, last: AssistantContent | undefined, timestamp: number) {
    this.#done = done;
    this.#count = count;
    this.#last = last;
    const self = this as unknown as Record<string, unknown>;
    self.role = "assistant";
    Object.defineProperty(this, "content", CONTENT);
    self.stopReason = "stop";
    self.usage = NO_USAGE;
    self.model = "scripted";
    self.timestamp = timestamp;
    Object.freeze(this);
  }

  static content(snapshot: LazySnapshot): readonly AssistantContent[] {
    if (snapshot.#content === undefined) {
      const blocks = snapshot.#done.slice(0, snapshot.#count);
      if (snapshot.#last !== undefined) blocks.push(snapshot.#last);
      snapshot.#content = Object.freeze(blocks);
    }
    return snapshot.#content;
  }
}

const CONTENT: PropertyDescriptor = Object.freeze({
  get(this: LazySnapshot) {
    return LazySnapshot.content(this);
  },
  enumerable: true,
});

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** The smallest buffered async iterable: every event from the first, one reader, handed over as it comes. */
class EventQueue implements AsyncIterable<object> {
  readonly #events: object[] = [];
  #read = 0;
  #ended = false;
  #waiting: ((result: IteratorResult<object>) => void) | undefined;

  push(event: object): void {
    if ((event as { type?: string }).type === "agent_end") this.#ended = true;
    const waiting = this.#waiting;
    this.#events.push(event);
    if (waiting === undefined) return;
    this.#waiting = undefined;
    waiting({ value: this.#events[this.#read++]!, done: false });
  }

  [Symbol.asyncIterator](): AsyncIterator<object> {
    return {
      next: () => {
        if (this.#read < this.#events.length)
          return Promise.resolve({ value: this.#events[this.#read++]!, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
    };
  }
}
