/**
 * The HostSession's session moves over a real extension host and real session files:
 * navigate and labels in the file, forkSession into a new file, listSessions and switchSession.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager, createScriptedModel, type Message } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, type ExtensionAPI } from "@mypi/extension-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHostSession } from "@mypi/extension-api/host";
import { listSessions } from "@mypi/kernel";

let tmp: string;
let cwd: string;
let hosts: { shutdown(): Promise<void> }[] = [];
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-host-session-"));
  cwd = join(tmp, "ws");
  vi.stubEnv("MYPI_HOME", join(tmp, "home"));
});
afterEach(async () => {
  for (const h of hosts) await h.shutdown();
  hosts = [];
  vi.unstubAllEnvs();
  rmSync(tmp, { recursive: true, force: true });
});

/** Every event the extensions saw, as `name detail` lines. */
let seen: string[] = [];
/** Set to make `session_before_switch` cancel. */
let refuseSwitch = false;

function watcher(pi: ExtensionAPI): void {
  pi.on("session_start", (e) => void seen.push(`start ${e.reason}`));
  pi.on("session_tree", (e) => void seen.push(`tree ${e.oldLeafId} -> ${e.newLeafId}`));
  pi.on(
    "session_before_switch",
    (e) => (seen.push(`before_switch ${e.reason}`), refuseSwitch ? { cancel: true } : undefined),
  );
}

async function hostOver(session: SessionManager, answers = ["one", "two", "three", "four"]) {
  const manager = new ExtensionManager({ cwd });
  await manager.loadExtension(watcher, "watcher");
  const host = createExtensionHost({
    manager,
    model: createScriptedModel({ turns: answers.map((text) => ({ text })) }),
    session,
  });
  hosts.push(host);
  return host;
}

async function setup() {
  seen = [];
  refuseSwitch = false;
  const first = await hostOver(SessionManager.create({ cwd }));
  const hs = createHostSession(first, async (next) => hostOver(next ?? SessionManager.create({ cwd })), {
    listSessions,
  });
  await hs.start();
  return hs;
}

const texts = (messages: readonly Message[]) =>
  messages.map(
    (m) =>
      `${m.role}:${typeof m.content === "string" ? m.content : m.content.map((b) => ("text" in b ? b.text : b.type)).join("")}`,
  );

describe("HostSession session moves", () => {
  it("navigates to an entry: the history becomes its branch, the next prompt continues there, session_tree tells the extensions", async () => {
    const hs = await setup();
    await hs.agent.prompt("first");
    await hs.agent.prompt("second");
    const [, firstAnswer] = hs.sessionManager.getBranch();
    const oldLeaf = hs.sessionManager.getLeafId();
    await hs.navigate(firstAnswer!.id);
    expect(texts(hs.agent.messages)).toEqual(["user:first", "assistant:one"]);
    expect(seen.at(-1)).toBe(`tree ${oldLeaf} -> ${firstAnswer!.id}`);
    await hs.agent.prompt("again");
    expect(texts(hs.agent.messages)).toEqual(["user:first", "assistant:one", "user:again", "assistant:three"]);
    // Both branches stay in the one file.
    expect(
      SessionManager.open(hs.sessionManager.file!)
        .getEntries()
        .filter((e) => e.type === "message"),
    ).toHaveLength(6);
  });

  it("labels an entry and clears the label", async () => {
    const hs = await setup();
    await hs.agent.prompt("first");
    const id = hs.sessionManager.getBranch()[0]!.id;
    hs.setLabel(id, "start here");
    expect(hs.sessionManager.getLabel(id)).toBe("start here");
    hs.setLabel(id, undefined);
    expect(hs.sessionManager.getLabel(id)).toBeUndefined();
  });

  it("forks into a new session file that ends before the chosen message; the old file is unchanged", async () => {
    const hs = await setup();
    await hs.agent.prompt("first");
    await hs.agent.prompt("second");
    const oldFile = hs.sessionManager.file!;
    const before = readFileSync(oldFile, "utf8");
    const second = hs.forkMessages()[1]!;
    expect(second.text).toBe("second");
    const r = await hs.forkSession(second.entryId);
    expect(r.cancelled).toBe(false);
    expect(r.file).toBe(hs.sessionManager.file);
    expect(r.file).not.toBe(oldFile);
    expect(hs.sessionManager.getHeader().parentSession).toBe(oldFile);
    expect(texts(hs.agent.messages)).toEqual(["user:first", "assistant:one"]);
    expect(seen.slice(-2)).toEqual(["before_switch new", "start fork"]);
    await hs.agent.prompt("second, differently");
    expect(texts(SessionManager.open(r.file!).buildContext())).toEqual([
      "user:first",
      "assistant:one",
      "user:second, differently",
      "assistant:one",
    ]);
    expect(readFileSync(oldFile, "utf8")).toBe(before);
  });

  it("lists this workspace's sessions newest first, and switches to one: its history, its file", async () => {
    const hs = await setup();
    await hs.agent.prompt("the old task");
    hs.setSessionName("old one");
    const oldFile = hs.sessionManager.file!;
    await hs.newSession();
    await hs.agent.prompt("the new task");
    const newFile = hs.sessionManager.file!;
    const listed = hs.listSessions();
    expect(listed.map((s) => [s.file, s.name, s.firstPrompt, s.messageCount])).toEqual([
      [newFile, undefined, "the new task", 2],
      [oldFile, "old one", "the old task", 2],
    ]);
    expect(listed[1]!.size).toBe(readFileSync(oldFile).length);

    expect(await hs.switchSession(oldFile)).toEqual({ cancelled: false });
    expect(hs.sessionManager.file).toBe(oldFile);
    expect(texts(hs.agent.messages)).toEqual(["user:the old task", "assistant:one"]);
    expect(seen.slice(-2)).toEqual(["before_switch resume", "start resume"]);
  });

  it("keeps the session when an extension cancels the switch, and refuses a file that does not exist", async () => {
    const hs = await setup();
    await hs.agent.prompt("stay");
    const file = hs.sessionManager.file!;
    const other = SessionManager.create({ cwd });
    other.appendMessage({ role: "user", content: [{ type: "text", text: "elsewhere" }], timestamp: 1 });
    refuseSwitch = true;
    expect(await hs.switchSession(other.file!)).toEqual({ cancelled: true });
    expect(hs.sessionManager.file).toBe(file);
    await expect(hs.switchSession(join(tmp, "missing.jsonl"))).rejects.toThrow("is not a session file");
    await expect(hs.forkSession("nope")).rejects.toThrow('Unknown session entry "nope"');
    refuseSwitch = false;
    // An in-memory run (--no-session) never writes: it does not continue a file either.
    const memory = createHostSession(await hostOver(SessionManager.inMemory(cwd)), async () =>
      hostOver(SessionManager.inMemory(cwd)),
    );
    await expect(memory.switchSession(other.file!)).rejects.toThrow("keeps nothing on disk (--no-session)");
    expect(texts(hs.agent.messages)).toEqual(["user:stay", "assistant:one"]);
  });
});
