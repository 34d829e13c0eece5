/**
 * `mypi approve SESSION [CALL] [--deny REASON] [--scope once|session|project] [--list]`
 * (docs/resume.md#approvals): answer the calls a paused run waits for. The answers are entries
 * of the session (`approval`); `mypi --session SESSION --continue-run` (or `mypi batch --resume`)
 * then runs the approved calls — judged again by the policies loaded then — and goes on.
 *
 * It loads nothing of an agent: the session is read, the answers appended, the session closed. A
 * session another process is writing is refused (one writer at a time).
 */
import { resolve } from "node:path";
import {
  errorMessage,
  defaultSessionDir,
  planResume,
  runStateOf,
  SessionManager,
  type WaitingCall,
} from "@mypi/kernel";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { isFile } from "../workspace/files.ts";
import { openStored, sessionFileById, type OpenedSession } from "../workspace/session-open.ts";

const SCOPES = ["once", "session", "project"] as const;

const APPROVE_HELP = `mypi approve — answer the tool calls a paused run waits for

Usage
  mypi approve SESSION [CALL_ID]            approve the waiting calls (or only CALL_ID)
  mypi approve SESSION [CALL_ID] --deny R   refuse them; the model is told R
  mypi approve SESSION --list               show what waits, change nothing

SESSION is a session file, the start of a session id of this workspace (as --session takes it),
or with --session-store redis://HOST:PORT the id of a session kept there.

  --scope once|session|project   how far an approval reaches, for the check that asked
                                 (recorded with the answer; default once)
  --cwd DIR                      the workspace whose sessions an id names (default: here)

Then go on with: mypi --session SESSION --continue-run   (or: mypi batch … --resume)
`;

interface ApproveArgs {
  session?: string;
  call?: string;
  deny?: string;
  scope?: (typeof SCOPES)[number];
  list: boolean;
  store?: string;
  cwd?: string;
  help: boolean;
}

export async function runApproveCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const parsed = parse(argv);
  if (typeof parsed === "string") {
    io.stderr.write(`mypi approve: ${parsed} Run \`mypi approve --help\`.\n`);
    return EXIT.usage;
  }
  if (parsed.help) {
    io.stdout.write(APPROVE_HELP);
    return EXIT.ok;
  }
  const cwd = resolve(io.cwd, parsed.cwd ?? ".");
  const opened = await open(parsed, cwd, io.cwd);
  if ("error" in opened) {
    io.stderr.write(`mypi approve: ${opened.error}\n`);
    return opened.usage ? EXIT.usage : EXIT.error;
  }
  const { session } = opened;
  try {
    return answer(parsed, session, io);
  } finally {
    await session.close().catch(() => {});
    await opened.dispose();
  }
}

function answer(args: ApproveArgs, session: SessionManager, io: CliIO): number {
  const waiting = waitingOf(session);
  const name = session.location ?? session.id;
  if (args.list) {
    if (waiting.length === 0) io.stdout.write(`no call of ${name} waits for an answer\n`);
    for (const call of waiting) io.stdout.write(`${describe(call)}\n`);
    return EXIT.ok;
  }
  if (waiting.length === 0) {
    io.stderr.write(
      `mypi approve: no call of ${name} waits for an answer (its last run did not pause, or every call was answered).\n`,
    );
    return EXIT.error;
  }
  const chosen = args.call === undefined ? waiting : waiting.filter((c) => c.toolCallId === args.call);
  if (chosen.length === 0) {
    io.stderr.write(
      `mypi approve: no call ${args.call} waits in ${name}; waiting: ${waiting.map((c) => c.toolCallId).join(", ")}.\n`,
    );
    return EXIT.error;
  }
  for (const call of chosen) {
    if (args.deny !== undefined)
      session.appendApproval({ toolCallId: call.toolCallId, approved: false, reason: args.deny });
    else session.appendApproval({ toolCallId: call.toolCallId, approved: true, scope: args.scope ?? "once" });
    io.stdout.write(
      `${args.deny !== undefined ? "denied" : `approved (${args.scope ?? "once"})`}: ${describe(call)}\n`,
    );
  }
  const still = waiting.length - chosen.length;
  const next =
    args.store !== undefined
      ? `mypi --session-store ${args.store} --session ${session.id} --continue-run`
      : `mypi --session ${session.file ?? session.id} --continue-run`;
  io.stdout.write(
    still > 0
      ? `${still} more wait${still === 1 ? "s" : ""}: answer ${still === 1 ? "it" : "them"} too, then go on with: ${next}\n`
      : `go on with: ${next} (a batch task: mypi batch … --resume)\n`,
  );
  return EXIT.ok;
}

/** The calls the session's last run holds for an answer nobody gave. */
function waitingOf(session: SessionManager): WaitingCall[] {
  const state = runStateOf(session.getBranch());
  // The tools are not needed to tell what waits: only how a cut-off call would be resumed depends on them.
  return planResume(session.buildContext({ repair: false }), new Map(), { ...state, queued: false })?.waiting ?? [];
}

function describe(call: WaitingCall): string {
  const input = JSON.stringify(call.input);
  return `${call.toolCallId}  ${call.toolName} ${input.length > 200 ? `${input.slice(0, 200)}…` : input} — ${call.reason}${call.by ? ` (${call.by})` : ""}`;
}

async function open(
  args: ApproveArgs,
  cwd: string,
  shellCwd: string,
): Promise<OpenedSession | { error: string; usage: boolean }> {
  if (args.store !== undefined) return openStored(args.store, args.session!, cwd);
  let file = resolve(shellCwd, args.session!);
  if (!isFile(file)) {
    const found = sessionFileById(args.session!, defaultSessionDir(cwd), "mypi approve", false);
    if ("error" in found) return { error: found.error, usage: true };
    file = found.file;
  }
  try {
    const session = SessionManager.open(file, { cwd });
    await session.claim();
    return { session, dispose: async () => {} };
  } catch (error) {
    return { error: errorMessage(error), usage: false };
  }
}

function parse(argv: readonly string[]): ApproveArgs | string {
  const args: ApproveArgs = { list: false, help: false };
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${token} needs a value.`);
      return v;
    };
    try {
      switch (token) {
        case "-h":
        case "--help":
          args.help = true;
          break;
        case "--list":
          args.list = true;
          break;
        case "--deny":
          args.deny = value();
          break;
        case "--scope": {
          const scope = value();
          if (!(SCOPES as readonly string[]).includes(scope))
            return `--scope must be once, session or project (got "${scope}").`;
          args.scope = scope as ApproveArgs["scope"];
          break;
        }
        case "--session-store": {
          const url = value();
          if (!/^rediss?:\/\/./.test(url)) return `--session-store must be a redis:// or rediss:// URL (got "${url}").`;
          args.store = url;
          break;
        }
        case "--cwd":
          args.cwd = value();
          break;
        default:
          if (token.startsWith("-")) return `unknown option ${token}.`;
          words.push(token);
      }
    } catch (error) {
      return errorMessage(error);
    }
  }
  if (args.help) return args;
  if (words.length === 0) return "give the session: mypi approve SESSION [CALL_ID].";
  if (words.length > 2) return `one session and at most one call id, got: ${words.join(" ")}.`;
  [args.session, args.call] = words;
  if (args.deny !== undefined && args.scope !== undefined) return "--scope is for an approval; --deny refuses.";
  if (args.list && (args.deny !== undefined || args.scope !== undefined || args.call !== undefined))
    return "--list shows what waits and changes nothing: give it alone.";
  return args;
}
