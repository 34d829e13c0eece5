// Prompts as slash commands: the argument mapping and message conversion as pure functions, and
// the commands of fixtures/rich.mjs run against the real server.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub } from "./hub.ts";
import {
  listPrompts,
  mapArguments,
  promptCommandName,
  promptContent,
  registerPrompts,
  type McpPromptInfo,
} from "./prompts.ts";
import { startHub, stdioServer } from "./fixtures/harness.ts";

const RICH = fileURLToPath(new URL("./fixtures/rich.mjs", import.meta.url));
const review: McpPromptInfo = {
  name: "review",
  arguments: [
    { name: "file", required: true },
    { name: "focus", required: false },
  ],
};

describe("mapArguments", () => {
  it("fills the prompt's arguments in order, by name=value, and with quoted words", () => {
    expect(mapArguments(review, "a.ts security")).toEqual({ ok: true, args: { file: "a.ts", focus: "security" } });
    expect(mapArguments(review, "focus=speed a.ts")).toEqual({ ok: true, args: { focus: "speed", file: "a.ts" } });
    expect(mapArguments(review, `"my file.ts" focus="error handling"`)).toEqual({
      ok: true,
      args: { file: "my file.ts", focus: "error handling" },
    });
    // A quoted word, or a name the prompt does not have, is a value in order.
    expect(mapArguments(review, `"focus=x" other=y`)).toEqual({
      ok: true,
      args: { file: "focus=x", focus: "other=y" },
    });
    expect(mapArguments(review, "a\\ b.ts")).toEqual({ ok: true, args: { file: "a b.ts" } });
  });

  it("says what is missing, what is too much, and an open quote", () => {
    expect(mapArguments(review, "focus=speed")).toEqual({ ok: false, message: "missing file" });
    expect(mapArguments(review, "a b c")).toEqual({
      ok: false,
      message: "too many arguments: 3 given in order, but only file, focus are left to fill",
    });
    expect(mapArguments(review, `"a.ts`)).toEqual({ ok: false, message: 'a quote (") is not closed' });
  });
});

describe("promptCommandName and promptContent", () => {
  it("names the command server:prompt with the characters a command name may hold", () => {
    expect([
      promptCommandName("ev", "args-prompt"),
      promptCommandName("my srv", "do it!"),
      promptCommandName("_x", "p"),
    ]).toEqual(["ev:args-prompt", "my_srv:do_it_", "mcp_x:p"]);
  });

  it("turns one message into its content, and several into a conversation headed by roles", () => {
    expect(promptContent("s", "p", { messages: [{ role: "user", content: { type: "text", text: "Hi." } }] })).toEqual([
      { type: "text", text: "Hi." },
    ]);
    expect(
      promptContent("s", "p", {
        messages: [
          { role: "user", content: { type: "text", text: "Look:" } },
          { role: "user", content: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } },
          { role: "assistant", content: { type: "text", text: "Seen." } },
        ],
      }),
    ).toEqual([
      { type: "text", text: "[user]\n\nLook:\n\n[user]" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "[assistant]\n\nSeen." },
    ]);
  });
});

describe("the commands of a real server", () => {
  let main: { hub: McpHub };
  const sent: unknown[] = [];
  const notes: [string, string | undefined][] = [];
  const commands = new Map<string, { description?: string; handler: (args: string, ctx: never) => unknown }>();
  const logged: string[] = [];
  const ctx = {
    hasUI: true,
    signal: new AbortController().signal,
    ui: { notify: (m: string, t?: string) => void notes.push([m, t]) },
  } as never;

  beforeAll(async () => {
    main = await startHub([{ ...stdioServer("rx"), args: [RICH] }]);
    const server = main.hub.server("rx")!;
    const { prompts } = await listPrompts(server);
    const pi = {
      registerCommand: (name: string, c: never) => void commands.set(name, c),
      sendUserMessage: (content: unknown) => void sent.push(content),
    };
    expect(
      registerPrompts({
        pi,
        server,
        prompts,
        lookup: () => main.hub.server("rx"),
        log: (line) => void logged.push(line),
      }),
    ).toEqual({ commands: ["rx:plain", "rx:review"], problems: [] });
  });
  afterAll(() => main?.hub.close());

  it("describes each command with its usage", () => {
    expect([...commands].map(([name, c]) => [name, c.description])).toEqual([
      ["rx:plain", "A prompt without arguments"],
      ["rx:review", "Review a file — /rx:review file [focus]"],
    ]);
  });

  it("sends the server's prompt as the user's message, with the arguments filled in", async () => {
    await commands.get("rx:review")!.handler("README.md focus=tone", ctx);
    await commands.get("rx:plain")!.handler("", ctx);
    expect(sent).toEqual([
      [
        {
          type: "text",
          text: "[user]\n\nReview README.md for tone.\n\n[assistant]\n\nI will.\n\n[user]\n\nResource demo://greeting/README.md:\ncontents of README.md",
        },
      ],
      [{ type: "text", text: "Say hello." }],
    ]);
  });

  it("answers a wrong call with its usage and sends nothing", async () => {
    const before = sent.length;
    await commands.get("rx:review")!.handler("", ctx);
    expect(notes.at(-1)).toEqual([
      "/rx:review: missing file. Usage: /rx:review file [focus] (in order, or name=value)",
      "error",
    ]);
    expect(sent.length).toBe(before);
    // Without a UI (print and JSON modes) the complaint goes to the log: stderr.
    await commands.get("rx:review")!.handler("a b c", { ...(ctx as object), hasUI: false } as never);
    expect(logged).toEqual([
      "mypi: /rx:review: too many arguments: 3 given in order, but only file, focus are left to fill. Usage: /rx:review file [focus] (in order, or name=value)",
    ]);
  });
});
