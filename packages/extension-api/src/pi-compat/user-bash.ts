/**
 * Pi's `user_bash` contract for `!cmd` in interactive mode: the handlers are awaited one after
 * another in load order, and the first that returns something decides, as in Pi.
 *
 * - `{result}` (Pi's `BashResult`: `output`, `exitCode`, `cancelled`, `truncated`) replaces
 *   mypi's own run of the command: the host shows and shares that result instead.
 * - `{operations}` (run it elsewhere, e.g. over SSH) is not supported: reported once per
 *   extension, and mypi runs the command itself.
 * - A handler that throws, or returns anything else, is reported and the command does not run:
 *   the handler meant to take it over, so running it here instead would not be what it asked.
 */
import { errorMessage } from "../errors.ts";
import type { ExtensionContext } from "../types.ts";

/** What the user ran: Pi's `UserBashEvent` without its `type`. */
export interface UserBashRequest {
  command: string;
  excludeFromContext: boolean;
  cwd: string;
}

/** The result a Pi handler supplied (Pi's `BashResult`). */
export interface UserBashResult {
  output: string;
  /** `undefined` when the command was cancelled or killed. */
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
}

/** `undefined`: mypi runs the command. Otherwise which extension answered, and how. */
export type UserBashAnswer =
  | { extension: string; result: UserBashResult }
  | { extension: string; error: string }
  | undefined;

interface UserBashHandler {
  extension: string;
  fn: (...args: unknown[]) => unknown;
  live(): boolean;
  context: ExtensionContext;
}

interface UserBashHost {
  diagnostic(message: string): void;
  reportError(extension: string, slot: string, error: string, code?: string): void;
}

/** Runs `handlers` for one `!cmd`; `reported` keeps the extensions already told about `{operations}`. */
export async function runUserBash(
  handlers: readonly UserBashHandler[],
  request: UserBashRequest,
  host: UserBashHost,
  reported: Set<string>,
): Promise<UserBashAnswer> {
  for (const h of handlers) {
    if (!h.live()) continue;
    const failed = (error: string): UserBashAnswer => {
      host.reportError(h.extension, "user_bash", error, "MYPI_HANDLER_FAILED");
      return { extension: h.extension, error };
    };
    let value: unknown;
    try {
      value = await h.fn({ type: "user_bash", ...request }, h.context);
    } catch (error) {
      return failed(errorMessage(error));
    }
    if (value === undefined || value === null) continue;
    const answer = value as { result?: unknown; operations?: unknown };
    if (answer.result === undefined && answer.operations !== undefined) {
      if (!reported.has(h.extension)) {
        reported.add(h.extension);
        host.diagnostic(
          `${h.extension}: a user_bash handler returned {operations}: mypi does not run commands through an extension's operations, so it runs the command itself (reported once; see docs/pi-compat.md)`,
        );
      }
      return undefined;
    }
    const result = bashResult(answer.result);
    if (result === undefined || answer.operations !== undefined) {
      return failed(
        "Invalid user_bash handler result: return undefined to let mypi run the command, or {result: {output, exitCode, cancelled, truncated}} to replace its run",
      );
    }
    return { extension: h.extension, result };
  }
  return undefined;
}

/** Pi's `BashResult`, or `undefined` when `value` is not one (`output` must be text). */
function bashResult(value: unknown): UserBashResult | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.output !== "string") return undefined;
  if (r.exitCode !== undefined && (typeof r.exitCode !== "number" || !Number.isInteger(r.exitCode))) return undefined;
  return {
    output: r.output,
    exitCode: r.exitCode as number | undefined,
    cancelled: r.cancelled === true,
    truncated: r.truncated === true,
  };
}
