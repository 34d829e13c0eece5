/**
 * Pi's session files (Pi 1.6: header version 3, `docs/session-format.md` of its package) as a
 * recording. The family is mypi's own — the same tree of `message` entries, the same message
 * shapes and tool names — so most entries are taken as they are. What differs:
 *
 * - the system prompt is recorded as `role: "system"` messages that patch named `sections`; the
 *   sections in effect when a prompt is sent are that run's base system prompt;
 * - extension messages are `custom_message` entries; `bashExecution` messages (a person's `!cmd`)
 *   and `branch_summary` entries reach the model as text, so they join the history as custom
 *   messages; `context_edit` entries are not applied (noted);
 * - Pi records no verdicts. A call an extension blocked is answered with the reason alone,
 *   `isError`, and no `durationMs` (a call that ran has one); an unknown tool and arguments that
 *   failed validation are answered the same way, with their own words (`recording.ts`).
 */
import type { Message, ToolResultMessage } from "@mypi/kernel";
import { NoteCounter, readJsonLines, SessionBuilder } from "./builder.ts";
import { classifyResult, emptyRecording, isAskReason, resultText, type Recording } from "./recording.ts";

export function readPiSession(file: string): Recording {
  const notes: string[] = [];
  const lines = readJsonLines(file, notes);
  const header = lines[0]?.value;
  const cwd = typeof header?.cwd === "string" ? header.cwd : undefined;
  const builder = new SessionBuilder(cwd ?? process.cwd());
  const recording = emptyRecording(file, "pi", builder.session, cwd);
  if (typeof header?.id === "string") recording.id = header.id;
  recording.notes.push(...notes);
  const counted = new NoteCounter();
  const sections = new Map<string, string>();
  let systemText = "";

  for (const { line, value: entry } of lines.slice(1)) {
    const id = typeof entry.id === "string" ? entry.id : undefined;
    if (id === undefined) {
      recording.notes.push(`${file}:${line}: an entry without an id, skipped`);
      continue;
    }
    const parent = typeof entry.parentId === "string" ? entry.parentId : null;
    const append = (message: Message) => {
      const made = builder.message(id, parent, message);
      if ("problem" in made) recording.notes.push(`${file}:${line}: ${made.problem}, skipped`);
      return "entryId" in made ? made.entryId : undefined;
    };
    switch (entry.type) {
      case "message": {
        const message = entry.message as Record<string, unknown> | undefined;
        switch (message?.role) {
          case "system":
            for (const [name, text] of Object.entries(
              (message.sections as Record<string, unknown> | undefined) ?? {},
            )) {
              if (typeof text === "string") sections.set(name, text);
              else sections.delete(name);
            }
            if (typeof message.content === "string" && message.content !== "") systemText = message.content;
            builder.skip(id, parent);
            break;
          case "user": {
            const entryId = append(message as unknown as Message);
            if (entryId !== undefined) recording.systemPrompts.set(entryId, systemPrompt(sections, systemText));
            break;
          }
          case "assistant":
          case "custom":
            append(message as unknown as Message);
            break;
          case "toolResult": {
            const result = message as unknown as ToolResultMessage & { durationMs?: unknown };
            const entryId = append(result);
            if (entryId !== undefined) classifyPiResult(recording, entryId, result);
            break;
          }
          case "bashExecution": {
            builder.skip(id, parent);
            if (message.excludeFromContext === true) break;
            append(
              customText(
                "bashExecution",
                `$ ${String(message.command)}\n${String(message.output ?? "")}`,
                message.timestamp,
              ),
            );
            counted.add("commands a person ran with ! are in the history as text (not replayed as tool calls)");
            break;
          }
          default:
            builder.skip(id, parent);
            counted.add(`messages of role ${JSON.stringify(message?.role)}: not replayed`);
        }
        break;
      }
      case "custom_message":
        // `content` is checked as any message's is (builder.message): a string or text and image blocks.
        append({
          role: "custom",
          customType: String(entry.customType),
          content: entry.content as string,
          display: entry.display !== false,
          ...(entry.details !== undefined && { details: entry.details }),
          timestamp: Date.parse(String(entry.timestamp)) || 0,
        });
        break;
      case "compaction":
        builder.compaction(id, parent, {
          summary: String(entry.summary ?? ""),
          ...(typeof entry.firstKeptEntryId === "string" &&
            entry.firstKeptEntryId !== id && { firstKept: entry.firstKeptEntryId }),
          tokensBefore: typeof entry.tokensBefore === "number" ? entry.tokensBefore : 0,
        });
        break;
      case "branch_summary":
        append(customText("branch_summary", String(entry.summary ?? ""), Date.parse(String(entry.timestamp)) || 0));
        break;
      case "custom":
        builder.custom(id, parent, String(entry.customType), entry.data);
        break;
      case "context_edit":
        builder.skip(id, parent);
        counted.add("context edits: not applied (the history is replayed as recorded)");
        break;
      default: // model and thinking-level changes, labels, names, usage: nothing a slot sees
        builder.skip(id, parent);
    }
  }
  counted.flush(recording.notes);
  return recording;
}

/** The sections in the order they were declared, then any text the system messages carried. */
function systemPrompt(sections: ReadonlyMap<string, string>, text: string): string {
  return [...sections.values(), ...(text ? [text] : [])].join("\n\n");
}

function customText(customType: string, content: string, timestamp: unknown): Message {
  return {
    role: "custom",
    customType,
    content,
    display: true,
    timestamp: typeof timestamp === "number" ? timestamp : 0,
  };
}

/**
 * Pi answers a blocked call with the reason alone: an error result without `durationMs` (which
 * every call that ran has) that is none of the answers given before `tool_call` is asked.
 */
function classifyPiResult(
  recording: Recording,
  entryId: string,
  result: ToolResultMessage & { durationMs?: unknown },
): void {
  classifyResult(recording, entryId, result);
  if (!result.isError || result.durationMs !== undefined) return;
  if (recording.unjudged.has(entryId) || recording.blocked.has(entryId) || recording.withheld.has(entryId)) return;
  const reason = resultText(result);
  recording.blocked.set(entryId, { reason, ...(isAskReason(reason) && { ask: true }) });
}
