/**
 * Which model and thinking level a run starts with (docs/cli.md#models): `--model` (or the
 * settings' `model`) — `provider/id[:thinking]`, part of an id or name, `openai:<name>`,
 * `scripted:<file>` — with `--provider`, `--api-key` and `--thinking`; without one, the first
 * model of `--models` / `enabledModels`, else OpenAI (`OPENAI_API_KEY`) or Anthropic
 * (`ANTHROPIC_API_KEY`). The registry is built from the settings here (a definition that cannot
 * be a model is a usage error naming its key).
 */
import { resolve } from "node:path";
import {
  clientFor,
  ModelRegistry,
  ModelSelection,
  resolveModel,
  resolveScope,
  withThinking,
  type ModelEntry,
  type ScopedModel,
  type SessionChoice,
} from "@mypi/extension-api";
import {
  errorMessage,
  loadScriptedModel,
  RetrySwitch,
  type HttpHooks,
  type ModelClient,
  type ThinkingLevel,
} from "@mypi/kernel";
import type { CliArgs } from "../args.ts";
import type { Settings } from "./settings.ts";

const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";
const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5";

interface ModelChoice {
  selection: ModelSelection;
  /** What the command line chose itself: it wins over what a resumed session used last. */
  explicit: { model: boolean; thinking: boolean };
  /** Said once on stderr: a custom model id, scope patterns that matched nothing. */
  warnings: string[];
}

/** The settings' registry, or the usage error naming the definition. */
export function registryOf(settings: Settings, env: NodeJS.ProcessEnv): ModelRegistry | string {
  const registry = ModelRegistry.fromSettings(
    {
      ...(settings.providers && { providers: settings.providers }),
      ...(settings.models && { models: settings.models }),
    },
    { env },
  );
  return typeof registry === "string"
    ? `settings: ${registry}. Fix the settings file (docs/models.md#the-model-registry).`
    : registry;
}

/**
 * The starting model; a string is the usage error. `cwd`: where a `scripted:` path resolves;
 * `http`: the extensions' HTTP hooks for the client (Pi's provider events); `session`: what a
 * resumed session used last, the model when nothing else names one.
 */
export async function chooseModel(c: {
  args: CliArgs;
  settings: Settings;
  registry: ModelRegistry;
  env: NodeJS.ProcessEnv;
  cwd: string;
  http?: HttpHooks | undefined;
  session?: SessionChoice;
}): Promise<ModelChoice | string> {
  const { args, registry, env } = c;
  // One retry switch for every client of the run (RPC set_auto_retry / abort_retry).
  const retry = new RetrySwitch();
  const options = { retry, ...(c.http && { http: c.http }) };
  const warnings: string[] = [];
  const patterns = args.models ?? c.settings.enabledModels;
  let scope: ScopedModel[] = [];
  if (patterns) {
    const resolved = resolveScope(patterns, registry);
    scope = resolved.models;
    const from = args.models ? "--models" : "enabledModels";
    warnings.push(...resolved.warnings.map((w) => `${from}: ${w}`));
  }
  const spec = args.model ?? (scope.length ? undefined : (sessionSpec(c.session) ?? defaultSpec(env)));
  let client: ModelClient;
  let entry: ModelEntry | undefined;
  let suffix: string | undefined;
  if (spec === undefined && scope.length) {
    entry = scope[0]!.entry;
    suffix = scope[0]!.thinking;
    if (args.apiKey !== undefined) registry.setApiKey(entry.provider, args.apiKey);
    const made = clientFor(entry, registry, options);
    if (typeof made === "string") return `${made}.`;
    client = made;
  } else if (spec === undefined) {
    return "no model: set OPENAI_API_KEY (and MYPI_MODEL) or ANTHROPIC_API_KEY, pass --model provider/id (`mypi models` lists them), --model openai:<name> --base-url URL, or --model scripted:<file>. Try `mypi demo`.";
  } else if (spec.startsWith("scripted:")) {
    try {
      client = await loadScriptedModel(resolve(c.cwd, spec.slice("scripted:".length)));
    } catch (error) {
      return `${errorMessage(error)}. Check the path given to --model scripted:<file>.`;
    }
  } else if (spec.startsWith("openai:")) {
    entry = registry.openaiCompatible(spec.slice("openai:".length), args.baseUrl);
    if (args.apiKey !== undefined) registry.setApiKey("openai", args.apiKey);
    const made = clientFor(entry, registry, options);
    if (typeof made === "string") return `${made}.`;
    client = made;
  } else {
    const found = resolveModel(spec, registry, { ...(args.provider !== undefined && { provider: args.provider }) });
    if ("error" in found) return `--model: ${found.error}.`;
    if (found.warning) warnings.push(`--model: ${found.warning}`);
    entry = found.entry;
    suffix = found.thinking;
    if (args.apiKey !== undefined) registry.setApiKey(entry.provider, args.apiKey);
    const made = clientFor(entry, registry, options);
    if (typeof made === "string") return `${made}.`;
    client = made;
  }
  const thinking = args.thinking ?? suffix ?? c.settings.thinking;
  return {
    selection: new ModelSelection({
      registry,
      client,
      retry,
      ...(entry && { entry }),
      ...(thinking !== undefined && { thinking }),
      scope,
    }),
    explicit: {
      model: args.modelFromFlag === true,
      thinking: args.thinking !== undefined || (args.modelFromFlag === true && suffix !== undefined),
    },
    warnings,
  };
}

/** The model a resumed session used last, as a `--model` would name it. */
function sessionSpec(choice: SessionChoice | undefined): string | undefined {
  const m = choice?.model;
  if (!m) return undefined;
  return m.provider !== undefined && m.modelId !== undefined ? `${m.provider}/${m.modelId}` : m.model;
}

/** With no model named: OpenAI's default when its key is set, else Anthropic's. */
function defaultSpec(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OPENAI_API_KEY) return `openai:${env.MYPI_MODEL || DEFAULT_OPENAI_MODEL}`;
  if (env.ANTHROPIC_API_KEY) return `anthropic/${DEFAULT_ANTHROPIC_MODEL}`;
  return undefined;
}

/**
 * A model by its spec, for child agents (docs/subagents.md): as `--model` names one
 * (`provider/id[:level]`, part of an id, `openai:<name>`, `scripted:<file>`); the client, or why
 * there is none. A `:level` suffix sets the child's thinking level.
 */
export async function lookupModel(
  spec: string,
  c: {
    registry: ModelRegistry;
    cwd: string;
    baseUrl?: string | undefined;
    http?: HttpHooks | undefined;
    retry?: RetrySwitch | undefined;
  },
): Promise<ModelClient | string> {
  if (spec.startsWith("scripted:")) {
    try {
      return await loadScriptedModel(resolve(c.cwd, spec.slice("scripted:".length)));
    } catch (error) {
      return `${errorMessage(error)}. Check the path given as scripted:<file>.`;
    }
  }
  const options = { ...(c.retry && { retry: c.retry }), ...(c.http && { http: c.http }) };
  let entry: ModelEntry;
  let thinking: string | undefined;
  if (spec.startsWith("openai:")) entry = c.registry.openaiCompatible(spec.slice("openai:".length), c.baseUrl);
  else {
    const found = resolveModel(spec, c.registry);
    if ("error" in found) return found.error;
    entry = found.entry;
    thinking = found.thinking;
  }
  const client = clientFor(entry, c.registry, options);
  if (typeof client === "string" || thinking === undefined) return client;
  return withThinking(client, thinking as ThinkingLevel);
}
