/**
 * The Anthropic model client: Claude through the Messages API, streamed through the official
 * `@anthropic-ai/sdk` (docs/models.md#the-anthropic-client).
 *
 * Contract (the kernel's `ModelClient`): `stream()` never throws; every failure ends the stream
 * with one `error` event that keeps what arrived, exactly as the OpenAI client reports them.
 * Overloaded (529), rate limits (429, after `retry-after`), 408/409 and other 5xx are retried
 * here, before anything streamed. The SDK is imported by the first `stream()` of any client.
 */
import { errorMessage } from "../values.ts";
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelClient, ModelPrices, ModelRequest, ModelStreamEvent } from "../types.ts";
import { buildAnthropicRequest } from "./anthropic-request.ts";
import { AnthropicStreamAccumulator } from "./anthropic-stream.ts";
import {
  hookedFetch,
  nonEmpty,
  openWithRetries,
  readEvents,
  type EventStream,
  type HttpHooks,
  type RetryPolicy,
} from "./http.ts";
import type { RetrySwitch } from "./retry-switch.ts";
import {
  abortableSleep,
  classifyError,
  isProtocolError,
  readableErrorFetch,
  transportErrorDetail,
  type ErrorContext,
  type SdkErrorClasses,
  maskUrlCredentials,
} from "./openai-errors.ts";
import { loadAnthropic } from "./sdk-modules.ts";
import { makeStamp, type Stamp } from "./stamp.ts";
import { anthropicTraits, type AnthropicTraits, type EffortTable } from "./thinking.ts";

const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

export interface AnthropicModelOptions {
  /** The model name (`claude-sonnet-4-5`, `claude-opus-4-6`, …). */
  model: string;
  /** Default: `ANTHROPIC_BASE_URL`, else Anthropic's API. Without `/v1`: the SDK adds `/v1/messages`. */
  baseURL?: string;
  /** Default: `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** `false`: `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` are not read (another provider's server). Default true. */
  environment?: boolean;
  /** The client's id. Default `anthropic:<model>`. */
  id?: string;
  /** Recorded on each message and the client. Default `anthropic`. */
  provider?: string;
  http?: HttpHooks;
  /** Extra HTTP headers on every request (e.g. `anthropic-beta`). */
  headers?: Record<string, string>;
  /** `max_tokens` when the request has none (the API requires one). Default: the model's output limit, by name. */
  maxTokens?: number;
  /** Retries after 408/409/429/529/5xx or a transient connection error. Default 3. */
  maxRetries?: number;
  /** Switches the retries at run time (off, or stop the waits in progress): `RetrySwitch`. */
  retry?: RetrySwitch;
  /** First backoff step; doubled per retry, capped at 8 s. Default 500 ms. */
  retryBaseMs?: number;
  /** A stream that sends nothing for this long is ended with an error. Default 120 000 ms. */
  idleTimeoutMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
  /** Dollars per million tokens: each message's `usage.cost`. */
  prices?: ModelPrices;
  /** Whether the model thinks (sends `thinking` for `ModelRequest.thinking`). Default true: every current Claude model does. */
  reasoning?: boolean;
  /** Prompt caching breakpoints on the system prompt, the tools and the history's end. Default true. */
  cache?: boolean;
  /** Adaptive thinking (effort) rather than a token budget. Default: by model name (4.6 and later). */
  adaptiveThinking?: boolean;
  /** Adaptive models: `output_config.effort` per level (`null`: unsupported, clamped). */
  efforts?: EffortTable;
}

interface Connection {
  client: Anthropic;
  errors: SdkErrorClasses;
}

interface ClientState {
  stamp: Stamp;
  model: string;
  unusable: string | undefined;
  sdkOptions: ConstructorParameters<typeof Anthropic>[0];
  connection: Promise<Connection | string> | undefined;
  ctx: ErrorContext;
  policy: RetryPolicy;
  idleTimeoutMs: number;
  maxTokens: number;
  cache: boolean;
  reasoning: boolean;
  traits: AnthropicTraits;
  efforts: EffortTable | undefined;
}

/** Create the client. Never throws for a missing key: the first `stream()` says what to set. */
export function createAnthropicModel(options: AnthropicModelOptions): ModelClient {
  const id = options.id ?? `anthropic:${options.model}`;
  const provider = options.provider ?? "anthropic";
  const env = options.environment === false ? {} : process.env;
  const baseURL = (nonEmpty(options.baseURL) ?? nonEmpty(env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_DEFAULT_BASE_URL).replace(
    /\/+$/,
    "",
  );
  const apiKey = nonEmpty(options.apiKey) ?? nonEmpty(env.ANTHROPIC_API_KEY);
  const traits = anthropicTraits(options.model);
  if (options.adaptiveThinking !== undefined) traits.adaptive = options.adaptiveThinking;
  const state: ClientState = {
    stamp: makeStamp(id, "anthropic-messages", provider, options.prices),
    model: options.model,
    unusable: apiKey === undefined ? `no API key for ${id}: set ANTHROPIC_API_KEY (or pass apiKey)` : undefined,
    sdkOptions: {
      apiKey: apiKey ?? null,
      // Never a credential from elsewhere: the key above is the only one.
      authToken: null,
      baseURL,
      maxRetries: 0,
      defaultHeaders: options.headers,
      fetch: readableErrorFetch(options.http ? hookedFetch(options.http) : undefined),
      ...(process.env.ANTHROPIC_LOG ? {} : { logLevel: "off" as const }),
    },
    connection: undefined,
    ctx: {
      baseURL,
      model: options.model,
      now: options.now ?? Date.now,
      keyVariable: "ANTHROPIC_API_KEY",
      baseURLHint: "Set the base URL with ANTHROPIC_BASE_URL or the baseURL option",
    },
    policy: {
      maxRetries: options.maxRetries ?? 3,
      retryBaseMs: options.retryBaseMs ?? 500,
      sleep: options.sleep ?? abortableSleep,
      retry: options.retry,
    },
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxTokens: options.maxTokens ?? traits.maxTokens,
    cache: options.cache ?? true,
    reasoning: options.reasoning ?? true,
    traits,
    efforts: options.efforts,
  };
  return {
    id,
    api: "anthropic-messages",
    provider,
    stream: (request, signal) => streamMessages(state, request, signal),
  };
}

async function connect(state: ClientState): Promise<Connection | string> {
  let sdk: Awaited<ReturnType<typeof loadAnthropic>>;
  try {
    sdk = await loadAnthropic();
  } catch (err) {
    return `cannot load the Anthropic SDK for ${state.stamp.id}: ${errorMessage(err)}`;
  }
  try {
    return { client: new sdk.Anthropic(state.sdkOptions), errors: sdk };
  } catch (err) {
    return `cannot create the Anthropic client for ${state.stamp.id}: ${errorMessage(err)}`;
  }
}

async function* streamMessages(
  state: ClientState,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamEvent> {
  const acc = new AnthropicStreamAccumulator(state.stamp);
  const aborted = (): ModelStreamEvent => ({ type: "error", message: acc.message("aborted", "Request aborted") });
  const failed = (message: string): ModelStreamEvent => ({
    type: "error",
    message: acc.message("error", maskUrlCredentials(message)),
  });

  if (state.unusable !== undefined) return yield failed(state.unusable);
  let body;
  try {
    body = buildAnthropicRequest({
      model: state.model,
      request,
      client: state.stamp,
      traits: state.traits,
      maxTokens: state.maxTokens,
      cache: state.cache,
      reasoning: state.reasoning,
      ...(state.efforts ? { efforts: state.efforts } : {}),
    });
  } catch (err) {
    return yield failed(`could not build the request: ${errorMessage(err)}`);
  }
  if (signal.aborted) return yield aborted();
  const connection = await (state.connection ??= connect(state));
  if (typeof connection === "string") return yield signal.aborted ? aborted() : failed(connection);

  const opened = await openWithRetries({
    open: (attemptSignal) =>
      connection.client.messages.create(body, { signal: attemptSignal }) as Promise<unknown> as Promise<EventStream>,
    classify: (err) => classifyError(err, state.ctx, connection.errors),
    signal,
    policy: state.policy,
  });
  if (!opened.ok) return yield opened.aborted ? aborted() : failed(opened.message);
  let end;
  try {
    end = yield* readEvents({
      stream: opened.value,
      signal,
      idleTimeoutMs: state.idleTimeoutMs,
      push: (raw) => acc.push(raw),
      isProtocolError: (err) => isProtocolError(err, connection.errors),
      transportDetail: transportErrorDetail,
    });
  } finally {
    opened.dispose();
  }
  if (end.kind === "aborted") return yield aborted();
  if (end.kind === "failed") return yield failed(classifyError(end.error, state.ctx, connection.errors).message);
  if (end.kind === "stalled") {
    return yield failed(
      `the stream from ${state.ctx.baseURL} stalled: no data for ${state.idleTimeoutMs / 1000} s (idleTimeoutMs)`,
    );
  }
  if (!acc.stopped) {
    const how =
      end.cutBy === undefined
        ? `the server at ${state.ctx.baseURL} closed the stream mid-answer`
        : `the connection to ${state.ctx.baseURL} was cut (${end.cutBy})`;
    return yield failed(`stream ended before the model finished (no message_stop): ${how}`);
  }
  const outcome = acc.outcome();
  yield outcome.stopReason === "error"
    ? failed(outcome.errorMessage)
    : { type: "done", message: acc.message(outcome.stopReason) };
}
