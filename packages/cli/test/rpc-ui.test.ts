import { ExtensionManager } from "@mypi/extension-api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRpcUI } from "../src/modes/rpc-ui.ts";

function ui() {
  const sent: Record<string, unknown>[] = [];
  return { sent, ui: createRpcUI((line) => sent.push(line)) };
}

afterEach(() => vi.useRealTimers());

describe("createRpcUI", () => {
  it("sends one request per dialog and decodes each kind of answer", async () => {
    const { sent, ui: rpc } = ui();
    const confirm = rpc.confirm("Sure?", "really");
    const select = rpc.select("Pick", ["a", "b"]);
    const input = rpc.input("Name", "anon");
    const editor = rpc.editor("Text", "draft");
    expect(sent).toEqual([
      { type: "extension_ui_request", id: "ui_1", method: "confirm", title: "Sure?", message: "really" },
      { type: "extension_ui_request", id: "ui_2", method: "select", title: "Pick", options: ["a", "b"] },
      { type: "extension_ui_request", id: "ui_3", method: "input", title: "Name", placeholder: "anon" },
      { type: "extension_ui_request", id: "ui_4", method: "editor", title: "Text", prefill: "draft" },
    ]);
    expect(rpc.answer({ id: "ui_1", confirmed: true })).toBe(true);
    rpc.answer({ id: "ui_2", value: "zzz" }); // not one of the options
    rpc.answer({ id: "ui_3", value: "Ann" });
    rpc.answer({ id: "ui_4", cancelled: true });
    expect(await Promise.all([confirm, select, input, editor])).toEqual([true, undefined, "Ann", undefined]);
    expect(rpc.answer({ id: "ui_1", confirmed: false })).toBe(false); // already answered
    expect(rpc.pending).toBe(0);
  });

  it("resolves to the default when the dialog's timeout passes", async () => {
    vi.useFakeTimers();
    const { sent, ui: rpc } = ui();
    const answer = rpc.confirm("Sure?", "", { timeout: 1000 });
    expect(sent[0]).toMatchObject({ method: "confirm", timeout: 1000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(rpc.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toBe(false);
    expect(rpc.pending).toBe(0);
  });

  it("keeps a dialog whose timeout is beyond what a Node timer holds (2^31 ms) open", async () => {
    vi.useFakeTimers();
    const { ui: rpc } = ui();
    const answer = rpc.confirm("Sure?", "", { timeout: 2 ** 32 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(rpc.pending).toBe(1);
    rpc.answer({ id: "ui_1", confirmed: true });
    expect(await answer).toBe(true);
  });

  it("resolves to the default when its signal aborts, and at once when already aborted", async () => {
    const { sent, ui: rpc } = ui();
    const controller = new AbortController();
    const answer = rpc.select("Pick", ["a"], { signal: controller.signal });
    controller.abort();
    expect(await answer).toBeUndefined();
    expect(await rpc.input("Name", undefined, { signal: controller.signal })).toBeUndefined();
    expect(sent).toHaveLength(1);
  });

  it("after close, open dialogs and new ones resolve to their defaults without asking", async () => {
    const { sent, ui: rpc } = ui();
    const open = rpc.confirm("Sure?", "");
    rpc.close();
    expect(await open).toBe(false);
    expect(await rpc.confirm("Again?", "")).toBe(false);
    expect(sent).toHaveLength(1);
  });

  it("sends notify without waiting for an answer", () => {
    const { sent, ui: rpc } = ui();
    rpc.notify("saved", "warning");
    expect(sent).toEqual([
      { type: "extension_ui_request", id: "ui_1", method: "notify", message: "saved", notifyType: "warning" },
    ]);
    expect(rpc.pending).toBe(0);
  });

  it("sends setStatus, and clears it when the text is undefined, with ids from the dialogs' counter", () => {
    const { sent, ui: rpc } = ui();
    void rpc.confirm("Sure?", "");
    rpc.setStatus("build", "running");
    rpc.setStatus("build", undefined);
    expect(sent.slice(1)).toStrictEqual([
      { type: "extension_ui_request", id: "ui_2", method: "setStatus", statusKey: "build", statusText: "running" },
      { type: "extension_ui_request", id: "ui_3", method: "setStatus", statusKey: "build" },
    ]);
    expect(rpc.pending).toBe(1); // only the dialog waits
  });

  it("sends a widget's lines with its placement, clears it on undefined, and sends nothing for a component factory", () => {
    const { sent, ui: rpc } = ui();
    const lines = ["one", "two"];
    rpc.setWidget("todo", lines, { placement: "belowEditor" });
    rpc.setWidget("todo", ["three"]);
    rpc.setWidget("todo", () => ({ render: () => ["drawn"] }), { placement: "aboveEditor" });
    rpc.setWidget("todo", undefined);
    lines.push("added after the call");
    expect(sent).toStrictEqual([
      {
        type: "extension_ui_request",
        id: "ui_1",
        method: "setWidget",
        widgetKey: "todo",
        widgetLines: ["one", "two"],
        widgetPlacement: "belowEditor",
      },
      { type: "extension_ui_request", id: "ui_2", method: "setWidget", widgetKey: "todo", widgetLines: ["three"] },
      { type: "extension_ui_request", id: "ui_3", method: "setWidget", widgetKey: "todo" },
    ]);
  });

  it("sends setTitle, and setEditorText under Pi's method name set_editor_text", () => {
    const { sent, ui: rpc } = ui();
    rpc.setTitle("mypi - project");
    rpc.setEditorText("prefilled");
    expect(sent).toEqual([
      { type: "extension_ui_request", id: "ui_1", method: "setTitle", title: "mypi - project" },
      { type: "extension_ui_request", id: "ui_2", method: "set_editor_text", text: "prefilled" },
    ]);
    expect(rpc.pending).toBe(0);
  });

  it("takes the place of the Pi layer's no-ops: an extension's calls are sent and not reported, other terminal calls still are", async () => {
    const { sent, ui: rpc } = ui();
    const diagnostics: string[] = [];
    const manager = new ExtensionManager({ ui: rpc, onDiagnostic: (d) => diagnostics.push(d) });
    await manager.loadExtension((api) => {
      api.registerCommand("paint", {
        handler: (_args, ctx) => {
          const piUI = ctx.ui as unknown as Record<string, (...args: unknown[]) => void>;
          piUI.setStatus!("k", "v");
          piUI.setWidget!("w", ["line"], { placement: "belowEditor" });
          piUI.setTitle!("title");
          piUI.setEditorText!("text");
          piUI.setFooter!(() => ({}));
        },
      });
    }, "painter");
    expect(await manager.runCommand("paint")).toEqual({ ran: true });
    expect(sent.map((line) => line.method)).toEqual(["setStatus", "setWidget", "setTitle", "set_editor_text"]);
    expect(sent[1]).toMatchObject({ widgetKey: "w", widgetLines: ["line"], widgetPlacement: "belowEditor" });
    expect(diagnostics).toEqual([
      "painter: ctx.ui.setFooter: terminal-UI calls do nothing in mypi (reported once per extension; see docs/pi-compat.md)",
    ]);
  });
});
