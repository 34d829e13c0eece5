/**
 * A custom message from what an extension handed over (`pi.sendMessage`, a `before_agent_start`
 * result): one shape check for both, so that nothing enters history that the session could not
 * record — refused here, with the caller's name on it, not later at the write.
 */
import { messageProblem, type CustomMessage } from "@mypi/kernel";
import type { CustomMessageInput } from "./types.ts";

/** The message, or why the input cannot be one (a phrase that fits after the caller's name). */
export function customMessageFrom(input: unknown): CustomMessage | { problem: string } {
  const given = input as Partial<CustomMessageInput> | null;
  if (
    typeof given !== "object" ||
    given === null ||
    typeof given.customType !== "string" ||
    given.content === undefined
  ) {
    return { problem: "give { customType, content, display?, details? }" };
  }
  const message: CustomMessage = {
    role: "custom",
    customType: given.customType,
    content: given.content,
    timestamp: Date.now(),
  };
  if (typeof given.display === "boolean") message.display = given.display;
  if (given.details !== undefined) message.details = given.details;
  const problem = messageProblem(message);
  return problem === undefined ? message : { problem };
}
