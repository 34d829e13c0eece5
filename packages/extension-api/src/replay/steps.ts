/**
 * A recording as the steps a replay feeds through the slots, in the recorded order: each
 * person's text through `input` (and a prompt through `before_agent_start`), the history before
 * each model answer through `context`, each call through `tool_call` and each result through
 * `tool_result` — each with the verdicts mypi recorded about it.
 *
 * Where mypi's verdicts go: the host records them as they happen, so the `input` and
 * `before_agent_start` ones come just before the prompt they are about, the `context` ones just
 * before the answer, and the tool ones name their call (`toolCallId`). A prompt that `input` or
 * `before_agent_start` stopped never entered the session: its verdict is all there is, and it is
 * noted rather than replayed.
 */
import type { CustomMessage, ImageContent, SessionEntry, ToolCall, ToolResultMessage } from "@mypi/kernel";
import type { HookOutcome } from "../types.ts";
import { NoteCounter } from "./builder.ts";
import type { Recording } from "./recording.ts";

/** One verdict mypi recorded (a `mypi:hook_decision` entry's data). */
export interface RecordedVerdict {
  extension: string;
  outcome: HookOutcome;
  reason?: string;
}

interface StepBase {
  /** The recorded entry the step comes from (the message). */
  entryId: string;
  /** The verdicts recorded about it, in order (every outcome but `pass`, which is not recorded). */
  recorded: RecordedVerdict[];
}

export interface InputStep extends StepBase {
  slot: "input";
  text: string;
  images?: ImageContent[];
  /** Steering: text that entered while a run was going. */
  steering: boolean;
}

export interface StartStep extends StepBase {
  slot: "before_agent_start";
  prompt: string;
  images?: ImageContent[];
  /** The run's base system prompt, when the record has it (Pi); `""` otherwise. */
  systemPrompt: string;
  systemPromptRecorded: boolean;
  /** The custom messages recorded right after the prompt (what `before_agent_start` added). */
  recordedMessages: CustomMessage[];
}

export interface ContextStep extends StepBase {
  slot: "context";
  /** The history the model read ends at this entry (the answer's parent). */
  parentId: string | null;
}

export interface CallStep extends StepBase {
  slot: "tool_call";
  call: ToolCall;
  /** The entry of its result, when there is one. */
  resultEntryId: string | undefined;
}

export interface ResultStep extends StepBase {
  slot: "tool_result";
  result: ToolResultMessage;
  /** The call it answers, when it is in the history; its step when the call was replayed. */
  call: ToolCall | undefined;
  callStep: CallStep | undefined;
}

export type ReplayStep = InputStep | StartStep | ContextStep | CallStep | ResultStep;

const UNRUN: ReadonlySet<string> = new Set(["length", "error", "aborted"]);
const STOPPING: ReadonlySet<string> = new Set(["block", "handled", "fail_closed", "timeout"]);

/** The steps of a recording, and what could not be replayed (added to `notes`). */
export function replaySteps(recording: Recording, notes: string[]): ReplayStep[] {
  const { session } = recording;
  const entries = session.getEntries();
  const { resultOf, callOf } = pairCalls(session.getEntry.bind(session), entries);
  const steps: ReplayStep[] = [];
  const counted = new NoteCounter();
  let pending: { input: RecordedVerdict[]; start: RecordedVerdict[]; context: RecordedVerdict[] } = {
    input: [],
    start: [],
    context: [],
  };
  const openCalls = new Map<string, CallStep>();
  const resultVerdicts = new Map<string, RecordedVerdict[]>();
  let lastStart: StartStep | undefined;

  for (const entry of entries) {
    if (entry.type === "custom" && entry.customType === "mypi:hook_decision") {
      const v = verdictOf(entry.data);
      if (!v) continue;
      const { slot, toolCallId, verdict } = v;
      if (slot === "tool_call" && toolCallId !== undefined) openCalls.get(toolCallId)?.recorded.push(verdict);
      else if (slot === "tool_result" && toolCallId !== undefined)
        resultVerdicts.set(toolCallId, [...(resultVerdicts.get(toolCallId) ?? []), verdict]);
      else if (
        (slot === "input" || slot === "before_agent_start" || slot === "context") &&
        STOPPING.has(verdict.outcome)
      ) {
        // The prompt (or the answer) this stopped was never recorded: nothing to feed again.
        counted.add(
          `${slot === "context" ? "a model call" : "a prompt"} stopped in ${slot} by ${verdict.extension} is not in the session (what it stopped was never recorded): not replayed`,
        );
        pending = { input: [], start: [], context: [] };
      } else if (slot === "input") pending.input.push(verdict);
      else if (slot === "before_agent_start") pending.start.push(verdict);
      else if (slot === "context") pending.context.push(verdict);
      continue;
    }
    if (entry.type !== "message") continue;
    const message = entry.message;
    if (message.role !== "custom") lastStart = undefined;
    switch (message.role) {
      case "custom":
        lastStart?.recordedMessages.push(message);
        break;
      case "user": {
        if (recording.notInput.has(entry.id)) break;
        const text =
          typeof message.content === "string"
            ? message.content
            : message.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
        const images =
          typeof message.content === "string"
            ? []
            : message.content.filter((c): c is ImageContent => c.type === "image");
        const steering = isSteering(session.getEntry.bind(session), entry);
        steps.push({
          slot: "input",
          entryId: entry.id,
          recorded: pending.input,
          text,
          ...(images.length && { images }),
          steering,
        });
        if (!steering) {
          const systemPrompt = recording.systemPrompts.get(entry.id);
          lastStart = {
            slot: "before_agent_start",
            entryId: entry.id,
            recorded: pending.start,
            prompt: text,
            ...(images.length && { images }),
            systemPrompt: systemPrompt ?? "",
            systemPromptRecorded: systemPrompt !== undefined,
            recordedMessages: [],
          };
          steps.push(lastStart);
        }
        pending = { ...pending, input: [], start: [] };
        break;
      }
      case "assistant": {
        steps.push({ slot: "context", entryId: entry.id, recorded: pending.context, parentId: entry.parentId });
        pending = { ...pending, context: [] };
        if (UNRUN.has(message.stopReason)) {
          if (message.content.some((c) => c.type === "toolCall"))
            counted.add(
              "the calls of an answer that was cut off or failed were never run nor judged: not replayed through tool_call",
            );
          break;
        }
        for (const block of message.content) {
          if (block.type !== "toolCall") continue;
          const resultEntryId = resultOf.get(`${entry.id}\u0000${block.id}`);
          if (resultEntryId !== undefined && recording.unjudged.has(resultEntryId)) {
            counted.add(
              "calls answered before any policy was asked (an unknown or unmapped tool, arguments that did not validate): not replayed through tool_call",
            );
            continue;
          }
          const step: CallStep = { slot: "tool_call", entryId: entry.id, recorded: [], call: block, resultEntryId };
          openCalls.set(block.id, step);
          steps.push(step);
        }
        break;
      }
      case "toolResult": {
        const recorded = resultVerdicts.get(message.toolCallId) ?? [];
        resultVerdicts.delete(message.toolCallId);
        const callStep = openCalls.get(message.toolCallId);
        steps.push({
          slot: "tool_result",
          entryId: entry.id,
          recorded,
          result: message,
          call: callOf.get(entry.id),
          callStep: callStep?.resultEntryId === entry.id ? callStep : undefined,
        });
        break;
      }
    }
  }
  counted.flush(notes);
  return steps;
}

/** Each result's call (by walking up to the answer that made it) and each call's result. */
function pairCalls(getEntry: (id: string) => SessionEntry | undefined, entries: readonly SessionEntry[]) {
  const resultOf = new Map<string, string>();
  const callOf = new Map<string, ToolCall>();
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
    const id = entry.message.toolCallId;
    for (let at = entry.parentId, hops = 0; at !== null && hops < 10_000; hops++) {
      const up = getEntry(at);
      if (!up) break;
      if (up.type === "message" && up.message.role === "assistant") {
        const call = up.message.content.find((c): c is ToolCall => c.type === "toolCall" && c.id === id);
        if (call) {
          callOf.set(entry.id, call);
          if (!resultOf.has(`${up.id}\u0000${id}`)) resultOf.set(`${up.id}\u0000${id}`, entry.id);
          break;
        }
      }
      if (up.type === "message" && up.message.role === "user") break; // a result never answers a call before a prompt
      at = up.parentId;
    }
  }
  return { resultOf, callOf };
}

/**
 * Text that entered while a run was going: its nearest earlier message (other than an
 * extension's) is a tool result or another person's text (queued at the run's start). After a
 * model's last answer, text starts a new run — a follow-up looks the same, and is replayed as a prompt.
 */
function isSteering(getEntry: (id: string) => SessionEntry | undefined, entry: SessionEntry): boolean {
  for (let at = entry.parentId, hops = 0; at !== null && hops < 10_000; hops++) {
    const up = getEntry(at);
    if (!up) return false;
    if (up.type === "message" && up.message.role !== "custom")
      return up.message.role === "toolResult" || up.message.role === "user";
    if (up.type === "compaction") return false;
    at = up.parentId;
  }
  return false;
}

function verdictOf(data: unknown): { slot: string; toolCallId?: string; verdict: RecordedVerdict } | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const d = data as Record<string, unknown>;
  if (typeof d.slot !== "string" || typeof d.extension !== "string" || typeof d.outcome !== "string") return undefined;
  const verdict: RecordedVerdict = {
    extension: d.extension,
    outcome: d.outcome as HookOutcome,
    ...(typeof d.reason === "string" && { reason: d.reason }),
  };
  return { slot: d.slot, ...(typeof d.toolCallId === "string" && { toolCallId: d.toolCallId }), verdict };
}
