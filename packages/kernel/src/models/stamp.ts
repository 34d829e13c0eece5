/**
 * The final message of a model call, stamped with who made it (model id, api, provider) and,
 * when the model's prices are known, what it cost.
 */
import type { AssistantContent, AssistantMessage, ModelApi, ModelPrices, StopReason, Usage } from "../types.ts";
import { withCost } from "./cost.ts";
import type { ClientIdentity } from "./history.ts";

export interface Stamp extends ClientIdentity {
  prices: ModelPrices | undefined;
}

export function stampedMessage(
  stamp: Stamp,
  parts: { content: AssistantContent[]; stopReason: StopReason; usage: Usage; errorMessage?: string },
): AssistantMessage {
  const message: AssistantMessage = {
    role: "assistant",
    content: parts.content,
    stopReason: parts.stopReason,
    usage: withCost(parts.usage, stamp.prices),
    model: stamp.id,
    api: stamp.api,
    provider: stamp.provider,
    timestamp: Date.now(),
  };
  if (parts.errorMessage !== undefined) message.errorMessage = parts.errorMessage;
  return message;
}

export function makeStamp(id: string, api: ModelApi, provider: string, prices: ModelPrices | undefined): Stamp {
  return { id, api, provider, prices };
}
