/**
 * Policy replay (docs/testing-policies.md): recorded sessions — mypi's, Pi's, Claude Code's —
 * fed through a set of extensions' decision slots with no model and no tools, and each new
 * decision compared with the recorded one. `mypi replay` and the test kit's `replay` share it.
 */
import { readClaudeCodeTranscript } from "./claude-code.ts";
import { readPiSession } from "./pi-format.ts";
import { detectFormat, readMypiSession, type Recording } from "./recording.ts";

export { Replayer, type ReplayerOptions, type ReplaySlot, type SessionReplay } from "./engine.ts";
export {
  DIFFERENCE_LABELS,
  ruleOf,
  type DecisionView,
  type DifferenceKind,
  type ReplayDifference,
  type ReplayError,
} from "./differences.ts";
export { CLAUDE_CODE_TOOLS } from "./claude-code.ts";
export { detectFormat, isAskReason, type FileKind, type Recording, type RecordingFormat } from "./recording.ts";
export { replayRefusal } from "./runtime.ts";

/**
 * Read a recorded session, whichever program wrote it. Throws, naming the file and what it
 * holds, when it is no session of a known format (a batch's `results.jsonl` names its sessions:
 * read those).
 */
export function readRecording(file: string): Recording {
  const found = detectFormat(file);
  switch (found?.kind) {
    case "mypi":
      return readMypiSession(file);
    case "pi":
      return readPiSession(file);
    case "claude-code":
      return readClaudeCodeTranscript(file);
    case "batch-results":
      throw new Error(
        `${file} is a batch's results.jsonl: replay the session files it names (mypi replay reads them for you)`,
      );
    default:
      throw new Error(
        `${file} is not a session mypi can replay: neither mypi's nor Pi's session format (a "session" header line) nor a Claude Code transcript (lines with "sessionId" and "uuid")`,
      );
  }
}
