/**
 * `defineTool` and what hangs off a tool: the brand, the shape checks with coded errors, the
 * schema the model sees and the compiled validator (both computed once per tool).
 */
import { errorMessage } from "../values.ts";
import type { ValidateFunction } from "ajv";
import type { JSONSchema, Tool, ToolContext, ToolReturn, ToolSchema, WorkerSpec, ZodLikeSchema } from "../types.ts";
import { compileJsonSchema, isZodLike, zodInputJsonSchema } from "./schema.ts";

/**
 * Brands the objects `defineTool` returns, so a host tells them from Pi-style definitions.
 * A registry symbol (`Symbol.for`), so a second copy of the kernel recognises the brand too.
 */
export const TOOL_BRAND: unique symbol = Symbol.for("mypi.tool");

export type ToolDefinitionErrorCode =
  | "MYPI_TOOL_SHAPE"
  | "MYPI_TOOL_NAME"
  | "MYPI_TOOL_DESCRIPTION"
  | "MYPI_TOOL_SCHEMA"
  | "MYPI_TOOL_EXECUTE"
  | "MYPI_TOOL_OPTION";

/** A tool that cannot work as written. Thrown at definition time; the message says how to fix it. */
export class ToolDefinitionError extends Error {
  override readonly name = "ToolDefinitionError";
  constructor(
    readonly code: ToolDefinitionErrorCode,
    message: string,
  ) {
    super(message);
  }
}

type Awaitable<T> = T | Promise<T>;
type ArgsOf<S> = S extends ZodLikeSchema<infer T> ? T : never;

interface CommonDefinition<Args> {
  /** `^[a-zA-Z0-9_-]{1,64}$` — what model APIs accept. */
  name: string;
  description: string;
  execute?: (args: Args, ctx: ToolContext) => Awaitable<ToolReturn>;
  parallelSafe?: boolean;
  timeoutMs?: number;
  worker?: WorkerSpec;
  callTimeoutMs?: (args: Args) => number | undefined;
  /** Called with the arguments as the model sent them, before validation; returns what is validated. */
  prepareArguments?: (args: unknown) => unknown;
  /** Safe to run again when a resumed run finds a call of it cut off (docs/resume.md). Default false. */
  rerunnable?: boolean;
}

/** A tool whose parameters are a `z.strictObject`. */
export interface ZodToolDefinition<S extends ZodLikeSchema> extends CommonDefinition<ArgsOf<S>> {
  parameters: S;
  jsonSchema?: undefined;
}

/** A tool whose parameters are a plain JSON Schema (MCP, Pi / TypeBox, hand-written). */
export interface JsonSchemaToolDefinition extends CommonDefinition<Record<string, unknown>> {
  jsonSchema: JSONSchema;
  parameters?: undefined;
}

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const schemas = new WeakMap<Tool, ToolSchema>();
const validators = new WeakMap<Tool, ValidateFunction>();

export function defineTool<S extends ZodLikeSchema>(def: ZodToolDefinition<S>): Tool<ArgsOf<S>>;
export function defineTool(def: JsonSchemaToolDefinition): Tool<Record<string, unknown>>;
export function defineTool(def: ZodToolDefinition<ZodLikeSchema> | JsonSchemaToolDefinition): Tool {
  const tool: Tool & { readonly [TOOL_BRAND]: true } = Object.freeze({
    [TOOL_BRAND]: true as const,
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    jsonSchema: def.jsonSchema,
    execute: def.execute as Tool["execute"],
    parallelSafe: def.parallelSafe ?? false,
    timeoutMs: def.timeoutMs,
    worker: def.worker,
    callTimeoutMs: def.callTimeoutMs as Tool["callTimeoutMs"],
    prepareArguments: def.prepareArguments,
    rerunnable: def.rerunnable ?? false,
  });
  prepareTool(tool);
  return tool;
}

/**
 * Check a tool and compute its schema and validator now, so a bad name, a schema with no JSON
 * form or an invalid JSON Schema fails where the tool is defined or registered, not at its first call.
 */
export function prepareTool(tool: Tool): void {
  assertToolShape(tool);
  toolSchema(tool);
  if (tool.jsonSchema !== undefined) toolValidator(tool);
}

/** True for objects made by `defineTool` (by any copy of the kernel). */
export function isTool(value: unknown): value is Tool {
  return typeof value === "object" && value !== null && (value as { [TOOL_BRAND]?: unknown })[TOOL_BRAND] === true;
}

/**
 * Check that an object can run as a tool. `defineTool` and `ToolRegistry.register` call it, so
 * a hand-built `Tool` gets the same coded errors.
 */
function assertToolShape(tool: Tool): void {
  const label = typeof tool?.name === "string" ? `tool ${JSON.stringify(tool.name)}` : "a tool";
  if (typeof tool !== "object" || tool === null) {
    throw new ToolDefinitionError("MYPI_TOOL_SHAPE", "expected a tool object; build one with defineTool({...})");
  }
  if (typeof tool.name !== "string" || !TOOL_NAME_PATTERN.test(tool.name)) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_NAME",
      `invalid tool name ${JSON.stringify(tool.name)}: use 1–64 characters from a–z, A–Z, 0–9, "_" and "-" (e.g. "read_file")`,
    );
  }
  if (typeof tool.description !== "string") {
    throw new ToolDefinitionError(
      "MYPI_TOOL_DESCRIPTION",
      `${label} needs a description string: the model reads it to decide when to call the tool`,
    );
  }
  const hasParameters = tool.parameters !== undefined;
  const hasJsonSchema = tool.jsonSchema !== undefined;
  if (hasParameters === hasJsonSchema) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_SCHEMA",
      `${label} needs exactly one of \`parameters\` (a z.strictObject) or \`jsonSchema\` (a JSON Schema object)` +
        (hasParameters ? ", not both" : "; for no arguments use z.strictObject({})"),
    );
  }
  if (hasParameters && !isZodLike(tool.parameters)) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_SCHEMA",
      `${label}: \`parameters\` must be a zod schema, e.g. z.strictObject({ path: z.string() })`,
    );
  }
  if (
    hasJsonSchema &&
    (typeof tool.jsonSchema !== "object" || tool.jsonSchema === null || tool.jsonSchema.type !== "object")
  ) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_SCHEMA",
      `${label}: \`jsonSchema\` must be a JSON Schema with "type": "object" (tool arguments are always an object)`,
    );
  }
  if (typeof tool.execute !== "function" && tool.worker === undefined) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_EXECUTE",
      `${label} needs \`execute(args, ctx)\` or \`worker: { module, export }\``,
    );
  }
  if (tool.worker !== undefined) {
    const w = tool.worker;
    const moduleOk = typeof w?.module === "string" ? w.module.length > 0 : w?.module instanceof URL;
    if (!moduleOk || typeof w.export !== "string" || w.export.length === 0) {
      throw new ToolDefinitionError(
        "MYPI_TOOL_EXECUTE",
        `${label}: \`worker\` must be { module: <file URL>, export: <function name> }, e.g. { module: new URL("./grep-worker.ts", import.meta.url), export: "grep" }`,
      );
    }
  }
  if (tool.timeoutMs !== undefined && !(typeof tool.timeoutMs === "number" && tool.timeoutMs > 0)) {
    throw new ToolDefinitionError(
      "MYPI_TOOL_OPTION",
      `${label}: \`timeoutMs\` must be a positive number of milliseconds (or left out for no timeout)`,
    );
  }
  if (tool.rerunnable !== undefined && typeof tool.rerunnable !== "boolean") {
    throw new ToolDefinitionError(
      "MYPI_TOOL_OPTION",
      `${label}: \`rerunnable\` must be true or false (true: safe to run again when a resumed run finds a call of it cut off)`,
    );
  }
  if (tool.callTimeoutMs !== undefined && typeof tool.callTimeoutMs !== "function") {
    throw new ToolDefinitionError(
      "MYPI_TOOL_OPTION",
      `${label}: \`callTimeoutMs\` must be a function (args) => milliseconds | undefined`,
    );
  }
}

/** The schema the model sees: zod's input JSON Schema, or the given JSON Schema; `$schema` removed. Cached per tool. */
export function toolSchema(tool: Tool): ToolSchema {
  let schema = schemas.get(tool);
  if (!schema) {
    let parameters: JSONSchema;
    if (tool.parameters !== undefined) {
      try {
        parameters = zodInputJsonSchema(tool.parameters);
      } catch (error) {
        throw new ToolDefinitionError(
          "MYPI_TOOL_SCHEMA",
          `tool ${JSON.stringify(tool.name)}: its parameters have no JSON Schema form (${errorMessage(error)}); ` +
            `use JSON types only (no Date, BigInt, Map, Set, Symbol, undefined, NaN, function or z.custom(); ` +
            `a .transform() is fine, the model sees its input side)`,
        );
      }
      if (parameters.type !== "object" || parameters.additionalProperties !== false) {
        throw new ToolDefinitionError(
          "MYPI_TOOL_SCHEMA",
          `tool ${JSON.stringify(tool.name)}: \`parameters\` must be a z.strictObject({...}) so unknown keys are refused and the model sees additionalProperties: false`,
        );
      }
    } else {
      const { $schema: _drop, ...rest } = JSON.parse(JSON.stringify(tool.jsonSchema)) as JSONSchema;
      parameters = rest;
    }
    schema = deepFreeze({ name: tool.name, description: tool.description, parameters });
    schemas.set(tool, schema);
  }
  return schema;
}

/** The compiled ajv validator of a JSON Schema tool (compiled once, on first use). */
export function toolValidator(tool: Tool): ValidateFunction {
  let validate = validators.get(tool);
  if (!validate) {
    try {
      validate = compileJsonSchema(JSON.parse(JSON.stringify(tool.jsonSchema)) as JSONSchema);
    } catch (error) {
      throw new ToolDefinitionError(
        "MYPI_TOOL_SCHEMA",
        `tool ${JSON.stringify(tool.name)}: \`jsonSchema\` is not a valid JSON Schema: ${errorMessage(error)}`,
      );
    }
    validators.set(tool, validate);
  }
  return validate;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
