/**
 * What the event contract (docs/architecture.md#events) alone costs an S1 chat turn (kernel-loop's S1: 2000 one-turn
 * prompts, the same scripted model), against mypi's `Agent` doing the same work in the same
 * process, interleaved rounds, CPU time.
 *
 * The floor does exactly the observable work an `Agent` run must: 16 events, each a frozen
 * object with a timestamp, delivered to one listener; a frozen shallow snapshot (and a frozen
 * block) per delta; the prompt and the answer deep-frozen as they enter the history — and
 * nothing else: no abort handling, no slots, no session, no model view. kernel-loop's ratio to
 * Pi divided by mypi / floor says how far even this floor is from Pi (docs/kernel.md,
 * "Performance").
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as Kernel from "@mypi/kernel";
import { createJiti } from "jiti";

// mypi as npm installs it, loaded by Node itself (bench/run.mjs builds the packages first).
const KERNEL = join(dirname(dirname(fileURLToPath(import.meta.url))), "packages", "kernel", "dist", "index.js");
const { Agent, createScriptedModel } = (await createJiti(import.meta.url, { tryNative: true }).import(pathToFileURL(KERNEL).href)) as typeof Kernel;

const ANSWER = "Sure, here is the answer you asked for.";
const PROMPTS = 2000;
const ROUNDS = 40;
/** Rounds run before counting: both sides' code is optimised by then. */
const WARM_ROUNDS = 12;
const NEVER_ABORTED = new AbortController().signal;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** µs of CPU per prompt. */
async function contractFloor(): Promise<number> {
  const model = createScriptedModel({ turns: Array.from({ length: PROMPTS }, () => ({ text: ANSWER })) });
  const history: unknown[] = [];
  let events = 0;
  const emit = (event: object) => {
    Object.freeze(event);
    events++;
  };
  const started = process.cpuUsage();
  for (let i = 0; i < PROMPTS; i++) {
    const now = Date.now();
    emit({ type: "agent_start", timestamp: now });
    emit({ type: "turn_start", turnIndex: 0, timestamp: now });
    const user = deepFreeze({ role: "user", content: [{ type: "text", text: `Question ${i}` }], timestamp: now });
    emit({ type: "message_start", message: user, timestamp: now });
    emit({ type: "message_end", message: user, timestamp: now });
    history.push(user);
    const added = [user];
    emit({ type: "message_start", message: Object.freeze({ role: "assistant", content: Object.freeze([]), timestamp: now }), timestamp: now });
    let text = "";
    let final: object | undefined;
    for await (const event of model.stream({ messages: [], tools: [] }, NEVER_ABORTED)) {
      if (event.type === "text_delta") {
        text += event.delta;
        const block = Object.freeze({ type: "text", text });
        const snapshot = Object.freeze({ role: "assistant", content: Object.freeze([block]), stopReason: "stop", timestamp: now });
        emit({ type: "message_update", message: snapshot, delta: Object.freeze(event), timestamp: Date.now() });
      } else if (event.type === "done") final = deepFreeze(event.message);
    }
    emit({ type: "message_end", message: final, timestamp: Date.now() });
    history.push(final);
    added.push(final as typeof user);
    emit({ type: "turn_end", turnIndex: 0, message: final, toolResults: Object.freeze([]), timestamp: Date.now() });
    emit({ type: "agent_end", messages: Object.freeze(added), stopReason: "completed", timestamp: Date.now() });
  }
  const cpu = process.cpuUsage(started);
  if (events !== PROMPTS * 16) throw new Error(`the floor emitted ${events} events, not 16 per prompt`);
  return (cpu.user + cpu.system) / PROMPTS;
}

/** µs of CPU per prompt. */
async function mypi(): Promise<number> {
  const model = createScriptedModel({ turns: Array.from({ length: PROMPTS }, () => ({ text: ANSWER })) });
  const agent = new Agent({ model });
  let events = 0;
  agent.subscribe(() => void events++);
  const started = process.cpuUsage();
  for (let i = 0; i < PROMPTS; i++) await agent.run(`Question ${i}`);
  const cpu = process.cpuUsage(started);
  await agent.close();
  if (events !== PROMPTS * 16) throw new Error(`mypi emitted ${events} events, not 16 per prompt`);
  return (cpu.user + cpu.system) / PROMPTS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const floors: number[] = [];
const mypis: number[] = [];
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternate who goes first, so that neither always runs on a warmer or colder machine.
  let floor: number;
  let ours: number;
  if (round % 2 === 0) {
    floor = await contractFloor();
    ours = await mypi();
  } else {
    ours = await mypi();
    floor = await contractFloor();
  }
  if (round < WARM_ROUNDS) continue;
  floors.push(floor);
  mypis.push(ours);
  ratios.push(ours / floor);
}
console.log(`S1 chat turn, µs of CPU (median of ${ROUNDS - WARM_ROUNDS} rounds): contract floor ${median(floors).toFixed(1)}, mypi ${median(mypis).toFixed(1)}`);
console.log(`mypi / contract floor: ${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`);
