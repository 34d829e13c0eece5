/**
 * `mypi export <session.jsonl> [out.html]`, interactive mode's `/export [file]` and RPC's
 * `export_html`: the session as one self-contained HTML file (`html.ts`). The output defaults to
 * the session file's name with `.html`, in the current folder.
 *
 * The page never replaces a session: not the one exported (compared by device and inode, so a
 * symlink or hard link to it is caught), not any other file that begins with a session header.
 * It is written to a temporary file and renamed into place, so a full disk leaves the old file
 * (or none), never half a page.
 */
import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import {
  defaultSessionDir,
  errorMessage,
  readSessionHeader,
  sessionFilesByIdPrefix,
  SessionManager,
} from "@mypi/kernel";
import { EXIT } from "../args.ts";
import { writeFileAtomic } from "../workspace/files.ts";
import type { CliIO } from "../io.ts";
import { openChildSession } from "../child-sessions.ts";
import { renderSessionHtml, type SessionView } from "../export/html.ts";

const USAGE = "usage: mypi export <session.jsonl | id> [out.html]";
/** A word like a session id (as `--session` takes one): no path separator, no extension. */
const ID_PREFIX = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Write `session` as HTML to `out` (absolute); returns the path written. Throws on a failed write or a refused target. */
export function exportSession(session: SessionManager, out: string): string {
  const refused = refusedTarget(out, session.file);
  if (refused !== undefined) throw new Error(refused);
  writeFileAtomic(out, renderSessionHtml(sessionView(session)));
  return out;
}

/** What the HTML view draws of `session`, its child agents' transcripts included (read from its own child folder only). */
function sessionView(session: SessionManager): SessionView {
  return {
    header: session.getHeader(),
    entries: session.getEntries(),
    leafId: session.getLeafId(),
    name: session.getSessionName(),
    child: (file) => {
      const child = openChildSession(session.file, file);
      return typeof child === "string" ? undefined : sessionView(child);
    },
  };
}

/** Why `out` must not be written over, if it must not: it is the session file itself, or a session file. */
function refusedTarget(out: string, sessionFile: string | undefined): string | undefined {
  const target = identity(out);
  if (target === undefined) return undefined; // a new file
  const session = sessionFile === undefined ? undefined : identity(sessionFile);
  if (session !== undefined && target.dev === session.dev && target.ino === session.ino) {
    return `${out} is the session file itself${out === sessionFile ? "" : " (through a link)"}: give the page another name`;
  }
  if (readSessionHeader(out) !== undefined)
    return `${out} is a session file: the page would replace it; give another name`;
  return undefined;
}

function identity(path: string): { dev: number; ino: number } | undefined {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

/** Where `/export` and `mypi export` write when no file is given. */
export function defaultExportPath(cwd: string, session: { file: string | undefined; id: string }): string {
  const stem = session.file ? basename(session.file).replace(/\.jsonl$/, "") : `session-${session.id}`;
  return resolve(cwd, `${stem}.html`);
}

export function runExportCommand(argv: readonly string[], io: CliIO): number {
  const fail = (message: string) => (io.stderr.write(`mypi: ${message}\n`), EXIT.usage);
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout.write(
      `${USAGE}\nWrites the session (every branch, tool calls and results, the extensions' decisions) as one HTML file that needs no network.\n`,
    );
    return EXIT.ok;
  }
  const option = argv.find((a) => a.startsWith("-"));
  if (option !== undefined) return fail(`unknown option ${option}. ${USAGE}`);
  if (argv.length === 0 || argv.length > 2) return fail(USAGE);
  let file = resolve(io.cwd, argv[0]!);
  // `open` would start a new session at a missing path: exporting one must name a real file.
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    if (!ID_PREFIX.test(argv[0]!))
      return fail(`${argv[0]}: no such file. Session files are in $MYPI_HOME/sessions/<workspace>/ (default ~/.mypi).`);
    // Shaped like an id: one of this workspace's sessions.
    const dir = defaultSessionDir(io.cwd);
    const matches = sessionFilesByIdPrefix(dir, argv[0]!);
    if (matches.length !== 1) {
      return fail(
        matches.length === 0
          ? `${argv[0]}: no such file, and no session of this workspace has an id starting with it (in ${dir}).`
          : `${argv[0]} matches ${matches.length} sessions; give more of the id: ${matches.map((m) => basename(m)).join(", ")}`,
      );
    }
    file = matches[0]!;
    isFile = true;
  }
  if (!isFile) return fail(`${argv[0]} is not a file: give a session's .jsonl file.`);
  let session: SessionManager;
  try {
    session = SessionManager.open(file);
  } catch (error) {
    return fail(`${argv[0]}: ${errorMessage(error)}`);
  }
  for (const warning of session.loadWarnings) io.stderr.write(`mypi: session: ${warning}\n`);
  const out = argv[1] !== undefined ? resolve(io.cwd, argv[1]) : defaultExportPath(io.cwd, session);
  const refused = refusedTarget(out, file);
  if (refused !== undefined) return fail(`${refused}.`);
  try {
    exportSession(session, out);
  } catch (error) {
    io.stderr.write(`mypi: could not write ${out}: ${errorMessage(error)}\n`);
    return EXIT.error;
  }
  io.stdout.write(`${out}\n`);
  return EXIT.ok;
}
