/**
 * The kernel's vocabulary: messages, tools, models, events and the five decision slots.
 *
 * Everything here is part of the public contract (docs/architecture.md, docs/kernel.md). Payloads handed to events and
 * slots are read-only: messages are frozen when their `message_end` fires and events share
 * those frozen objects.
 *
 * One name to import it all from; each concern is its own file under `types/`, read in this order:
 * history first, as everything else is built on it.
 */
export type * from "./types/messages.ts";
export type * from "./types/tools.ts";
export type * from "./types/models.ts";
export type * from "./types/events.ts";
export type * from "./types/slots.ts";
