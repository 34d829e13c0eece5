/**
 * The manager's commands: the extensions' `/name` commands (a later extension's replacing an
 * earlier one of the same name) and the host's prompt and skill commands it lists beside them.
 * Commands run with a command's ctx; a failing handler is reported as `extension_error` and its
 * message returned.
 */
import type { ExtensionRecord } from "./api.ts";
import { errorMessage } from "./errors.ts";
import { commandContext, listCommands, mergeCommands, type OnReplace } from "./registrations.ts";
import type { CommandContext, CommandInfo, ExtensionRuntime } from "./types.ts";

/** What the commands need of their manager. */
interface CommandsHost {
  readonly cwd: string;
  /** Read at each call: the bound host's runtime or the detached one. */
  runtime(): ExtensionRuntime;
  records(): readonly ExtensionRecord[];
  once: OnReplace;
  reload(): Promise<unknown>;
  reportError(extension: string, slot: string, error: string, code?: string): void;
  /** Say once that `extension` used `what`, which this host does not offer (`why`). */
  unsupported(extension: string, what: string, why: string): void;
  /** What the adapters add to a command's ctx (`ManagerAdapter.extendCommandContext`). */
  extendCommandContext(ctx: CommandContext, extension: string): void;
}

/** How running a command or a shortcut went: `ran: false` when nothing has that name. */
export interface CommandOutcome {
  ran: boolean;
  error?: string;
}

export class ExtensionCommands {
  private resourceCommands: CommandInfo[] = [];

  constructor(private readonly host: CommandsHost) {}

  /** Extension commands, then the host's prompt and skill commands whose name no extension took. */
  list(): CommandInfo[] {
    return listCommands(this.merged(), this.resourceCommands, this.host.cwd);
  }

  setResourceCommands(commands: readonly CommandInfo[]): void {
    this.resourceCommands = commands.map((c) => ({ ...c }));
  }

  run(name: string, args: string, signal: AbortSignal | undefined): Promise<CommandOutcome> {
    const command = this.merged().get(name.replace(/^\//, ""));
    if (!command) return Promise.resolve({ ran: false });
    const ctx = this.context(command.record, signal);
    return this.attempt(command.record, `command:${command.name}`, () => command.handler(args, ctx));
  }

  /** Run one handler of `record`; a failure is its `extension_error` on `slot`, and the outcome's `error`. */
  private async attempt(record: ExtensionRecord, slot: string, handler: () => unknown): Promise<CommandOutcome> {
    try {
      await handler();
      return { ran: true };
    } catch (error) {
      this.host.reportError(record.name, slot, errorMessage(error), "MYPI_HANDLER_FAILED");
      return { ran: true, error: errorMessage(error) };
    }
  }

  /** A command's ctx for the attached extension named `extension` (`withSession` of a new session), or undefined. */
  contextFor(extension: string): CommandContext | undefined {
    const record = this.host.records().find((r) => r.name === extension);
    return record && this.context(record);
  }

  /** The ctx a command of `record` runs with (and, through `contextFor`, a Pi shortcut). */
  private context(record: ExtensionRecord, signal?: AbortSignal): CommandContext {
    const ctx = commandContext(record.context, signal, {
      waitForIdle: () => this.host.runtime().waitForIdle(),
      reload: async () => void (await this.host.reload()),
      fork: (entryId) => this.host.runtime().fork(entryId),
      newSession: async (options = {}) => {
        const runtime = this.host.runtime();
        if (!runtime.newSession) {
          this.host.unsupported(record.name, "ctx.newSession", "this host cannot replace its session");
          return { cancelled: true };
        }
        return runtime.newSession({ ...options, extension: record.name });
      },
    });
    this.host.extendCommandContext(ctx, record.name);
    return ctx;
  }

  private merged() {
    return mergeCommands(this.host.records(), this.host.once);
  }
}
