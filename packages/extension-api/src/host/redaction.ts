/**
 * What the host writes that no slot passes (verdicts, the session's name, stored assistant
 * messages, progress lines, the prompt history) is masked by the redactors the loaded extensions
 * registered (`pi.registerRedactor`), in load order. The host names no extension: whichever
 * extension fills the seam masks what the host writes.
 */
import { errorMessage } from "../errors.ts";
import type { Redactor } from "../types.ts";

/** Where the redactors come from: read at each call, so a `/reload` that adds or drops one takes effect. */
export interface RedactorSource {
  redactors(): readonly { extension: string; redact: Redactor }[];
  diagnostic(message: string): void;
}

/**
 * One redactor over the source's: each applied in turn. One that throws is skipped (the others
 * still apply) and reported once per extension, not once per value.
 */
export function composeRedactors(source: RedactorSource): Redactor {
  const reported = new Set<string>();
  return <T>(value: T): T => {
    let out = value;
    for (const { extension, redact } of source.redactors()) {
      try {
        out = redact(out);
      } catch (error) {
        if (reported.has(extension)) continue;
        reported.add(extension);
        source.diagnostic(
          `${extension}: its redactor failed (${errorMessage(error)}); what the host writes is masked by the other redactors only`,
        );
      }
    }
    return out;
  };
}
