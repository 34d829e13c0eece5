/**
 * What kernel-loop.bench.ts hands each implementation it times: the scenario's work, a counter of
 * the implementation's own events, and the timer to run the measured part in.
 */
import { createJiti } from "jiti";
import type { Message, ScriptedTurn } from "@mypi/kernel";

/** The work of one scenario, independent of who does it. */
export interface Work {
  /** Prompts in order; each prompt consumes the next `turns` of the script. */
  prompts: number;
  /** The script turns, in the order the model is called. */
  turns: ScriptedTurn[];
  /** History seeded before the first prompt. */
  seed: Message[];
  /** Timed runs exclude this many leading prompts (they build once-per-agent caches). */
  untimedPrompts: number;
}

export interface Counters {
  events: number;
}

/** Runs `f`, the part of a run that is timed. */
export type Timed = (f: () => Promise<void>) => Promise<void>;

/** One implementation: does `work`, counting its events, with the measured part inside `timed`. */
export type Runner = (work: Work, counters: Counters, timed: Timed) => Promise<void>;

/** Node's own loader (jiti's `tryNative`), so that every framework is measured as it ships, untranspiled. */
// biome-ignore lint/suspicious/noExplicitAny: a framework's published build, loaded at run time from bench/, whose types this repository does not install
export const nativeImport = (specifier: string): Promise<any> =>
  createJiti(import.meta.url, { tryNative: true }).import(specifier);
