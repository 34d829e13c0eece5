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
import type OpenAI from "openai";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../types.ts";
import {
  abortableSleep,
  classifyError,
  maskUrlCredentials,
  isProtocolError,
  readableErrorFetch,
  retryDelayMs,
  transportErrorDetail,
  type ErrorContext,
  type SdkErrorClasses,
} from "./openai-errors.ts";
import { buildChatRequest, type MaxTokensField } from "./openai-messages.ts";
import { sawDone } from "./openai-done.ts";
import { ChatStreamAccumulator } from "./openai-stream.ts";

export { toOpenAIMessages, type MaxTokensField } from "./openai-messages.ts";

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Sent as the key when a base URL is set and no key is: most local servers ignore it. */
const PLACEHOLDER_API_KEY = "no-key";

/**
 * Called around each HTTP request of a client. `headers` may change the request's headers in
 * place (a `null` value removes one); `response` sees the status and headers before the body is
 * read. A hook that throws fails the request as a transport error would.
 */
export interface HttpHooks {
  headers?(headers: Record<string, string | null>): void | Promise<void>;
  response?(response: { status: number; headers: Record<string, string> }): void | Promise<void>;
}

function hookedFetch(hooks: HttpHooks): typeof globalThis.fetch {
  return async (input, init) => {
    let request = init;
    if (hooks.headers) {
      const headers: Record<string, string | null> = Object.fromEntries(new Headers(init?.headers).entries());
      await hooks.headers(headers);
      const out = new Headers();
      for (const [name, value] of Object.entries(headers)) if (typeof value === "string") out.set(name, value);
      request = { ...init, headers: out };
    }
    const response = await globalThis.fetch(input, request);
    await hooks.response?.({ status: response.status, headers: Object.fromEntries(response.headers.entries()) });
    return response;
  };
}

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
}

type OpenAIModule = typeof import("openai");

/** The SDK module, imported by the first stream of any client and shared by all. */
let sdkModule: Promise<OpenAIModule> | undefined;

function loadSdk(): Promise<OpenAIModule> {
  return (sdkModule ??= import("openai"));
}

/** A client's SDK client and the error classes to judge its failures by. */
interface Connection {
  client: OpenAI;
  errors: SdkErrorClasses;
}

interface ClientState {
  id: string;
  model: string;
  /** Why no request can be made without loading anything (no API key), reported by `stream()`. */
  unusable: string | undefined;
  /** What `new OpenAI(…)` is given, once the SDK is loaded. */
  sdkOptions: ConstructorParameters<typeof OpenAI>[0];
  /** Made by the first `stream()`; resolves to the connection or why there is none, never rejects. */
  connection: Promise<Connection | string> | undefined;
  ctx: ErrorContext;
  maxRetries: number;
  retryBaseMs: number;
  idleTimeoutMs: number;
  maxTokens: number | undefined;
  maxTokensField: MaxTokensField;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
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
  const apiKey = nonEmpty(options.apiKey) ?? nonEmpty(env.OPENAI_API_KEY) ?? (customBaseURL ? PLACEHOLDER_API_KEY : undefined);
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
  const state: ClientState = {
    id,
    model: options.model,
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
    maxRetries: options.maxRetries ?? 3,
    retryBaseMs: options.retryBaseMs ?? 500,
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxTokens: options.maxTokens,
    maxTokensField: options.maxTokensField ?? (customBaseURL ? "max_tokens" : "max_completion_tokens"),
    sleep: options.sleep ?? abortableSleep,
  };
  return {
    id: state.id,
    stream: (request, signal) => streamChat(state, request, signal),
  };
}

/** Load the SDK and build the client; a failure of either is returned as its message. */
async function connect(state: ClientState): Promise<Connection | string> {
  let sdk: OpenAIModule;
  try {
    sdk = await loadSdk();
  } catch (err) {
    return `cannot load the openai SDK for ${state.id}: ${err instanceof Error ? err.message : String(err)}`;
  }
  try {
    return { client: new sdk.OpenAI(state.sdkOptions), errors: sdk };
  } catch (err) {
    return `cannot create the OpenAI client for ${state.id}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

async function* streamChat(state: ClientState, request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent> {
  const acc = new ChatStreamAccumulator(state.id);
  const aborted = (): ModelStreamEvent => ({ type: "error", message: acc.message("aborted", "Request aborted") });
  const failed = (message: string): ModelStreamEvent => ({ type: "error", message: acc.message("error", maskUrlCredentials(message)) });

  if (state.unusable !== undefined) {
    yield failed(state.unusable);
    return;
  }
  let body;
  try {
    body = buildChatRequest({ model: state.model, request, maxTokens: state.maxTokens, maxTokensField: state.maxTokensField });
  } catch (err) {
    // e.g. tool arguments that JSON.stringify cannot serialise (a BigInt from a careless host)
    yield failed(`could not build the request: ${err instanceof Error ? err.message : String(err)}`);
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

  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) {
      yield aborted();
      return;
    }
    // The SDK never removes the abort listener it adds to the signal it is given, and a run's
    // signal lives across many model calls: each attempt gets a linked signal of its own.
    const link = linkAbort(signal);
    try {
      let stream;
      let response: Response;
      try {
        ({ data: stream, response } = await connection.client.chat.completions.create(body, { signal: link.signal }).withResponse());
      } catch (err) {
        const failure = classifyError(err, state.ctx, connection.errors);
        if (signal.aborted || failure.kind === "aborted") {
          yield aborted();
          return;
        }
        if (failure.retryable && attempt < state.maxRetries) {
          await state.sleep(retryDelayMs(attempt, state.retryBaseMs, failure.retryAfterMs), signal);
          continue;
        }
        const gaveUp = failure.retryable && attempt > 0 ? ` (gave up after ${attempt + 1} attempts)` : "";
        yield failed(failure.message + gaveUp);
        return;
      }
      // Once a response is streaming, its events have been handed out: no retry from here.
      yield* readChatStream(state, connection.errors, stream, acc, signal, () => sawDone(response));
      return;
    } finally {
      link.dispose();
    }
  }
}

function linkAbort(parent: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const forward = () => controller.abort(parent.reason);
  parent.addEventListener("abort", forward, { once: true });
  return { signal: controller.signal, dispose: () => parent.removeEventListener("abort", forward) };
}

/** The part of `ChatCompletionStream` used here: chunks as they arrive, and a way to cancel. */
interface ChunkStream extends AsyncIterable<unknown> {
  controller: AbortController;
}

async function* readChatStream(
  state: ClientState,
  errors: SdkErrorClasses,
  stream: ChunkStream,
  acc: ChatStreamAccumulator,
  signal: AbortSignal,
  /** Whether the body carried `data: [DONE]` (the SDK's iterator does not say). */
  saidDone: () => boolean,
): AsyncGenerator<ModelStreamEvent> {
  const failed = (message: string): ModelStreamEvent => ({ type: "error", message: acc.message("error", maskUrlCredentials(message)) });
  const iterator = stream[Symbol.asyncIterator]();
  let stalled = false;
  let failure: string | undefined;
  let cutBy: string | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  try {
    while (true) {
      // The watchdog covers only the wait for the next chunk, not a slow consumer.
      watchdog = setTimeout(() => {
        stalled = true;
        stream.controller.abort();
      }, state.idleTimeoutMs);
      let events: ModelStreamEvent[];
      try {
        const next = await iterator.next();
        if (next.done) break;
        events = acc.push(next.value);
      } catch (err) {
        if (signal.aborted) break;
        // A protocol error (unparseable frame, error frame, malformed chunk) ends the answer;
        // a transport error (the connection was cut) is judged by finish_reason below.
        if (isProtocolError(err, errors)) failure = classifyError(err, state.ctx, errors).message;
        else cutBy = transportErrorDetail(err);
        break;
      } finally {
        clearTimeout(watchdog);
      }
      for (const event of events) yield event;
    }
  } finally {
    clearTimeout(watchdog);
    // A malformed chunk, an early return by the consumer or an error: close the connection.
    stream.controller.abort();
  }

  if (signal.aborted) {
    yield { type: "error", message: acc.message("aborted", "Request aborted") };
  } else if (failure !== undefined) {
    yield failed(failure);
  } else if (stalled) {
    yield failed(`the stream from ${state.ctx.baseURL} stalled: no data for ${state.idleTimeoutMs / 1000} s (idleTimeoutMs)`);
  } else if (!acc.finished && !acc.endedWithUsage && !saidDone()) {
    const how =
      cutBy === undefined
        ? `the server at ${state.ctx.baseURL} closed the stream mid-answer`
        : `the connection to ${state.ctx.baseURL} was cut (${cutBy})`;
    yield failed(`stream ended before the model finished (no finish_reason, usage chunk or [DONE]): ${how}`);
  } else {
    // The answer is complete once the server said so in any of its three ways — finish_reason,
    // the usage chunk after it, [DONE] — even if the connection broke after the first.
    const outcome = acc.outcome();
    yield outcome.stopReason === "error"
      ? failed(outcome.errorMessage)
      : { type: "done", message: acc.message(outcome.stopReason) };
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  // An empty OPENAI_API_KEY= line counts as unset, as it would for a person reading it.
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
