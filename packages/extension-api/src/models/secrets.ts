/**
 * API keys and header values as configs write them (Pi's forms): a literal, `$VAR` or `${VAR}`
 * (read from the environment), or `!command` (its standard output, trimmed; run when the client
 * is made, with a 10 s limit). `$$…` and `$!…` are a literal `$…` and `!…`. No message here ever
 * contains the value.
 */
import { execFileSync } from "node:child_process";

const VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^\$([A-Za-z_][A-Za-z0-9_]*)$/;

/** The variable a spec reads, if it is one (`$OPENAI_API_KEY` → `OPENAI_API_KEY`). */
export function secretVariable(spec: string): string | undefined {
  const m = VARIABLE.exec(spec.trim());
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Whether the value can be had without running anything: a literal, a command, or a variable that is set. */
export function secretPresent(spec: string | undefined, env: NodeJS.ProcessEnv): boolean {
  if (spec === undefined || spec === "") return true;
  const variable = secretVariable(spec);
  return variable === undefined || Boolean(env[variable]);
}

export function resolveSecret(
  spec: string | undefined,
  env: NodeJS.ProcessEnv,
): { value: string | undefined } | { error: string } {
  if (spec === undefined || spec === "") return { value: undefined };
  if (spec.startsWith("$$") || spec.startsWith("$!")) return { value: spec.slice(1) };
  const variable = secretVariable(spec);
  if (variable !== undefined) {
    const value = env[variable];
    return value ? { value } : { error: `the variable ${variable} is not set` };
  }
  if (spec.startsWith("!")) {
    try {
      const out = execFileSync("/bin/sh", ["-c", spec.slice(1)], {
        encoding: "utf8",
        timeout: 10_000,
        stdio: ["ignore", "pipe", "pipe"],
      }).trim();
      return out ? { value: out } : { error: "the command printed nothing" };
    } catch (error) {
      const code = (error as { status?: number | null }).status;
      return { error: `the command failed${typeof code === "number" ? ` (exit ${code})` : ""}` };
    }
  }
  return { value: spec };
}
