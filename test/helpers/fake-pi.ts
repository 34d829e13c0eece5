/**
 * A minimal stand-in for `pi` and `ctx`, for unit tests of the shipped extensions' handlers:
 * it records what an extension registers and lets a test call one handler directly. The real
 * chain machinery (order, policies, timeouts) is tested by the extension-api package and, for
 * these extensions, by the end-to-end tests through the real `mypi` process.
 */
import {
  HEADLESS_UI,
  emptySessionView,
  type ExtensionAPI,
  type ExtensionContext,
  type ExtensionFactory,
} from "@mypi/extension-api";
import type { JsonObject } from "./json.ts";

export interface Registration {
  name: string;
  /** A method, so that a handler of any one event's type fits (parameters are checked both ways). */
  handler(event: JsonObject, ctx: ExtensionContext): unknown;
  options?: { order?: "pre" | "post"; timeoutMs?: number };
}

export interface FakePi {
  pi: ExtensionAPI;
  registrations: Registration[];
  flags: Map<string, unknown>;
  /** What `pi.registerRedactor` was given, in order. */
  redactors: unknown[];
  /** Values `getFlag` returns. */
  flagValues: Record<string, string | boolean>;
  /** Channel → listeners of the shared bus. */
  bus: Map<string, ((data: unknown) => void)[]>;
  /** Call the only handler registered for `name`, with the slot name in `type` (as the manager does). */
  call(name: string, event: Record<string, unknown>, ctx?: Partial<ExtensionContext>): Promise<unknown>;
}

export function fakeCtx(over: Partial<ExtensionContext> = {}): ExtensionContext {
  const base: ExtensionContext = {
    cwd: process.cwd(),
    hasUI: false,
    ui: HEADLESS_UI,
    sessionManager: { ...emptySessionView(process.cwd()), id: "test-session" },
    signal: new AbortController().signal,
    abort: () => {},
    isIdle: () => true,
    getSystemPrompt: () => "",
    getContextUsage: () => undefined,
    isProjectTrusted: () => false,
    agentPath: ["root"],
  };
  return { ...base, ...over };
}

export async function loadFake(
  factory: ExtensionFactory,
  bus = new Map<string, ((data: unknown) => void)[]>(),
  /** What `pi.getSettings()` returns (a copy each call). */
  settings: Record<string, unknown> = {},
): Promise<FakePi> {
  const registrations: Registration[] = [];
  const flags = new Map<string, unknown>();
  const redactors: unknown[] = [];
  const flagValues: Record<string, string | boolean> = {};
  const unsupported = (what: string) => () => {
    throw new Error(`fake pi: ${what} is not supported here`);
  };
  const pi = {
    cwd: process.cwd(),
    on: (name: string, handler: Registration["handler"], options?: Registration["options"]) => {
      registrations.push({ name, handler, ...(options ? { options } : {}) });
    },
    registerFlag: (name: string, def: unknown) => flags.set(name, def),
    registerRedactor: (redact: unknown) => redactors.push(redact),
    getFlag: (name: string) => flagValues[name],
    events: {
      emit: (channel: string, data?: unknown) => {
        for (const l of bus.get(channel) ?? []) l(data);
      },
      on: (channel: string, handler: (data: unknown) => void) => {
        bus.set(channel, [...(bus.get(channel) ?? []), handler]);
        return () => {};
      },
    },
    registerTool: unsupported("registerTool"),
    unregisterTool: unsupported("unregisterTool"),
    registerCommand: unsupported("registerCommand"),
    getCommands: () => [],
    sendMessage: unsupported("sendMessage"),
    sendUserMessage: unsupported("sendUserMessage"),
    appendEntry: unsupported("appendEntry"),
    exec: unsupported("exec"),
    getActiveTools: () => [],
    getAllTools: () => [],
    setActiveTools: unsupported("setActiveTools"),
    setSessionName: unsupported("setSessionName"),
    getSessionName: () => undefined,
    getSettings: () => structuredClone(settings),
  } as unknown as ExtensionAPI;
  await factory(pi);
  return {
    pi,
    registrations,
    flags,
    redactors,
    flagValues,
    bus,
    async call(name, event, ctx) {
      const found = registrations.filter((r) => r.name === name);
      if (found.length !== 1) throw new Error(`expected one handler for ${name}, found ${found.length}`);
      return found[0]!.handler({ type: name, ...event }, fakeCtx(ctx));
    },
  };
}
