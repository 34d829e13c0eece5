/**
 * Failures of the model clients as data (the OpenAI clients' and, through the same SDK error
 * classes, the Anthropic client's): which are worth a retry, how long to wait, and the one-line
 * message a person can act on.
 *
 * The SDK runs with `maxRetries: 0`; the client retries itself so that the wait is abortable and
 * the delays are testable (an injected `sleep`).
 *
 * The SDK is loaded lazily (openai.ts), so its error classes come in as a parameter: a static
 * import here would load the whole SDK with the kernel.
 */
import { errorMessage } from "../values.ts";
import { MalformedChunkError } from "./openai-stream.ts";
import { watchDone } from "./openai-done.ts";
import { isRecord } from "../values.ts";

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * An SDK's error classes: the loaded `openai` module fits, and so does `@anthropic-ai/sdk`, whose
 * classes have the same names and fields (`status`, `headers`, `error`).
 */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

/** The fields of an SDK's `APIError` read here. */
interface ApiErrorFields extends Error {
  status?: number;
  headers?: { get(name: string): string | null };
  error?: unknown;
}

/** `retry-after` is honoured up to this long; a server asking for more gets this. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Exponential backoff stops growing here. */
const MAX_BACKOFF_MS = 8_000;

/** An HTTP status worth another attempt: timeouts, lock conflicts, rate limits, server errors. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * A success whose body is a web page or JSON that is no completion: a wrong base URL, a proxy. Thrown
 * by the fetch wrapper, so the SDK hands it back as the cause of an `APIConnectionError`. The body
 * stays out of `message`, which the SDK searches for "timed out".
 */
class NotAnEventStreamError extends Error {
  override name = "NotAnEventStreamError";
  constructor(
    readonly status: number,
    readonly mediaType: string,
    readonly body: string,
  ) {
    super(`the server answered with ${mediaType}, not an event stream`);
  }
}

/** Connection failures that a retry within seconds will not fix. */
const PERMANENT_CONNECTION_CODES = new Set(["ECONNREFUSED", "ENOTFOUND"]);

export interface ClassifiedError {
  kind: "aborted" | "error";
  retryable: boolean;
  message: string;
  /** The server's `retry-after` (or `retry-after-ms`), capped, when it sent one. */
  retryAfterMs?: number;
}

/** What the failure context says, so messages can name the server and the model. */
export interface ErrorContext {
  baseURL: string;
  model: string;
  now: () => number;
  /** The variable that holds the API key, for the hint on a 401. Default `OPENAI_API_KEY`. */
  keyVariable?: string;
  /** How to set the base URL, for the hint on a refused connection. */
  baseURLHint?: string;
}

/**
 * `scheme://user:password@host` → `scheme://***@host`, everywhere in `text`: a password (or a
 * token given as the user) in a base URL must not reach a terminal, a session file or a log
 * through an error message. Applied to every message a model client reports, whatever else
 * redacts it.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@]+@/gi, "$1***@");
}

/** Classify anything the SDK (or the stream reader) threw. */
export function classifyError(err: unknown, ctx: ErrorContext, sdk: SdkErrorClasses): ClassifiedError {
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk;
  if (err instanceof APIUserAbortError) return { kind: "aborted", retryable: false, message: "aborted" };
  if (err instanceof APIConnectionTimeoutError) {
    return { kind: "error", retryable: true, message: `no response from ${ctx.baseURL} before the request timed out` };
  }
  if (err instanceof APIConnectionError && err.cause instanceof NotAnEventStreamError) {
    const { status, mediaType, body } = err.cause;
    return {
      kind: "error",
      retryable: false,
      message: `${ctx.baseURL} answered HTTP ${status} with ${mediaType} instead of an event stream (is the base URL right?): ${oneLine(body)}`,
    };
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err);
    if (code === "ECONNREFUSED") {
      return {
        kind: "error",
        retryable: false,
        message: `cannot connect to ${ctx.baseURL} (connection refused): is the server running? ${ctx.baseURLHint ?? "Set the base URL with OPENAI_BASE_URL or --base-url"}`,
      };
    }
    const detail = causeMessage(err);
    return {
      kind: "error",
      retryable: code === undefined || !PERMANENT_CONNECTION_CODES.has(code),
      message: `cannot connect to ${ctx.baseURL}${detail ? ` (${detail})` : ""}`,
    };
  }
  if (err instanceof APIError) {
    const apiError = err as ApiErrorFields;
    if (apiError.status === undefined) {
      // `data: {"error": …}` inside a stream that had started.
      return {
        kind: "error",
        retryable: false,
        message: `${ctx.baseURL} reported an error mid-stream: ${serverMessage(apiError)}`,
      };
    }
    const classified: ClassifiedError = {
      kind: "error",
      retryable: isRetryableStatus(apiError.status),
      message: `HTTP ${apiError.status} from ${ctx.baseURL}: ${serverMessage(apiError)}${statusHint(apiError.status, ctx)}`,
    };
    const retryAfterMs = parseRetryAfter(apiError.headers, ctx.now());
    if (retryAfterMs !== undefined) classified.retryAfterMs = retryAfterMs;
    return classified;
  }
  if (err instanceof SyntaxError || err instanceof MalformedChunkError) {
    return { kind: "error", retryable: false, message: `${ctx.baseURL} sent a malformed stream chunk: ${err.message}` };
  }
  const message = errorMessage(err);
  return { kind: "error", retryable: false, message: `request to ${ctx.baseURL} failed: ${message}` };
}

/**
 * The wait before retry number `retry` (0-based): the server's `retry-after` when given,
 * else `baseMs · 2^retry`, capped. No jitter: one agent does not make a thundering herd.
 */
export function retryDelayMs(retry: number, baseMs: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  return Math.min(baseMs * 2 ** retry, MAX_BACKOFF_MS);
}

/**
 * `retry-after-ms` (milliseconds), else `retry-after` as seconds or an HTTP date, clamped to
 * [0, MAX_RETRY_AFTER_MS]. Undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now: number,
): number | undefined {
  if (!headers) return undefined;
  const clamp = (ms: number) => Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return clamp(Number(ms));
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return clamp(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : clamp(date - now);
}

/**
 * Whether an error thrown while reading a stream is about the data (an error frame, a frame that
 * is not JSON, a chunk of the wrong shape) rather than the connection carrying it.
 */
export function isProtocolError(err: unknown, sdk: SdkErrorClasses): boolean {
  return err instanceof sdk.APIError || err instanceof SyntaxError || err instanceof MalformedChunkError;
}

/** What cut a connection, in a few words ("other side closed", "read ECONNRESET"). */
export function transportErrorDetail(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return causeMessage(err) ?? err.message;
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks `signal.aborted`). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` for the SDK that makes error bodies readable. The SDK takes the server's message
 * only from `{"error": {"message": …}}`; OpenAI-compatible servers also answer
 * `{"error": "…"}` (Ollama), `{"message": …}` (vLLM) or `{"detail": …}` (FastAPI), which the SDK
 * would report as "status code (no body)". Those are rewritten to the OpenAI shape.
 *
 * A success that is a whole document, not an event stream, would look to the SDK like a stream
 * that ended before the answer began: see `readDocument`. A success's body is watched for
 * `[DONE]` on its way to the SDK (openai-done.ts).
 */
export function readableErrorFetch(inner: Fetch = globalThis.fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok)
      return watchDone(mediaType(response.headers) === "text/event-stream" ? response : await sniffBody(response));
    const text = await response.text();
    const body = normalizeErrorBody(text);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function mediaType(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

const BLANK = new Set([0x20, 0x09, 0x0a, 0x0d]);
const OPEN_BRACE = 0x7b; // `{`: a JSON document
const LESS_THAN = 0x3c; // `<`: a web page

/**
 * A success not labelled as an event stream is judged by its first byte, since the label is not
 * to be trusted (Foundry Local streams as `application/json`): `{` or `<` starts a document, read
 * whole; anything else is passed on as a stream, nothing lost.
 */
async function sniffBody(response: Response): Promise<Response> {
  if (!response.body) return response;
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const head: Uint8Array[] = [];
  let first: number | undefined;
  while (first === undefined) {
    const { done, value } = await reader.read();
    if (done) break;
    head.push(value);
    first = value.find((byte) => !BLANK.has(byte));
  }
  const whole = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  if (first !== OPEN_BRACE && first !== LESS_THAN) return new Response(whole, init);
  return readDocument(await new Response(whole).text(), init);
}

/**
 * A server that ignored `stream: true` sends the whole completion as JSON: it becomes the one
 * chunk it would have streamed (a choice's `message` has the shape of a `delta`). Anything else —
 * a web page, JSON that is no completion — fails with the body quoted.
 */
function readDocument(text: string, init: { status: number; statusText: string; headers: Headers }): Response {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.choices)) {
    throw new NotAnEventStreamError(init.status, mediaType(init.headers) || "no content type", text);
  }
  const choices = parsed.choices.map((choice: unknown) =>
    isRecord(choice) ? { index: choice.index, delta: choice.message, finish_reason: choice.finish_reason } : choice,
  );
  const frames = `data: ${JSON.stringify({ ...parsed, choices })}\n\ndata: [DONE]\n\n`;
  return new Response(frames, { ...init, headers: { "content-type": "text/event-stream" } });
}

function normalizeErrorBody(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text; // plain text or HTML: the SDK uses it as the message
  }
  if (!isRecord(parsed)) return text;
  const error = parsed.error;
  if (isRecord(error) && typeof error.message === "string") return text;
  const message =
    typeof error === "string"
      ? error
      : (firstString(parsed.message, parsed.detail) ?? JSON.stringify(parsed.detail ?? parsed));
  return JSON.stringify({ error: { ...(isRecord(error) ? error : {}), message } });
}

function serverMessage(err: ApiErrorFields): string {
  const body: unknown = err.error;
  let message: string;
  if (isRecord(body) && typeof body.message === "string") message = body.message;
  // Anthropic's SDK keeps the whole body: `{"type": "error", "error": {"type", "message"}}`.
  else if (isRecord(body) && isRecord(body.error) && typeof body.error.message === "string")
    message = body.error.message;
  else if (typeof body === "string") message = body;
  else if (body !== undefined && body !== null) message = JSON.stringify(body);
  else message = err.message.replace(/^\d{3}\s+/, "");
  return oneLine(message);
}

/** A server's text on one line, cut to 500 characters. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") return "(empty response body)";
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

function statusHint(status: number, ctx: ErrorContext): string {
  if (status === 401) return ` (check ${ctx.keyVariable ?? "OPENAI_API_KEY"}: the server rejected the API key)`;
  if (status === 403) return " (the API key has no access to this model or endpoint)";
  if (status === 404) return ` (check the model name "${ctx.model}" and the base URL)`;
  return "";
}

function causeCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 6 && isRecord(current); depth++) {
    if (typeof current.code === "string") return current.code;
    current = current.cause;
  }
  return undefined;
}

/** The innermost cause's message ("connect ECONNRESET …"), more useful than "fetch failed". */
function causeMessage(err: Error): string | undefined {
  let message: string | undefined;
  let current: unknown = err.cause;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    message = current.message;
    current = current.cause;
  }
  return message;
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((v): v is string => typeof v === "string");
}
