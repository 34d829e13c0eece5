/**
 * The environment of the programs tools start (the builtin `bash`, `pi.exec`, a sandbox built on
 * them): mypi's own environment without the credentials mypi uses to reach its model. A command
 * the model writes has no business reading the key that pays for the model (`printenv
 * OPENAI_API_KEY | rev` would slip it past any redaction), so those variables are left out by
 * default; `MYPI_PASS_ENV` names the ones to pass through anyway.
 *
 * This file is the one place that says which variables are withheld: whatever starts a program
 * on the model's behalf takes its environment from `toolEnvironment()`.
 */

/**
 * The key variables of the model clients mypi ships: `createOpenAIModel` and
 * `createOpenAIResponsesModel` read `OPENAI_API_KEY`, `createAnthropicModel` `ANTHROPIC_API_KEY`
 * (and its SDK would read `ANTHROPIC_AUTH_TOKEN`).
 */
export const MODEL_KEY_VARIABLES: readonly string[] = Object.freeze([
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
]);

/** Comma- or space-separated names of withheld variables to pass to tools after all (`MYPI_PASS_ENV=OPENAI_API_KEY`). */
export const PASS_ENV_VARIABLE = "MYPI_PASS_ENV";

const withheld = new Set<string>(MODEL_KEY_VARIABLES);

/**
 * Withhold one more variable from the programs tools start: a custom model client calls this with
 * the variable its key comes from, so that key is kept from commands as `OPENAI_API_KEY` is.
 */
export function withholdFromTools(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new TypeError(`withholdFromTools: ${JSON.stringify(name)} is not an environment variable name`);
  withheld.add(name);
}

/**
 * Pass these variables to every program tools start, a sandboxed one too (which otherwise gets
 * only an allow-list): for variables set on purpose for the tools — a Claude Code SessionStart
 * hook's `CLAUDE_ENV_FILE` exports. Adds their names to `MYPI_PASS_ENV` of `env`.
 */
export function passToTools(names: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const passed = new Set((env[PASS_ENV_VARIABLE] ?? "").split(/[\s,]+/).filter((n) => n !== ""));
  for (const name of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new TypeError(`passToTools: ${JSON.stringify(name)} is not an environment variable name`);
    passed.add(name);
  }
  env[PASS_ENV_VARIABLE] = [...passed].join(",");
}

/** The variables withheld now (those `MYPI_PASS_ENV` names are passed and so not listed). */
export function withheldVariables(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const passed = new Set((env[PASS_ENV_VARIABLE] ?? "").split(/[\s,]+/).filter((n) => n !== ""));
  return [...withheld].filter((name) => !passed.has(name));
}

/** A copy of `env` without the withheld variables. Read at each call: `process.env` may change. */
export function toolEnvironment(env: Readonly<Record<string, string | undefined>> = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of withheldVariables(env)) delete out[name];
  return out;
}
