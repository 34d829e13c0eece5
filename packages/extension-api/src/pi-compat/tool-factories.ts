/**
 * Pi's tool factories (`createReadTool(cwd)`, `createReadToolDefinition(cwd)`, …,
 * `createCodingTools(cwd)`) over mypi's own builtin tools: the result is a Pi tool — `name`,
 * `label`, `description`, `parameters` (the builtin's JSON Schema), and `execute(toolCallId,
 * params, signal, onUpdate)` running the builtin. Pi extensions use them to wrap or redraw the
 * builtin tools (`pi.registerTool({...createReadToolDefinition(cwd), renderCall})`), which then
 * replace mypi's under the same name and behave the same.
 *
 * mypi's tools work in the workspace (`--cwd`): a factory given another folder still answers
 * with the workspace's tool, reported once. Pi's `operations` and `spawnHook` (running the
 * tools somewhere else, over ssh, in a sandbox) are refused with a clear error: mypi's tools
 * run here, and a `tool_call` handler can rewrite their input instead. `grep` and `find` run in
 * the kernel's worker pool, which only the agent has: their factories are refused too.
 */
import { resolve } from "node:path";
import { executeTool, toolSchema, validateToolArguments, type Content, type Tool } from "@mypi/kernel";

/** What the factories read from their manager. */
export interface ToolFactoryHost {
  readonly cwd: string;
  /** The tools of the loaded extensions (mypi's builtin tools among them, from `builtin-tools`). */
  tools(): { tool: Tool; extension: string }[];
  diagnostic(message: string): void;
}

const FACTORY_TOOLS = { Read: "read", Bash: "bash", Edit: "edit", Write: "write", Ls: "ls" } as const;
const LABELS: Record<string, string> = { read: "read", bash: "bash", edit: "edit", write: "write", ls: "ls" };

type PiTool = {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  execute(
    toolCallId: string,
    params: unknown,
    signal?: AbortSignal,
    onUpdate?: (partial: unknown) => void,
  ): Promise<{ content: Content[]; details: unknown; isError?: boolean }>;
};

export function piToolFactories(host: ToolFactoryHost | undefined): Record<string, (...args: unknown[]) => unknown> {
  let cwdReported = false;
  const refuse = (what: string, why: string): never => {
    throw new Error(
      `${what} from @earendil-works/pi-coding-agent is not available in mypi: ${why} (see docs/pi-compat.md)`,
    );
  };
  const make =
    (factory: string, name: string) =>
    (cwd?: unknown, options?: unknown): PiTool => {
      const o = (options ?? {}) as Record<string, unknown>;
      if (o.operations !== undefined || o.spawnHook !== undefined) {
        refuse(
          `${factory}() with ${o.operations !== undefined ? "operations" : "spawnHook"}`,
          "mypi's tools run here, in the workspace; a tool_call handler can rewrite their input",
        );
      }
      const builtin = host?.tools().find((t) => t.tool.name === name && t.extension === "builtin-tools")?.tool;
      if (!builtin) return refuse(`${factory}()`, `mypi's builtin ${name} tool is not loaded (--no-builtin-tools?)`);
      if (typeof cwd === "string" && resolve(cwd) !== resolve(host!.cwd) && !cwdReported) {
        cwdReported = true;
        host!.diagnostic(
          `${factory}(${JSON.stringify(cwd)}): mypi's builtin tools work in the workspace ${host!.cwd}, so this tool does too (reported once; see docs/pi-compat.md)`,
        );
      }
      const workspace = host!.cwd;
      const schema = toolSchema(builtin);
      return {
        name,
        label: LABELS[name] ?? name,
        description: schema.description,
        parameters: schema.parameters,
        async execute(toolCallId, params, signal, onUpdate) {
          const checked = validateToolArguments(builtin, { arguments: params as Record<string, unknown> });
          if (!checked.ok)
            return { content: [{ type: "text", text: checked.message }], details: undefined, isError: true };
          const result = await executeTool(builtin, checked.value, {
            toolCallId,
            signal: signal ?? new AbortController().signal,
            cwd: workspace,
            onUpdate: (partial) => onUpdate?.(partial),
            abortGraceMs: 2000,
          });
          return {
            content: [...result.content],
            details: result.details,
            ...(result.isError === true && { isError: true }),
          };
        },
      };
    };
  const out: Record<string, (...args: unknown[]) => unknown> = {};
  for (const [kind, name] of Object.entries(FACTORY_TOOLS)) {
    out[`create${kind}Tool`] = make(`create${kind}Tool`, name);
    out[`create${kind}ToolDefinition`] = make(`create${kind}ToolDefinition`, name);
  }
  out.createCodingTools = (cwd?: unknown, options?: unknown) =>
    ["Read", "Bash", "Edit", "Write"].map((k) => out[`create${k}Tool`]!(cwd, options));
  for (const kind of ["Grep", "Find"]) {
    for (const suffix of ["Tool", "ToolDefinition"]) {
      out[`create${kind}${suffix}`] = () =>
        refuse(`create${kind}${suffix}()`, "grep and find run in the agent's worker pool; use mypi's builtin tool");
    }
  }
  out.createReadOnlyTools = () =>
    refuse("createReadOnlyTools()", "its grep and find run in the agent's worker pool; use mypi's builtin tools");
  return out;
}
