/**
 * `mypi extensions [--json]`: what loaded (in load order, with what each registered), what
 * failed (path, line, why), the handlers of every slot and event in effective order (outermost
 * first), and the tools the model would get (a later extension's tool replacing an earlier one).
 * Then the prompt-template and skill commands (docs/resources.md), with the paths extensions add
 * in `resources_discover` (reason `startup`).
 * Exits 0 even when something failed to load: listing failures is its job. The workspace's own
 * extensions that were not loaded because it is not trusted are listed as skipped; the managed
 * tier's are marked `managed`. Last, the policies: the permission gate (on, dormant or off, and
 * why), the permission mode, redact-secrets and protected-paths, and the sandbox.
 */
import { dirname } from "node:path";
import type { CommandInfo, ExtensionManager, LoadFailure } from "@mypi/extension-api";
import { formatLoadFailure } from "@mypi/extension-api";
import type { DiscoveredExtension, ExtensionOrigin } from "../workspace/discovery.ts";
import type { HandlerChains } from "@mypi/extension-api/host";
import type { CliIO } from "../io.ts";
import { describeSandboxReport, type SandboxReport } from "../workspace/sandbox.ts";

interface ExtensionsReport {
  loaded: {
    name: string;
    path?: string;
    /** Where it came from (absent for builtin-tools): a folder, `-e`, or switched on by a file. */
    origin?: ExtensionOrigin;
    note?: string;
    handlers: { name: string; order?: "pre" | "post" }[];
    tools: string[];
    commands: string[];
    flags: string[];
  }[];
  failed: { name: string; path: string; line?: number; column?: number; code: string; message: string }[];
  order: Record<string, string[]>;
  tools: { name: string; source?: string; description: string }[];
  /** The bash tool's sandbox: off, or its settings and whether bubblewrap can run here. */
  sandbox: SandboxReport;
  /** One line per policy: the permission gate and why it is on, dormant or off; the mode; redact-secrets; protected-paths. */
  policies: string[];
  /** Paths not loaded because the workspace is not trusted. */
  skipped: { path: string; reason: "untrusted workspace" }[];
  /** Prompt templates (`source: "prompt"`) and skills (`"skill"`, named `skill:<name>`). */
  commands: CommandInfo[];
}

interface ReportOptions {
  json: boolean;
  /** What discovery found, to say where each loaded extension came from. */
  discovered?: readonly DiscoveredExtension[];
  /** Failures found before loading (an -e package without extensions). */
  extraFailures?: readonly LoadFailure[];
  /** The bash tool's sandbox (default: off). */
  sandbox?: SandboxReport;
  /** The policies' lines (`describePolicies`). */
  policies?: readonly string[];
  /** Paths not loaded because the workspace is not trusted. */
  skipped?: readonly string[];
  /** The prompt and skill commands, given the paths extensions return from `resources_discover`. */
  resourceCommands?: (extra: { skillPaths: string[]; promptPaths: string[] }) => CommandInfo[];
}

function extensionsReport(
  manager: ExtensionManager,
  options: Omit<ReportOptions, "json" | "resourceCommands"> & { commands?: CommandInfo[] } = {},
): ExtensionsReport {
  const sourceOf = (path: string | undefined) =>
    path === undefined ? undefined : options.discovered?.find((d) => d.path === path || d.path === dirname(path));
  return {
    loaded: manager.list().map((e) => {
      const found = sourceOf(e.path);
      return { ...e, ...(found && { origin: found.origin }), ...(found?.note !== undefined && { note: found.note }) };
    }),
    failed: [...manager.loadFailures, ...(options.extraFailures ?? [])],
    skipped: (options.skipped ?? []).map((path) => ({ path, reason: "untrusted workspace" })),
    order: manager.handlerOrder() as Record<string, string[]>,
    tools: manager.effectiveTools().map((t) => ({
      name: t.name,
      ...(t.source !== undefined && { source: t.source }),
      description: firstLine(t.description),
    })),
    sandbox: options.sandbox ?? { enabled: false },
    policies: [...(options.policies ?? [])],
    commands: options.commands ?? [],
  };
}

export async function printExtensions(manager: ExtensionManager, io: CliIO, options: ReportOptions): Promise<number> {
  const never = new AbortController().signal;
  const found = await manager.runSlot(
    "resources_discover",
    { cwd: manager.cwd, reason: "startup" },
    { signal: never, emit: () => {} },
  );
  const commands = options.resourceCommands?.(found ?? { skillPaths: [], promptPaths: [] }) ?? [];
  const report = extensionsReport(manager, { ...options, commands });
  if (options.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  lines.push(`Loaded (${report.loaded.length}), in load order:`);
  for (const e of report.loaded) {
    const parts = [
      e.tools.length ? `tools: ${e.tools.join(", ")}` : "",
      e.commands.length ? `commands: ${e.commands.map((c) => `/${c}`).join(", ")}` : "",
      e.flags.length ? `flags: ${e.flags.map((f) => `--${f}`).join(", ")}` : "",
    ].filter(Boolean);
    lines.push(`  ${e.name}${e.path ? `  ${e.path}` : ""}${e.note ? `  (${e.note})` : ""}`);
    if (parts.length) lines.push(`      ${parts.join("; ")}`);
  }
  lines.push("", `Failed (${report.failed.length}):`);
  for (const f of report.failed) lines.push(`  ${f.name}  ${formatLoadFailure(f)}`);
  if (report.skipped.length > 0) {
    lines.push(
      "",
      `Skipped (${report.skipped.length}), the workspace is not trusted (--trust-project or \`mypi trust\` loads them):`,
    );
    for (const s of report.skipped) lines.push(`  ${s.path}`);
  }
  lines.push("", "Handlers per slot and event, in effective order (outermost first; pre / post: their order option):");
  lines.push(...orderLines(manager.handlerChains()));
  lines.push("", `Tools (${report.tools.length}):`);
  const toolWidth = Math.max(0, ...report.tools.map((t) => t.name.length));
  for (const t of report.tools)
    lines.push(`  ${t.name.padEnd(toolWidth)}  ${t.source ?? ""}  ${t.description}`.trimEnd());
  lines.push("", "Policies:");
  for (const line of report.policies) lines.push(`  ${line}`);
  lines.push("", describeSandboxReport(report.sandbox));
  if (report.sandbox.enabled && report.sandbox.hidden.length > 0)
    lines.push(`  hidden: ${report.sandbox.hidden.join(", ")}`);
  if (report.sandbox.enabled && report.sandbox.missing.length > 0)
    lines.push(`  missing (not mounted): ${report.sandbox.missing.join(", ")}`);
  if (report.sandbox.enabled && report.sandbox.bashFrom)
    lines.push(`  not covered: the bash tool in effect comes from ${report.sandbox.bashFrom}`);
  lines.push("", `Prompt templates and skills (${report.commands.length}):`);
  const commandWidth = Math.max(0, ...report.commands.map((c) => c.name.length + 1));
  for (const c of report.commands)
    lines.push(`  ${`/${c.name}`.padEnd(commandWidth)}  ${firstLine(c.description ?? "")}  ${c.path ?? ""}`.trimEnd());
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/**
 * One line per slot and event: its handlers outermost first, each `pre` / `post` handler marked.
 * Under a `tool_call` chain of several handlers, what the order means for a gate.
 */
export function orderLines(chains: HandlerChains): string[] {
  const names = Object.keys(chains);
  if (names.length === 0) return ["  (none)"];
  const width = Math.max(0, ...names.map((n) => n.length));
  const lines = names.map(
    (name) =>
      `  ${name.padEnd(width)}  ${chains[name]!.map((h) => (h.order ? `${h.extension} (${h.order})` : h.extension)).join(" → ")}`,
  );
  if ((chains.tool_call?.length ?? 0) > 1) {
    lines.push(
      `  ${"".padEnd(width)}  (a tool_call handler that answers without calling next() does not see what later ones make of the input;`,
    );
    lines.push(`  ${"".padEnd(width)}   a gate that must judge the input that runs goes last, with order: "post")`);
  }
  return lines;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
