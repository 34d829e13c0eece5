/**
 * What Pi 0.73 examples read as undefined before, through the real `mypi` process: the module
 * helpers (`withFileMutationQueue`, `parseFrontmatter`, `convertToLlm`, `serializeConversation`),
 * `getCommands()` entries' `sourceInfo`, and `before_agent_start`'s `systemPromptOptions`. Each
 * extension is written from Pi's documentation and writes what it saw to a log file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../helpers/mypi.ts";

const sandbox = createSandbox("mypi-pi-modules-");
afterAll(() => sandbox.cleanup());

const logOf = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("Pi's module helpers", () => {
  it("withFileMutationQueue, parseFrontmatter, convertToLlm and serializeConversation work from @earendil-works/pi-coding-agent", async () => {
    const log = sandbox.file("helpers.log", "");
    const target = sandbox.file("counter.txt", "0");
    const ext = sandbox.file(
      "helpers.ts",
      `
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { convertToLlm, parseFrontmatter, serializeConversation, withFileMutationQueue } from "@earendil-works/pi-coding-agent";
const out = (v) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(v) + "\\n");
export default function (pi) {
  pi.on("session_start", async () => {
    // Ten read-change-write cycles at once: the queue runs them one after another.
    const bump = () => withFileMutationQueue(${JSON.stringify(target)}, async () => {
      const n = Number(readFileSync(${JSON.stringify(target)}, "utf8"));
      await new Promise((r) => setImmediate(r));
      writeFileSync(${JSON.stringify(target)}, String(n + 1));
      return n;
    });
    const seen = await Promise.all(Array.from({ length: 10 }, bump));
    out({ seen, final: readFileSync(${JSON.stringify(target)}, "utf8") });
    out(parseFrontmatter("---\\nname: scout\\ntools: [read]\\n---\\nLook around."));
    const llm = convertToLlm([
      { role: "user", content: "hi", timestamp: 1 },
      { role: "custom", customType: "note", content: "remember this", display: true, timestamp: 2 },
      { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop", usage: { input: 0, output: 0 }, model: "m", timestamp: 3 },
    ]);
    out(llm.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content.map((c) => c.text).join("")]));
    out(serializeConversation(llm));
  });
}
`,
    );
    const r = await sandbox.run([
      "-e",
      ext,
      "--no-session",
      "--model",
      `scripted:${sandbox.script([{ text: "ok" }])}`,
      "-p",
      "hi",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(logOf(log)).toEqual([
      { seen: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], final: "10" },
      { frontmatter: { name: "scout", tools: ["read"] }, body: "Look around." },
      [
        ["user", "hi"],
        ["user", "remember this"],
        ["assistant", "ok"],
      ],
      "[User]: hi\n\n[User]: remember this\n\n[Assistant]: ok",
    ]);
  });
});

describe("Pi 1.x metadata", () => {
  it("getCommands() entries carry sourceInfo and before_agent_start carries systemPromptOptions with the active Pi tools", async () => {
    const log = sandbox.file("meta.log", "");
    const ext = sandbox.file(
      "meta.ts",
      `
import { appendFileSync } from "node:fs";
const out = (v) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(v) + "\\n");
export default function (pi) {
  pi.registerCommand("stats", { description: "Show stats", handler: async () => {} });
  pi.registerTool({
    name: "lookup", label: "Lookup", description: "Look a word up",
    promptSnippet: "Look words up", promptGuidelines: ["Use lookup for unknown words"],
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "found" }] }; },
  });
  pi.on("session_start", () => out(pi.getCommands().map((c) => [c.name, c.source, c.sourceInfo])));
  pi.on("before_agent_start", (event) => {
    const o = event.systemPromptOptions;
    out({ messageType: event.messageType, cwd: o.cwd, lookup: o.selectedTools.includes("lookup"), read: o.selectedTools.includes("read"), snippets: o.toolSnippets, guidelines: o.toolGuidelines, skills: o.skills, contextFiles: o.contextFiles });
  });
}
`,
    );
    const r = await sandbox.run([
      "-e",
      ext,
      "--no-session",
      "--model",
      `scripted:${sandbox.script([{ text: "ok" }])}`,
      "-p",
      "hi",
    ]);
    expect(r.code).toBe(0);
    expect(logOf(log)).toEqual([
      [
        ["agents", "extension", expect.objectContaining({ source: "local" })],
        ["stats", "extension", { path: ext, source: "local", scope: "temporary", origin: "top-level" }],
      ],
      {
        messageType: "user",
        cwd: sandbox.ws,
        lookup: true,
        read: true,
        snippets: { lookup: "Look words up" },
        guidelines: { lookup: ["Use lookup for unknown words"] },
        skills: [],
        contextFiles: [],
      },
    ]);
  });

  it("an extension in the workspace's .mypi/extensions is a project source", async () => {
    const log = join(sandbox.root, "project.log");
    const ws = join(sandbox.root, "project-ws");
    const ext = sandbox.file(
      join(ws, ".mypi", "extensions", "cmds.ts"),
      `
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("here", { handler: async () => {} });
  pi.on("session_start", () => appendFileSync(${JSON.stringify(log)}, JSON.stringify(pi.getCommands().map((c) => c.sourceInfo.scope)) + "\\n"));
}
`,
    );
    const r = await sandbox.run(
      ["--trust-project", "--no-session", "--model", `scripted:${sandbox.script([{ text: "ok" }])}`, "-p", "hi"],
      { cwd: ws },
    );
    expect(r.code).toBe(0);
    expect(ext.startsWith(ws)).toBe(true);
    expect(logOf(log)).toEqual([["temporary", "project"]]); // the shipped subagents extension's /agents, then the workspace's
  });
});
