/**
 * The OpenAI Responses API client, streamed through the `openai` SDK's `responses.create`
 * (docs/models.md#the-openai-responses-client). Reasoning models keep their reasoning between turns here:
 * each reasoning item goes back with the next request (encrypted, since nothing is stored).
 *
 * Contract (the kernel's `ModelClient`): `stream()` never throws; every failure ends the stream
 * with one `error` event that keeps what arrived, exactly as the Chat Completions client reports
 * them, with the same retries. The SDK is imported by the first `stream()` of any client.
 */
import { errorMessage } from "../values.ts";
import type OpenAI from "openai";
import type { ModelClient, ModelPrices, ModelRequest, ModelStreamEvent } from "../types.ts";
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
import { buildResponsesRequest } from "./openai-responses-request.ts";
import { ResponseFailedError, ResponsesStreamAccumulator } from "./openai-responses-stream.ts";
import { loadOpenAI } from "./sdk-modules.ts";
import { makeStamp, type Stamp } from "./stamp.ts";
import { GENERIC_EFFORTS, openAIEffortTable, type EffortTable } from "./thinking.ts";

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
const PLACEHOLDER_API_KEY = "no-key";

export interface OpenAIResponsesModelOptions {
  model: string;
  /** Default: `OPENAI_BASE_URL`, else the OpenAI API. */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`; with a base URL and no key, a placeholder. */
  apiKey?: string;
  /** `false`: `OPENAI_BASE_URL` and `OPENAI_API_KEY` are not read. Default true. */
  environment?: boolean;
  /** The client's id. Default `openai-responses:<model>`. */
  id?: string;
  /** Recorded on each message and the client. Default `openai`. */
  provider?: string;
  http?: HttpHooks;
  headers?: Record<string, string>;
  /** `max_output_tokens` when the request has none. */
  maxTokens?: number;
  maxRetries?: number;
  /** Switches the retries at run time (off, or stop the waits in progress): `RetrySwitch`. */
  retry?: RetrySwitch;
  retryBaseMs?: number;
  idleTimeoutMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
  /** Dollars per million tokens: each message's `usage.cost`. */
  prices?: ModelPrices;
  /**
   * Whether the model reasons (`reasoning` is sent, reasoning items are carried). Default: known
   * from the name for OpenAI's models (o-series, gpt-5 and later); false for other names.
   */
  reasoning?: boolean;
  /** `reasoning.effort` per thinking level (`null`: unsupported, clamped). Default: by model name. */
  efforts?: EffortTable;
  /**
   * Let the server store responses. Default false: nothing is kept on OpenAI's side, and the
   * reasoning items come back encrypted (`include: ["reasoning.encrypted_content"]`) to be sent again.
   */
  store?: boolean;
}

interface Connection {
  client: OpenAI;
  errors: SdkErrorClasses;
}

interface ClientState {
  stamp: Stamp;
  model: string;
  unusable: string | undefined;
  sdkOptions: ConstructorParameters<typeof OpenAI>[0];
  connection: Promise<Connection | string> | undefined;
  ctx: ErrorContext;
  policy: RetryPolicy;
  idleTimeoutMs: number;
  maxTokens: number | undefined;
  store: boolean;
  efforts: EffortTable | undefined;
}

export function createOpenAIResponsesModel(options: OpenAIResponsesModelOptions): ModelClient {
  const id = options.id ?? `openai-responses:${options.model}`;
  const provider = options.provider ?? "openai";
  const env = options.environment === false ? {} : process.env;
  const customBaseURL = nonEmpty(options.baseURL) ?? nonEmpty(env.OPENAI_BASE_URL);
  const baseURL = (customBaseURL ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const apiKey =
    nonEmpty(options.apiKey) ?? nonEmpty(env.OPENAI_API_KEY) ?? (customBaseURL ? PLACEHOLDER_API_KEY : undefined);
  const known = openAIEffortTable(options.model);
  const reasons = options.reasoning ?? known !== undefined;
  const state: ClientState = {
    stamp: makeStamp(id, "openai-responses", provider, options.prices),
    model: options.model,
    unusable:
      apiKey === undefined
        ? `no API key for ${id}: set OPENAI_API_KEY (or pass apiKey). Servers that need no key work without one once a base URL is set (OPENAI_BASE_URL or --base-url)`
        : undefined,
    sdkOptions: {
      apiKey,
      baseURL,
      maxRetries: 0,
      defaultHeaders: options.headers,
      fetch: readableErrorFetch(options.http ? hookedFetch(options.http) : undefined),
      ...(process.env.OPENAI_LOG ? {} : { logLevel: "off" as const }),
    },
    connection: undefined,
    ctx: { baseURL, model: options.model, now: options.now ?? Date.now },
    policy: {
      maxRetries: options.maxRetries ?? 3,
      retryBaseMs: options.retryBaseMs ?? 500,
      sleep: options.sleep ?? abortableSleep,
      retry: options.retry,
    },
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxTokens: options.maxTokens,
    store: options.store ?? false,
    efforts: reasons ? (options.efforts ?? known ?? GENERIC_EFFORTS) : undefined,
  };
  return { id, api: "openai-responses", provider, stream: (request, signal) => streamResponse(state, request, signal) };
}

async function connect(state: ClientState): Promise<Connection | string> {
  let sdk: Awaited<ReturnType<typeof loadOpenAI>>;
  try {
    sdk = await loadOpenAI();
  } catch (err) {
    return `cannot load the openai SDK for ${state.stamp.id}: ${errorMessage(err)}`;
  }
  try {
    return { client: new sdk.OpenAI(state.sdkOptions), errors: sdk };
  } catch (err) {
    return `cannot create the OpenAI client for ${state.stamp.id}: ${errorMessage(err)}`;
  }
}

async function* streamResponse(
  state: ClientState,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamEvent> {
  const acc = new ResponsesStreamAccumulator(state.stamp);
  const aborted = (): ModelStreamEvent => ({ type: "error", message: acc.message("aborted", "Request aborted") });
  const failed = (message: string): ModelStreamEvent => ({
    type: "error",
    message: acc.message("error", maskUrlCredentials(message)),
  });

  if (state.unusable !== undefined) return yield failed(state.unusable);
  let body;
  try {
    body = buildResponsesRequest({
      model: state.model,
      request,
      client: state.stamp,
      store: state.store,
      ...(state.maxTokens !== undefined ? { maxTokens: state.maxTokens } : {}),
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
      connection.client.responses.create(body, { signal: attemptSignal }) as Promise<unknown> as Promise<EventStream>,
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
      isProtocolError: (err) => err instanceof ResponseFailedError || isProtocolError(err, connection.errors),
      transportDetail: transportErrorDetail,
    });
  } finally {
    opened.dispose();
  }
  if (end.kind === "aborted") return yield aborted();
  if (end.kind === "failed") {
    const message =
      end.error instanceof ResponseFailedError
        ? `${state.ctx.baseURL} reported an error mid-stream: ${end.error.message}`
        : classifyError(end.error, state.ctx, connection.errors).message;
    return yield failed(message);
  }
  if (end.kind === "stalled") {
    return yield failed(
      `the stream from ${state.ctx.baseURL} stalled: no data for ${state.idleTimeoutMs / 1000} s (idleTimeoutMs)`,
    );
  }
  if (!acc.finished) {
    const how =
      end.cutBy === undefined
        ? `the server at ${state.ctx.baseURL} closed the stream mid-answer`
        : `the connection to ${state.ctx.baseURL} was cut (${end.cutBy})`;
    return yield failed(`stream ended before the model finished (no response.completed): ${how}`);
  }
  const outcome = acc.outcome();
  yield outcome.stopReason === "error"
    ? failed(outcome.errorMessage)
    : { type: "done", message: acc.message(outcome.stopReason) };
}
