import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Tool, ToolContext, ToolResult } from "@mypi/kernel";

/** A fresh folder under the system temp dir (real path), removed by the returned `cleanup`. */
export function tempTree(files: Record<string, string | Uint8Array> = {}): { root: string; cleanup(): void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mypi-bt-")));
  writeTree(root, files);
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

export function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    toolCallId: "call_1",
    signal: new AbortController().signal,
    onUpdate: () => {},
    cwd: "/",
    ...overrides,
  };
}

/** Validate the arguments with the tool's schema (as the kernel does), then run `execute`. */
export async function call<A>(tool: Tool<A>, args: unknown, ctx: Partial<ToolContext> = {}): Promise<ToolResult> {
  const parsed = tool.parameters!.safeParse(args);
  if (!parsed.success) throw new Error(`invalid arguments for ${tool.name}: ${JSON.stringify(args)}`);
  const value = await tool.execute!(parsed.data, context(ctx));
  return value as ToolResult;
}

export function textOf(result: ToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[image ${c.mimeType}]`)).join("\n");
}

/** The result as the model reads it: `{ isError, text }`. */
export function seen(result: ToolResult): { isError: boolean; text: string } {
  return { isError: result.isError === true, text: textOf(result) };
}
