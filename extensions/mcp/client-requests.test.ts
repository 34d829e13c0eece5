// Requests in the client's direction, against a real SDK server (fixtures/asking.mjs) whose
// tools ask mypi something back and answer with what mypi said.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { CompleteRequest, CompleteResult, ExtensionUI } from "@mypi/extension-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAnswer, type FormSchema } from "./elicitation.ts";
import { McpHub } from "./hub.ts";
import { ASKING_SCRIPT, fakeHost, stdioServer, type FakeHost } from "./fixtures/harness.ts";

const workspace = mkdtempSync(join(tmpdir(), "mypi-mcp-ws-"));
let host: FakeHost;
let hub: McpHub;
let ui: ExtensionUI | undefined;
/** What `pi.complete` does in this file; each test sets its own. */
let complete: (request: CompleteRequest) => Promise<CompleteResult> = () =>
  Promise.reject(new Error("no model in this test"));
const reports: string[] = [];

/** A UI that answers from a list, in order, and records every dialog it was shown. */
function scriptedUi(answers: unknown[]): { ui: ExtensionUI; shown: string[] } {
  const shown: string[] = [];
  const next = (what: string) => {
    shown.push(what);
    if (answers.length === 0) throw new Error(`no scripted answer left for ${what}`);
    return Promise.resolve(answers.shift());
  };
  return {
    shown,
    ui: {
      select: (title, options) => next(`select ${title} [${options.join(" | ")}]`) as Promise<string | undefined>,
      confirm: (title, message) => next(`confirm ${title}: ${message}`) as Promise<boolean>,
      input: (title, placeholder) => next(`input ${title} <${placeholder ?? ""}>`) as Promise<string | undefined>,
      editor: (title) => next(`editor ${title}`) as Promise<string | undefined>,
      notify: (message) => void shown.push(`notify ${message}`),
    },
  };
}

beforeAll(async () => {
  host = fakeHost();
  hub = new McpHub({
    pi: host.pi,
    servers: [
      stdioServer("ask", { script: ASKING_SCRIPT }),
      stdioServer("samp", { script: ASKING_SCRIPT, sampling: true }),
      stdioServer("careful", { script: ASKING_SCRIPT, sampling: "ask" }),
    ],
    client: {
      cwd: workspace,
      ui: () => ui,
      report: (line) => reports.push(line),
      complete: (request) => complete(request),
    },
  });
  await hub.start();
});

afterAll(async () => {
  await hub?.close();
  rmSync(workspace, { recursive: true, force: true });
});

const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

describe("roots", () => {
  it("reports the workspace as the one root, a file:// URI named after its folder", async () => {
    const result = await host.call("ask__roots", {});
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual({
      roots: [{ uri: pathToFileURL(workspace).href, name: workspace.split("/").pop() }],
    });
  });
});

const FORM: FormSchema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Your name", minLength: 2 },
    age: { type: "integer", minimum: 18, maximum: 130 },
    tea: { type: "boolean", title: "Tea?" },
    size: {
      type: "string",
      oneOf: [
        { const: "s", title: "Small" },
        { const: "l", title: "Large" },
      ],
    },
    toppings: { type: "array", items: { type: "string", enum: ["milk", "sugar"] } },
    email: { type: "string", format: "email", description: "for the receipt" },
  },
  required: ["name", "age", "size"],
};

const ask = (schema: FormSchema, message = "Order a drink") =>
  host.call("ask__ask", { message, schema: JSON.stringify(schema) });

describe("elicitation", () => {
  it("asks field by field through the UI and sends the typed answer", async () => {
    const scripted = scriptedUi(["Answer", "Ada", "36", true, "Large", "milk, sugar", ""]);
    ui = scripted.ui;
    const result = await ask(FORM);
    expect(JSON.parse(text(result))).toEqual({
      action: "accept",
      content: { name: "Ada", age: 36, tea: true, size: "l", toppings: ["milk", "sugar"] },
    });
    expect(scripted.shown).toEqual([
      'select MCP server "ask" asks: Order a drink (Your name, age, Tea?, size, toppings, email) [Answer | Decline]',
      "input Your name <>",
      "input age <a whole number>",
      'confirm MCP server "ask": Tea? (optional)',
      "select size [Small | Large]",
      "input toppings (optional) <comma-separated, from: milk, sugar>",
      "input email (optional) — for the receipt <an email>",
    ]);
  });

  it("asks again, saying what was wrong, until an answer fits the field", async () => {
    const scripted = scriptedUi(["Answer", "A", "Ada", "old", "12", "36", "Small"]);
    ui = scripted.ui;
    const schema: FormSchema = {
      type: "object",
      properties: { name: FORM.properties.name!, age: FORM.properties.age!, size: FORM.properties.size! },
      required: ["name", "age", "size"],
    };
    const result = await ask(schema);
    expect(JSON.parse(text(result))).toEqual({ action: "accept", content: { name: "Ada", age: 36, size: "s" } });
    expect(scripted.shown.filter((s) => s.startsWith("input"))).toEqual([
      "input Your name <>",
      "input Your name (needs at least 2 characters; try again) <>",
      "input age <a whole number>",
      'input age ("old" is not a number; try again) <a whole number>',
      "input age (12 is below the minimum 18; try again) <a whole number>",
    ]);
  });

  it("cancels the form after three answers that do not fit, and tells the user", async () => {
    const scripted = scriptedUi(["Answer", "x", "y", "z"]);
    ui = scripted.ui;
    const result = await ask({
      type: "object",
      properties: { email: { type: "string", format: "email" } },
      required: ["email"],
    });
    expect(JSON.parse(text(result))).toEqual({ action: "cancel" });
    expect(scripted.shown.at(-1)).toBe(
      'notify mcp: the form of server "ask" was cancelled: 3 answers to "email" did not fit.',
    );
  });

  it("declines when the user chooses Decline, and cancels when a dialog is dismissed", async () => {
    ui = scriptedUi(["Decline"]).ui;
    expect(JSON.parse(text(await ask(FORM)))).toEqual({ action: "decline" });
    ui = scriptedUi(["Answer", undefined]).ui;
    expect(JSON.parse(text(await ask(FORM)))).toEqual({ action: "cancel" });
  });

  it("declines without a UI, with the reason for the server and a line for the user", async () => {
    ui = undefined;
    reports.length = 0;
    const result = await ask(FORM, "Who are you?");
    expect(JSON.parse(text(result))).toEqual({
      action: "decline",
      _meta: { "mypi/reason": "mypi runs without a user interface (print or JSON mode), so nobody can answer" },
    });
    expect(reports).toEqual([
      'server "ask" asked the user: "Who are you?"; declined: mypi runs without a user interface (print or JSON mode), so nobody can answer.',
    ]);
  });

  it("checks a whole answer against the requested schema", () => {
    expect(checkAnswer(FORM, { name: "Ada", age: 36, size: "l" })).toEqual([]);
    expect(
      checkAnswer(FORM, { name: 7, age: 36.5, size: "xl", tea: "yes", toppings: ["cream"], email: "nobody", extra: 1 }),
    ).toEqual([
      '"name" must be text',
      '"age" 36.5 is not a whole number',
      '"size" "xl" is not one of Small, Large',
      '"tea" must be true or false',
      '"toppings" "cream" is not one of the choices',
      '"email" "nobody" is not an email address',
      '"extra" is not a field of the form',
    ]);
    expect(checkAnswer(FORM, {})).toEqual(['"name" is required', '"age" is required', '"size" is required']);
  });
});

describe("sampling", () => {
  const answer = (text: string, stopReason: "stop" | "length" = "stop"): CompleteResult => ({
    ok: true,
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      stopReason,
      usage: { input: 1, output: 1 },
      model: "scripted:test",
      timestamp: 1,
    },
  });

  it("completes through the host for a server whose entry allows it, its content attributed to <server>__sampling", async () => {
    const requests: CompleteRequest[] = [];
    complete = async (request) => (requests.push(request), answer("Bonjour."));
    const result = await host.call("samp__sample", { prompt: "Say hello in French", system: "Be brief." });
    expect(JSON.parse(text(result))).toEqual({
      role: "assistant",
      content: { type: "text", text: "Bonjour." },
      model: "scripted:test",
      stopReason: "endTurn",
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      systemPrompt: "Be brief.",
      maxTokens: 100,
      from: "samp__sampling",
      messages: [{ role: "user", content: [{ type: "text", text: "Say hello in French" }] }],
    });
  });

  it("says maxTokens when the model stopped at the limit", async () => {
    complete = async () => answer("Bon", "length");
    expect(JSON.parse(text(await host.call("samp__sample", { prompt: "hello" }))).stopReason).toBe("maxTokens");
  });

  it("passes the host's refusal on to the server as an error", async () => {
    complete = async () => ({ ok: false, error: "a tool_result policy refused message 1: no" });
    const result = await host.call("samp__sample", { prompt: "hello" });
    expect(text(result)).toBe(
      "error: MCP error -1: mypi could not complete the sampling request: a tool_result policy refused message 1: no",
    );
  });

  it('asks the user first when the entry says "sampling": "ask", and refuses without a yes or without a UI', async () => {
    let called = 0;
    complete = async () => (called++, answer("Bonjour."));
    const yes = scriptedUi([true]);
    ui = yes.ui;
    expect(JSON.parse(text(await host.call("careful__sample", { prompt: "Say hello in French" }))).content.text).toBe(
      "Bonjour.",
    );
    expect(yes.shown).toEqual([
      'confirm MCP server "careful" asks the model to answer (up to 100 tokens): Say hello in French',
    ]);
    ui = scriptedUi([false]).ui;
    expect(text(await host.call("careful__sample", { prompt: "again" }))).toBe(
      "error: MCP error -1: the user declined the sampling request",
    );
    ui = undefined;
    expect(text(await host.call("careful__sample", { prompt: "again" }))).toBe(
      'error: MCP error -1: the entry of MCP server "careful" says "sampling": "ask", and mypi runs without a user interface (print or JSON mode), so nobody can approve',
    );
    expect(called).toBe(1);
  });

  it("refuses a server whose entry does not allow sampling, naming the key, and tells the user once", async () => {
    let called = 0;
    complete = async () => (called++, answer("never"));
    reports.length = 0;
    const first = await host.call("ask__sample", { prompt: "hello" });
    const second = await host.call("ask__sample", { prompt: "again" });
    expect(text(first)).toBe(
      'error: MCP error -1: mypi does not let the MCP server "ask" use its model: sampling is off for it; add "sampling": true (or "ask") to its entry in test to allow it',
    );
    expect(text(second)).toBe(text(first));
    expect(called).toBe(0);
    expect(reports).toEqual([
      'server "ask" asked to use the model (sampling); refused: sampling is off for it; add "sampling": true (or "ask") to its entry in test to allow it.',
    ]);
  });
});
