/**
 * The default export of a CommonJS package, read the same way under every loader. Node hands an
 * ESM importer a CommonJS package's `module.exports` as the default import; TypeScript's
 * `nodenext` reading of such a package's `export default` types it as `{ default: … }` instead.
 * ajv and mitt are read through this so the compiled packages, jiti and vitest agree, and the
 * published declarations type-check under `module: nodenext`.
 */
export function cjsDefault<T>(imported: T): T extends { default: infer D } ? D : T {
  const inner = (imported as { default?: unknown } | null)?.default;
  return (inner ?? imported) as T extends { default: infer D } ? D : T;
}
