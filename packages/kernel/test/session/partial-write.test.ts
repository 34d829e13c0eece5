/**
 * A write that fails part-way (the disk filled up mid-line) leaves a torn line behind. The next
 * append must not continue that line, or the torn entry would take the next, whole one with it.
 * `node:fs` is wrapped so that one append can be made to write half its text and then fail.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionManager } from "../../src/session/index.ts";
import { trace, user } from "./helpers.ts";

const fault = vi.hoisted(() => ({ failNextAppend: false }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const appendFileSync: typeof fs.appendFileSync = (file, data, options) => {
    if (!fault.failNextAppend) return fs.appendFileSync(file, data, options);
    fault.failNextAppend = false;
    const text = String(data);
    fs.appendFileSync(file, text.slice(0, text.length >> 1), options);
    throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  };
  return { ...fs, default: { ...fs, appendFileSync }, appendFileSync };
});

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "mypi-partial-"));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

describe("an append that wrote part of its line and then failed", () => {
  it("throws, and the next append starts on a fresh line so that it survives a reload", () => {
    const s = SessionManager.create({ cwd: "/w", dir: tmp });
    s.appendMessage(user("one"));
    fault.failNextAppend = true;
    expect(() => s.appendMessage(user("half written"))).toThrow(/ENOSPC/);
    expect(trace(s.buildContext())).toEqual(["U(one)"]);
    s.appendMessage(user("two"));

    const again = SessionManager.open(s.file!);
    expect(again.loadWarnings).toEqual([`${s.file!.split("/").at(-1)}:3: not valid JSON, skipped`]);
    expect(trace(again.buildContext())).toEqual(["U(one)", "U(two)"]);
  });
});
