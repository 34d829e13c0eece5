// docs/pi-compat.md §2, user_bash: Pi's handlers for `!cmd`, awaited in load order; the first answer decides.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScriptedModel } from "@mypi/kernel";
import { createExtensionHost, type ExtensionHost } from "../src/index.ts";
import { probe, resetProbe } from "./fixtures/probe.ts";
import { FIXTURES, managerWith } from "./helpers.ts";

const hosts: ExtensionHost[] = [];
beforeEach(() => resetProbe());
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.shutdown()));
});

async function bashHost() {
  const diagnostics: string[] = [];
  const errors: string[] = [];
  const manager = await managerWith(["pi/user-bash.ts", "pi/user-bash-second.ts"], {
    onDiagnostic: (d) => diagnostics.push(d),
  });
  const host = createExtensionHost({ manager, model: createScriptedModel({ turns: [] }) });
  hosts.push(host);
  host.agent.subscribe(
    (e) =>
      void (
        e.type === "extension_error" && errors.push(`${String(e.extension)} ${String(e.slot)}: ${String(e.error)}`)
      ),
  );
  return { host, diagnostics, errors };
}

describe("user_bash", () => {
  it("a handler's {result} replaces the run, and handlers after it are not asked", async () => {
    const { host } = await bashHost();
    expect(await host.userBash("remote ls", true)).toEqual({
      extension: "user-bash",
      result: { output: "remote said ls", exitCode: 3, cancelled: false, truncated: true },
    });
    expect(probe().trace).toEqual([`first: remote ls true ${FIXTURES}`]);
  });

  it("handlers that return nothing pass to the next one in load order; none answering means mypi runs the command", async () => {
    const { host } = await bashHost();
    expect(await host.userBash("mine", false)).toEqual({
      extension: "user-bash-second",
      result: { output: "second's", exitCode: 0, cancelled: false, truncated: false },
    });
    expect(await host.userBash("ls", false)).toBeUndefined();
    expect(probe().trace.map((t) => t.split(" ").slice(0, 2).join(" "))).toEqual([
      "first: mine",
      "second: mine",
      "first: ls",
      "second: ls",
    ]);
  });

  it("{operations} is reported once per extension and mypi runs the command itself", async () => {
    const { host, diagnostics } = await bashHost();
    expect(await host.userBash("ssh", false)).toBeUndefined();
    expect(await host.userBash("ssh", false)).toBeUndefined();
    const lines = diagnostics.filter((d) => d.includes("{operations}"));
    expect(lines).toEqual([
      expect.stringMatching(
        /^user-bash: a user_bash handler returned \{operations\}: mypi does not run commands through an extension's operations, so it runs the command itself/,
      ),
    ]);
    expect(probe().trace.filter((t) => t.startsWith("second"))).toEqual([]);
  });

  it("a handler that throws or returns a malformed result is reported, and the command must not run", async () => {
    const { host, errors } = await bashHost();
    expect(await host.userBash("boom", false)).toEqual({ extension: "user-bash", error: "sandbox unreachable" });
    const bad = await host.userBash("bad", false);
    expect(bad).toMatchObject({
      extension: "user-bash",
      error: expect.stringMatching(/^Invalid user_bash handler result/),
    });
    expect(errors).toEqual([
      "user-bash user_bash: sandbox unreachable",
      expect.stringMatching(/^user-bash user_bash: Invalid user_bash handler result/),
    ]);
  });
});
