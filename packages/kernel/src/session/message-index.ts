/**
 * Which entry holds a message (`SessionManager.entryIdOf`: compaction's `firstKeptEntryId`, the
 * `Agent`'s entry ids on `turn_end`): the same object that was appended or loaded, else a copy of
 * it on the current branch.
 *
 * Apart from the manager because it is a look-up beside the tree, not part of it: entries never
 * point at it, and it keeps no message alive (a `WeakMap`).
 */
import type { Message } from "../types.ts";
import type { SessionEntry } from "./entries.ts";

export class MessageIndex {
  /** Message object → its entry id. */
  private readonly ids = new WeakMap<Message, string>();
  /** Loaded messages are indexed at the first look-up, not at load: most sessions are never asked. */
  private indexedLoadedMessages: boolean;

  /** `loaded`: whether the session was loaded with entries (to index at the first look-up). */
  constructor(loaded: boolean) {
    this.indexedLoadedMessages = !loaded; // nothing loaded to index
  }

  /** `message` is the one in the entry `id`. */
  set(message: Message, id: string): void {
    this.ids.set(message, id);
  }

  /**
   * The id of the message entry holding `message`: the same object that was appended or loaded
   * (`entries`: all the session's), else (a copy) the nearest entry on `branch()` with an equal message.
   */
  find(
    message: Message,
    entries: readonly SessionEntry[],
    session: { getBranch(): SessionEntry[] },
  ): string | undefined {
    if (!this.indexedLoadedMessages) {
      for (const e of entries) if (e.type === "message" && !this.ids.has(e.message)) this.ids.set(e.message, e.id);
      this.indexedLoadedMessages = true;
    }
    const known = this.ids.get(message);
    if (known !== undefined) return known;
    const json = JSON.stringify(message);
    const path = session.getBranch();
    for (let i = path.length - 1; i >= 0; i--) {
      const e = path[i]!;
      if (
        e.type === "message" &&
        e.message.timestamp === message.timestamp &&
        e.message.role === message.role &&
        JSON.stringify(e.message) === json
      ) {
        return e.id;
      }
    }
    return undefined;
  }
}
