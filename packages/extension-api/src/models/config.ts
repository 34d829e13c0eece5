/**
 * How providers and models are written — in settings (`providers`, `models`) and in
 * `pi.registerProvider(name, config)` — checked with one schema, and turned into definitions the
 * registry merges. The shape is Pi's `models.json` provider (a Pi user's `providers` block pastes
 * in as it is), plus mypi's `thinkingLevels` list beside Pi's `thinkingLevelMap`.
 *
 * Fields of Pi's that mypi does not read (`compat`, `samplingParams`, `inputLimits`, …) are
 * listed in `ignored`, so the host can say once that they have no effect.
 */
import { z } from "zod";
import type { EffortTable, ModelApi, ModelPrices, ThinkingLevel } from "@mypi/kernel";
import { levelsFromPiMap, THINKING_LEVELS } from "./thinking.ts";
import type { ModelInput } from "./types.ts";

export const MODEL_APIS: readonly ModelApi[] = ["openai-completions", "openai-responses", "anthropic-messages"];
/** A provider name: used as `--model <provider>/<id>`. */
export const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const Url = z.string().regex(/^https?:\/\//, "must be an http(s) URL");
const Headers = z.record(z.string(), z.string());
const Count = z.number().int().positive();
const Price = z.number().nonnegative();

const ModelFields = z.looseObject({
  name: z.string().optional(),
  api: z.enum(MODEL_APIS as [ModelApi, ...ModelApi[]]).optional(),
  baseUrl: Url.optional(),
  reasoning: z.boolean().optional(),
  /** mypi's form: the levels the model supports. */
  thinkingLevels: z
    .array(z.enum(THINKING_LEVELS as [ThinkingLevel, ...ThinkingLevel[]]))
    .min(1)
    .optional(),
  /** Pi's form: level → the value sent (`null`: unsupported). */
  thinkingLevelMap: z.record(z.string(), z.string().nullable()).optional(),
  input: z.array(z.enum(["text", "image"])).optional(),
  /** Dollars per million tokens. */
  cost: z
    .looseObject({ input: Price, output: Price, cacheRead: Price.optional(), cacheWrite: Price.optional() })
    .optional(),
  contextWindow: Count.optional(),
  maxTokens: Count.optional(),
  headers: Headers.optional(),
});
const ModelDef = ModelFields.extend({ id: z.string().min(1, "a model needs an id") });

const ProviderConfigSchema = z.looseObject({
  name: z.string().optional(),
  baseUrl: Url.optional(),
  api: z.enum(MODEL_APIS as [ModelApi, ...ModelApi[]]).optional(),
  /** A literal, `$VAR`, `${VAR}` or `!command`. */
  apiKey: z.string().optional(),
  headers: Headers.optional(),
  models: z.array(ModelDef).optional(),
  /** Pi's: change fields of models the provider already has, by id. */
  modelOverrides: z.record(z.string(), ModelFields).optional(),
});

/** Settings `providers`: name → provider. */
export const ProvidersSettingSchema = z.record(
  z.string().regex(PROVIDER_NAME, 'a provider name is letters, digits, ".", "_" and "-"'),
  ProviderConfigSchema,
);
/** Settings `models`: `provider/id` → the fields to set (a model that does not exist yet is added). */
export const ModelsSettingSchema = z.record(
  z.string().regex(/^[^/]+\/.+$/, 'a key is "<provider>/<model id>"'),
  ModelFields,
);

type ModelFieldsInput = z.infer<typeof ModelFields>;

/** What one definition says about a model; every field optional but the id. */
export interface ModelDefinition {
  id: string;
  name?: string;
  api?: ModelApi;
  baseUrl?: string;
  reasoning?: boolean;
  thinkingLevels?: readonly ThinkingLevel[];
  efforts?: EffortTable;
  input?: readonly ModelInput[];
  prices?: ModelPrices;
  contextWindow?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
}
export type ModelPatch = Omit<ModelDefinition, "id">;

export interface ProviderDefinition {
  name: string;
  api?: ModelApi;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /** Added to the provider, replacing a model of the same id. */
  models: ModelDefinition[];
  /** Pi's `modelOverrides`: fields changed on models the provider has. */
  overrides: Record<string, ModelPatch>;
  /** `settings <file>` or `extension <name>`. */
  source: string;
  /** Pi's fields mypi reads nothing from, `models.0.compat` style. */
  ignored: string[];
}

const PROVIDER_KEYS = new Set(["name", "baseUrl", "api", "apiKey", "headers", "models", "modelOverrides"]);
const MODEL_KEYS = new Set([
  "id",
  "name",
  "api",
  "baseUrl",
  "reasoning",
  "thinkingLevels",
  "thinkingLevelMap",
  "input",
  "cost",
  "contextWindow",
  "maxTokens",
  "headers",
]);

/** A provider config (settings or `pi.registerProvider`), checked; a string is what is wrong, naming the field. */
export function parseProviderConfig(name: string, config: unknown, source: string): ProviderDefinition | string {
  if (!PROVIDER_NAME.test(name))
    return `the name must be letters, digits, ".", "_" and "-" (used as --model ${name}/<model>)`;
  const parsed = ProviderConfigSchema.safeParse(config);
  if (!parsed.success) return issueText(parsed.error);
  const c = parsed.data;
  const ignored = unknownKeys(c, PROVIDER_KEYS, "");
  const models = (c.models ?? []).map((m, i) => {
    ignored.push(...unknownKeys(m, MODEL_KEYS, `models.${i}.`));
    return { id: m.id, ...modelPatch(m) };
  });
  const overrides: Record<string, ModelPatch> = {};
  for (const [id, fields] of Object.entries(c.modelOverrides ?? {})) {
    ignored.push(...unknownKeys(fields, MODEL_KEYS, `modelOverrides.${id}.`));
    overrides[id] = modelPatch(fields);
  }
  return {
    name,
    ...(c.api !== undefined && { api: c.api }),
    ...(c.baseUrl !== undefined && { baseUrl: c.baseUrl }),
    ...(c.apiKey !== undefined && { apiKey: c.apiKey }),
    ...(c.headers !== undefined && { headers: c.headers }),
    models,
    overrides,
    source,
    ignored,
  };
}

/** Settings `models` entries as patches by `provider/id`; the schema has checked them already. */
export function parseModelPatches(
  models: Record<string, unknown>,
): { key: string; provider: string; id: string; patch: ModelPatch; ignored: string[] }[] {
  return Object.entries(models).map(([key, value]) => {
    const fields = ModelFields.parse(value);
    const slash = key.indexOf("/");
    return {
      key,
      provider: key.slice(0, slash),
      id: key.slice(slash + 1),
      patch: modelPatch(fields),
      ignored: unknownKeys(fields, MODEL_KEYS, ""),
    };
  });
}

function modelPatch(m: ModelFieldsInput): ModelPatch {
  const patch: ModelPatch = {};
  if (m.name !== undefined) patch.name = m.name;
  if (m.api !== undefined) patch.api = m.api;
  if (m.baseUrl !== undefined) patch.baseUrl = m.baseUrl;
  if (m.reasoning !== undefined) patch.reasoning = m.reasoning;
  if (m.thinkingLevels !== undefined) {
    patch.thinkingLevels = m.thinkingLevels;
    // The levels it lacks are unsupported; the others go out under their own names.
    patch.efforts = Object.fromEntries(
      THINKING_LEVELS.filter((l) => !m.thinkingLevels!.includes(l)).map((l) => [l, null]),
    );
  } else if (m.thinkingLevelMap !== undefined) {
    patch.thinkingLevels = levelsFromPiMap(m.thinkingLevelMap);
    // Pi's map is the values sent; a level mypi does not have (Pi's `max`) is left out.
    patch.efforts = Object.fromEntries(
      Object.entries(m.thinkingLevelMap).filter(([l]) => (THINKING_LEVELS as readonly string[]).includes(l)),
    );
  }
  if (m.input !== undefined) patch.input = m.input;
  if (m.cost !== undefined) {
    const { input, output, cacheRead, cacheWrite } = m.cost;
    patch.prices = {
      input,
      output,
      ...(cacheRead !== undefined && { cacheRead }),
      ...(cacheWrite !== undefined && { cacheWrite }),
    };
  }
  if (m.contextWindow !== undefined) patch.contextWindow = m.contextWindow;
  if (m.maxTokens !== undefined) patch.maxTokens = m.maxTokens;
  if (m.headers !== undefined) patch.headers = m.headers;
  return patch;
}

function unknownKeys(value: object, known: ReadonlySet<string>, prefix: string): string[] {
  return Object.keys(value)
    .filter((k) => !known.has(k))
    .map((k) => `${prefix}${k}`);
}

/** The first issue, as `path: message`. */
export function issueText(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}
