import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HELP, exitCodeFor, parseArgs, resolveMode, type CliArgs } from "../src/args.ts";

function ok(argv: string[], flags?: Map<string, "boolean" | "string">): CliArgs {
  const r = parseArgs(argv, flags);
  if (!r.ok) throw new Error(r.error);
  return r.args;
}
function fail(argv: string[], flags?: Map<string, "boolean" | "string">): string {
  const r = parseArgs(argv, flags);
  if (r.ok) throw new Error(`expected a usage error for ${argv.join(" ")}`);
  return r.error;
}

describe("Pi 1.6's options", () => {
  it("reads Pi's flags and short forms into the run's options", () => {
    const args = ok([
      "-nt",
      "-nbt",
      "-ne",
      "-ns",
      "-np",
      "-nc",
      "-n",
      "my session",
      "-a",
      "-xt",
      "bash,mcp__*",
      "--exclude-tools",
      "write",
      "--skill",
      "s1",
      "--skill=~/s2",
      "--prompt-template",
      "p1",
      "--session-dir",
      "/sessions",
      "--no-mcp",
      "--offline",
      "--verbose",
      "--no-themes",
      "--tui-mode",
      "regular",
      "--api-key",
      "sk-x",
      "--model",
      "openai:m",
    ]);
    expect(args).toMatchObject({
      tools: [],
      noBuiltinTools: true,
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noContextFiles: true,
      name: "my session",
      trustProject: true,
      excludeTools: ["bash", "mcp__*", "write"],
      skills: ["s1", join(homedir(), "s2")],
      promptTemplates: ["p1"],
      sessionDir: "/sessions",
      noMcp: true,
      verbose: true,
      apiKey: "sk-x",
    });
    expect(ok(["-na"]).trustProject).toBe(false);
    expect(ok(["-t", "read,gr*"]).tools).toEqual(["read", "gr*"]);
    expect(ok(["--tools", "+ls,-bash"]).tools).toEqual(["+ls", "-bash"]);
    expect(ok(["--session-id", "abc-1"]).sessionId).toBe("abc-1");
    expect(ok(["--fork", "abc"]).fork).toBe("abc");
    expect(ok(["--provider", "local", "--model", "qwen"])).toMatchObject({ provider: "local", model: "qwen" });
    expect(ok(["--list-models", "sonnet"])).toMatchObject({ command: "models", prompt: "sonnet" });
    expect(ok(["--export", "s.jsonl", "out.html"])).toMatchObject({
      command: "export",
      exportArgs: ["s.jsonl", "out.html"],
    });
  });

  it("refuses what mypi cannot honour, naming the flag and the reason (exit 2), and Pi's own misuses", () => {
    expect(fail(["--theme", "x.json"])).toContain("mypi: --theme: mypi has no themes");
    expect(fail(["--use-theme", "dark"])).toContain("mypi: --use-theme: mypi has no themes");
    expect(fail(["--tui-mode", "fullscreen"])).toContain(
      "--tui-mode fullscreen: mypi's interactive mode draws in the terminal's own screen",
    );
    expect(fail(["--tools", "read,+ls"])).toBe(
      "mypi: --tools read,+ls: tool names cannot be mixed with +name or -name entries.",
    );
    expect(fail(["--tools", "+gr*"])).toBe(
      "mypi: --tools +gr*: +name and -name entries take exact tool names, not patterns: +gr*.",
    );
    expect(fail(["--provider", "openai"])).toContain("--provider narrows --model");
    expect(fail(["--session-id", "a/b"])).toContain("--session-id takes a session id");
    expect(fail(["--fork", "x", "--continue"])).toContain("choose one of");
    expect(fail(["--export"])).toContain("--export needs the session file");
  });
});

describe("parseArgs", () => {
  it("reads every documented option into one object", () => {
    const args = ok([
      "--mode",
      "json",
      "-p",
      "--model",
      "scripted:s.json",
      "--base-url",
      "http://127.0.0.1:1/v1",
      "-e",
      "a.ts",
      "--extension=b.ts",
      "--no-extensions",
      "--no-builtin-tools",
      "--no-subagents",
      "--strict-extensions",
      "--cwd",
      "/w",
      "--no-session",
      "--max-turns",
      "3",
      "--system-prompt",
      "be brief",
      "--sandbox",
      "--sandbox-write",
      "out",
      "--sandbox-write=~/cache",
      "--sandbox-network",
      "hello",
      "there",
      "--append-system-prompt",
      "one",
      "--append-system-prompt=two",
      "--tools",
      "read, grep",
      "--no-context-files",
      "--tool-timeout",
      "90",
      "--permission-mode",
      "plan",
      "--on-ask",
      "pause",
    ]);
    expect(args).toEqual({
      command: "run",
      mode: "json",
      print: true,
      prompt: "hello there",
      model: "scripted:s.json",
      modelFromFlag: true,
      baseUrl: "http://127.0.0.1:1/v1",
      extensions: ["a.ts", "b.ts"],
      noExtensions: true,
      noBuiltinTools: true,
      noSubagents: true,
      strictExtensions: true,
      allowFailedExtensions: false,
      verbose: false,
      cwd: "/w",
      continue: false,
      resume: false,
      continueRun: false,
      onAsk: "pause",
      noSession: true,
      maxTurns: 3,
      toolTimeoutMs: 90_000,
      systemPrompt: "be brief",
      appendSystemPrompt: ["one", "two"],
      tools: ["read", "grep"],
      excludeTools: [],
      noContextFiles: true,
      noSkills: false,
      skills: [],
      noPromptTemplates: false,
      promptTemplates: [],
      noMcp: false,
      json: false,
      sandbox: true,
      sandboxWrite: ["out", join(homedir(), "cache")],
      sandboxNetwork: true,
      noSandboxNetwork: false,
      permissionMode: "plan",
      dangerouslyBypassPermissions: false,
      extensionFlags: {},
      unknownFlags: [],
    });
  });

  it("takes a permission mode by its name or Claude Code's, and refuses others", () => {
    expect(ok(["--permission-mode", "acceptEdits"]).permissionMode).toBe("acceptEdits");
    expect(ok(["--dangerously-bypass-permissions"]).dangerouslyBypassPermissions).toBe(true);
    expect(parseArgs(["--permission-mode", "yolo"])).toEqual({
      ok: false,
      error:
        'mypi: --permission-mode must be one of default, accept-edits, plan, bypass (got "yolo"). Run `mypi --help` for the list of options.',
    });
    expect(parseArgs(["--sandbox-network", "--no-sandbox-network"])).toEqual({
      ok: false,
      error: "mypi: choose one of --sandbox-network and --no-sandbox-network.",
    });
  });

  it("takes --continue-run with a session and no prompt, --on-ask deny|pause|fail, and --session-store with a session id", () => {
    expect(ok(["--session", "s.jsonl", "--continue-run"]).continueRun).toBe(true);
    expect(ok(["-c", "--continue-run"]).continueRun).toBe(true);
    expect(fail(["--continue-run"])).toBe(
      "mypi: --continue-run goes on with a session's run: name it with --session FILE|ID or --session-id ID (or --continue for the latest).",
    );
    expect(fail(["--session", "s.jsonl", "--continue-run", "go"])).toMatch(
      /^mypi: --continue-run goes on with the session's run and takes no prompt \(got "go"\)/,
    );
    expect(fail(["--on-ask", "ask"])).toMatch(/^mypi: --on-ask must be deny, pause or fail \(got "ask"\)/);
    expect(ok(["--session-store", "redis://127.0.0.1:6379", "--session", "abc"]).sessionStore).toBe(
      "redis://127.0.0.1:6379",
    );
    expect(fail(["--session-store", "redis://127.0.0.1:6379"])).toBe(
      "mypi: --session-store needs --session ID: the id of the session in that store.",
    );
    expect(fail(["--session-store", "http://x", "--session", "a"])).toBe(
      'mypi: --session-store must be a redis:// or rediss:// URL (got "http://x").',
    );
  });

  it("takes --tool-timeout in seconds (0: no default timeout) and refuses anything but a plain number", () => {
    expect(ok(["--tool-timeout", "0.5"]).toolTimeoutMs).toBe(500);
    expect(ok(["--tool-timeout=0"]).toolTimeoutMs).toBe(0);
    expect(ok([]).toolTimeoutMs).toBeUndefined();
    for (const bad of ["-1", "1e3", "ten", ""]) {
      expect(fail(["--tool-timeout", bad])).toBe(
        `mypi: --tool-timeout takes seconds, a number ≥ 0 (0: no default timeout; got "${bad}").`,
      );
    }
  });

  it("takes --allow-failed-extensions or --strict-extensions, not both", () => {
    expect(ok(["--allow-failed-extensions"]).allowFailedExtensions).toBe(true);
    expect(fail(["--strict-extensions", "--allow-failed-extensions"])).toBe(
      "mypi: choose one of --strict-extensions and --allow-failed-extensions.",
    );
  });

  it("takes --sandbox or --no-sandbox, not both, and leaves the choice to the settings without either", () => {
    expect(ok(["--no-sandbox"]).sandbox).toBe(false);
    expect(ok([]).sandbox).toBeUndefined();
    expect(fail(["--sandbox", "--no-sandbox"])).toBe("mypi: choose one of --sandbox and --no-sandbox.");
  });

  it("treats a first word naming a subcommand as the subcommand, and the same word later as prompt text", () => {
    expect(ok(["extensions", "--json"])).toMatchObject({ command: "extensions", json: true });
    expect(ok(["demo"]).command).toBe("demo");
    expect(ok(["-p", "demo"])).toMatchObject({ command: "run", prompt: "demo" });
  });

  it("takes everything after -- as the prompt, dashes included", () => {
    expect(ok(["-p", "--", "--not-a-flag", "-e"]).prompt).toBe("--not-a-flag -e");
  });

  it("collects unknown long flags on the first pass instead of failing", () => {
    expect(ok(["--plan", "-p", "go"]).unknownFlags).toEqual(["--plan"]);
  });

  it("fails on an unknown flag once the extensions' flags are known, with one line that says what to do", () => {
    expect(fail(["--plan"], new Map())).toBe("mypi: unknown option --plan. Run `mypi --help` for the list of options.");
    expect(fail(["-x"], new Map())).toBe("mypi: unknown option -x. Run `mypi --help` for the list of options.");
  });

  it("lets a value that starts with a dash through to an extension's string flag", () => {
    // First pass: --trace-dir is not known yet, so -x may be its value; it is not judged yet.
    expect(ok(["--trace-dir", "-x", "go"]).unknownFlags).toEqual(["--trace-dir", "-x"]);
    const flags = new Map<string, "boolean" | "string">([["trace-dir", "string"]]);
    expect(ok(["--trace-dir", "-x", "go"], flags)).toMatchObject({
      extensionFlags: { "trace-dir": "-x" },
      prompt: "go",
      unknownFlags: [],
    });
  });

  it("takes a blank prompt for no prompt, so it is asked for (or read from stdin) instead of sent", () => {
    expect(ok(["-p", ""]).prompt).toBeUndefined();
    expect(ok(["-p", "  ", "\n"]).prompt).toBeUndefined();
    expect(ok(["-p", " hi "]).prompt).toBe(" hi ");
  });

  it("expands a leading ~ in paths, which the shell leaves alone after = and :", () => {
    const args = ok(["--cwd=~/code", "-e", "~/ext.ts", "--session=~", "--model=scripted:~/s.json"]);
    expect(args).toMatchObject({
      cwd: join(homedir(), "code"),
      extensions: [join(homedir(), "ext.ts")],
      session: homedir(),
      model: `scripted:${join(homedir(), "s.json")}`,
    });
    expect(ok(["--cwd", "~user/x", "-e", "a/~/b.ts"])).toMatchObject({ cwd: "~user/x", extensions: ["a/~/b.ts"] });
  });

  it("leaves prompt checks to the second pass when an unknown flag may have taken the word as its value", () => {
    // --trace-dir is an extension's string flag: "/t" is its value, not a prompt.
    expect(ok(["--mode", "rpc", "--trace-dir", "/t"])).toMatchObject({ mode: "rpc", unknownFlags: ["--trace-dir"] });
    expect(ok(["extensions", "--trace-dir", "/t"])).toMatchObject({
      command: "extensions",
      unknownFlags: ["--trace-dir"],
    });
    const flags = new Map<string, "boolean" | "string">([["trace-dir", "string"]]);
    expect(ok(["--mode", "rpc", "--trace-dir", "/t"], flags)).toMatchObject({
      mode: "rpc",
      extensionFlags: { "trace-dir": "/t" },
    });
    expect(ok(["--mode", "rpc", "--trace-dir", "/t"], flags).prompt).toBeUndefined();
    // A boolean flag takes no value: the word is a prompt after all, and rpc says so.
    expect(fail(["--mode", "rpc", "--plan", "go"], new Map([["plan", "boolean"]]))).toContain(
      "--mode rpc reads its prompts from stdin",
    );
  });

  it("gives flags registered by extensions their values", () => {
    const flags = new Map<string, "boolean" | "string">([
      ["plan", "boolean"],
      ["trace-dir", "string"],
    ]);
    expect(ok(["--plan", "--trace-dir", "/t", "go"], flags)).toMatchObject({
      extensionFlags: { plan: true, "trace-dir": "/t" },
      prompt: "go",
    });
  });

  it("rejects bad values with the reason", () => {
    expect(fail(["--mode", "xml"])).toContain('--mode must be one of print, json, rpc, interactive, acp (got "xml")');
    expect(fail(["--max-turns", "0"])).toContain("--max-turns must be a whole number");
    for (const n of ["-1", "abc", "", "1e1", "0x10", " 2 ", "1.0", "+3"]) {
      expect(fail(["--max-turns", n])).toBe(`mypi: --max-turns must be a whole number ≥ 1 (got "${n}").`);
    }
    expect(ok(["--max-turns=12"]).maxTurns).toBe(12);
    expect(fail(["--model", " "])).toContain(
      "--model needs a model: provider/id, an id, openai:<name> or scripted:<file>",
    );
    expect(fail(["--thinking", "huge"])).toBe(
      'mypi: --thinking must be one of off, minimal, low, medium, high, xhigh, max (got "huge").',
    );
    expect(fail(["--provider", "anthropic"])).toContain("--provider narrows --model: give --model too");
    expect(fail(["--api-key", "sk-x"])).toContain("--api-key is the key of the model chosen with --model");
    expect(fail(["--models", " , "])).toContain("--models takes model patterns separated by commas");
    expect(fail(["--cwd"])).toContain("--cwd needs a value");
    expect(fail(["--tools", "read", "--no-tools"])).toContain("give --tools once");
    expect(fail(["--tools", " , "])).toContain("--no-tools offers none");
    expect(ok(["--no-tools"]).tools).toEqual([]);
    expect(fail(["--no-session", "--continue"])).toContain(
      "choose one of --session FILE|ID, --session-id ID, --fork FILE|ID, --continue, --resume and --no-session",
    );
    expect(fail(["-r", "--continue"])).toContain(
      "choose one of --session FILE|ID, --session-id ID, --fork FILE|ID, --continue, --resume and --no-session",
    );
    expect(ok(["-r"]).resume).toBe(true);
    expect(fail(["--mode", "rpc", "-p", "x"])).toContain("--mode rpc reads its prompts from stdin");
    expect(fail(["--json", "-p", "x"])).toContain("for JSON events use --mode json");
    expect(fail(["--no-extensions=yes"])).toContain("--no-extensions takes no value");
  });

  it("reads the model flags as Pi's: a model by any name, --provider, --api-key, --thinking, --models patterns, and --list-models as `mypi models`", () => {
    const args = ok([
      "--model",
      "sonnet:high",
      "--provider",
      "anthropic",
      "--api-key",
      "sk-1",
      "--thinking",
      "xhigh",
      "--models",
      "anthropic/*, gpt-5.5:low",
    ]);
    expect(args).toMatchObject({
      model: "sonnet:high",
      modelFromFlag: true,
      provider: "anthropic",
      apiKey: "sk-1",
      thinking: "xhigh",
      models: ["anthropic/*", "gpt-5.5:low"],
    });
    expect(ok(["--list-models", "sonn"])).toMatchObject({ command: "models", prompt: "sonn" });
    expect(ok(["models", "--json"])).toMatchObject({ command: "models", json: true });
    expect(ok(["--models", "x", "--api-key", "k"]).apiKey).toBe("k");
  });

  it("turns --help and --version into commands", () => {
    expect(ok(["--help"]).command).toBe("help");
    expect(ok(["-v"]).command).toBe("version");
  });
});

describe("resolveMode", () => {
  it("uses the explicit mode, then -p, then the terminal", () => {
    expect(resolveMode(ok(["--mode", "rpc"]), true)).toBe("rpc");
    expect(resolveMode(ok(["-p", "x"]), true)).toBe("print");
    expect(resolveMode(ok(["x"]), true)).toBe("interactive");
    expect(resolveMode(ok(["x"]), false)).toBe("print");
  });

  it("reads `mypi acp` as the ACP mode, which takes no prompt and leaves the session to the editor", () => {
    expect(ok(["acp", "--model", "scripted:s.json"])).toMatchObject({
      command: "run",
      mode: "acp",
      model: "scripted:s.json",
    });
    expect(resolveMode(ok(["--mode", "acp"]), true)).toBe("acp");
    expect(fail(["acp", "hello"])).toBe(
      "mypi: mypi acp reads its prompts from the editor (session/prompt); drop -p and the prompt.",
    );
    expect(fail(["acp", "--continue"])).toBe(
      "mypi: mypi acp: the editor chooses the session (session/new, session/load); drop --continue.",
    );
    expect(fail(["acp", "--session", "x.jsonl"])).toContain("drop --session.");
  });
});

describe("exitCodeFor", () => {
  it("maps every stop reason to its documented exit code", () => {
    const reasons = ["completed", "handled", "terminated", "error", "blocked", "max_turns", "aborted"];
    expect(reasons.map(exitCodeFor)).toEqual([0, 0, 0, 1, 1, 1, 130]);
  });
});

describe("HELP", () => {
  it("mentions every option the parser accepts, and examples", () => {
    for (const flag of [
      "--mode",
      "-p",
      "--model",
      "--base-url",
      "--extension",
      "--no-extensions",
      "--no-builtin-tools",
      "--strict-extensions",
      "--allow-failed-extensions",
      "--tool-timeout",
      "--cwd",
      "--session",
      "--continue",
      "--no-session",
      "--max-turns",
      "--system-prompt",
      "--append-system-prompt",
      "--tools",
      "--no-tools",
      "--no-context-files",
      "--help",
      "--version",
      "extensions [--json]",
      "demo",
      "models [search]",
      "--provider",
      "--api-key",
      "--thinking",
      "--models",
      "--list-models",
    ]) {
      expect(HELP).toContain(flag);
    }
    expect(HELP).toContain("Examples");
  });
});
