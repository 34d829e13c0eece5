import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { ExtensionManager, type ExtensionManagerOptions } from "../src/index.ts";
import type { ChainCall } from "../src/dispatch/chain.ts";
import type { ExtensionErrorEvent, HookDecisionEvent } from "../src/types.ts";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

export function fixture(name: string): string {
  return join(FIXTURES, name);
}

/** A manager with the given fixture files loaded, in order; fails the test if any does not load. */
export async function managerWith(files: string[], options: ExtensionManagerOptions = {}): Promise<ExtensionManager> {
  const manager = new ExtensionManager({ cwd: FIXTURES, ...options });
  const result = await manager.load(files.map(fixture));
  expect(result.failed).toEqual([]);
  return manager;
}

export interface Recorder {
  call: ChainCall;
  events: (HookDecisionEvent | ExtensionErrorEvent)[];
  /** [extension, outcome] of every hook_decision, in order. */
  decisions(): [string, string][];
  errors(): ExtensionErrorEvent[];
}

/** Stands in for the kernel's slot `ctx`: collects what the chain emits. */
export function recorder(signal: AbortSignal = new AbortController().signal): Recorder {
  const events: (HookDecisionEvent | ExtensionErrorEvent)[] = [];
  return {
    call: { signal, emit: (e) => events.push(e) },
    events,
    decisions: () =>
      events.flatMap((e) => (e.type === "hook_decision" ? [[e.extension, e.outcome] as [string, string]] : [])),
    errors: () => events.filter((e): e is ExtensionErrorEvent => e.type === "extension_error"),
  };
}
