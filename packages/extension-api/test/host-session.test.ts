/**
 * `createHostSession` from `@mypi/extension-api/host`, as an SDK program uses it: the host is
 * replaced at `/new`, what was subscribed carries over, and what it cannot do it says.
 */
import { tmpdir } from "node:os";
import { createScriptedModel, SessionManager } from "@mypi/kernel";
import { describe, expect, it } from "vitest";
import { createHostSession } from "../src/host/index.ts";
import { createExtensionHost, ExtensionManager } from "../src/index.ts";

const model = createScriptedModel({ turns: [{ text: "one" }, { text: "two" }] });
async function hostOver(session = SessionManager.inMemory(tmpdir())) {
  const manager = new ExtensionManager({ cwd: tmpdir() });
  return createExtensionHost({ manager, model, session });
}

describe("createHostSession", () => {
  it("replaces the host at newSession, keeps its subscribers, and says that it lists no sessions when given no listSessions", async () => {
    const first = await hostOver();
    const hs = createHostSession(first, hostOver);
    const ends: string[] = [];
    hs.subscribe((e) => void (e.type === "agent_end" && ends.push(e.finalText ?? "")));
    await hs.start();
    await hs.agent.prompt("a");
    expect(await hs.newSession()).toEqual({ cancelled: false });
    expect(hs.host).not.toBe(first);
    await hs.agent.prompt("b");
    expect(ends).toEqual(["one", "two"]);
    expect(() => hs.listSessions()).toThrow(
      "This host lists no sessions: pass createHostSession(host, rebuild, { listSessions }) to have /resume list them.",
    );
    const listing = createHostSession(await hostOver(), hostOver, { listSessions: () => [] });
    expect(listing.listSessions()).toEqual([]);
    await hs.host.shutdown();
    await listing.host.shutdown();
  });
});
