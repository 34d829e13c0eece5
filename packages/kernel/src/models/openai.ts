/**
 * The `openai` model client: any OpenAI-compatible Chat Completions endpoint, streamed through
 * the `openai` SDK (docs/architecture.md#models).
 *
 * Contract (the kernel's `ModelClient`): `stream()` never throws. Every failure — no API key, an
 * HTTP error, a refused connection, a malformed chunk, a stream cut before `finish_reason`, a
 * stalled stream, an abort — ends the stream with one `error` event whose message keeps the text
 * and tool calls received so far. Retries (429 / 5xx / transient connection errors) happen here,
 * not in the SDK (`maxRetries: 0`), so that the wait between attempts is abortable and testable.
 *
 * SDK behaviours this file relies on (ecosystem.md G12): an abort mid-stream and a truncated
 * stream both end the iteration silently, so the end of the loop is checked against the signal,
 * the watchdog and `finish_reason`; the SDK's `timeout` does not limit a streaming body, hence the
 * per-chunk idle watchdog.
 *
 * The SDK takes ~120 ms to load, which every `mypi` start would pay: it is imported on the first
 * `stream()` of a client (once per process), and each client builds its SDK client then.
 */
import { errorMessage } from "../values.ts";
import type OpenAI from "openai";
import type { ModelClient, ModelPrices, ModelRequest, ModelStreamEvent } from "../types.ts";
import {
  abortableSleep,
  classifyError,
  maskUrlCredentials,
  isProtocolError,
  readableErrorFetch,
  transportErrorDetail,
  type ErrorContext,
  type SdkErrorClasses,
} from "./openai-errors.ts";
import { buildChatRequest, type MaxTokensField } from "./openai-messages.ts";
import { sawDone } from "./openai-done.ts";
import { ChatStreamAccumulator } from "./openai-stream.ts";
import {
  hookedFetch,
  nonEmpty,
  openWithRetries,
  readEvents,
  type HttpHooks,
  type RetryPolicy,
  type StreamEnd,
} from "./http.ts";
import type { RetrySwitch } from "./retry-switch.ts";
import { loadOpenAI } from "./sdk-modules.ts";
import { makeStamp, type Stamp } from "./stamp.ts";
import { GENERIC_EFFORTS, openAIEffortTable, type EffortTable } from "./thinking.ts";

export { toOpenAIMessages, type MaxTokensField } from "./openai-messages.ts";
export type { HttpHooks } from "./http.ts";

/** Where requests go without a base URL (the `openai:` models of the OpenAI API). */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Sent as the key when a base URL is set and no key is: most local servers ignore it. */
const PLACEHOLDER_API_KEY = "no-key";

export interface OpenAIModelOptions {
  /** The model name as the server knows it (`gpt-4.1-mini`, `qwen2.5-coder:7b`, …). */
  model: string;
  /** Default: `OPENAI_BASE_URL`, else the OpenAI API. */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`; with a base URL and no key, a placeholder. */
  apiKey?: string;
  /**
   * `false`: `OPENAI_BASE_URL` and `OPENAI_API_KEY` are not read — a client for another
   * provider's server, which must never be sent the OpenAI key. Default true.
   */
  environment?: boolean;
  /** The client's id. Default `openai:<model>`. */
  id?: string;
  /** Watching the HTTP exchange (a host's extensions: Pi's `before_provider_headers` / `after_provider_response`). */
  http?: HttpHooks;
  /** Retries after a 408/409/429/5xx or a transient connection error. Default 3. */
  maxRetries?: number;
  /** Switches the retries at run time (off, or stop the waits in progress): `RetrySwitch`. */
  retry?: RetrySwitch;
  /** Extra HTTP headers on every request (e.g. OpenRouter's `HTTP-Referer`). */
  headers?: Record<string, string>;
  /** Output token cap when the request has none. */
  maxTokens?: number;
  /**
   * The request field for the token cap. Default: `max_completion_tokens` for the OpenAI API
   * (its reasoning models reject `max_tokens`), `max_tokens` when a base URL is set (every
   * OpenAI-compatible server reads it; some silently ignore the newer name).
   */
  maxTokensField?: MaxTokensField;
  /** First backoff step; doubled per retry, capped at 8 s. Default 500 ms. */
  retryBaseMs?: number;
  /** A stream that sends nothing for this long is ended with an error. Default 120 000 ms. */
  idleTimeoutMs?: number;
  /** Wait between attempts; must resolve early when `signal` aborts. For tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Clock for `retry-after` HTTP dates. For tests. */
  now?: () => number;
  /** Dollars per million tokens: each message's `usage.cost` is computed from them. */
  prices?: ModelPrices;
  /** Recorded on each message (`provider`) and the client. Default `openai`. */
  provider?: string;
  /**
   * Whether the model reasons, so that `ModelRequest.thinking` is sent as `reasoning_effort`.
   * Default: known from the name for OpenAI's own models on the default endpoint; false with a
   * base URL (a server that is sent an unknown field may refuse it).
   */
  reasoning?: boolean;
  /** The `reasoning_effort` per thinking level (`null`: unsupported, clamped). Default: by model name (docs/models.md#thinking-levels). */
  efforts?: EffortTable;
}

/** A client's SDK client and the error classes to judge its failures by. */
interface Connection {
  client: OpenAI;
  errors: SdkErrorClasses;
}

interface ClientState {
  id: string;
  model: string;
  stamp: Stamp;
  /** The reasoning efforts, when the model reasons. */
  efforts: EffortTable | undefined;
  /** Why no request can be made without loading anything (no API key), reported by `stream()`. */
  unusable: string | undefined;
  /** What `new OpenAI(…)` is given, once the SDK is loaded. */
  sdkOptions: ConstructorParameters<typeof OpenAI>[0];
  /** Made by the first `stream()`; resolves to the connection or why there is none, never rejects. */
  connection: Promise<Connection | string> | undefined;
  ctx: ErrorContext;
  policy: RetryPolicy;
  idleTimeoutMs: number;
  maxTokens: number | undefined;
  maxTokensField: MaxTokensField;
}

/**
 * Create the client. Never throws for a missing key: the first `stream()` ends with an error
 * that says what to set (hosts decide separately whether that is a usage error).
 */
export function createOpenAIModel(options: OpenAIModelOptions): ModelClient {
  const id = options.id ?? `openai:${options.model}`;
  const env = options.environment === false ? {} : process.env;
  const customBaseURL = nonEmpty(options.baseURL) ?? nonEmpty(env.OPENAI_BASE_URL);
  const baseURL = (customBaseURL ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const apiKey =
    nonEmpty(options.apiKey) ?? nonEmpty(env.OPENAI_API_KEY) ?? (customBaseURL ? PLACEHOLDER_API_KEY : undefined);
  // fetch refuses a URL with a user name or password in it; say so before any request, masked.
  const shown = maskUrlCredentials(baseURL);
  const unusable =
    shown !== baseURL
      ? `the base URL ${shown} carries a user name or password, which HTTP clients refuse to send in a URL: ` +
        "drop it from the URL and give the key as OPENAI_API_KEY (sent as a bearer token)"
      : apiKey === undefined
        ? `no API key for ${id}: set OPENAI_API_KEY (or pass apiKey). ` +
          "Servers that need no key work without one once a base URL is set (OPENAI_BASE_URL or --base-url)"
        : undefined;
  const provider = options.provider ?? "openai";
  const known = customBaseURL ? undefined : openAIEffortTable(options.model);
  const reasons = options.reasoning ?? known !== undefined;
  const state: ClientState = {
    id,
    model: options.model,
    stamp: makeStamp(id, "openai-completions", provider, options.prices),
    efforts: reasons ? (options.efforts ?? known ?? openAIEffortTable(options.model) ?? GENERIC_EFFORTS) : undefined,
    unusable,
    sdkOptions: {
      apiKey,
      baseURL,
      maxRetries: 0,
      defaultHeaders: options.headers,
      fetch: readableErrorFetch(options.http ? hookedFetch(options.http) : undefined),
      // The SDK logs unparseable frames to the console; they are reported as data instead.
      // OPENAI_LOG still turns the SDK's own logging on for debugging (read now, as before the
      // SDK was loaded lazily).
      ...(process.env.OPENAI_LOG ? {} : { logLevel: "off" as const }),
    },
    connection: undefined,
    // Messages name the server by this: never with its credentials.
    ctx: { baseURL: shown, model: options.model, now: options.now ?? Date.now },
    policy: {
      maxRetries: options.maxRetries ?? 3,
      retryBaseMs: options.retryBaseMs ?? 500,
      sleep: options.sleep ?? abortableSleep,
      retry: options.retry,
    },
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxTokens: options.maxTokens,
    maxTokensField: options.maxTokensField ?? (customBaseURL ? "max_tokens" : "max_completion_tokens"),
  };
  return {
    id: state.id,
    api: "openai-completions",
    provider,
    stream: (request, signal) => streamChat(state, request, signal),
  };
}

/** Load the SDK and build the client; a failure of either is returned as its message. */
async function connect(state: ClientState): Promise<Connection | string> {
  let sdk: Awaited<ReturnType<typeof loadOpenAI>>;
  try {
    sdk = await loadOpenAI();
  } catch (err) {
    return `cannot load the openai SDK for ${state.id}: ${errorMessage(err)}`;
  }
  try {
    return { client: new sdk.OpenAI(state.sdkOptions), errors: sdk };
  } catch (err) {
    return `cannot create the OpenAI client for ${state.id}: ${errorMessage(err)}`;
  }
}

async function* streamChat(
  state: ClientState,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamEvent> {
  const acc = new ChatStreamAccumulator(state.stamp);
  const aborted = (): ModelStreamEvent => ({ type: "error", message: acc.message("aborted", "Request aborted") });
  const failed = (message: string): ModelStreamEvent => ({
    type: "error",
    message: acc.message("error", maskUrlCredentials(message)),
  });

  if (state.unusable !== undefined) {
    yield failed(state.unusable);
    return;
  }
  let body;
  try {
    body = buildChatRequest({
      model: state.model,
      request,
      maxTokens: state.maxTokens,
      maxTokensField: state.maxTokensField,
      efforts: state.efforts,
    });
  } catch (err) {
    // e.g. tool arguments that JSON.stringify cannot serialise (a BigInt from a careless host)
    yield failed(`could not build the request: ${errorMessage(err)}`);
    return;
  }
  // Already aborted: no reason to load the SDK. Aborted while loading: the loop below says so.
  if (signal.aborted) {
    yield aborted();
    return;
  }
  const connection = await (state.connection ??= connect(state));
  if (typeof connection === "string") {
    yield signal.aborted ? aborted() : failed(connection);
    return;
  }

  const opened = await openWithRetries({
    open: (attemptSignal) => connection.client.chat.completions.create(body, { signal: attemptSignal }).withResponse(),
    classify: (err) => classifyError(err, state.ctx, connection.errors),
    signal,
    policy: state.policy,
  });
  if (!opened.ok) return yield opened.aborted ? aborted() : failed(opened.message);
  // Once a response is streaming, its events have been handed out: no retry from here.
  const { data: stream, response } = opened.value;
  let end: StreamEnd;
  try {
    end = yield* readEvents({
      stream,
      signal,
      idleTimeoutMs: state.idleTimeoutMs,
      push: (raw) => acc.push(raw),
      // A protocol error (unparseable frame, error frame, malformed chunk) ends the answer; a
      // transport error (the connection was cut) is judged by how the answer ended, below.
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
  // The SDK's iterator swallows `data: [DONE]`; the body was watched for it (openai-done.ts).
  if (!acc.finished && !acc.endedWithUsage && !sawDone(response)) {
    const how =
      end.cutBy === undefined
        ? `the server at ${state.ctx.baseURL} closed the stream mid-answer`
        : `the connection to ${state.ctx.baseURL} was cut (${end.cutBy})`;
    return yield failed(`stream ended before the model finished (no finish_reason, usage chunk or [DONE]): ${how}`);
  }
  // The answer is complete once the server said so in any of its three ways — finish_reason,
  // the usage chunk after it, [DONE] — even if the connection broke after the first.
  const outcome = acc.outcome();
  yield outcome.stopReason === "error"
    ? failed(outcome.errorMessage)
    : { type: "done", message: acc.message(outcome.stopReason) };
}
