/**
 * @mypi/extension-api/host — for programs that host extensions: `HostSession`, a host that
 * outlives a session switch (`/new`, `/fork`, `/resume`), and `createHostSession`, which makes one
 * over `createExtensionHost`. The authors' entry (`@mypi/extension-api`) carries what an extension
 * imports; this one carries what a host is built from.
 */
export { createHostSession } from "./host-session.ts";
export { composeRedactors, type RedactorSource } from "./redaction.ts";
export type {
  CompactResult,
  HandlerChains,
  HostSession,
  HostSessionOptions,
  SessionState,
} from "./host-session.ts";
export type { SessionSummary } from "@mypi/kernel";
