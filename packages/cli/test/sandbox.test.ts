import { describe, expect, it } from "vitest";
import { parseArgs, type CliArgs } from "../src/args.ts";
import { describeSandboxReport, sandboxOf, sandboxWarnings } from "../src/workspace/sandbox.ts";

function args(argv: string[]): CliArgs {
  const r = parseArgs(argv);
  if (!r.ok) throw new Error(r.error);
  return r.args;
}

describe("the sandbox from flags and settings", () => {
  it("is on by default with the network on, asked for by a flag or the settings, and off by --no-sandbox or the settings", () => {
    expect(sandboxOf(args([]), {}, "/shell")).toEqual({
      byDefault: true,
      sandbox: { network: true, onUnavailable: "unsandboxed" },
    });
    expect(sandboxOf(args([]), { sandbox: { enabled: true } }, "/shell")).toEqual({
      byDefault: false,
      sandbox: { network: true },
    });
    expect(sandboxOf(args(["--sandbox"]), {}, "/shell")).toEqual({ byDefault: false, sandbox: { network: true } });
    expect(sandboxOf(args(["--no-sandbox"]), { sandbox: { enabled: true, network: true } }, "/shell")).toEqual({});
    expect(sandboxOf(args([]), { sandbox: { enabled: false } }, "/shell")).toEqual({});
  });

  it("turns the network off by the settings or --no-sandbox-network, and --sandbox-network wins over the settings", () => {
    expect(sandboxOf(args([]), { sandbox: { network: false } }, "/shell")).toEqual({
      byDefault: true,
      sandbox: { onUnavailable: "unsandboxed" },
    });
    expect(sandboxOf(args(["--no-sandbox-network"]), {}, "/shell")).toEqual({
      byDefault: true,
      sandbox: { onUnavailable: "unsandboxed" },
    });
    expect(sandboxOf(args(["--sandbox-network"]), { sandbox: { network: false } }, "/shell")).toEqual({
      byDefault: true,
      sandbox: { network: true, onUnavailable: "unsandboxed" },
    });
  });

  it("keeps the sandbox on and its network off where the managed settings say so, whatever the flags", () => {
    const managed = { file: "/etc/mypi/managed-settings.json", enabled: true, network: false };
    expect(sandboxOf(args(["--no-sandbox"]), {}, "/shell", managed)).toEqual({
      error: "--no-sandbox: the managed settings (/etc/mypi/managed-settings.json) keep the sandbox on.",
    });
    expect(sandboxOf(args(["--sandbox-network"]), {}, "/shell", managed)).toEqual({
      error:
        "--sandbox-network: the managed settings (/etc/mypi/managed-settings.json) keep the sandbox's network off.",
    });
    expect(sandboxOf(args([]), { sandbox: { enabled: false, network: true } }, "/shell", managed)).toEqual({
      byDefault: false,
      sandbox: { onUnavailable: "refuse" },
    });
  });

  it("adds the flags' write paths (against the shell's folder) to the settings' ones, and the flag's network wins", () => {
    const settings = { sandbox: { allowWrite: ["cache"], hide: [".env"], onUnavailable: "unsandboxed" as const } };
    expect(sandboxOf(args(["--sandbox", "--sandbox-write", "out", "--sandbox-network"]), settings, "/shell")).toEqual({
      byDefault: false,
      sandbox: { allowWrite: ["cache", "/shell/out"], network: true, hide: [".env"], onUnavailable: "unsandboxed" },
    });
  });

  it("passes the settings' readable paths, variables and sockets on", () => {
    const settings = {
      sandbox: { enabled: true, allowRead: ["~/.config/tool"], env: ["MY_VAR"], allowSockets: ["/run/pg.sock"] },
    };
    expect(sandboxOf(args([]), settings, "/shell")).toEqual({
      byDefault: false,
      sandbox: { allowRead: ["~/.config/tool"], network: true, env: ["MY_VAR"], allowSockets: ["/run/pg.sock"] },
    });
  });

  it("refuses sandbox settings flags while the sandbox is off, saying how to turn it back on", () => {
    expect(sandboxOf(args(["--no-sandbox", "--sandbox-write", "x"]), {}, "/shell")).toEqual({
      error:
        '--sandbox-write configures the sandbox, which is off: drop --no-sandbox (and "sandbox": {"enabled": false} from settings.json).',
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
    expect(describeSandboxReport({ ...report, available: true })).toBe(
      "sandbox: on (bubblewrap) · writable: /ws · network off · 0 paths hidden · private /tmp",
    );
    expect(sandboxWarnings({ enabled: false })).toEqual([]);
    expect(sandboxWarnings({ ...report, missing: [], bashFrom: undefined, byDefault: true } as never)).toEqual([
      'mypi: the bash sandbox is on by default but cannot run here (bwrap (bubblewrap) is not installed); bash commands run WITHOUT it. Install bubblewrap, or set "sandbox": {"enabled": false} in settings.json to run without it knowingly.',
    ]);
  });
});
