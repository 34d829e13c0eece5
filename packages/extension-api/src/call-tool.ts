/**
 * `pi.callTool`: one tool call an extension makes outside the model's turns (a command that runs
 * a shell line before it prompts, as Claude Code's `` !`cmd` `` does). It is a call like the
 * model's in everything a policy can see: the arguments are validated, the `tool_call` chain
 * decides (the permission gate may ask or block; a rewrite is validated again), the tool runs —
 * the bash tool in its sandbox when there is one — and the `tool_result` chain vets what comes
 * back (redaction). Nothing is added to the conversation. Never throws: a refusal, a failure
 * and an abort are results.
 */
import {
  type Content,
  errorMessage,
  errorResult,
  executeTool,
  type ToolRegistry,
  type ToolWorkerPool,
  unknownToolResult,
  validateToolArguments,
} from "@mypi/kernel";
import type { ChainCall } from "./dispatch/chain.ts";
import type { ExtensionManager } from "./manager.ts";

export interface CallToolRequest {
  /** The tool's name (any registered tool, active or not). */
  name: string;
  input: Record<string, unknown>;
  signal?: AbortSignal;
}

/** What the call returned (`blocked`: a `tool_call` policy refused it; its reason is the content). */
export interface CallToolResult {
  content: Content[];
  details?: unknown;
  isError: boolean;
  blocked?: boolean;
}

interface CallToolDeps {
  manager: Pick<ExtensionManager, "runSlot">;
  registry: ToolRegistry;
  cwd: string;
  call(signal: AbortSignal): ChainCall;
  workerPool?: ToolWorkerPool;
  timeoutMs?: number;
}

const NEVER = new AbortController().signal;
let calls = 0;

export async function callToolThroughSlots(deps: CallToolDeps, request: CallToolRequest): Promise<CallToolResult> {
  const signal = request.signal ?? NEVER;
  const tool = deps.registry.get(request.name);
  if (!tool)
    return unknownToolResult(
      request.name,
      deps.registry.list().map((t) => t.name),
    );
  const checked = validateToolArguments(tool, { arguments: request.input });
  if (!checked.ok) return errorResult(checked.message);
  const toolCallId = `ext_${++calls}`;
  const call = deps.call(signal);
  try {
    const decision = await deps.manager.runSlot(
      "tool_call",
      { toolCallId, toolName: tool.name, input: checked.value },
      call,
    );
    if (decision?.block) {
      const text = decision.by
        ? `Tool call blocked by ${decision.by}: ${decision.reason}`
        : `Tool call blocked: ${decision.reason}`;
      return { ...errorResult(text), blocked: true };
    }
    const recheck = validateToolArguments(tool, { arguments: decision?.input ?? checked.value });
    if (!recheck.ok)
      return {
        ...errorResult(
          `The input was rewritten by ${decision?.by ?? "a tool_call handler"} and is no longer valid: ${recheck.message}`,
        ),
        blocked: true,
      };
    const started = performance.now();
    const raw = await executeTool(tool, recheck.value, {
      toolCallId,
      signal,
      cwd: deps.cwd,
      onUpdate: () => {},
      abortGraceMs: 2000,
      ...(deps.workerPool && { workerPool: deps.workerPool }),
      ...(deps.timeoutMs !== undefined && { defaultTimeoutMs: deps.timeoutMs }),
    });
    const event = {
      toolCallId,
      toolName: tool.name,
      input: recheck.value,
      content: raw.content,
      details: raw.details,
      isError: raw.isError,
      executed: true,
      durationMs: Math.round(performance.now() - started),
    };
    const patch = await deps.manager.runSlot("tool_result", event, call);
    const result: CallToolResult = { content: patch?.content ?? raw.content, isError: patch?.isError ?? raw.isError };
    const details = patch && "details" in patch ? patch.details : raw.details;
    if (details !== undefined && details !== null) result.details = details;
    return result;
  } catch (error) {
    return errorResult(`The call was refused: ${errorMessage(error)}`);
  }
}
