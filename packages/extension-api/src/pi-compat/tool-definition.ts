/**
 * Pi's own tool shape (`execute(toolCallId, params, signal, onUpdate, ctx)`, a JSON-schema
 * `parameters`, `executionMode`, `prepareArguments`, `promptSnippet` / `promptGuidelines`) as a
 * mypi tool. `pi.registerTool` takes it through this layer; without Pi compatibility only
 * `defineTool` tools and definitions with a zod or JSON schema are accepted (api.ts).
 */
import { defineTool, type JSONSchema, type Tool, type ToolContext } from "@mypi/kernel";
import { withSignal } from "../context.ts";
import { describeValue } from "../errors.ts";
import type { ExtensionContext, PiToolDefinition } from "../types.ts";
import { TOOL_PROMPTS, toolPrompt } from "./prompt.ts";

/** A definition for this adapter: not a mypi tool, no zod or JSON schema, an `execute` function. */
export function isPiToolDefinition(definition: unknown): definition is PiToolDefinition {
  if (typeof definition !== "object" || definition === null) return false;
  const d = definition as { parameters?: { safeParse?: unknown }; jsonSchema?: unknown; execute?: unknown };
  return typeof d.execute === "function" && d.jsonSchema === undefined && typeof d.parameters?.safeParse !== "function";
}

/**
 * The tool for a Pi definition; its handlers see `context` with the call's `signal`. Throws a
 * plain `Error` saying what is wrong (`registerTool` adds its code and the tool's name).
 */
export function piTool(pi: PiToolDefinition, context: ExtensionContext): Tool {
  if (pi.prepareArguments !== undefined && typeof pi.prepareArguments !== "function")
    throw new Error("prepareArguments must be a function (args) => args");
  if (pi.executionMode !== undefined && pi.executionMode !== "sequential" && pi.executionMode !== "parallel") {
    throw new Error(`executionMode must be "sequential" or "parallel", got ${describeValue(pi.executionMode)}`);
  }
  const tool = defineTool({
    name: pi.name,
    description: pi.description,
    jsonSchema: pi.parameters as JSONSchema,
    ...(pi.executionMode === "parallel" && { parallelSafe: true }),
    ...(pi.prepareArguments && { prepareArguments: pi.prepareArguments }),
    execute: async (args: Record<string, unknown>, ctx: ToolContext) => {
      const path = ctx.context?.agentPath;
      // The agent running the call: a child's path when a child agent calls (docs/subagents.md).
      const toolCtx = withSignal(context, {
        signal: ctx.signal,
        ...(Array.isArray(path) && { agentPath: path as readonly string[] }),
      });
      const result = await pi.execute(ctx.toolCallId, args, ctx.signal, (partial) => ctx.onUpdate(partial), toolCtx);
      // terminate: Pi's "end the run after this batch" (the model is not called again).
      return {
        content: result?.content ?? [],
        details: result?.details,
        isError: result?.isError,
        ...(result?.terminate === true && { terminate: true }),
      };
    },
  });
  const prompt = toolPrompt(pi);
  if (prompt) TOOL_PROMPTS.set(tool, prompt);
  return tool;
}
