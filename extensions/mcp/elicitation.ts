/**
 * `elicitation/create` (form mode): a server asks the user for a few values. The form becomes
 * the dialogs every UI offers (`ctx.ui`, interactive and RPC alike): first a choice to answer or
 * decline, then one dialog per field — `select` for a choice, `confirm` for a yes/no, `input`
 * for text and numbers (a multi-select is typed as a comma-separated list). Each answer is
 * checked against its field as it is typed (asked again, with what was wrong, up to three
 * times), and the whole answer against the requested schema before it is sent.
 *
 * Without a UI (print and JSON modes) nobody can answer: the request is declined, with the
 * reason in `_meta` for the server and a report line for the user.
 */
import type { DialogOptions, ExtensionUI } from "@mypi/extension-api";

/** One field of a requested form (MCP restricts them to flat primitives). */
interface FormField {
  type: "string" | "number" | "integer" | "boolean" | "array";
  title?: string;
  description?: string;
  minLength?: number;
  maxLength?: number;
  format?: "email" | "uri" | "date" | "date-time";
  minimum?: number;
  maximum?: number;
  enum?: string[];
  /** Labels of `enum` (an older spelling). */
  enumNames?: string[];
  oneOf?: { const: string; title: string }[];
  minItems?: number;
  maxItems?: number;
  items?: { type?: "string"; enum?: string[]; anyOf?: { const: string; title: string }[] };
  default?: unknown;
}

export interface FormSchema {
  type: "object";
  properties: Record<string, FormField>;
  required?: string[];
}

type FieldValue = string | number | boolean | string[];

type ElicitAnswer =
  | { action: "accept"; content: Record<string, FieldValue> }
  | { action: "decline" | "cancel"; _meta?: { "mypi/reason": string } };

interface ElicitOptions {
  server: string;
  message: string;
  schema: FormSchema;
  /** The session's UI; `undefined` in print and JSON modes. */
  ui: ExtensionUI | undefined;
  /** Aborted when the server cancels its request (or the connection ends). */
  signal: AbortSignal;
  report: (line: string) => void;
}

const ATTEMPTS = 3;
const ANSWER = "Answer";
const DECLINE = "Decline";

/** Dialogs of one UI, one form at a time: two servers asking at once would interleave their fields. */
const queues = new WeakMap<ExtensionUI, Promise<unknown>>();

export function elicit(options: ElicitOptions): Promise<ElicitAnswer> {
  const { ui } = options;
  if (!ui) {
    const reason = "mypi runs without a user interface (print or JSON mode), so nobody can answer";
    options.report(
      `server "${options.server}" asked the user: ${JSON.stringify(options.message)}; declined: ${reason}.`,
    );
    return Promise.resolve({ action: "decline", _meta: { "mypi/reason": reason } });
  }
  const before = queues.get(ui) ?? Promise.resolve();
  const turn = before.then(() => askForm(ui, options));
  queues.set(
    ui,
    turn.catch(() => {}),
  );
  return turn;
}

async function askForm(ui: ExtensionUI, options: ElicitOptions): Promise<ElicitAnswer> {
  const { server, schema, signal } = options;
  if (signal.aborted) return { action: "cancel" };
  const dialog: DialogOptions = { signal };
  const names = Object.keys(schema.properties);
  const listed = names.map((n) => schema.properties[n]!.title ?? n).join(", ");
  const choice = await ui.select(
    `MCP server "${server}" asks: ${options.message}${names.length ? ` (${listed})` : ""}`,
    [ANSWER, DECLINE],
    dialog,
  );
  if (choice === undefined || signal.aborted) return { action: "cancel" };
  if (choice === DECLINE) return { action: "decline" };
  const required = new Set(schema.required ?? []);
  const content: Record<string, FieldValue> = {};
  for (const name of names) {
    const field = schema.properties[name]!;
    const value = await askField(ui, { server, name, field, required: required.has(name), dialog });
    if (value === CANCELLED || signal.aborted) return { action: "cancel" };
    if (value === TOO_MANY) {
      ui.notify(
        `mcp: the form of server "${server}" was cancelled: ${ATTEMPTS} answers to "${field.title ?? name}" did not fit.`,
        "warning",
      );
      return { action: "cancel" };
    }
    if (value !== undefined) content[name] = value;
  }
  const problems = checkAnswer(schema, content);
  if (problems.length) {
    ui.notify(`mcp: the form of server "${server}" was cancelled: ${problems.join("; ")}`, "warning");
    return { action: "cancel" };
  }
  return { action: "accept", content };
}

const CANCELLED = Symbol("cancelled");
const TOO_MANY = Symbol("too many attempts");

async function askField(
  ui: ExtensionUI,
  ask: { server: string; name: string; field: FormField; required: boolean; dialog: DialogOptions },
): Promise<FieldValue | undefined | typeof CANCELLED | typeof TOO_MANY> {
  const { field, required, dialog } = ask;
  const label = `${field.title ?? ask.name}${required ? "" : " (optional)"}${field.description ? ` — ${field.description}` : ""}`;
  const choices = choicesOf(field);
  if (field.type === "boolean") return ui.confirm(`MCP server "${ask.server}"`, label, dialog);
  if (field.type === "string" && choices) {
    const skip = "(leave empty)";
    const labels = choices.map((c) => c.title);
    const picked = await ui.select(label, required ? labels : [...labels, skip], dialog);
    if (picked === undefined) return CANCELLED;
    return picked === skip ? undefined : choices.find((c) => c.title === picked)!.value;
  }
  let problem = "";
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const raw = await ui.input(problem ? `${label} (${problem}; try again)` : label, placeholderOf(field), dialog);
    if (raw === undefined) return CANCELLED;
    if (raw.trim() === "") {
      if (field.default !== undefined) return field.default as FieldValue;
      if (!required) return undefined;
      problem = "an answer is required";
      continue;
    }
    const value = parseField(field, raw);
    const wrong = typeof value === "object" && !Array.isArray(value) ? value.error : checkValue(field, value);
    if (!wrong) return value as FieldValue;
    problem = wrong;
  }
  return TOO_MANY;
}

/** The allowed values of a single or multiple choice, with the labels the user sees. */
function choicesOf(field: FormField): { value: string; title: string }[] | undefined {
  const source = field.type === "array" ? field.items : field;
  if (!source) return undefined;
  if ("oneOf" in source && source.oneOf) return source.oneOf.map((o) => ({ value: o.const, title: o.title }));
  if ("anyOf" in source && source.anyOf) return source.anyOf.map((o) => ({ value: o.const, title: o.title }));
  if (source.enum) {
    const names = "enumNames" in source ? source.enumNames : undefined;
    return source.enum.map((value, i) => ({ value, title: names?.[i] ?? value }));
  }
  return undefined;
}

function placeholderOf(field: FormField): string {
  const parts: string[] = [];
  if (field.type === "array")
    parts.push(`comma-separated, from: ${(choicesOf(field) ?? []).map((c) => c.title).join(", ")}`);
  else if (field.type !== "string") parts.push(field.type === "integer" ? "a whole number" : "a number");
  else if (field.format)
    parts.push(field.format === "uri" ? "a URI" : `a${field.format === "email" ? "n" : ""} ${field.format}`);
  if (field.default !== undefined)
    parts.push(`default ${Array.isArray(field.default) ? field.default.join(", ") : String(field.default)}`);
  return parts.join("; ");
}

/** Typed text → the field's value (a number, the chosen values), or what is wrong with it. */
function parseField(field: FormField, raw: string): FieldValue | { error: string } {
  const text = raw.trim();
  if (field.type === "number" || field.type === "integer") {
    const n = Number(text);
    return Number.isFinite(n) ? n : { error: `"${text}" is not a number` };
  }
  if (field.type === "array") {
    const choices = choicesOf(field) ?? [];
    const picked: string[] = [];
    for (const part of text
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const found = choices.find((c) => c.title === part || c.value === part);
      if (!found) return { error: `"${part}" is not one of ${choices.map((c) => c.title).join(", ")}` };
      if (!picked.includes(found.value)) picked.push(found.value);
    }
    return picked;
  }
  return text;
}

/** What is wrong with one value for its field, or `undefined`. */
function checkValue(field: FormField, value: unknown): string | undefined {
  switch (field.type) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number";
      if (field.type === "integer" && !Number.isInteger(value)) return `${value} is not a whole number`;
      if (field.minimum !== undefined && value < field.minimum) return `${value} is below the minimum ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `${value} is above the maximum ${field.maximum}`;
      return undefined;
    }
    case "array": {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return "must be a list of choices";
      const allowed = (choicesOf(field) ?? []).map((c) => c.value);
      const stray = value.find((v) => !allowed.includes(v));
      if (stray !== undefined) return `"${stray}" is not one of the choices`;
      if (field.minItems !== undefined && value.length < field.minItems) return `choose at least ${field.minItems}`;
      if (field.maxItems !== undefined && value.length > field.maxItems) return `choose at most ${field.maxItems}`;
      return undefined;
    }
    case "string": {
      if (typeof value !== "string") return "must be text";
      const choices = choicesOf(field);
      if (choices && !choices.some((c) => c.value === value))
        return `"${value}" is not one of ${choices.map((c) => c.title).join(", ")}`;
      if (field.minLength !== undefined && value.length < field.minLength)
        return `needs at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && value.length > field.maxLength)
        return `takes at most ${field.maxLength} characters`;
      return field.format ? checkFormat(field.format, value) : undefined;
    }
    default:
      return `mypi cannot ask for a field of type ${JSON.stringify((field as { type: unknown }).type)}`;
  }
}

function checkFormat(format: NonNullable<FormField["format"]>, value: string): string | undefined {
  switch (format) {
    case "email":
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) ? undefined : `"${value}" is not an email address`;
    case "uri":
      return URL.canParse(value) ? undefined : `"${value}" is not a URI`;
    case "date":
      return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : `"${value}" is not a date (YYYY-MM-DD)`;
    case "date-time":
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : `"${value}" is not a date and time (YYYY-MM-DDTHH:MM:SSZ)`;
  }
}

/** The whole answer against the requested schema: every required field present, every value fits. */
export function checkAnswer(schema: FormSchema, content: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const name of schema.required ?? []) if (!(name in content)) problems.push(`"${name}" is required`);
  for (const [name, value] of Object.entries(content)) {
    const field = schema.properties[name];
    const wrong = field ? checkValue(field, value) : "is not a field of the form";
    if (wrong) problems.push(`"${name}" ${wrong}`);
  }
  return problems;
}
