/**
 * Whether an event stream said `data: [DONE]`. The SDK's stream iterator swallows that frame, so
 * to its reader a stream that ended with it and one the server simply closed look the same; but
 * `[DONE]` is the server saying the answer is complete (Snowflake Cortex never sends a
 * `finish_reason`), while a bare close is an answer cut short. The body is watched as it passes
 * through, byte for byte unchanged, and the answer is kept per `Response`.
 */

const seen = new WeakMap<Response, { done: boolean }>();

/** A `data: [DONE]` line: at the start of the stream or of a line, the space optional. */
const DONE_LINE = /\ndata: ?\[DONE\]/;
/** Enough of a chunk's end to find a `[DONE]` line that straddles two chunks. */
const CARRY = 16;

/** The response again, its body watched for `[DONE]` (`sawDone` answers once it was read). */
export function watchDone(response: Response): Response {
  if (!response.body) return response;
  const state = { done: false };
  let carry = "\n";
  const watched = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!state.done) {
          // Latin-1 maps each byte to one character: the ASCII of the frame is found as is, and a
          // multi-byte character cut by the chunk boundary cannot hide it.
          const text = carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
          if (DONE_LINE.test(text.replaceAll("\r", "\n"))) state.done = true;
          carry = text.slice(-CARRY);
        }
        controller.enqueue(chunk);
      },
    }),
  );
  const wrapped = new Response(watched, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  seen.set(wrapped, state);
  return wrapped;
}

/** Whether the body of a `watchDone` response carried `[DONE]` (as far as it was read). */
export function sawDone(response: Response): boolean {
  return seen.get(response)?.done ?? false;
}
