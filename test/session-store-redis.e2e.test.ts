/**
 * The Redis session store against a real `redis-server` (docs/sessions.md#stores): a run written
 * there is read back whole by another manager (another process, another machine), survives a
 * Redis restart, and resumes; one writer at a time — a second is refused, a crashed writer's
 * lease runs out, and a writer that lost its lock cannot append after its successor.
 */
import { Redis } from "ioredis";
import { z } from "zod";
import {
  Agent,
  createScriptedModel,
  defineTool,
  RedisSessionStore,
  SessionLockedError,
  SessionManager,
  type Message,
} from "@mypi/kernel";
import { afterAll, describe, expect, it } from "vitest";
import { startDurableRedis } from "./helpers/redis-durable.ts";

const redis = await startDurableRedis();
if (!redis)
  console.warn("session-store-redis.e2e: redis-server is not on PATH (apt-get install -y redis-server); skipped");
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.stop();
});

function client(): Redis {
  const c = new Redis(redis!.url, { maxRetriesPerRequest: null });
  c.on("error", () => {});
  clients.push(c);
  return c;
}
const store = (id: string, leaseMs?: number) =>
  new RedisSessionStore({ client: client(), id, url: redis!.url, ...(leaseMs !== undefined && { leaseMs }) });
const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });

/** Checked until it holds (a state, not a time); fails after `limitMs`. */
async function until(condition: () => Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!redis)("the Redis session store", () => {
  it("holds a run another manager reads back whole, across a Redis restart, and resumes there", async () => {
    const ran: string[] = [];
    const effect = defineTool({
      name: "effect",
      description: "e",
      parameters: z.strictObject({ n: z.number() }),
      execute: ({ n }) => (ran.push(`effect ${n}`), `did ${n}`),
    });
    const session = await SessionManager.load(store("run-1"), { cwd: "/w", id: "run-1" });
    const agent = new Agent({
      model: createScriptedModel({
        turns: [{ toolCalls: [{ name: "effect", arguments: { n: 1 } }] }, { text: "one done" }],
      }),
      tools: [effect],
      session,
    });
    expect((await agent.prompt("go")).stopReason).toBe("completed");
    await agent.close(); // flushed, and its lock given up
    const raw = await client().lrange("mypi:session:run-1", 0, -1);
    expect(JSON.parse(raw[0]!)).toMatchObject({ type: "session", id: "run-1", cwd: "/w" });
    expect(raw).toHaveLength(1 + 4);

    await redis!.restart();
    const again = await SessionManager.load(store("run-1"), { cwd: "/w" });
    expect(again.loadWarnings).toEqual([]);
    expect(again.getEntries().map((e) => e.id)).toEqual(session.getEntries().map((e) => e.id));
    // A crash after the call was recorded, before its result: resumed from the store.
    again.appendMessage(user("and again"));
    again.appendMessage({
      role: "assistant",
      content: [{ type: "toolCall", id: "c9", name: "effect", arguments: { n: 2 } }],
      stopReason: "toolUse",
      usage: { input: 0, output: 0 },
      model: "m",
      timestamp: 2,
    });
    await again.close();
    const later = new Agent({
      model: createScriptedModel({ turns: [{ text: "checked" }] }),
      tools: [effect],
      session: await SessionManager.load(store("run-1"), { cwd: "/w" }),
    });
    expect(later.resumePoint()!.calls).toEqual([{ toolCallId: "c9", toolName: "effect", outcome: "interrupted" }]);
    expect((await later.resume()).finalText).toBe("checked");
    await later.close();
    expect(ran).toEqual(["effect 1"]);
  });

  it("refuses a second writer, naming the first; takes over once the first's lease ran out", async () => {
    const first = await SessionManager.load(store("busy", 400), { cwd: "/w", id: "busy" });
    await first.claim();
    first.appendMessage(user("first"));
    await first.flush();
    const second = await SessionManager.load(store("busy"), { cwd: "/w", id: "busy" });
    const refused = await second.claim().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SessionLockedError);
    expect((refused as Error).message).toMatch(
      /^Session redis:\/\/127\.0\.0\.1:\d+#mypi:session:busy is being written by another SessionManager in this process: one writer at a time\./,
    );
    // Appending without a claim is refused too: the write behind fails and every later append says why.
    second.appendMessage(user("second"));
    await expect(second.flush()).rejects.toThrow(SessionLockedError);
    expect(() => second.appendMessage(user("more"))).toThrow(SessionLockedError);

    // A writer that died renews nothing: its lease runs out and a new writer takes over. (Its lock,
    // as a process on another machine left it: a token and an owner with a 1.5 s lease.)
    const owner = JSON.stringify({ token: "", host: "elsewhere", pid: 4242, expires: Date.now() + 1500 });
    await client().set("mypi:session:crashed:lock", "their-token", "PX", 1500);
    await client().set("mypi:session:crashed:lock:owner", owner, "PX", 1500);
    const successor = await SessionManager.load(store("crashed"), { cwd: "/w", id: "crashed" });
    const early = await successor.claim().catch((e: unknown) => e);
    expect((early as Error).message).toMatch(/is being written by process 4242 on elsewhere: one writer at a time/);
    await until(
      async () =>
        await successor.claim().then(
          () => true,
          () => false,
        ),
      "the crashed writer's lease to run out",
    );
    successor.appendMessage(user("taken over"));
    await successor.close();
    await first.close();
  });

  it("a writer that lost its lock cannot append after its successor", async () => {
    const a = await SessionManager.load(store("fenced"), { cwd: "/w", id: "fenced" });
    a.appendMessage(user("a1"));
    await a.flush();
    // A's lease ran out while it was stopped (a long pause), and B took the session.
    await client().del("mypi:session:fenced:lock");
    const b = await SessionManager.load(store("fenced"), { cwd: "/w", id: "fenced" });
    await b.claim();
    b.appendMessage(user("b1"));
    await b.flush();
    a.appendMessage(user("a2 — too late"));
    await expect(a.flush()).rejects.toThrow(/Lost the lock of session redis:\/\/127\.0\.0\.1:\d+#mypi:session:fenced/);
    const read = await SessionManager.load(store("fenced"), { cwd: "/w" });
    expect(read.buildContext().map((m) => (m.content as { text: string }[])[0]!.text)).toEqual(["a1", "b1"]);
    await b.close();
  });
});
