/**
 * A loopback OpenAI-compatible server for tests: it speaks the real Chat Completions streaming
 * wire format (`data: {json}\n\n` frames, `data: [DONE]`), answers each request with the next
 * scripted response, and records every request body.
 *
 * API
 *   const server = await startFakeOpenAI();          // listens on 127.0.0.1, a free port
 *   server.baseURL                                    // "http://127.0.0.1:<port>/v1": pass as baseURL / --base-url
 *   server.push(chatResponse({ text: "Hi" }), …)      // one response per POST /v1/chat/completions, in order
 *   server.requests[i]                                // { method, path, headers, rawBody, body, closed }
 *   await server.waitForRequests(2)                   // resolves once 2 requests have arrived
 *   await server.close()                              // releases gates, drops connections (call in afterAll)
 *
 * Responses (`FakeResponse`)
 *   chatResponse({ text?, reasoning?, toolCalls?, finishReason?, usage?, done?, textPieces? })
 *                                     a complete, realistic stream: role chunk, content pieces,
 *                                     tool-call fragments (id and name once, arguments in pieces),
 *                                     the finish chunk, the usage chunk (`choices: []`), [DONE]
 *   sse(frames, { chunkBytes?, headers? })
 *                                     frames written as given; a frame is { data, event? } (JSON-encoded,
 *                                     after an `event:` line when named),
 *                                     { raw } (written verbatim), { wait: promise } (a gate: the server
 *                                     holds the stream until it settles), { cut: true } (destroys the
 *                                     socket), or DONE. `chunkBytes` writes the bytes in slices of
 *                                     that size, so frames (and UTF-8 characters) straddle reads.
 *   errorResponse(status, message, { headers?, body? })
 *                                     an OpenAI-shaped error `{"error":{"message",…}}`, or `body` as given
 *   (request) => FakeResponse         decided when the request arrives
 *   chunk(delta, finishReason?)       one `chat.completion.chunk` object, for hand-built frames
 *
 * The same server answers POST …/responses (fake-responses.ts builds those streams) and
 * POST …/v1/messages (fake-anthropic.ts), so one test can switch protocols mid-session.
 *
 * A request that finds no scripted response gets HTTP 400 "fake-openai: no scripted response …"
 * (not retried by clients), so a test that under-scripts fails with a message that says so.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const DONE = "[DONE]" as const;

export type Frame =
  | { data: unknown; event?: string }
  | { raw: string }
  | { wait: Promise<unknown> }
  | { cut: true }
  | typeof DONE;

export type FakeResponse =
  | { kind: "sse"; frames: Frame[]; status?: number; headers?: Record<string, string>; chunkBytes?: number }
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | ((request: RecordedRequest) => FakeResponse);

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. "/v1/chat/completions". */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: unknown;
  /** Settles when the response is over: `completed` is false when the client went away first. */
  closed: Promise<{ completed: boolean }>;
}

export interface FakeOpenAIServer {
  readonly baseURL: string;
  /** The server without `/v1`: Anthropic's SDK adds `/v1/messages` itself. */
  readonly rootURL: string;
  readonly requests: readonly RecordedRequest[];
  /** Scripted responses not used yet. */
  readonly pending: number;
  push(...responses: FakeResponse[]): void;
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface ToolCallSpec {
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so broken JSON can be scripted). */
  arguments: unknown;
  /** The argument text in exactly these fragments (their concatenation is what is sent). */
  pieces?: string[];
}

export interface ChatResponseSpec {
  text?: string;
  /** The text in exactly these fragments (overrides `text`). */
  textPieces?: string[];
  /** Sent as `reasoning_content` deltas before the text. */
  reasoning?: string;
  toolCalls?: ToolCallSpec[];
  /** Default: "tool_calls" when there are tool calls, else "stop"; null sends no finish chunk. */
  finishReason?: string | null;
  /** Default { prompt_tokens: 10, completion_tokens: 5 }; null sends no usage chunk. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; cached_tokens?: number } | null;
  /** Send `data: [DONE]` at the end. Default true. */
  done?: boolean;
  model?: string;
}

const CREATED = 1_764_400_000;

/** One `chat.completion.chunk` with a single choice. */
export function chunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  model = "fake-model",
): Record<string, unknown> {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: CREATED,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The frames a real server sends for this answer. */
export function chatFrames(spec: ChatResponseSpec): Frame[] {
  const model = spec.model ?? "fake-model";
  const frames: Frame[] = [{ data: chunk({ role: "assistant", content: "" }, null, model) }];
  if (spec.reasoning) frames.push({ data: chunk({ reasoning_content: spec.reasoning }, null, model) });
  const textPieces = spec.textPieces ?? (spec.text ? splitEvery(spec.text, 8) : []);
  for (const piece of textPieces) frames.push({ data: chunk({ content: piece }, null, model) });
  (spec.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const pieces = call.pieces ?? splitEvery(args, 7);
    if (pieces.join("") !== args) throw new Error(`fake-openai: pieces of ${call.name} do not join to its arguments`);
    const id = call.id ?? `call_fake_${index}`;
    frames.push({
      data: chunk(
        { tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] },
        null,
        model,
      ),
    });
    for (const piece of pieces) {
      frames.push({ data: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null, model) });
    }
  });
  const finish = spec.finishReason === undefined ? (spec.toolCalls?.length ? "tool_calls" : "stop") : spec.finishReason;
  if (finish !== null) frames.push({ data: chunk({}, finish, model) });
  const usage = spec.usage === undefined ? { prompt_tokens: 10, completion_tokens: 5 } : spec.usage;
  if (usage !== null) {
    const { cached_tokens, ...counts } = usage;
    frames.push({
      data: {
        id: "chatcmpl-fake",
        object: "chat.completion.chunk",
        created: CREATED,
        model,
        choices: [],
        usage: {
          ...counts,
          total_tokens: counts.total_tokens ?? counts.prompt_tokens + counts.completion_tokens,
          ...(cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens } } : {}),
        },
      },
    });
  }
  if (spec.done !== false) frames.push(DONE);
  return frames;
}

export function chatResponse(spec: ChatResponseSpec): FakeResponse {
  return sse(chatFrames(spec));
}

export function sse(
  frames: Frame[],
  options: { chunkBytes?: number; headers?: Record<string, string>; status?: number } = {},
): FakeResponse {
  return { kind: "sse", frames, ...options };
}

export function errorResponse(
  status: number,
  message: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): FakeResponse {
  const body = options.body ?? {
    error: { message, type: status === 429 ? "rate_limit_error" : "invalid_request_error", param: null, code: null },
  };
  return { kind: "json", status, body, ...(options.headers ? { headers: options.headers } : {}) };
}

/** The streaming endpoints served: Chat Completions, the Responses API, Anthropic's Messages API. */
const ROUTES = ["/chat/completions", "/responses", "/messages"];

export async function startFakeOpenAI(): Promise<FakeOpenAIServer> {
  const queue: FakeResponse[] = [];
  const requests: RecordedRequest[] = [];
  const arrivalWaiters: { count: number; resolve: () => void }[] = [];
  // Gates are released on close so that no response outlives the server.
  let releaseGates!: () => void;
  const closing = new Promise<void>((resolve) => (releaseGates = resolve));

  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const rawBody = Buffer.concat(parts).toString("utf8");
      let resolveClosed!: (v: { completed: boolean }) => void;
      const closed = new Promise<{ completed: boolean }>((resolve) => (resolveClosed = resolve));
      res.on("close", () => resolveClosed({ completed: res.writableFinished }));
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        body: parseJSON(rawBody),
        closed,
      };
      requests.push(recorded);
      for (const waiter of arrivalWaiters.filter((w) => requests.length >= w.count)) {
        arrivalWaiters.splice(arrivalWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      // A client that goes away mid-write must not crash the test process.
      res.on("error", () => {});
      respond(recorded, res).catch((err: unknown) => {
        if (!res.headersSent) writeJSON(res, 500, { error: { message: `fake-openai: ${String(err)}` } });
        else res.destroy();
      });
    });
  });

  async function respond(request: RecordedRequest, res: ServerResponse): Promise<void> {
    if (request.method !== "POST" || !ROUTES.some((route) => request.path.split("?")[0]!.endsWith(route))) {
      return writeJSON(res, 404, { error: { message: `fake-openai: no route for ${request.method} ${request.path}` } });
    }
    let response = queue.shift();
    if (response === undefined) {
      const n = requests.indexOf(request) + 1;
      return writeJSON(res, 400, {
        error: { message: `fake-openai: no scripted response for request #${n} (${request.method} ${request.path})` },
      });
    }
    while (typeof response === "function") response = response(request);
    if (response.kind === "json") return writeJSON(res, response.status, response.body, response.headers);

    res.writeHead(response.status ?? 200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...response.headers,
    });
    for (const frame of response.frames) {
      if (res.destroyed) return;
      if (frame === DONE) await write(res, "data: [DONE]\n\n", response.chunkBytes);
      else if ("data" in frame) {
        const event = frame.event === undefined ? "" : `event: ${frame.event}\n`;
        await write(res, `${event}data: ${JSON.stringify(frame.data)}\n\n`, response.chunkBytes);
      } else if ("raw" in frame) await write(res, frame.raw, response.chunkBytes);
      else if ("wait" in frame) await Promise.race([frame.wait, closing]);
      else {
        res.destroy();
        return;
      }
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    rootURL: `http://127.0.0.1:${port}`,
    requests,
    get pending() {
      return queue.length;
    },
    push(...responses) {
      queue.push(...responses);
    },
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => arrivalWaiters.push({ count, resolve }));
    },
    async close() {
      releaseGates();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

function writeJSON(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const type = typeof body === "string" ? "text/plain" : "application/json";
  res.writeHead(status, { "content-type": type, ...headers });
  res.end(text);
}

/** Write `text`, optionally in `chunkBytes`-sized byte slices, each flushed before the next. */
async function write(res: ServerResponse, text: string, chunkBytes?: number): Promise<void> {
  const bytes = Buffer.from(text, "utf8");
  const size = chunkBytes ?? bytes.length;
  for (let offset = 0; offset < bytes.length; offset += size) {
    if (res.destroyed) return;
    // Wait until the bytes are flushed, so that a following cut cannot discard them.
    await new Promise<void>((resolve) => res.write(bytes.subarray(offset, offset + size), () => resolve()));
  }
}

function splitEvery(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function parseJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
