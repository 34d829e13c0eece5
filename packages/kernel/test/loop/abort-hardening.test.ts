/**
 * Issue 19, items 7 and 9 in the kernel: a tool that never settles ends at the default tool
 * timeout; a tool that aborts the run from inside its own `execute` does not hang it; what a call
 * returned during the abort grace is vetted by `tool_result` and kept; messages queued for an
 * aborted run are handed back in its `agent_end` instead of reaching the model later.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  createScriptedModel,
  DEFAULT_TOOL_TIMEOUT_MS,
  defineTool,
  INTERRUPTED_TEXT,
  type AgentEndEvent,
  type ModelClient,
  type ScriptedTurn,
  type StreamEvent,
  type ToolResultMessage,
} from "../../src/index.ts";
import { agentFactory, gate } from "./helpers.ts";

const { agentWith } = agentFactory({});

const never = defineTool({
  name: "never",
  description: "never answers",
  parameters: z.strictObject({}),
  execute: () => new Promise<string>(() => {}),
});

function resultsOf(end: AgentEndEvent): ToolResultMessage[] {
  return end.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
}

function textOf(message: ToolResultMessage): string {
  return message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

describe("default tool timeout", () => {
  test("is ten minutes unless the Agent is told otherwise", () => {
    expect(DEFAULT_TOOL_TIMEOUT_MS).toBe(600_000);
  });

  test("a tool whose execute never settles ends with a timed-out error result, and the run goes on", async () => {
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "never" }] }, { text: "went on" }] },
      { tools: [never], toolTimeoutMs: 30 },
    );
    const end = await agent.prompt("go");
    expect(end.stopReason).toBe("completed");
    expect(end.finalText).toBe("went on");
    const [only] = resultsOf(end);
    expect(only!.isError).toBe(true);
    expect(textOf(only!)).toBe(
      'Tool "never" timed out after 30 ms and was stopped. Try a smaller task, or a longer timeout if the tool takes one.',
    );
  });

  test("a tool's own timeoutMs wins over the default, and Infinity opts a tool out of it", async () => {
    let signalOf: AbortSignal | undefined;
    const own = defineTool({
      name: "own",
      description: "o",
      parameters: z.strictObject({}),
      timeoutMs: Infinity,
      execute: (_a, { signal }) => {
        signalOf = signal;
        return new Promise<string>((resolve) => setImmediate(() => setImmediate(() => resolve("done"))));
      },
    });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "own" }] }, { text: "ok" }] },
      { tools: [own], toolTimeoutMs: 1 },
    );
    const end = await agent.prompt("go");
    expect(textOf(resultsOf(end)[0]!)).toBe("done");
    expect(signalOf?.aborted).toBe(false);
  });
});

describe("a tool that aborts the run from inside its execute", () => {
  test("does not hang the run: the call is answered interrupted after the grace, one agent_end aborted", async () => {
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "quitter" }] }, { text: "never" }] },
      {
        // no default timeout: only the abort may end this call
        toolTimeoutMs: 0,
        abortGraceMs: 10,
        tools: [
          defineTool({
            name: "quitter",
            description: "q",
            parameters: z.strictObject({}),
            execute: () => {
              agent.abort();
              return new Promise<string>(() => {});
            },
          }),
        ],
      },
    );
    const ends: string[] = [];
    agent.subscribe((e) => void (e.type === "agent_end" && ends.push((e as AgentEndEvent).stopReason)));
    const end = await agent.prompt("go");
    expect(end.stopReason).toBe("aborted");
    expect(textOf(resultsOf(end)[0]!)).toBe(INTERRUPTED_TEXT);
    expect(ends).toEqual(["aborted"]);
  });
});

describe("a result returned during the abort grace", () => {
  test("is vetted by the tool_result slot (a redaction) and kept, not replaced by 'interrupted'", async () => {
    const started = gate();
    const slow = defineTool({
      name: "slow",
      description: "s",
      parameters: z.strictObject({}),
      execute: (_a, { signal }) =>
        new Promise<string>((resolve) => {
          started.open();
          signal.addEventListener(
            "abort",
            () => setImmediate(() => resolve("partial output with SECRET-123\n\nCommand aborted")),
            { once: true },
          );
        }),
    });
    const seen: boolean[] = [];
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "slow" }] }, { text: "never" }] },
      {
        tools: [slow],
        slots: {
          // An asynchronous redaction: it must still be waited for after the abort.
          tool_result: async (event, ctx) => {
            seen.push(ctx.signal.aborted);
            await new Promise((r) => setImmediate(r));
            const text = (event.content as { text: string }[]).map((b) => b.text).join("");
            return { content: [{ type: "text", text: text.replace(/SECRET-\d+/g, "[redacted]") }] };
          },
        },
      },
    );
    const run = agent.prompt("go");
    await started.promise;
    agent.abort();
    const end = await run;
    expect(end.stopReason).toBe("aborted");
    expect(seen).toEqual([true]);
    expect(textOf(resultsOf(end)[0]!)).toBe("partial output with [redacted]\n\nCommand aborted");
  });

  test("is withheld as interrupted when the tool_result slot does not answer within the grace", async () => {
    const started = gate();
    const slow = defineTool({
      name: "slow",
      description: "s",
      parameters: z.strictObject({}),
      execute: (_a, { signal }) =>
        new Promise<string>((resolve) => {
          started.open();
          signal.addEventListener("abort", () => resolve("SECRET-123"), { once: true });
        }),
    });
    const agent = agentWith(
      { turns: [{ toolCalls: [{ name: "slow" }] }, { text: "never" }] },
      {
        tools: [slow],
        abortGraceMs: 20,
        slots: { tool_result: () => new Promise(() => {}) },
      },
    );
    const run = agent.prompt("go");
    await started.promise;
    agent.abort();
    const end = await run;
    expect(textOf(resultsOf(end)[0]!)).toBe(INTERRUPTED_TEXT);
  });
});

describe("steering and follow-ups queued for a run that is then aborted", () => {
  /** The scripted model, recording the user texts of every request. */
  function recording(turns: ScriptedTurn[]) {
    const requests: string[][] = [];
    const scripted = createScriptedModel({ turns });
    const model: ModelClient = {
      id: scripted.id,
      stream(request, signal) {
        requests.push(
          request.messages.flatMap((m) =>
            m.role === "user"
              ? [
                  typeof m.content === "string"
                    ? m.content
                    : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
                ]
              : [],
          ),
        );
        return scripted.stream(request, signal);
      },
    };
    return { model, requests };
  }
  const assistantStarts = (e: StreamEvent) =>
    e.type === "message_start" && (e as { message: { role: string } }).message.role === "assistant";

  test("are dropped from the queue, listed as unsent in agent_end, and never reach the model after the next prompt", async () => {
    const { model, requests } = recording([{ text: "never", delayMs: 600_000 }, { text: "second answer" }]);
    const agent = agentWith(model);
    const stop = agent.subscribe((e) => {
      if (!assistantStarts(e)) return;
      stop();
      agent.steer("steer me");
      agent.followUp("and then this");
      agent.abort();
    });
    const end = await agent.prompt("first");
    expect(end.stopReason).toBe("aborted");
    expect(end.unsent).toEqual([
      { text: "steer me", source: "api" },
      { text: "and then this", source: "api" },
    ]);
    expect(agent.pendingMessageCount).toBe(0);
    const second = await agent.prompt("second");
    expect(second.stopReason).toBe("completed");
    expect(second.unsent).toBeUndefined();
    expect(requests.at(-1)).toEqual(["first", "second"]);
  });

  test("a run that completes delivers its follow-up as before and has no unsent", async () => {
    const { model, requests } = recording([{ text: "a" }, { text: "b" }]);
    const agent = agentWith(model);
    let queued = false;
    agent.subscribe((e) => {
      if (assistantStarts(e) && !queued) {
        queued = true;
        agent.followUp("later");
      }
    });
    const end = await agent.prompt("first");
    expect(end.unsent).toBeUndefined();
    expect(end.finalText).toBe("b");
    expect(requests.at(-1)).toEqual(["first", "later"]);
  });
});
