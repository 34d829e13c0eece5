import { describe, expect, it } from "vitest";
import { parseArgs, type CliArgs } from "../src/args.ts";
import { describeSandboxReport, sandboxOf, sandboxWarnings } from "../src/sandbox.ts";

function args(argv: string[]): CliArgs {
  const r = parseArgs(argv);
  if (!r.ok) throw new Error(r.error);
  return r.args;
}

describe("the sandbox from flags and settings", () => {
  it("is off unless a flag or the settings turn it on, and --no-sandbox wins over the settings", () => {
    expect(sandboxOf(args([]), {}, "/shell")).toEqual({});
    expect(sandboxOf(args([]), { sandbox: { enabled: true } }, "/shell")).toEqual({ sandbox: {} });
    expect(sandboxOf(args(["--no-sandbox"]), { sandbox: { enabled: true, network: true } }, "/shell")).toEqual({});
  });

  it("adds the flags' write paths (against the shell's folder) to the settings' ones, and the flag's network wins", () => {
    const settings = { sandbox: { allowWrite: ["cache"], hide: [".env"], onUnavailable: "unsandboxed" as const } };
    expect(sandboxOf(args(["--sandbox", "--sandbox-write", "out", "--sandbox-network"]), settings, "/shell")).toEqual({
      sandbox: { allowWrite: ["cache", "/shell/out"], network: true, hide: [".env"], onUnavailable: "unsandboxed" },
    });
  });

  it("passes the settings' readable paths, variables and sockets on", () => {
    const settings = { sandbox: { enabled: true, allowRead: ["~/.config/tool"], env: ["MY_VAR"], allowSockets: ["/run/pg.sock"] } };
    expect(sandboxOf(args([]), settings, "/shell")).toEqual({ sandbox: { allowRead: ["~/.config/tool"], env: ["MY_VAR"], allowSockets: ["/run/pg.sock"] } });
  });

  it("refuses sandbox settings flags while the sandbox is off, saying how to turn it on", () => {
    expect(sandboxOf(args(["--sandbox-write", "x"]), {}, "/shell")).toEqual({
      error: '--sandbox-write configures the sandbox, which is off: add --sandbox (or "sandbox": {"enabled": true} in settings.json).',
    });
  });

  it("warns at start when bubblewrap cannot run, when a write path is missing and when bash is not the builtin one", () => {
    const report = {
      enabled: true as const,
      available: false,
      reason: "bwrap (bubblewrap) is not installed",
      onUnavailable: "unsandboxed" as const,
      writable: ["/ws"],
      missing: ["/nope"],
      network: false,
      hidden: [],
      bashFrom: "my-bash",
    };
    expect(sandboxWarnings(report)).toEqual([
      'mypi: sandbox unavailable (bwrap (bubblewrap) is not installed); bash commands run WITHOUT it, as "onUnavailable": "unsandboxed" says.',
      "mypi: sandbox: the write path /nope does not exist; nothing is mounted for it.",
      "mypi: sandbox: the bash tool in effect comes from my-bash, which the sandbox does not cover.",
    ]);
    expect(describeSandboxReport({ ...report, available: true })).toBe("sandbox: on (bubblewrap) · writable: /ws · network off · 0 paths hidden · private /tmp");
    expect(sandboxWarnings({ enabled: false })).toEqual([]);
  });
});
