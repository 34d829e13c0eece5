/**
 * `createHostSession` from `@mypi/extension-api/host`, as an SDK program uses it: the host is
 * replaced at `/new`, what was subscribed carries over, and what it cannot do it says.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  it("replaces the host at newSession, keeps its subscribers, and lists its workspace's sessions with the kernel's listSessions unless given its own", async () => {
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
    const listing = createHostSession(await hostOver(), hostOver, { listSessions: () => [] });
    expect(listing.listSessions()).toEqual([]);
    await hs.host.shutdown();
    await listing.host.shutdown();
  });

  it("lists the session files of the workspace in the default folder when given no listSessions", async () => {
    const home = mkdtempSync(join(tmpdir(), "mypi-home-"));
    const cwd = mkdtempSync(join(tmpdir(), "mypi-cwd-"));
    const before = process.env.MYPI_HOME;
    process.env.MYPI_HOME = home;
    try {
      const onDisk = async (session = SessionManager.create({ cwd })) =>
        createExtensionHost({ manager: new ExtensionManager({ cwd }), model, session });
      const hs = createHostSession(await onDisk(), onDisk);
      await hs.start();
      await hs.agent.prompt("remember me");
      const listed = hs.listSessions();
      expect(listed.map((s) => [s.file, s.firstPrompt])).toEqual([[hs.host.session.file, "remember me"]]);
      await hs.host.shutdown();
    } finally {
      if (before === undefined) delete process.env.MYPI_HOME;
      else process.env.MYPI_HOME = before;
      rmSync(home, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
