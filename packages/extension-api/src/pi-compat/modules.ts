/**
 * The modules a Pi extension imports, as the host's own instances (jiti `virtualModules`, the
 * way Pi's loader aliases them): `@mariozechner/pi-coding-agent`, `@mariozechner/pi-ai`,
 * `@mariozechner/pi-agent-core`, `@mariozechner/pi-tui` (and the same under `@earendil-works/`,
 * the scope of newer Pi releases), `@sinclair/typebox` and `typebox`.
 *
 * Each TypeBox name is its own real package (`@sinclair/typebox` 0.34, `typebox` 1.x), loaded
 * with Node's `require` the first time an extension imports it — they cost a few hundred ms to
 * load, which a session without Pi extensions never pays.
 *
 * pi-ai's `Type` and `StringEnum` are `@sinclair/typebox`'s (as at the Pi commit the research
 * describes): its schemas carry the 0.34 kind marker *and* are plain JSON Schema, so they mix
 * into a 0.34 `Type.Object` (which rejects 1.x schemas as "Unknown type" in `Value.Check`) and
 * into a 1.x one alike. Pi's examples combine `StringEnum` from pi-ai with `Type` from either.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { PI_PACKAGE_EXPORTS, type PiPackage } from "./exports.ts";
import { codingAgentHelpers } from "./helpers.ts";
import { piToolFactories, type ToolFactoryHost } from "./tool-factories.ts";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  GREP_MAX_LINE_LENGTH,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
} from "./truncate.ts";
import type { PiTerminal } from "../types.ts";
import { codingAgentTuiExports, piTuiModule } from "./tui.ts";

const requireHost = createRequire(import.meta.url);

type TypeBox = { Type: { Unsafe(schema: Record<string, unknown>): Record<string, unknown> } };

/** A tool's `{toolName}` event narrowed by name (Pi's type guards; at run time a name check). */
const hasToolName = (name: string) => (event: { toolName?: unknown } | undefined) => event?.toolName === name;

function notInMypi(name: string, why: string): (...args: unknown[]) => never {
  return () => {
    throw new Error(`${name} is not available in mypi: ${why} (see docs/pi-compat.md)`);
  };
}

/** `@mariozechner/pi-coding-agent`: the values Pi extensions import from it. */
function codingAgentModule(
  toolHost?: ToolFactoryHost,
  terminal?: PiTerminal,
  sdk?: Record<string, unknown>,
): Record<string, unknown> {
  return {
    // Pi's identity helpers for typing (mypi's registerTool adapts a Pi definition itself).
    defineTool: <T>(tool: T): T => tool,
    isToolCallEventType: (toolName: string, event: { toolName?: unknown }) => event?.toolName === toolName,
    isBashToolResult: hasToolName("bash"),
    isReadToolResult: hasToolName("read"),
    isEditToolResult: hasToolName("edit"),
    isWriteToolResult: hasToolName("write"),
    isGrepToolResult: hasToolName("grep"),
    isFindToolResult: hasToolName("find"),
    isLsToolResult: hasToolName("ls"),
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    formatSize,
    truncateHead,
    truncateTail,
    truncateLine,
    ...codingAgentHelpers(),
    VERSION: (requireHost("../../package.json") as { version: string }).version,
    /** Pi's `.pi`: the folder of a project's own configuration, mypi's `.mypi`. */
    CONFIG_DIR_NAME: ".mypi",
    /** Pi's `~/.pi/agent`; mypi's home (`$MYPI_HOME`, default `~/.mypi`). */
    getAgentDir: () => mypiHome(),
    getExtensionsDir: () => join(mypiHome(), "extensions"),
    ...piToolFactories(toolHost),
    ...codingAgentTuiExports(),
    ...terminal?.codingAgent,
    // createAgentSession, SessionManager, ModelRuntime, …: child sessions (sdk.ts).
    ...sdk,
  };
}

/** `StringEnum(["a", "b"], {description})`: a string schema with `enum` (what Pi recommends over unions). */
function stringEnum(typebox: () => TypeBox) {
  return (values: readonly string[], options: Record<string, unknown> = {}) =>
    typebox().Type.Unsafe({ ...options, type: "string", enum: [...values] });
}

/** `@mariozechner/pi-ai`: `Type` (`@sinclair/typebox`'s, loaded when first read) and `StringEnum`. */
function piAiModule(): Record<string, unknown> {
  const typebox = () => requireHost("@sinclair/typebox") as TypeBox;
  const noModel = (name: string) =>
    notInMypi(`${name}() from @mariozechner/pi-ai`, "extensions cannot call a model directly; the host owns the model");
  const module: Record<string, unknown> = {
    StringEnum: stringEnum(typebox),
    contentText: (content: unknown) =>
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content.map((c: { type?: string; text?: string }) => (c?.type === "text" ? (c.text ?? "") : "")).join("")
          : "",
    complete: noModel("complete"),
    completeSimple: noModel("completeSimple"),
    stream: noModel("stream"),
    streamSimple: noModel("streamSimple"),
    getModel: noModel("getModel"),
  };
  Object.defineProperty(module, "Type", { enumerable: true, get: () => typebox().Type });
  return module;
}

/** Members a module loader, a test runner or `await` probes on any module: never reported. */
const PROBED = new Set([
  "then",
  "default",
  "constructor",
  "prototype",
  "toJSON",
  "toString",
  "valueOf",
  "inspect",
  "asymmetricMatch",
  "nodeType",
  "tagName",
]);

/**
 * Told once per module and member: `absent` when an extension reads a member that is not one of
 * the package's exports (it reads as undefined), `stand-in` when it calls an export mypi does
 * not implement (the call throws).
 */
type OnMissingMember = (module: string, member: string, kind: "absent" | "stand-in") => void;

/**
 * `module` with every export of Pi's `pkg` that it lacks as a stand-in: a function (so `typeof`
 * tests, `extends` and imports work) that throws a clear error naming it when called or
 * constructed. The first call of each is told to `onCall`.
 */
function withStandIns(
  pkg: PiPackage,
  module: Record<string, unknown>,
  onCall: (member: string) => void,
): Record<string, unknown> {
  for (const name of PI_PACKAGE_EXPORTS[pkg]) {
    if (name in module) continue;
    module[name] = standIn(pkg, name, onCall);
  }
  return module;
}

/** What a function has of its own, which a stand-in keeps (so `extends`, `.name`, `.call` work). */
const FUNCTION_OWN = new Set(
  Object.getOwnPropertyNames(Function.prototype).concat(["prototype", "length", "name", "arguments", "caller", "then"]),
);

/**
 * A function (not a method, so `new X()` reaches the throw) that throws naming `name` when called
 * or constructed. A static member read from it (`SessionManager.inMemory`, `ModelRuntime.create`)
 * is a stand-in of its own, named `SessionManager.inMemory`: the call fails with mypi's message,
 * not a bare "is not a function".
 */
function standIn(pkg: string, name: string, onCall: (member: string) => void): (...args: unknown[]) => never {
  const fn = {
    // biome-ignore lint/complexity/useArrowFunction: an arrow function cannot be constructed, and `new X()` must reach the throw.
    [name]: function (): never {
      onCall(name);
      throw new Error(
        `${name} from ${pkg} is not available in mypi: mypi does not implement this part of Pi's API (see docs/pi-compat.md)`,
      );
    },
  }[name]!;
  const members = new Map<string, (...args: unknown[]) => never>();
  return new Proxy(fn, {
    get(target, key, receiver) {
      if (typeof key !== "string" || FUNCTION_OWN.has(key) || key in target) return Reflect.get(target, key, receiver);
      let member = members.get(key);
      if (!member) members.set(key, (member = standIn(pkg, `${name}.${key}`, onCall)));
      return member;
    },
  });
}

/**
 * Pi's module `name` as `module`, telling `onMissing` when an extension reads a member mypi
 * does not provide (`parseFrontmatter`, `SessionManager`, `getModels`, …). The member still
 * reads as `undefined`, so an extension that tests for it (`typeof x === "function"`) takes
 * its own way; one that calls it fails with jiti's `(0, _mod.x) is not a function`, and the
 * report says why. jiti asks `member in module` before it reads one, hence the `has` trap.
 */
function withMissingMembers(name: string, module: object, onMissing: OnMissingMember): object {
  const reported = new Set<string>();
  const report = (key: string | symbol) => {
    if (typeof key !== "string" || !/^[A-Za-z$][\w$]*$/.test(key) || PROBED.has(key) || reported.has(key)) return;
    reported.add(key);
    onMissing(name, key, "absent");
  };
  return new Proxy(module, {
    has(target, key) {
      if (key in target) return true;
      report(key);
      return false;
    },
    get(target, key, receiver) {
      if (!(key in target)) report(key);
      return Reflect.get(target, key, receiver);
    },
  });
}

/**
 * Every module name an extension may import, mapped to the host's module. The TypeBox entries
 * are getters: jiti reads the entry only when an extension imports that name.
 */
export function piVirtualModules(
  onMissing: OnMissingMember = () => {},
  toolHost?: ToolFactoryHost,
  terminal?: PiTerminal,
  sdk?: () => Record<string, unknown>,
): Record<string, unknown> {
  const modules: Record<string, unknown> = {};
  const once = <T>(make: () => T): (() => T) => {
    let value: T | undefined;
    return () => (value ??= make());
  };
  const lazy = (name: string, load: () => unknown) =>
    Object.defineProperty(modules, name, { enumerable: true, get: load });

  const called = new Set<string>();
  const standIns = (pkg: PiPackage, make: () => Record<string, unknown>) =>
    once(() =>
      withStandIns(pkg, make(), (member) => {
        if (called.has(`${pkg}.${member}`)) return;
        called.add(`${pkg}.${member}`);
        onMissing(pkg, member, "stand-in");
      }),
    );
  const codingAgent = standIns("pi-coding-agent", () => codingAgentModule(toolHost, terminal, sdk?.()));
  const ai = standIns("pi-ai", piAiModule);
  // With a terminal (interactive mode) the real library, copied (a module namespace cannot take
  // stand-ins): what extensions build with it is drawn.
  const tui = standIns("pi-tui", () => (terminal ? { ...(terminal.tui as Record<string, unknown>) } : piTuiModule()));
  const agentCore = standIns("pi-agent-core", () => ({}));
  for (const scope of ["@mariozechner", "@earendil-works"]) {
    const pi = (name: string, module: () => object) =>
      lazy(
        `${scope}/${name}`,
        once(() => withMissingMembers(`${scope}/${name}`, module(), onMissing)),
      );
    pi("pi-coding-agent", codingAgent);
    pi("pi-ai", ai);
    // pi-ai 1.x's subpaths (`/compat` has 0.73's stream and provider functions, `/oauth`, `/models`).
    for (const sub of ["compat", "oauth", "models"]) pi(`pi-ai/${sub}`, ai);
    pi("pi-tui", tui);
    pi("pi-agent-core", agentCore);
  }
  for (const name of [
    "@sinclair/typebox",
    "@sinclair/typebox/value",
    "@sinclair/typebox/compiler",
    "typebox",
    "typebox/value",
    "typebox/compile",
  ]) {
    lazy(name, () => requireHost(name));
  }
  return modules;
}
