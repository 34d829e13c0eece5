/**
 * The checks registration makes on what an extension passes, where the mistake is made, with coded
 * errors that say how to fix it (fastify's `validate`): `pi.on`'s options, a tool definition, the
 * names of commands and flags — and `parseSlashCommand`, which reads typed lines with the rule
 * `registerCommand` checks names by. Apart from `api.ts` (the `pi` object, which calls them) so that
 * each check reads whole; none of them touches the manager.
 */
import type { Tool } from "@mypi/kernel";
import { defineTool, isTool } from "@mypi/kernel";
import { ExtensionError, describeValue, invalidToolError } from "./errors.ts";
import type { ExtensionRecord, HandlerRecord } from "./extension-record.ts";
import type { EventName, Route } from "./types.ts";

/** What `registerCommand` accepts as a name; `parseSlashCommand` splits typed lines with the same rule. */
const COMMAND_NAME_PATTERN = "[a-zA-Z0-9][a-zA-Z0-9_:.-]*";
export const COMMAND_NAME = new RegExp(`^${COMMAND_NAME_PATTERN}$`);
const SLASH_COMMAND = new RegExp(`^/(${COMMAND_NAME_PATTERN})(?:\\s+([\\s\\S]*))?$`);
export const FLAG_NAME = /^[a-zA-Z0-9][a-zA-Z0-9-]*$/;

/**
 * Split a typed line `/name args` into the command's name and its arguments (trimmed), or
 * `undefined` when the line is not a command call (text for the model, such as "/etc/hosts is
 * broken"). Every mode reads prompts with this one function, so a name `registerCommand`
 * accepts is a name every mode can run.
 */
export function parseSlashCommand(line: string): { name: string; args: string } | undefined {
  const m = SLASH_COMMAND.exec(line.trim());
  return m ? { name: m[1]!, args: (m[2] ?? "").trim() } : undefined;
}

export function checkOptions(
  name: EventName,
  route: Route,
  options: unknown,
): Omit<HandlerRecord, "name" | "handler" | "seq"> {
  if (options === undefined) return {};
  const where = `pi.on("${name}", handler, options)`;
  const invalid = (message: string) => new ExtensionError("MYPI_INVALID_OPTIONS", `${where}: ${message}`);
  if (typeof options !== "object" || options === null) throw invalid("options must be an object");
  const allowed = route === "observer" ? ["timeoutMs", "label"] : ["order", "timeoutMs", "onError", "agents", "label"];
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      const note =
        route === "observer" && (key === "order" || key === "onError" || key === "agents")
          ? ` (${key} applies to decision slots; observers take timeoutMs and label)`
          : "";
      throw invalid(`unknown option "${key}"${note}; options: ${allowed.join(", ")}`);
    }
  }
  const o = options as { order?: unknown; timeoutMs?: unknown; onError?: unknown; agents?: unknown; label?: unknown };
  if (o.order !== undefined && o.order !== "pre" && o.order !== "post")
    throw invalid(`order must be "pre" or "post", got ${describeValue(o.order)}`);
  if (
    o.timeoutMs !== undefined &&
    !(typeof o.timeoutMs === "number" && o.timeoutMs > 0 && Number.isFinite(o.timeoutMs))
  ) {
    throw invalid(`timeoutMs must be a positive number of milliseconds, got ${describeValue(o.timeoutMs)}`);
  }
  if (o.onError !== undefined && o.onError !== "open" && o.onError !== "closed")
    throw invalid(`onError must be "open" or "closed", got ${describeValue(o.onError)}`);
  if (o.agents !== undefined && o.agents !== "all" && o.agents !== "root")
    throw invalid(
      `agents must be "all" (the main agent and its child agents) or "root" (the main agent only), got ${describeValue(o.agents)}`,
    );
  if (o.label !== undefined && (typeof o.label !== "string" || o.label.trim() === ""))
    throw invalid(`label must be a non-empty string, got ${describeValue(o.label)}`);
  const out: {
    order?: "pre" | "post";
    timeoutMs?: number;
    onError?: "open" | "closed";
    agents?: "all" | "root";
    label?: string;
  } = {};
  if (o.label !== undefined) out.label = o.label as string;
  if (o.order !== undefined) out.order = o.order;
  if (o.timeoutMs !== undefined) out.timeoutMs = o.timeoutMs as number;
  if (o.onError !== undefined) out.onError = o.onError;
  if (o.agents !== undefined) out.agents = o.agents;
  return out;
}

/**
 * A `defineTool` tool as is; a plain definition with a zod or JSON schema through `defineTool`.
 * Pi's own shape reaches here already adapted (pi-compat/tool-definition.ts), unless the host
 * switched Pi compatibility off.
 */
export function toTool(definition: unknown, record: ExtensionRecord): Tool {
  if (isTool(definition)) return definition;
  const d = definition as { parameters?: unknown; jsonSchema?: unknown; execute?: unknown };
  try {
    if (typeof d !== "object" || d === null)
      throw new Error("expected a tool made with defineTool({...}) or a Pi-style definition");
    const zodLike = typeof (d.parameters as { safeParse?: unknown } | undefined)?.safeParse === "function";
    if (zodLike || d.jsonSchema !== undefined) return defineTool(d as Parameters<typeof defineTool>[0]);
    if (typeof d.execute === "function") {
      throw new Error(
        "a Pi-style definition (execute(toolCallId, params, …)) needs Pi compatibility, which this host switched off (piCompat: false); make the tool with defineTool({...})",
      );
    }
    throw new Error(
      `tool ${JSON.stringify((d as { name?: unknown }).name)} needs execute(toolCallId, params, signal, onUpdate, ctx)`,
    );
  } catch (error) {
    throw invalidToolError(definition, record.name, error);
  }
}
