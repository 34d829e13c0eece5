/**
 * What a test reads back as JSON: a line mypi printed, a request body a fake server received, a
 * file a run wrote. Its shape is what the test asserts (`expect(...).toEqual`, `toMatchObject`),
 * so the type lets the test reach into it as the assertions do, and one place says so.
 */
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON under test; the assertions are its type check
export type JsonObject = Record<string, any>;
