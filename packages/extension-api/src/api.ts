/**
 * The `pi` object one extension receives (docs/extensions.md#5-the-rest-of-pi). What it registers
 * lands in the extension's record (`extension-record.ts`). Registration is validated here, where the
 * mistake is made, with coded errors that say how to fix it (fastify's `validate`); the checks that
 * take more than a line (`pi.on` options, tool definitions, name rules) are in `registration-checks.ts`.
 */
import { format } from "node:util";
import type { Content } from "@mypi/kernel";
import type { Emitter } from "mitt";
import { customMessageFrom } from "./custom-message.ts";
import { ExtensionError, closest, describeValue, errorMessage } from "./errors.ts";
import { exec } from "./exec.ts";
import type { ExtensionRecord, HandlerRecord } from "./extension-record.ts";
import { MCP_PROVIDER_CHANNEL, type McpServerRegistry } from "./mcp-servers.ts";
import { COMMAND_NAME, FLAG_NAME, checkOptions, toTool } from "./registration-checks.ts";
import {
  ROUTES,
  type CommandInfo,
  type EventName,
  type ExtensionAPI,
  type ExtensionRuntime,
  type ToolInfo,
} from "./types.ts";

export { createRecord, type ExtensionRecord, type HandlerRecord } from "./extension-record.ts";
export { parseSlashCommand } from "./registration-checks.ts";

/** What the `pi` object needs from its manager. */
export interface ApiHost {
  readonly cwd: string;
  readonly projectTrusted: boolean;
  readonly channels: Emitter<Record<string, unknown>>;
  /** The bound host's runtime, or the detached one whose actions throw `MYPI_NOT_READY`. */
  readonly runtime: ExtensionRuntime;
  /** A host is bound (its runtime is not the detached one). */
  readonly bound: boolean;
  toolsChanged(record: ExtensionRecord): void;
  effectiveTools(): ToolInfo[];
  /** Who registered the tool the model would get under `name`: an extension's name, `host`, or undefined. */
  toolOwner(name: string): string | undefined;
  /** Active tool names (the manager's registry, bound or not). */
  activeToolNames(): string[];
  getCommands(): CommandInfo[];
  flagValue(name: string): string | boolean | undefined;
  /** A fresh copy of the effective settings. */
  settings(): Record<string, unknown>;
  /** Narrow the agent's tools to the known ones of `names` (unknown: a diagnostic naming `extension`). */
  setActiveTools(extension: string, names: readonly string[]): void;
  reportError(extension: string, slot: string, error: string, code?: string): void;
  /** `pi.log`: into the bound host's stream, else to the diagnostics. */
  log(extension: string, level: "info" | "warn" | "error", message: string): void;
  diagnostic(message: string): void;
  /** `pi.registerMcpServer` and its kin (mcp-servers.ts). */
  readonly mcpServers: McpServerRegistry;
}

const EVENT_NAMES = Object.keys(ROUTES) as EventName[];
/**
 * `pi.events.emit` calls nested inside listeners (delivery is synchronous). A listener that emits
 * what it listens to would recurse until the call stack overflows; this depth stops it first.
 */
const MAX_EMIT_DEPTH = 64;
let emitDepth = 0;

export function createExtensionAPI(record: ExtensionRecord, host: ApiHost): ExtensionAPI {
  const fail = (code: ConstructorParameters<typeof ExtensionError>[0], message: string) =>
    new ExtensionError(code, message, { extension: record.name });

  const usable = (what: string) => {
    if (record.state === "disposed") {
      throw fail(
        "MYPI_NOT_READY",
        `pi.${what}(): this instance of ${record.name} was unloaded (reload or shutdown); stop timers and listeners in a session_shutdown handler`,
      );
    }
  };
  /** The runtime of this usable instance (without an agent, the detached one refuses the action). */
  const runtime = (what: string): ExtensionRuntime => {
    usable(what);
    return host.runtime;
  };

  const api: ExtensionAPI = {
    get cwd() {
      return host.cwd;
    },
    isProjectTrusted: () => host.projectTrusted,

    on(name, handler, options) {
      if (record.state !== "loading") {
        throw fail(
          "MYPI_LATE_REGISTRATION",
          `pi.on(${JSON.stringify(name)}) after ${record.name} finished loading; call pi.on in the extension's default export, before it returns`,
        );
      }
      if (typeof name !== "string" || !Object.hasOwn(ROUTES, name)) {
        const guess = typeof name === "string" ? closest(name, EVENT_NAMES) : undefined;
        throw fail(
          "MYPI_UNKNOWN_EVENT",
          `pi.on(${describeValue(name)}): no such event.${guess ? ` Did you mean "${guess}"?` : ""} Events: ${EVENT_NAMES.join(", ")}`,
        );
      }
      const route = ROUTES[name];
      if (typeof handler !== "function") {
        const shape = route === "observer" ? "(event, ctx) => void" : "(event, ctx, next) => result";
        throw fail(
          "MYPI_INVALID_HANDLER",
          `pi.on("${name}", ${describeValue(handler)}): the handler must be a function ${shape}`,
        );
      }
      record.handlers.push({
        name,
        handler: handler as HandlerRecord["handler"],
        seq: record.handlers.length,
        ...checkOptions(name, route, options),
      });
    },

    registerTool(definition) {
      usable("registerTool");
      const tool = toTool(definition, record);
      // A name registered again replaces the earlier tool (Pi keeps them in a map): an extension
      // that refreshes its tools registers them anew, and the model sees the new one at its next call.
      record.tools.set(tool.name, tool);
      if (record.state === "attached") host.toolsChanged(record);
    },

    unregisterTool(name) {
      usable("unregisterTool");
      if (typeof name !== "string")
        throw fail(
          "MYPI_UNKNOWN_TOOL",
          `unregisterTool(${describeValue(name)}): give the name of a tool this extension registered`,
        );
      if (record.tools.delete(name)) {
        if (record.state === "attached") host.toolsChanged(record);
        return;
      }
      const own = [...record.tools.keys()];
      const yours = own.length ? `its tools: ${own.join(", ")}` : "it has registered no tools";
      const owner = host.toolOwner(name);
      if (owner !== undefined) {
        const by = owner === "host" ? "the host" : `the extension ${owner}`;
        throw fail(
          "MYPI_NOT_OWNER",
          `unregisterTool("${name}"): the tool was registered by ${by}, not by ${record.name}; an extension can only remove its own tools (${yours}). To hide it from the model, use setActiveTools`,
        );
      }
      throw fail(
        "MYPI_UNKNOWN_TOOL",
        `unregisterTool("${name}"): no tool of that name is registered (${record.name}: ${yours})`,
      );
    },

    registerCommand(name, command) {
      usable("registerCommand");
      const bare = typeof name === "string" ? name.replace(/^\//, "") : name;
      if (typeof bare !== "string" || !COMMAND_NAME.test(bare)) {
        throw fail(
          "MYPI_INVALID_COMMAND",
          `registerCommand(${describeValue(name)}): a command name is letters, digits, "_", ":", "." and "-" (typed as /name)`,
        );
      }
      if (typeof command?.handler !== "function") {
        throw fail("MYPI_INVALID_COMMAND", `registerCommand("${bare}", …): give { description?, handler(args, ctx) }`);
      }
      record.commands.set(bare, command); // again: replaces the earlier one, as in Pi
    },

    getCommands: () => host.getCommands(),

    registerFlag(name, flag) {
      usable("registerFlag");
      if (typeof name !== "string" || !FLAG_NAME.test(name)) {
        throw fail(
          "MYPI_INVALID_FLAG",
          `registerFlag(${describeValue(name)}): a flag name is letters, digits and "-", without the leading "--"`,
        );
      }
      if (flag?.type !== "boolean" && flag?.type !== "string") {
        throw fail(
          "MYPI_INVALID_FLAG",
          `registerFlag("${name}", …): give { type: "boolean" | "string", description?, default? }`,
        );
      }
      record.flags.set(name, flag); // again: replaces the earlier one, as in Pi
    },

    registerRedactor(redact) {
      if (record.state !== "loading")
        throw fail(
          "MYPI_LATE_REGISTRATION",
          `pi.registerRedactor() after ${record.name} finished loading; call it in the extension's default export, before it returns`,
        );
      if (typeof redact !== "function")
        throw fail(
          "MYPI_INVALID_REDACTOR",
          `registerRedactor(${describeValue(redact)}): give a function (value) => value that returns the value with secrets masked`,
        );
      record.redactors.push(redact);
    },

    getFlag(name) {
      const flag = record.flags.get(name);
      if (!flag) return undefined;
      return host.flagValue(name) ?? flag.default;
    },

    getSettings() {
      return host.settings();
    },

    sendMessage(message, options = {}) {
      const made = customMessageFrom(message);
      if ("problem" in made) throw fail("MYPI_BAD_RESULT", `sendMessage(${describeValue(message)}): ${made.problem}`);
      runtime("sendMessage").sendMessage(made, options);
    },

    sendUserMessage(content, options = {}) {
      if (typeof content !== "string" && !Array.isArray(content)) {
        throw fail(
          "MYPI_BAD_RESULT",
          `sendUserMessage(${describeValue(content)}): give a string or an array of text/image content`,
        );
      }
      runtime("sendUserMessage").sendUserMessage(content as string | Content[], options);
    },

    appendEntry(customType, data) {
      if (typeof customType !== "string" || customType === "") {
        throw fail(
          "MYPI_BAD_RESULT",
          `appendEntry(${describeValue(customType)}, …): the first argument is a non-empty customType string`,
        );
      }
      runtime("appendEntry").appendEntry(customType, data);
    },

    registerMcpServer(name, config) {
      usable("registerMcpServer");
      host.mcpServers.register(record.name, name, config, host.bound);
    },
    unregisterMcpServer(name) {
      usable("unregisterMcpServer");
      host.mcpServers.unregister(record.name, name);
    },
    getMcpServers: () => host.mcpServers.list(),
    createAgent: async (options = {}) => runtime("createAgent").createAgent(options),

    events: {
      emit(channel, data) {
        if (emitDepth >= MAX_EMIT_DEPTH) {
          throw fail(
            "MYPI_EVENT_LOOP",
            `pi.events.emit(${JSON.stringify(channel)}) nested ${emitDepth} deep: listeners keep emitting events that lead back to themselves; emit from a listener only what cannot come back to it`,
          );
        }
        emitDepth++;
        try {
          // The MCP extension offers its provider on this channel; the registry must know who did.
          if (channel === MCP_PROVIDER_CHANNEL) host.mcpServers.offer(record.name, data);
          host.channels.emit(channel, data);
        } finally {
          emitDepth--;
        }
      },
      on(channel, handler) {
        usable("events.on");
        if (typeof handler !== "function")
          throw fail(
            "MYPI_INVALID_HANDLER",
            `events.on("${channel}", ${describeValue(handler)}): the listener must be a function`,
          );
        const slot = `events:${channel}`;
        const report = (error: unknown) =>
          host.reportError(record.name, slot, errorMessage(error), "MYPI_HANDLER_FAILED");
        const fn = (data: unknown) => {
          try {
            const r = handler(data) as unknown;
            if (r instanceof Promise) r.catch(report);
          } catch (error) {
            report(error);
          }
        };
        host.channels.on(channel, fn);
        const entry = { channel, fn };
        record.listeners.push(entry);
        return () => {
          host.channels.off(channel, fn);
          const i = record.listeners.indexOf(entry);
          if (i >= 0) record.listeners.splice(i, 1);
        };
      },
    },

    // Usable after a reload too: a timer of the old instance that still logs is no error.
    log: {
      info: (...values) => host.log(record.name, "info", format(...values)),
      warn: (...values) => host.log(record.name, "warn", format(...values)),
      error: (...values) => host.log(record.name, "error", format(...values)),
    },

    exec: (command, args = [], options = {}) => {
      const viaHost = host.runtime.exec;
      return viaHost ? viaHost(command, args, options) : exec(command, args, options, host.cwd);
    },

    getActiveTools: () =>
      record.state === "loading" && record.activeToolsRequest ? [...record.activeToolsRequest] : host.activeToolNames(),
    getAllTools: () => host.effectiveTools(),
    complete: (request) => runtime("complete").complete(request),
    callTool(name, input, options = {}) {
      if (typeof name !== "string" || typeof input !== "object" || input === null || Array.isArray(input)) {
        throw fail(
          "MYPI_BAD_RESULT",
          `callTool(${describeValue(name)}, ${describeValue(input)}): give a tool name and an input object`,
        );
      }
      return runtime("callTool").callTool({ name, input, ...(options.signal && { signal: options.signal }) });
    },

    setActiveTools(names) {
      usable("setActiveTools");
      if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) {
        throw fail("MYPI_BAD_RESULT", `setActiveTools(${describeValue(names)}): give an array of tool names`);
      }
      if (record.state === "loading") record.activeToolsRequest = [...names];
      else host.setActiveTools(record.name, names);
    },

    setSessionName(name) {
      runtime("setSessionName").setSessionName(name);
    },
    getSessionName: () => host.runtime.getSessionName(),

    setLabel(entryId, label) {
      if (typeof entryId !== "string" || (label !== undefined && typeof label !== "string")) {
        throw fail(
          "MYPI_BAD_RESULT",
          `setLabel(${describeValue(entryId)}, ${describeValue(label)}): give an entry id and a label string (or undefined to clear it)`,
        );
      }
      runtime("setLabel").setLabel(entryId, label);
    },
  };
  return api;
}
