/**
 * Redactors for what the CLI writes outside a host: the redactors that extensions register
 * (`pi.registerRedactor`), taken from a manager that loads them for that alone. A batch task's
 * check output is masked by the redactors of the extensions the task names; the prompt history
 * by redact-secrets' (the CLI's default masker there) and those of the extensions loaded.
 */
import { ExtensionManager, type Redactor } from "@mypi/extension-api";
import { composeRedactors } from "@mypi/extension-api/host";
import { isShippedCompiled, isShippedName, shippedExtensionPath } from "./shipped.ts";

/**
 * The redactors `specs` register (shipped names or paths, as `-e` takes them), composed in order;
 * `undefined` when none registers one. A spec that fails to load adds none (the run that loads
 * it says why). The extensions are unloaded again: only their redactors, pure functions, are kept.
 * `report`: a redactor that throws (skipped, the others still apply), once per extension.
 */
export async function loadRedactors(
  specs: readonly string[],
  cwd: string,
  report: (message: string) => void,
): Promise<Redactor | undefined> {
  if (specs.length === 0) return undefined;
  const manager = new ExtensionManager({ cwd, nativeImport: isShippedCompiled, onDiagnostic: () => {} });
  try {
    await manager.load(specs.map((spec) => (isShippedName(spec) ? shippedExtensionPath(spec) : spec)));
    const redactors = manager.redactors();
    if (redactors.length === 0) return undefined;
    return composeRedactors({ redactors: () => redactors, diagnostic: report });
  } finally {
    await manager.shutdown();
  }
}
