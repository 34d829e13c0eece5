/**
 * The process's exit codes and the stop reason → code map: what every command returns, and no part
 * of parsing the command line. `args.ts` re-exports both, which is where most commands import them from.
 */

/**
 * Exit codes (docs/cli.md#command-line). A signal or a closed stdout ends the run as an abort and exits
 * 128 + the signal's number (`exits.ts`).
 */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  paused: 3,
  aborted: 130,
  hangup: 129,
  terminated: 143,
  brokenPipe: 141,
} as const;

/** The process exit code for how a run ended. */
export function exitCodeFor(stopReason: string): number {
  switch (stopReason) {
    case "completed":
    case "handled":
    case "terminated":
      return EXIT.ok;
    case "aborted":
      return EXIT.aborted;
    case "paused":
      return EXIT.paused;
    default: // error, blocked, max_turns
      return EXIT.error;
  }
}
