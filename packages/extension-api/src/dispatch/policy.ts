/**
 * The slot policy table of docs/architecture.md#policy, as data: how a handler's result changes the chain's
 * state, what stops the chain, what a failure does, and what the kernel finally receives.
 * `chain.ts` runs every slot through the same code with these entries; nothing here knows
 * about handlers, timeouts or extensions beyond the name it credits. The kernel's five slots'
 * entries are here; the host's slots' are in `host-policies.ts`, and the chain state both move
 * in, with its moves, in `chain-state.ts`.
 *
 * | slot                   | combines                                          | stops on          | default |
 * |------------------------|---------------------------------------------------|-------------------|---------|
 * | input                  | transforms chain                                  | handled / block   | open    |
 * | before_agent_start     | systemPrompt chains; messages accumulate in order | —                 | open    |
 * | context                | messages chain                                    | —                 | open    |
 * | tool_call              | input replacements chain                          | block / pause     | closed  |
 * | tool_result            | partial patches chain (null clears)               | withhold          | closed  |
 * | session_before_compact | —                                                 | cancel / summary  | open    |
 * | session_before_fork    | —                                                 | cancel            | open    |
 * | session_before_switch  | —                                                 | cancel            | open    |
 * | project_trust          | —                                                 | yes / no          | open    |
 * | resources_discover     | skill and prompt paths accumulate in order        | —                 | open    |
 * | before_agent_end       | message(s) accumulate in order                    | —                 | open    |
 */
import { isDeepStrictEqual } from "node:util";
import {
  isRecord,
  type BeforeAgentStartResult,
  type Content,
  type ContextResult,
  type CustomMessage,
  type InputResult,
  type ToolCallResult,
  type ToolResultPatch,
} from "@mypi/kernel";
import type {
  HookOutcome,
  ProjectTrustDecision,
  SessionBeforeCompactDecision,
  SessionBeforeForkDecision,
  SessionBeforeSwitchDecision,
  SlotEvent,
  SlotName,
  SlotResult,
} from "../types.ts";
import { bad, changed, messagesOf, stopped, type ChainState } from "./chain-state.ts";
import { HOST_POLICIES } from "./host-policies.ts";

export { initialState, type ChainState, type Stop } from "./chain-state.ts";

/**
 * What a slot's chain hands on (`toKernel`): for the kernel's five slots the kernel's own result
 * types, so the manager's chains plug into `Slots` as they are; for the host's slots what the host
 * acts on. `by` names the extension whose answer it was.
 */
export interface SlotResults {
  input: InputResult;
  before_agent_start: BeforeAgentStartResult;
  context: ContextResult;
  tool_call: ToolCallResult;
  tool_result: ToolResultPatch & { by?: string };
  session_before_compact: SessionBeforeCompactDecision;
  session_before_fork: SessionBeforeForkDecision;
  session_before_switch: SessionBeforeSwitchDecision;
  project_trust: ProjectTrustDecision;
  resources_discover: { skillPaths: string[]; promptPaths: string[] };
  /** The messages that continue the run (none: it ends). */
  before_agent_end: { messages: CustomMessage[] };
}

/** `R`: what `toKernel` hands on; only `stopOnly` names it, for slots where it is the handler's own result type. */
export interface SlotPolicy<K extends SlotName, R = SlotResults[K]> {
  /** One line: how the handlers of this slot combine. */
  readonly semantics: string;
  readonly defaultOnError: "open" | "closed";
  /** Event fields a handler may change by assignment, in place (one level) or through `next(event)`. */
  readonly mutable: readonly string[];
  /** Apply one handler's result. Throws `MYPI_BAD_RESULT` for a result of the wrong shape. */
  apply(state: ChainState<K>, result: SlotResult<K>, by: string): ChainState<K>;
  /** The result that leads from `from` to `to`: what `next()` resolves to. `undefined` = no change. */
  diff(from: ChainState<K>, to: ChainState<K>): SlotResult<K> | undefined;
  /** How a handler whose own decision led from `from` to `to` is reported in `hook_decision`. */
  outcome(from: ChainState<K>, to: ChainState<K>): HookOutcome;
  /** The state after a handler of this slot failed with `onError: "closed"`. */
  failClosed(state: ChainState<K>, by: string, reason: string): ChainState<K>;
  /** What the kernel (or host) receives. Throws when the run must end in `error`. */
  toKernel(initial: ChainState<K>, final: ChainState<K>): R | undefined;
}

export type PolicyTable = { [K in SlotName]: SlotPolicy<K> };

// ─── the table ───────────────────────────────────────────────────────────────────────────────

export const POLICIES: PolicyTable = {
  input: {
    semantics: "input: transforms chain; the first handled or block stops",
    defaultOnError: "open",
    mutable: ["text", "images"],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad("input", result, '{action: "continue" | "transform" | "handled" | "block"}');
      switch (result.action) {
        case "continue":
          return state;
        case "transform":
          if (typeof result.text !== "string") throw bad("input", result, '{action: "transform", text: string}');
          return changed(state, { text: result.text, images: result.images ?? state.event.images }, by);
        case "handled":
          return stopped(state, { result: { ...result, by }, by, outcome: "handled", reason: result.reason });
        case "block": {
          const reason = typeof result.reason === "string" ? result.reason : "blocked";
          return stopped(state, { result: { action: "block", reason, by }, by, outcome: "block", reason });
        }
        default:
          throw bad("input", result, '{action: "continue" | "transform" | "handled" | "block"}');
      }
    },
    diff(from, to) {
      if (to.stop && !from.stop) return to.stop.result;
      if (to.rev === from.rev) return undefined;
      return { action: "transform", text: to.event.text, images: to.event.images };
    },
    outcome: (from, to) => to.stop?.outcome ?? (to.rev !== from.rev ? "transform" : "pass"),
    failClosed: (state, by, reason) =>
      stopped(state, { result: { action: "block", reason, by }, by, outcome: "block", reason }),
    toKernel(initial, final) {
      return POLICIES.input.diff(initial, final);
    },
  },

  before_agent_start: {
    semantics: "before_agent_start: systemPrompt chains; message(s) accumulate in order",
    defaultOnError: "open",
    mutable: ["systemPrompt"],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad("before_agent_start", result, "{systemPrompt?, message?, messages?}");
      let next = state;
      if (result.systemPrompt !== undefined) {
        if (typeof result.systemPrompt !== "string") throw bad("before_agent_start", result, "{systemPrompt: string}");
        next = changed(next, { systemPrompt: result.systemPrompt }, by);
      }
      const added = messagesOf(result, "before_agent_start");
      return added.length ? { ...next, messages: [...(next.messages ?? []), ...added] } : next;
    },
    diff: (from, to) => startChanges(from, to),
    outcome(from, to) {
      if (to.event.systemPrompt !== from.event.systemPrompt) return "system_prompt";
      return (to.messages?.length ?? 0) > (from.messages?.length ?? 0) ? "message" : "pass";
    },
    failClosed: (state, by, reason) =>
      stopped(state, {
        by,
        outcome: "fail_closed",
        reason,
        fatal: `Extension ${by} failed in before_agent_start: ${reason}`,
      }),
    toKernel(initial, final) {
      if (final.stop?.fatal) throw new Error(final.stop.fatal);
      return startChanges(initial, final);
    },
  },

  context: {
    semantics: "context: messages chain",
    defaultOnError: "open",
    mutable: ["messages"],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad("context", result, "{messages?: Message[]}");
      if (result.messages === undefined) return state;
      if (!Array.isArray(result.messages)) throw bad("context", result, "{messages: Message[]}");
      return changed(state, { messages: result.messages }, by);
    },
    diff: (from, to) => (to.rev === from.rev ? undefined : { messages: to.event.messages }),
    outcome: (from, to) => (to.rev !== from.rev ? "transform" : "pass"),
    failClosed: (state, by, reason) =>
      stopped(state, { by, outcome: "fail_closed", reason, fatal: `Extension ${by} failed in context: ${reason}` }),
    toKernel(_initial, final) {
      if (final.stop?.fatal) throw new Error(final.stop.fatal);
      // Always hand the array back: handlers may have edited messages deep in place (Pi's habit).
      return { messages: final.event.messages };
    },
  },

  tool_call: {
    semantics: "tool_call: input replacements chain (re-validated by the kernel); the first block or pause stops",
    defaultOnError: "closed",
    mutable: ["input"],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad("tool_call", result, "{block: true, reason}, {pause: true, reason} or {input}");
      // A block wins over a pause given with it.
      if (result.block === true) {
        const reason = typeof result.reason === "string" ? result.reason : "blocked";
        const block =
          result.terminate === true
            ? { block: true as const, reason, by, terminate: true }
            : { block: true as const, reason, by };
        return stopped(state, { result: block, by, outcome: "block", reason });
      }
      if (result.pause === true) {
        const reason = typeof result.reason === "string" ? result.reason : "needs approval";
        return stopped(state, { result: { pause: true as const, reason, by }, by, outcome: "pause", reason });
      }
      if (result.input === undefined) return state;
      if (!isRecord(result.input)) throw bad("tool_call", result, "{input: object}");
      // The same input handed back is no rewrite (docs/extensions.md#21-policy-per-slot).
      if (isDeepStrictEqual(result.input, state.event.input)) return state;
      return changed(state, { input: result.input }, by);
    },
    diff(from, to) {
      if (to.stop && !from.stop) return to.stop.result;
      return to.rev === from.rev ? undefined : { input: to.event.input, by: to.by };
    },
    outcome: (from, to) => to.stop?.outcome ?? (to.rev !== from.rev ? "rewrite" : "pass"),
    failClosed: (state, by, reason) =>
      stopped(state, { result: { block: true, reason, by }, by, outcome: "block", reason }),
    toKernel(initial, final) {
      return POLICIES.tool_call.diff(initial, final);
    },
  },

  tool_result: {
    semantics: "tool_result: partial patches chain (null clears a field); a withhold stops",
    defaultOnError: "closed",
    mutable: ["content", "details", "isError"],
    apply(state, result, by) {
      if (!isRecord(result)) throw bad("tool_result", result, "{content?, details?, isError?, terminate?, withhold?}");
      if (result.withhold === true) {
        const reason = typeof result.reason === "string" ? result.reason : "withheld";
        return stopped(state, { result: { withhold: true, reason }, by, outcome: "withhold", reason });
      }
      // Only a field whose value differs counts: a redactor that hands back the result it was
      // given (a fresh copy with nothing masked) made no patch (docs/extensions.md#21-policy-per-slot).
      const patch: { content?: Content[]; details?: unknown; isError?: boolean } = {};
      let touched = false;
      if (result.content !== undefined) {
        if (result.content !== null && !Array.isArray(result.content))
          throw bad("tool_result", result, "{content: Content[]}");
        const content = (result.content ?? []) as Content[];
        if (!isDeepStrictEqual(content, state.event.content)) {
          patch.content = content;
          touched = true;
        }
      }
      if (result.details !== undefined) {
        const details = result.details === null ? undefined : result.details;
        if (!isDeepStrictEqual(details, state.event.details)) {
          patch.details = details;
          touched = true;
        }
      }
      if (result.isError !== undefined) {
        if (result.isError !== null && typeof result.isError !== "boolean")
          throw bad("tool_result", result, "{isError: boolean}");
        const isError = result.isError ?? false;
        if (isError !== (state.event.isError ?? false)) {
          patch.isError = isError;
          touched = true;
        }
      }
      let next = touched ? changed(state, patch as Partial<SlotEvent<"tool_result">>, by) : state;
      if (result.terminate !== undefined) {
        if (result.terminate !== null && typeof result.terminate !== "boolean")
          throw bad("tool_result", result, "{terminate: boolean}");
        const terminate = result.terminate ?? false;
        if (terminate !== (state.terminate ?? false))
          next = { ...next, terminate, rev: next.rev + (touched ? 0 : 1), by };
      }
      return next;
    },
    diff: (from, to) => (to.stop && !from.stop ? to.stop.result : resultPatch(from, to)),
    outcome: (from, to) => to.stop?.outcome ?? (to.rev !== from.rev ? "patch" : "pass"),
    failClosed: (state, by, reason) =>
      stopped(state, { result: { withhold: true, reason }, by, outcome: "withhold", reason }),
    toKernel(initial, final) {
      if (final.stop) {
        const text = `Tool result withheld by ${final.stop.by}: ${final.stop.reason ?? "withheld"}`;
        return { content: [{ type: "text", text }], details: null, isError: true, by: final.stop.by };
      }
      return resultPatch(initial, final);
    },
  },

  ...HOST_POLICIES,
};

/** What `before_agent_start` handlers changed between two states: the system prompt, messages added. */
function startChanges(
  from: ChainState<"before_agent_start">,
  to: ChainState<"before_agent_start">,
): BeforeAgentStartResult | undefined {
  const result: BeforeAgentStartResult = {};
  if (to.event.systemPrompt !== from.event.systemPrompt) result.systemPrompt = to.event.systemPrompt;
  const added = (to.messages ?? []).slice(from.messages?.length ?? 0);
  if (added.length) result.messages = added;
  return result.systemPrompt === undefined && !result.messages ? undefined : result;
}

/** The `tool_result` patch that leads from one state to another (a stop is the caller's to handle). */
function resultPatch(from: ChainState<"tool_result">, to: ChainState<"tool_result">): ToolResultPatch | undefined {
  if (to.rev === from.rev) return undefined;
  const patch: ToolResultPatch = { content: to.event.content, isError: to.event.isError };
  if (to.event.details !== from.event.details) patch.details = to.event.details ?? null;
  if (to.terminate !== from.terminate) patch.terminate = to.terminate ?? false;
  return patch;
}
