/**
 * RPC input a client gets wrong, generated (property tests): whatever lines arrive — JSON of any
 * shape, commands with fields of the wrong types, text that is no JSON, lines nested deep — every
 * line is answered exactly once with a response to it, nothing else is written for it (no run
 * starts from a refused prompt), and the mode answers the next good command and exits 0.
 */
import fc from "fast-check";
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { Agent, createScriptedModel } from "@mypi/kernel";
import type { ExtensionHostEvent } from "@mypi/extension-api";
import { inertSessionMoves } from "./helpers/session-stubs.ts";
import { createRpcUI } from "../src/modes/rpc-ui.ts";
import { runRpcMode, type RpcTarget } from "../src/modes/rpc.ts";
import { piModelOf } from "../src/modes/rpc/model.ts";
import type { JsonObject } from "../../../test/helpers/json.ts";

type Line = JsonObject;

/** Commands that change nothing and start no run, so every line has exactly one answer. */
const QUIET = [
  "get_state",
  "get_messages",
  "get_commands",
  "get_fork_messages",
  "get_last_assistant_text",
  "steer",
  "follow_up",
  "set_session_name",
  "prompt",
];

const field = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined));
const command = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
    type: fc.oneof(
      fc.constantFrom(...QUIET, "response", "bogus", "__proto__", "constructor"),
      fc.string({ maxLength: 6 }),
    ),
    message: field,
    images: field,
    name: field,
    streamingBehavior: field,
  },
  { requiredKeys: ["id", "type"] },
);
const line = fc.oneof(
  command.map((c) => JSON.stringify(c)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 20 }).filter((s) => !s.includes("\n") && s.trim() !== ""),
  fc
    .integer({ min: 257, max: 2000 })
    .map((d) => `{"id":"deep","type":"get_state","x":${"[".repeat(d)}${"]".repeat(d)}}`),
);

async function drive(lines: string[]): Promise<Line[]> {
  const out: Line[] = [];
  let rest = "";
  const stdout = new Writable({
    write(chunk, _enc, done) {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const p of parts) out.push(JSON.parse(p) as Line);
      done();
    },
  });
  // A prompt that gets through would run this: a run is fine, but it must not happen here.
  const agent = new Agent<ExtensionHostEvent>({ model: createScriptedModel({ turns: [] }) });
  const ui = createRpcUI((l) => stdout.write(`${JSON.stringify(l)}\n`));
  const target: RpcTarget = {
    agent,
    ui,
    subscribe: (listener) => agent.subscribe(listener),
    state: () => ({
      model: "m",
      isStreaming: agent.isRunning,
      sessionFile: undefined,
      sessionId: "s",
      sessionName: undefined,
      messageCount: 0,
      pendingMessageCount: 0,
    }),
    commands: () => [],
    runCommand: async () => ({ ran: false }),
    reload: async () => ({ loaded: [], failed: [] }),
    newSession: async () => ({ cancelled: false }),
    compact: async () => ({ status: "skipped" }),
    setUI: () => {},
    start: async () => {},
    setSessionName: () => {},
    fork: async () => ({ cancelled: true }),
    forkMessages: () => [],
    modelInfo: () => piModelOf(agent.model.id, { contextWindow: 128_000 }),
    ...inertSessionMoves(),
  };
  const stdin = new PassThrough();
  const done = runRpcMode(target, { stdin, stdout });
  stdin.end([...lines, JSON.stringify({ id: "last", type: "get_state" })].join("\n") + "\n");
  expect(await done).toBe(0);
  return out;
}

describe("RPC input, fuzzed", () => {
  it("answers every line once, in order, and the next good command", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 15 }), async (lines) => {
        // A valid prompt starts a run (its events follow): leave those lines out of the count.
        const isRun = (l: string) => {
          try {
            const c = JSON.parse(l);
            // An empty `images` list is a valid one (nothing random makes a valid image).
            return (
              c?.type === "prompt" &&
              typeof c.message === "string" &&
              (c.images === undefined || (Array.isArray(c.images) && c.images.length === 0))
            );
          } catch {
            return false;
          }
        };
        const quiet = lines.filter(
          (l) => !isRun(l) && !l.includes('"extension_ui_response"') && !/"type":"abort"/.test(l),
        );
        const written = await drive(quiet);
        expect(written.filter((l) => l.type === "agent_start")).toEqual([]); // no refused prompt ran
        const out = written.filter((l) => l.type === "response");
        expect(out).toHaveLength(quiet.length + 1);
        expect(out.at(-1)).toMatchObject({ id: "last", command: "get_state", success: true });
        for (const [i, source] of quiet.entries()) {
          let sent: unknown;
          try {
            sent = JSON.parse(source);
          } catch {
            sent = undefined;
          }
          const isCommand =
            sent !== null &&
            typeof sent === "object" &&
            !Array.isArray(sent) &&
            typeof (sent as { type?: unknown }).type === "string";
          expect(out[i]!.command).toBe(isCommand ? (sent as { type: string }).type : "parse");
          expect(out[i]!.success === false || isCommand).toBe(true);
        }
      }),
      // A fixed seed, so the run is the same every time: this one draws a prompt with `images: []`.
      { numRuns: 120, seed: -2035900896 },
    );
  });
});
