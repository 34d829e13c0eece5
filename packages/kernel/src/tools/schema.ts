/**
 * Schemas: a zod schema's input JSON Schema (what the model sees), ajv validators for tools that
 * bring a plain JSON Schema, and one formatter that turns either library's issues into the
 * field-by-field text the model reads (the layout of `z.prettifyError`).
 *
 * Schemas are recognised by shape, never `instanceof`: an extension may load its own zod copy.
 */
import { createRequire } from "node:module";
import type AjvModule from "ajv";
import type Ajv2019Module from "ajv/dist/2019.js";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { z } from "zod";
import { cjsDefault } from "../interop.ts";
import type { JSONSchema, ZodLikeSchema } from "../types.ts";
import { truncate } from "./result.ts";

/** One problem with the arguments, independent of the library that found it. */
interface ArgumentIssue {
  path: readonly PropertyKey[];
  message: string;
}

export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; issues: ArgumentIssue[] };

/** At most this many issues are listed; the model fixes the first ones and tries again. */
const MAX_ISSUES = 20;
const MAX_ISSUE_LENGTH = 300;

// ─── zod ─────────────────────────────────────────────────────────────────────────────────────

/** True for anything with zod's `safeParse` (any copy of zod, or a compatible library). */
export function isZodLike(value: unknown): value is ZodLikeSchema {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

/**
 * The input JSON Schema of a zod schema, `$schema` removed. Uses the schema's own
 * `toJSONSchema` when it has one (so a foreign zod copy converts itself), else this copy's.
 * Throws when the schema has no JSON Schema form (Date, BigInt, Map, Set, z.custom(); a
 * transform converts by its input side).
 */
export function zodInputJsonSchema(schema: ZodLikeSchema): JSONSchema {
  const own = (schema as { toJSONSchema?: (opts: object) => unknown }).toJSONSchema;
  const json =
    typeof own === "function"
      ? own.call(schema, { io: "input" })
      : z.toJSONSchema(schema as unknown as z.ZodType, { io: "input" });
  const { $schema: _drop, ...rest } = json as JSONSchema;
  return rest;
}

export function checkWithZod(schema: ZodLikeSchema, value: unknown): ArgumentCheck {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const raw = (parsed.error as { issues?: unknown })?.issues;
  const issues: ArgumentIssue[] = Array.isArray(raw)
    ? raw.map((issue: { path?: unknown; message?: unknown }) => ({
        path: Array.isArray(issue.path) ? (issue.path as PropertyKey[]) : [],
        message: typeof issue.message === "string" ? issue.message : "Invalid input",
      }))
    : [{ path: [], message: String((parsed.error as { message?: unknown })?.message ?? "Invalid input") }];
  return { ok: false, issues };
}

// ─── JSON Schema (ajv) ───────────────────────────────────────────────────────────────────────

const AJV_OPTIONS = {
  allErrors: true,
  useDefaults: true,
  coerceTypes: false,
  // Schemas from MCP servers and Pi tools carry keywords and formats ajv does not know; they
  // must not make a tool unusable, and nothing may be printed to the console.
  strict: false,
  validateFormats: false,
  logger: false,
} as const;

type AjvInstance = InstanceType<ReturnType<typeof cjsDefault<typeof AjvModule>>>;
const instances = new Map<string, AjvInstance>();
// ajv (CommonJS, three dialects, some forty files) is required on the first plain JSON Schema:
// most runs have only zod-schema tools, and loading it cost a tenth of `mypi -p`'s start-up.
const requireCjs = createRequire(import.meta.url);

function ajvFor(draft: "07" | "2019" | "2020"): AjvInstance {
  let ajv = instances.get(draft);
  if (!ajv) {
    if (draft === "2020") ajv = new (cjsDefault(requireCjs("ajv/dist/2020.js") as typeof Ajv2020Module))(AJV_OPTIONS);
    else if (draft === "2019")
      ajv = new (cjsDefault(requireCjs("ajv/dist/2019.js") as typeof Ajv2019Module))(AJV_OPTIONS);
    else ajv = new (cjsDefault(requireCjs("ajv") as typeof AjvModule))(AJV_OPTIONS);
    instances.set(draft, ajv);
  }
  return ajv;
}

/**
 * Compile a JSON Schema once. The dialect follows `$schema` (2020-12, 2019-09, else draft-07);
 * `$schema` itself is dropped so an unknown meta-schema URL cannot fail the compile. The
 * schema is removed from ajv's registry right away: compiled functions stay valid, repeated
 * registrations (reloads) do not leak, and two tools may share an `$id`.
 * Throws ajv's error when the schema is invalid.
 */
export function compileJsonSchema(schema: JSONSchema): ValidateFunction {
  const { $schema, ...body } = schema;
  const dialect = typeof $schema === "string" ? $schema : "";
  const ajv = ajvFor(dialect.includes("2020-12") ? "2020" : dialect.includes("2019-09") ? "2019" : "07");
  try {
    return ajv.compile(body);
  } finally {
    ajv.removeSchema(body);
  }
}

/** Validate (and fill defaults into) a private copy of `value`; the caller's object is untouched. */
export function checkWithAjv(validate: ValidateFunction, value: unknown): ArgumentCheck {
  const copy = structuredClone(value);
  if (validate(copy)) return { ok: true, value: copy };
  return { ok: false, issues: (validate.errors ?? []).map(ajvIssue) };
}

function ajvIssue(error: ErrorObject): ArgumentIssue {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((seg) => (/^(0|[1-9]\d*)$/.test(seg) ? Number(seg) : seg));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { path, message: `Missing required property ${JSON.stringify(params.missingProperty)}` };
    case "additionalProperties":
      return { path, message: `Unrecognized key: ${JSON.stringify(params.additionalProperty)}` };
    case "enum":
      return {
        path,
        message: `Invalid option: expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join("|")}`,
      };
    case "const":
      return { path, message: `Invalid input: expected ${JSON.stringify(params.allowedValue)}` };
    default:
      return { path, message: `Invalid input: ${error.message ?? error.keyword}` };
  }
}

// ─── Formatting ──────────────────────────────────────────────────────────────────────────────

/**
 * Issues as `z.prettifyError` lays them out: one `✖ message` line each, followed by
 * `  → at path` when the issue is inside the object; shallow paths first.
 */
export function formatIssues(issues: readonly ArgumentIssue[]): string {
  const sorted = issues
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => a.issue.path.length - b.issue.path.length || a.index - b.index)
    .map(({ issue }) => issue);
  const lines: string[] = [];
  for (const issue of sorted.slice(0, MAX_ISSUES)) {
    lines.push(`✖ ${truncate(issue.message, MAX_ISSUE_LENGTH)}`);
    if (issue.path.length > 0) lines.push(`  → at ${truncate(dotPath(issue.path), MAX_ISSUE_LENGTH)}`);
  }
  if (sorted.length > MAX_ISSUES) lines.push(`✖ … and ${sorted.length - MAX_ISSUES} more problems`);
  return lines.join("\n");
}

function dotPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "symbol") out += `[${String(seg)}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
