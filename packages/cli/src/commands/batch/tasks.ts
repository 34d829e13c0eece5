/**
 * The task file of `mypi batch`: JSON Lines, one task an object a line. Parsing checks every
 * line and reports every problem at once, each as `file:line: what is wrong`, so a 300-line file
 * is fixed in one pass and nothing runs until all of it is valid.
 *
 * Paths in a task (`workspace.copy`, a local `workspace.git`, `extensions`, a `scripted:` model)
 * resolve against the task file's folder, so a task file and its fixtures move together. A
 * resolved task holds absolute paths only — and the names of shipped extensions
 * (`permission-gate`), which each machine turns into its own copy's path when it runs the task
 * (`run-task.ts`) — so it can be sent to a worker on another machine as is.
 */
import { isAbsolute, normalize, resolve } from "node:path";
import { errorMessage, isRecord } from "@mypi/kernel";
import { isShippedName } from "../../workspace/shipped.ts";

export type WorkspaceSpec = { copy: string } | { git: string; ref?: string } | { files: Record<string, string> };

/** A checked task, paths absolute. */
export interface Task {
  id: string;
  prompt: string;
  workspace: WorkspaceSpec;
  /** Absolute paths, and names of shipped extensions (a bare `permission-gate`; `./permission-gate` is a path). */
  extensions: string[];
  model?: string;
  maxTurns?: number;
  /** The whole task's budget: workspace, run and check. */
  timeoutMs: number;
  check?: string;
}

interface ParsedTasks {
  tasks: Task[];
  /** `file:line: message`, in file order. Empty when every line is valid. */
  errors: string[];
}

export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Ids name files (sessions, workspaces): no separators, no dot-only names. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const KEYS = new Set(["id", "prompt", "workspace", "extensions", "model", "maxTurns", "timeoutMs", "check"]);

interface ParseOptions {
  /** The file's name as the user gave it, for messages. */
  name: string;
  /** The absolute folder of the file: the base of relative paths. */
  baseDir: string;
  /** For tasks that give no `timeoutMs`. */
  timeoutMs?: number;
}

/** Parse and check `text`, a task file's content. Blank lines are skipped; ids must be unique. */
export function parseTasks(text: string, options: ParseOptions): ParsedTasks {
  const { name: file, baseDir: base } = options;
  const tasks: Task[] = [];
  const errors: string[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    const where = `${file}:${index + 1}`;
    const problems: string[] = [];
    const task = checkTask(line, base, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, problems);
    if (task) {
      const first = seen.get(task.id);
      if (first !== undefined) problems.push(`id "${task.id}" is already used on line ${first}; ids must be unique`);
      else seen.set(task.id, index + 1);
    }
    for (const problem of problems) errors.push(`${where}: ${problem}`);
    if (task && problems.length === 0) tasks.push(task);
  });
  if (tasks.length === 0 && errors.length === 0)
    errors.push(`${file}: no tasks (one JSON object a line: {"id", "prompt", "workspace"})`);
  return { tasks, errors };
}

/**
 * How a task's paths become absolute: against the task file's folder, or — for a task that came
 * from a queue, already resolved by its submitter — not at all (a relative path is a problem).
 */
type PathRule = (path: string, field: string, problems: string[]) => string | undefined;

const againstFolder =
  (base: string): PathRule =>
  (path) =>
    resolve(base, path);
const mustBeAbsolute: PathRule = (path, field, problems) => {
  if (isAbsolute(path)) return path;
  problems.push(`"${field}" must be an absolute path in a queued task (got ${describe(path)})`);
  return undefined;
};

function checkTask(line: string, base: string, defaultTimeout: number, problems: string[]): Task | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    problems.push(`not JSON (${errorMessage(error)})`);
    return undefined;
  }
  return checkTaskValue(value, againstFolder(base), defaultTimeout, problems);
}

/**
 * A task a worker took from the queue, checked exactly as a task file's line is — the queue is
 * input like any other, and whoever wrote the job may not be the submitter — with its paths
 * already absolute and its `timeoutMs` given. `problems` lists everything wrong.
 */
export function checkQueuedTask(value: unknown): { task: Task } | { problems: string[] } {
  const problems: string[] = [];
  if (isRecord(value) && !isWhole(value.timeoutMs))
    problems.push(`"timeoutMs" must be a whole number of milliseconds ≥ 1 (got ${describe(value.timeoutMs)})`);
  const task = checkTaskValue(value, mustBeAbsolute, DEFAULT_TIMEOUT_MS, problems);
  return task && problems.length === 0 ? { task } : { problems };
}

/** Whether `id` may name a task's files (`sessions/<id>.jsonl`, `workspaces/<id>/`). */
export function isTaskId(id: unknown): id is string {
  return typeof id === "string" && ID_PATTERN.test(id);
}

function checkTaskValue(value: unknown, path: PathRule, defaultTimeout: number, problems: string[]): Task | undefined {
  if (!isRecord(value)) {
    problems.push(`a task is a JSON object {"id", "prompt", "workspace", …} (got ${describe(value)})`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!KEYS.has(key)) problems.push(`unknown field "${key}" (fields: ${[...KEYS].join(", ")})`);
  }
  const { id, prompt, workspace, extensions, model, maxTurns, timeoutMs, check } = value;
  if (typeof id !== "string" || !ID_PATTERN.test(id)) {
    problems.push(
      `"id" must be a string of letters, digits, ".", "_" or "-" starting with a letter or digit, at most 128 (got ${describe(id)})`,
    );
  }
  if (typeof prompt !== "string" || prompt.trim() === "")
    problems.push(`"prompt" must be a non-empty string (got ${describe(prompt)})`);
  const ws = checkWorkspace(workspace, path, problems);
  const paths: string[] = [];
  if (extensions !== undefined) {
    if (!Array.isArray(extensions) || extensions.some((e) => typeof e !== "string" || e === "")) {
      problems.push(
        `"extensions" must be an array of paths or names of shipped extensions (got ${describe(extensions)})`,
      );
    } else {
      for (const e of extensions as string[]) {
        const entry = isShippedName(e) ? e : path(e, "extensions", problems);
        if (entry !== undefined) paths.push(entry);
      }
    }
  }
  let modelSpec: string | undefined;
  if (model !== undefined) {
    if (typeof model !== "string" || !/^(openai|scripted):.+/.test(model)) {
      problems.push(`"model" must be "openai:<name>" or "scripted:<file>" (got ${describe(model)})`);
    } else if (model.startsWith("scripted:")) {
      const file = path(model.slice("scripted:".length), "model", problems);
      if (file !== undefined) modelSpec = `scripted:${file}`;
    } else modelSpec = model;
  }
  if (maxTurns !== undefined && !isWhole(maxTurns))
    problems.push(`"maxTurns" must be a whole number ≥ 1 (got ${describe(maxTurns)})`);
  if (timeoutMs !== undefined && !isWhole(timeoutMs))
    problems.push(`"timeoutMs" must be a whole number of milliseconds ≥ 1 (got ${describe(timeoutMs)})`);
  if (check !== undefined && (typeof check !== "string" || check.trim() === ""))
    problems.push(`"check" must be a shell command (got ${describe(check)})`);
  if (typeof id !== "string" || !ID_PATTERN.test(id) || typeof prompt !== "string" || !ws) return undefined;
  return {
    id,
    prompt,
    workspace: ws,
    extensions: paths,
    ...(modelSpec !== undefined && { model: modelSpec }),
    ...(isWhole(maxTurns) && { maxTurns }),
    timeoutMs: isWhole(timeoutMs) ? timeoutMs : defaultTimeout,
    ...(typeof check === "string" && check.trim() !== "" && { check }),
  };
}

function checkWorkspace(value: unknown, path: PathRule, problems: string[]): WorkspaceSpec | undefined {
  const expected = `"workspace" must be {"copy": "dir"}, {"git": "url", "ref": "…"} or {"files": {"path": "content"}}`;
  if (!isRecord(value)) {
    problems.push(`${expected} (got ${describe(value)})`);
    return undefined;
  }
  const kinds = ["copy", "git", "files"].filter((k) => k in value);
  const extra = Object.keys(value).filter((k) => !["copy", "git", "ref", "files"].includes(k));
  if (kinds.length !== 1 || extra.length > 0 || ("ref" in value && !("git" in value))) {
    problems.push(`${expected} (got ${describe(value)})`);
    return undefined;
  }
  if ("copy" in value) {
    if (typeof value.copy !== "string" || value.copy === "")
      return void problems.push(`"workspace.copy" must be a folder path (got ${describe(value.copy)})`);
    const copy = path(value.copy, "workspace.copy", problems);
    return copy === undefined ? undefined : { copy };
  }
  if ("git" in value) {
    const { git, ref } = value;
    if (typeof git !== "string" || git === "" || git.startsWith("-"))
      return void problems.push(`"workspace.git" must be a repository URL or path (got ${describe(git)})`);
    if (ref !== undefined && (typeof ref !== "string" || ref === "" || ref.startsWith("-")))
      return void problems.push(`"workspace.ref" must be a branch, tag or commit (got ${describe(ref)})`);
    const url = isUrl(git) ? git : path(git, "workspace.git", problems);
    return url === undefined ? undefined : { git: url, ...(ref !== undefined && { ref }) };
  }
  const files = value.files;
  if (!isRecord(files))
    return void problems.push(`"workspace.files" must be an object {"path": "content"} (got ${describe(files)})`);
  for (const [path, content] of Object.entries(files)) {
    const problem = relativePathProblem(path);
    if (problem) problems.push(`"workspace.files": ${JSON.stringify(path)} ${problem}`);
    if (typeof content !== "string")
      problems.push(
        `"workspace.files": the content of ${JSON.stringify(path)} must be a string (got ${describe(content)})`,
      );
  }
  return { files: files as Record<string, string> };
}

/** Why `path` cannot name a file inside the workspace, or undefined. */
export function relativePathProblem(path: string): string | undefined {
  if (path === "" || path.includes("\0")) return "is not a file path";
  if (isAbsolute(path)) return "is absolute; give a path inside the workspace";
  const norm = normalize(path);
  if (norm === "." || norm === ".." || norm.startsWith("../") || norm.endsWith("/"))
    return "leaves the workspace or is not a file";
  return undefined;
}

/** `scheme://…` or scp-like `user@host:path`: not a path on this machine. */
function isUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^[^/@:]+@[^/:]+:/.test(text);
}

function isWhole(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
