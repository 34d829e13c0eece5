/**
 * Pi 1.6's tool lists (`--tools`, `--exclude-tools`; docs/cli.md#command-line): names and `*`
 * patterns, or only `+name` / `-name` entries, and how they pick the tools the model is offered.
 */

/** A comma-separated tool list's entries, trimmed, blanks dropped. */
export function toolList(text: string): string[] {
  return text
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean);
}

/** Pi's rule: an allowlist of names and patterns, or only exact `+name` / `-name` entries. */
export function toolListProblem(entries: readonly string[]): string | undefined {
  const modifiers = entries.filter(isToolModifier);
  if (modifiers.length === 0) return undefined;
  if (modifiers.length < entries.length) return "tool names cannot be mixed with +name or -name entries";
  const pattern = modifiers.find((entry) => entry.includes("*"));
  return pattern ? `+name and -name entries take exact tool names, not patterns: ${pattern}` : undefined;
}

function isToolModifier(entry: string): boolean {
  return entry.startsWith("+") || entry.startsWith("-");
}

/**
 * The tools the model is offered, of the registered `names` (in their order; read only when a flag asks): `--tools` as an allowlist of
 * names and `*` patterns, or its `+name` / `-name` entries applied to all of them; then without
 * what `--exclude-tools` matches. An allowlist name that matches nothing is kept (the host says
 * it is unknown). `undefined`: no narrowing at all.
 */
export function selectTools(
  names: readonly string[] | (() => readonly string[]),
  tools: readonly string[] | undefined,
  exclude: readonly string[],
): string[] | undefined {
  if (tools === undefined && exclude.length === 0) return undefined;
  const registered = typeof names === "function" ? names() : names;
  const excluded = toolMatcher(exclude);
  let selected: string[];
  if (tools === undefined) selected = [...registered];
  else if (tools.length > 0 && tools.every(isToolModifier)) {
    selected = [...registered];
    for (const entry of tools) {
      const name = entry.slice(1);
      const at = selected.indexOf(name);
      if (entry.startsWith("+") && at === -1 && name) selected.push(name);
      else if (entry.startsWith("-") && at !== -1) selected.splice(at, 1);
    }
  } else {
    const allowed = toolMatcher(tools);
    selected = [...registered.filter(allowed), ...tools.filter((t) => !t.includes("*") && !registered.includes(t))];
  }
  return selected.filter((name) => !excluded(name));
}

/** Names and `*` patterns (any run of characters) as one test. */
function toolMatcher(entries: readonly string[]): (name: string) => boolean {
  const names = new Set(entries.filter((e) => !e.includes("*")));
  const patterns = entries
    .filter((e) => e.includes("*"))
    .map(
      (e) =>
        new RegExp(
          `^${e
            .split("*")
            .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
            .join(".*")}$`,
        ),
    );
  return (name) => names.has(name) || patterns.some((p) => p.test(name));
}
