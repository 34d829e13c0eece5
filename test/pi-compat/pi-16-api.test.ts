/**
 * Pi 1.6.0's ExtensionAPI, enumerated: every event of `pi.on`, every `pi` method, every member
 * of `ctx`, a tool's and a command's `ctx`, `ctx.ui`, and every runtime export of the four
 * packages. The names were taken from Pi 1.6.0's `dist/core/extensions/types.d.ts` and each
 * package's `dist/index.js` when this test was written, and are written here as lists (no Pi
 * file is read at test time). Each one is present and callable without a TypeError; what mypi
 * does not do is reported once. Then the 1.x behaviours one by one.
 */
import { SessionManager, createScriptedModel, type ScriptedTurn } from "@mypi/kernel";
import { ExtensionManager, createExtensionHost, type ExtensionAPI, type ExtensionContext } from "@mypi/extension-api";
import { describe, expect, it } from "vitest";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultMutationQueue } from "@mypi/kernel";
import { defaultMutationQueue as toolsQueue } from "@mypi/builtin-tools";
import { piVirtualModules } from "../../packages/extension-api/src/pi-compat/index.ts";
import type { JsonObject } from "../helpers/json.ts";

/** `ExtensionAPI.on` overloads of Pi 1.6.0. */
const PI_16_EVENTS = [
  "project_trust",
  "resources_discover",
  "session_start",
  "session_info_changed",
  "session_before_switch",
  "session_before_fork",
  "session_before_compact",
  "session_compact",
  "session_compact_failed",
  "session_shutdown",
  "mcp_servers_change",
  "session_before_tree",
  "session_tree",
  "context",
  "context_with_system",
  "cache_warming_decision",
  "before_provider_request",
  "before_provider_headers",
  "after_provider_response",
  "provider_stream_event",
  "before_agent_start",
  "agent_start",
  "agent_end",
  "agent_before_settle",
  "agent_settled",
  "ui_prompt_start",
  "ui_prompt_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "model_select",
  "thinking_level_select",
  "tool_call",
  "tool_result",
  "user_bash",
  "input",
];
/** Of those, the ones mypi never emits (each reported once when an extension listens to it). */
const NOT_EMITTED = [
  "session_compact_failed",
  "mcp_servers_change",
  "context_with_system",
  "cache_warming_decision",
  "provider_stream_event",
  "agent_before_settle",
  "ui_prompt_start",
  "ui_prompt_end",
];

/**
 * `ExtensionAPI` methods of Pi 1.6.0, with arguments to call them with (the MCP ones are mypi's
 * own API, the mcp extension connecting what is registered: see extensions/mcp/register.test.ts).
 */
const PI_16_METHODS: [string, unknown[]][] = [
  [
    "registerTool",
    [
      {
        name: "t16",
        label: "T",
        description: "d",
        parameters: { type: "object", properties: {} },
        execute: async () => ({ content: [] }),
      },
    ],
  ],
  ["registerCommand", ["c16", { description: "d", handler: async () => {} }]],
  ["registerShortcut", ["ctrl+k", { handler: () => {} }]],
  ["registerFlag", ["f16", { type: "boolean", default: false }]],
  ["getFlag", ["f16"]],
  ["registerMessageRenderer", ["note", () => undefined]],
  ["registerMarkdownTransformer", [(md: string) => md]],
  ["registerEntryRenderer", ["note", () => undefined]],
  ["registerToolRenderer", [(_name: string, next: () => unknown) => next()]],
  ["sendMessage", [{ customType: "note", content: "hello", display: false }]],
  ["sendUserMessage", ["hello", { deliverAs: "followUp" }]],
  ["appendEntry", ["state", { n: 1 }]],
  ["setSessionName", ["sixteen"]],
  ["getSessionName", []],
  ["setLabel", ["no-such-entry", "label"]],
  ["exec", ["true", []]],
  ["getActiveTools", []],
  ["getAllTools", []],
  ["getSettings", []],
  ["setActiveTools", [["t16"]]],
  ["getCommands", []],
  ["setModel", [{ id: "m", provider: "p" }]],
  ["getThinkingLevel", []],
  ["setThinkingLevel", ["high"]],
  [
    "registerProvider",
    ["p16", { baseUrl: "http://127.0.0.1:9/v1", apiKey: "k", api: "openai-completions", models: [] }],
  ],
  ["unregisterProvider", ["p16"]],
  ["registerVirtualModel", [{ provider: "v", id: "m", name: "V", route: () => ({}) }]],
  ["unregisterVirtualModel", ["v", "m"]],
  ["registerMcpServer", ["m16", { command: "true" }]],
  ["getMcpServers", []],
  ["unregisterMcpServer", ["m16"]],
];

/** `ExtensionContext` of Pi 1.6.0 (`thinkingLevel` is optional there and left out). */
const PI_16_CTX = [
  "ui",
  "mode",
  "hasUI",
  "cwd",
  "sessionManager",
  "modelRegistry",
  "model",
  "scopedModels",
  "isIdle",
  "isProjectTrusted",
  "signal",
  "abort",
  "hasPendingMessages",
  "shutdown",
  "getContextUsage",
  "compact",
  "getSystemPrompt",
];
const PI_16_CTX_CALLS = [
  "isIdle",
  "isProjectTrusted",
  "hasPendingMessages",
  "getContextUsage",
  "getSystemPrompt",
  "shutdown",
];
const PI_16_TOOL_CTX = ["tools", "executeTool"];
const PI_16_COMMAND_CTX = [
  "getSystemPromptOptions",
  "waitForIdle",
  "newSession",
  "fork",
  "navigateTree",
  "switchSession",
  "reload",
];
/** `ExtensionUIContext` of Pi 1.6.0, with arguments. */
const PI_16_UI: [string, unknown[]][] = [
  ["select", ["t", ["a"]]],
  ["confirm", ["t", "m"]],
  ["input", ["t"]],
  ["notify", ["m"]],
  ["onTerminalInput", [() => undefined]],
  ["setStatus", ["k", "v"]],
  ["setWorkingMessage", []],
  ["setWorkingVisible", [false]],
  ["setWorkingIndicator", [{ frames: ["."] }]],
  ["setHiddenThinkingLabel", ["…"]],
  ["setWidget", ["k", ["line"]]],
  ["setFooter", [undefined]],
  ["setHeader", [undefined]],
  ["setTitle", ["t"]],
  ["custom", [() => ({ render: () => [] })]],
  ["pasteToEditor", ["x"]],
  ["setEditorText", ["x"]],
  ["getEditorText", []],
  ["editor", ["t"]],
  ["addAutocompleteProvider", [(p: unknown) => p]],
  ["setEditorComponent", [undefined]],
  ["getEditorComponent", []],
  ["getAllThemes", []],
  ["getTheme", ["dark"]],
  ["setTheme", ["dark"]],
  ["getToolsExpanded", []],
  ["setToolsExpanded", [true]],
];

/** The runtime exports of Pi 1.6.0's packages, from each `dist/index.js`. */
const PI_16_EXPORTS: Record<string, string> = {
  "pi-coding-agent": `AgentSession AgentSessionRuntime ArminComponent AssistantMessageComponent BashExecutionComponent BorderedLoader
    BranchSummaryMessageComponent CONFIG_DIR_NAME CURRENT_SESSION_VERSION CompactionSummaryMessageComponent CredentialSynchronizationError
    CustomEditor CustomMessageComponent DEFAULT_COMPACTION_SETTINGS DEFAULT_MAX_BYTES DEFAULT_MAX_LINES DefaultPackageManager
    DefaultResourceLoader DynamicBorder ExtensionEditorComponent ExtensionInputComponent ExtensionRunner ExtensionSelectorComponent
    FooterComponent InteractiveMode LoginDialogComponent ModelRegistry ModelRuntime ModelSelectorComponent OAuthSelectorComponent
    ProjectTrustStore RpcClient SessionManager SessionSelectorComponent SettingsManager SettingsSelectorComponent ShowImagesSelectorComponent
    SkillInvocationMessageComponent Theme ThemeSelectorComponent ThinkingSelectorComponent ToolExecutionComponent TreeSelectorComponent
    UserMessageComponent UserMessageSelectorComponent VERSION VIRTUAL_MODEL_STATE_ENTRY buildContextEntries buildSessionContext
    buildSessionProjection calculateContextTokens collectEntriesForBranchSummary compact convertToLlm convertToPng copyToClipboard
    createAgentSession createAgentSessionFromServices createAgentSessionRuntime createAgentSessionServices createBashTool
    createBashToolDefinition createCodemodeExtension createCodingTools createEditTool createEditToolDefinition createEventBus
    createExtensionRuntime createFindTool createFindToolDefinition createGrepTool createGrepToolDefinition createLocalBashOperations
    createLocalPowerShellOperations createLsTool createLsToolDefinition createMcpExtension createPowerShellTool
    createPowerShellToolDefinition createReadOnlyTools createReadTool createReadToolDefinition createSyntheticSourceInfo
    createToolSearchExtension createWriteTool createWriteToolDefinition defineTool detectSupportedImageMimeTypeFromFile
    discoverAndLoadExtensions estimateTokens findCutPoint findTurnStartIndex formatDimensionNote formatReadLineRange formatSize
    formatSkillsForPrompt generateBranchSummary generateDiffString generateSummary generateSummaryWithUsage generateUnifiedPatch
    getAgentDir getDocsPath getExamplesPath getLanguageFromPath getLastAssistantUsage getLatestCompactionEntry getMarkdownTheme
    getPackageDir getPowerShellConfig getReadmePath getSelectListTheme getSettingsListTheme getShellConfig
    hasTrustRequiringProjectResources highlightCode initTheme isBashToolResult isEditToolResult isFindToolResult isGrepToolResult
    isLsToolResult isPowerShellToolResult isReadToolResult isToolCallEventType isWriteToolResult keyHint keyText
    loadProjectContextFiles loadSkills loadSkillsFromDir main migrateSessionEntries parseArgs parseFrontmatter parseSessionEntries
    parseSkillBlock prepareBranchEntries rawKeyHint readStoredCredential renderDiff resizeImage resolveCliModel
    resolveModelScopeWithDiagnostics runPrintMode runRpcMode serializeConversation sessionEntryToContextMessages shouldCompact
    stripFrontmatter truncateHead truncateLine truncateTail truncateToVisualLines withFileMutationQueue wrapRegisteredTool
    wrapRegisteredTools`,
  "pi-ai": `AI_TELEMETRY_SCHEMA AssistantMessageEventStream CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY CACHE_WARMING_MAX_AGE_MS
    CACHE_WARMING_MAX_IDLE_AGE_MS CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS DEFAULT_MAX_AGENT_RETRY_DELAY_MS EventStream
    InMemoryCredentialStore InMemoryModelsStore ModelsError PI_AI_VERSION PI_ATTRIBUTION StreamingJsonParser StringEnum
    ToolCallArgumentsStream appendAssistantMessageDiagnostic calculateCost clampThinkingLevel cleanupSessionResources
    collapseSystemMessages contentText createAssistantMessageDiagnostic createAssistantMessageEventStream createFauxCore
    createInitialSystemMessage createModels createProvider declarationsEqual defaultProviderAuthContext envApiKeyAuth
    evaluateCacheWarming extractDiagnosticError fauxAssistantMessage fauxProvider fauxText fauxThinking fauxToolCall formatThrownValue
    formatUserAgent getAttributionHeaders getCacheWarmingDelayMs getCacheWarmingRequestOptions getClientVersion getCurrentSystemMessage
    getCurrentSystemPrompt getCurrentTools getDeclaredTools getIdentityHeaders getInitialSystemMessage getModelType
    getOpenCodeSessionHeaders getOverflowPatterns getPromptCacheTtlMs getSupportedThinkingLevels getSystemMessageText
    getToolStateChanges hasApi hasNonAdditiveToolChanges hasToolRedefinitions isCacheWarmingReplayable isContextOverflow isModelType
    isRecoverableLength isRetryableAssistantError lazyApi lazyOAuth lazyStream mergeClientIdentity modelsAreEqual normalizeContext
    parseJsonWithRepair parseStreamingJson parseToolCallArguments registerSessionResourceCleanup renderSystemMessageUpdate repairJson
    resolveTranscript resolveTranscriptTools retryAssistantCall retryDelayMs toToolDeclaration uuidv7 validateToolArguments
    validateToolCall withClientIdentity withoutInitialSystemMessage`,
  "pi-tui": `Box CURSOR_MARKER CancellableLoader CombinedAutocompleteProvider Container Editor HStack Image Input Key KeybindingsManager
    Loader Markdown Marked MouseRegion ProcessTerminal ScrollView SelectList SettingsList Spacer StdinBuffer TUI_KEYBINDINGS Text
    TruncatedText TuiAltScreen TuiMainScreen VStack allocateImageId backgroundAnsi calculateImageRows colorToHex colorToOkhsl
    colorToOklch colorToRgb compositeTuiLine decodeKittyPrintable deleteAllKittyImages deleteKittyImage detectCapabilities encodeITerm2
    encodeKitty foregroundAnsi formatProgramStatus fuzzyFilter fuzzyMatch getCapabilities getCellDimensions getGifDimensions
    getImageDimensions getJpegDimensions getKeybindings getNativeClipboard getOsc8LinkAtColumn getPngDimensions getSelectPageIndex
    getTerminalColorMode getWebpDimensions hyperlink imageFallback indexedColor isAppleTerminalSession isFocusable isKeyRelease
    isKeyRepeat isKittyProtocolActive isViewportTUI matchesKey mixColors okhslColor oklabToOkhslLightness oklchColor parseColor parseKey
    parseTerminalColorSchemeReport renderFakeCursor renderImage renderLatex replaceControlCharacters resetCapabilitiesCache rgbColor
    setCapabilities setCapabilityOverrides setCellDimensions setImageTranscoder setKeybindings setKittyProtocolActive sliceByColumn
    stripTerminalSequences styleText styleTextWithAnsi truncateToWidth visibleWidth wrapTextWithAnsi`,
  "pi-agent-core": `Agent DEFAULT_AGENT_IDENTITY agentLoop agentLoopContinue runAgentLoop runAgentLoopContinue runToolCall
    setDefaultStreamFn streamProxy`,
};

async function hostWith(factory: (pi: ExtensionAPI) => void, turns: ScriptedTurn[] = [], name = "pi16") {
  const diagnostics: string[] = [];
  const manager = new ExtensionManager({
    onDiagnostic: (d) => diagnostics.push(d),
    mode: "json",
    settings: { theme: "dark" },
  });
  const { failed } = await manager.loadExtension(factory, name);
  const session = SessionManager.inMemory(process.cwd());
  const host = createExtensionHost({ manager, model: createScriptedModel({ turns }), session });
  return { manager, host, failed, diagnostics, mine: () => diagnostics.filter((d) => d.startsWith(`${name}:`)) };
}

/** Call `fn`; a TypeError is what this suite is about, anything else is mypi's own refusal. */
async function typeErrorOf(fn: () => unknown): Promise<string | undefined> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof TypeError) return error.message;
  }
  return undefined;
}

describe("Pi 1.6's ExtensionAPI surface", () => {
  it("every pi.on event loads, and the ones mypi never emits are reported once each", async () => {
    const { failed, host, mine } = await hostWith((pi) => {
      const on = pi.on as unknown as (event: string, handler: () => void) => () => void;
      for (const event of PI_16_EVENTS) {
        expect(typeof on(event, () => {})).toBe("function");
        on(event, () => {});
      }
    });
    expect(failed).toEqual([]);
    await host.start();
    await host.shutdown();
    expect(mine().filter((d) => d.includes("mypi does not emit this Pi event"))).toHaveLength(NOT_EMITTED.length);
    for (const event of NOT_EMITTED) expect(mine().filter((d) => d.includes(`pi.on("${event}")`))).toHaveLength(1);
  });

  it("every pi method is present and callable without a TypeError", async () => {
    const failures: string[] = [];
    let pi!: ExtensionAPI;
    const { failed, host } = await hostWith((api) => {
      pi = api;
      expect(typeof (api as unknown as { events: { on: unknown } }).events.on).toBe("function");
    });
    expect(failed).toEqual([]);
    await host.start();
    for (const [method, args] of PI_16_METHODS) {
      const fn = (pi as unknown as Record<string, unknown>)[method];
      if (typeof fn !== "function") failures.push(`${method}: missing`);
      else {
        const error = await typeErrorOf(() => (fn as (...a: unknown[]) => unknown).apply(pi, args));
        if (error) failures.push(`${method}: ${error}`);
      }
    }
    await host.shutdown();
    expect(failures).toEqual([]);
  });

  it("every ctx member, the tool ctx's and the command ctx's are present, and ctx.ui's members are callable", async () => {
    const failures: string[] = [];
    const { failed, host, manager } = await hostWith((pi) => {
      pi.on("session_start", async (_e, ctx) => {
        const c = ctx as unknown as Record<string, unknown>;
        for (const member of PI_16_CTX) if (!(member in c)) failures.push(`ctx.${member}: missing`);
        for (const member of PI_16_CTX_CALLS) {
          const error = await typeErrorOf(() => (c[member] as () => unknown)());
          if (error) failures.push(`ctx.${member}(): ${error}`);
        }
        const ui = ctx.ui as unknown as Record<string, (...a: unknown[]) => unknown>;
        for (const [member, args] of PI_16_UI) {
          const error = await typeErrorOf(() => ui[member]!(...args));
          if (error) failures.push(`ctx.ui.${member}: ${error}`);
        }
        if (typeof (ui.theme as unknown as { fg: unknown }).fg !== "function")
          failures.push("ctx.ui.theme: not a theme");
      });
      pi.registerCommand("probe", {
        handler: async (_args, ctx) => {
          const c = ctx as unknown as Record<string, unknown>;
          for (const member of PI_16_COMMAND_CTX)
            if (typeof c[member] !== "function") failures.push(`command ctx.${member}: missing`);
          for (const member of PI_16_TOOL_CTX) if (!(member in c)) failures.push(`tool ctx.${member}: missing`);
          const outcome = (await (c.executeTool as (n: string, a: unknown) => Promise<{ isError: boolean }>)(
            "read",
            {},
          )) as { isError: boolean };
          if (outcome.isError !== true) failures.push("ctx.executeTool: not an error outcome");
        },
      });
    });
    expect(failed).toEqual([]);
    await host.start();
    await manager.drain();
    expect(await manager.runCommand("probe")).toEqual({ ran: true });
    await host.shutdown();
    expect(failures).toEqual([]);
  });

  it("every runtime export of the four packages is present under both scopes, as one instance", () => {
    const reports: string[] = [];
    const modules = piVirtualModules((module, member) => reports.push(`${module}.${member}`));
    const missing: string[] = [];
    for (const [pkg, list] of Object.entries(PI_16_EXPORTS)) {
      const current = modules[`@earendil-works/${pkg}`] as Record<string, unknown>;
      expect(modules[`@mariozechner/${pkg}`]).toBeDefined();
      for (const name of list.trim().split(/\s+/)) {
        if (current[name] === undefined) missing.push(`${pkg}.${name}`);
        expect((modules[`@mariozechner/${pkg}`] as Record<string, unknown>)[name]).toBe(current[name]);
      }
    }
    expect(missing).toEqual([]);
    expect(reports).toEqual([]);
  });

  it("a stand-in throws a clear error naming itself when called, reported once", () => {
    const reports: string[] = [];
    const modules = piVirtualModules((module, member, kind) => reports.push(`${kind} ${module}.${member}`));
    const core = modules["@earendil-works/pi-agent-core"] as Record<string, (...a: unknown[]) => unknown>;
    expect(() => core.agentLoop!()).toThrow("agentLoop from pi-agent-core is not available in mypi");
    expect(() => new (core.Agent as unknown as new () => unknown)()).toThrow(
      "Agent from pi-agent-core is not available in mypi",
    );
    expect(() => core.agentLoop!()).toThrow();
    expect(reports).toEqual(["stand-in pi-agent-core.agentLoop", "stand-in pi-agent-core.Agent"]);
  });
});

describe("Pi 1.x behaviours", () => {
  it("ctx.mode is Pi's name of the mode, ctx.signal is a signal, and isProjectTrusted answers", async () => {
    const seen: unknown[] = [];
    const { host } = await hostWith((pi) =>
      pi.on("session_start", (_e, ctx: ExtensionContext) => {
        const c = ctx as ExtensionContext & { mode: string };
        seen.push(c.mode, c.signal instanceof AbortSignal, c.isProjectTrusted());
      }),
    );
    await host.start();
    await host.shutdown();
    expect(seen).toEqual(["json", true, false]);
    const interactive = new ExtensionManager({ mode: "interactive" });
    expect((interactive.context as ExtensionContext & { mode: string }).mode).toBe("tui");
  });

  it("a blocked tool_call with terminate: true ends the run after its batch", async () => {
    const { host } = await hostWith(
      (pi) => {
        pi.registerTool({
          name: "deploy",
          description: "d",
          parameters: { type: "object", properties: {} },
          execute: async () => ({ content: [] }),
        });
        pi.on("tool_call", (event) =>
          event.toolName === "deploy" ? { block: true, reason: "done here", terminate: true } : undefined,
        );
      },
      [{ toolCalls: [{ name: "deploy", arguments: {} }] }, { text: "never asked" }],
    );
    await host.start();
    const end = await host.agent.prompt("go");
    await host.shutdown();
    expect(end.stopReason).toBe("terminated");
  });

  it("a tool_result handler may turn a result into an error with isError", async () => {
    const { host } = await hostWith(
      (pi) => {
        pi.registerTool({
          name: "probe",
          description: "d",
          parameters: { type: "object", properties: {} },
          execute: async () => ({ content: [{ type: "text" as const, text: "ok" }] }),
        });
        pi.on("tool_result", () => ({ isError: true }));
      },
      [{ toolCalls: [{ name: "probe", arguments: {} }] }, { text: "done" }],
    );
    await host.start();
    const end = await host.agent.prompt("go");
    await host.shutdown();
    const result = end.messages.find((m) => m.role === "toolResult") as { isError: boolean };
    expect(result.isError).toBe(true);
  });

  it("agent_settled follows every run, with aborted", async () => {
    const settled: unknown[] = [];
    const { host, manager } = await hostWith(
      (pi) => {
        (pi.on as unknown as (e: string, h: (e: unknown) => void) => void)(
          "agent_settled",
          (e) => void settled.push(e),
        );
      },
      [{ text: "one" }],
    );
    await host.start();
    await host.agent.run("go");
    await manager.drain();
    await host.shutdown();
    expect(settled).toEqual([{ type: "agent_settled", aborted: false }]);
  });

  it("the function pi.on returns removes the handler", async () => {
    const calls: string[] = [];
    const { host, manager } = await hostWith(
      (pi) => {
        const on = pi.on as unknown as (e: string, h: (e: { type: string }) => void) => () => void;
        const off = on("turn_start", () => void calls.push("turn"));
        on("agent_end", () => off());
      },
      [{ text: "one" }, { text: "two" }],
    );
    await host.start();
    await host.agent.run("first");
    await manager.drain();
    await host.agent.run("second");
    await manager.drain();
    await host.shutdown();
    expect(calls).toEqual(["turn"]);
  });

  it("a message_end handler's replacement message is reported once and the message stays", async () => {
    const { host, manager, mine } = await hostWith(
      (pi) => {
        (pi.on as unknown as (e: string, h: (e: unknown) => unknown) => void)("message_end", () => ({
          message: { role: "assistant", content: [] },
        }));
      },
      [{ text: "kept" }],
    );
    await host.start();
    const end = await host.agent.prompt("go");
    await manager.drain();
    await host.shutdown();
    expect(end.finalText).toBe("kept");
    expect(mine().filter((d) => d.includes("replacement message"))).toHaveLength(1);
  });

  it("before_provider_headers and after_provider_response become the model client's HTTP hooks, in load order", async () => {
    const seen: unknown[] = [];
    const { manager, failed, mine } = await hostWith((pi) => {
      const on = pi.on as unknown as (e: string, h: (e: JsonObject) => void) => () => void;
      on("before_provider_headers", (e) => void (e.headers["x-trace"] = "t1"));
      on("before_provider_headers", (e) => void (e.headers.authorization = null));
      const off = on("after_provider_response", (e) => void seen.push([e.type, e.status]));
      on("after_provider_response", () => off());
    });
    expect(failed).toEqual([]);
    expect(mine()).toEqual([]);
    const hooks = manager.piCompat!.httpHooks()!;
    const headers: Record<string, string | null> = { authorization: "Bearer k" };
    await hooks.headers!(headers);
    await hooks.response!({ status: 200, headers: {} });
    await hooks.response!({ status: 500, headers: {} });
    expect(headers).toEqual({ authorization: null, "x-trace": "t1" });
    expect(seen).toEqual([["after_provider_response", 200]]);
    expect(new ExtensionManager().piCompat!.httpHooks()).toBeUndefined();
  });

  it("a tool's prepareArguments adapts old arguments before validation", async () => {
    const got: unknown[] = [];
    const { host } = await hostWith(
      (pi) =>
        pi.registerTool({
          name: "open",
          description: "Open a file",
          parameters: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
            additionalProperties: false,
          },
          prepareArguments: (args: unknown) => {
            const a = args as { file?: string; path?: string };
            return a.file !== undefined ? { path: a.file } : a;
          },
          execute: async (_id: string, params: unknown) => {
            got.push(params);
            return { content: [{ type: "text" as const, text: "opened" }] };
          },
        }),
      [{ toolCalls: [{ name: "open", arguments: { file: "a.txt" } }] }, { text: "done" }],
    );
    await host.start();
    await host.agent.run("go");
    await host.shutdown();
    expect(got).toEqual([{ path: "a.txt" }]);
  });

  it("tools with executionMode parallel run together", async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let startedBoth!: () => void;
    const bothStarted = new Promise<void>((resolve) => (startedBoth = resolve));
    const { host } = await hostWith(
      (pi) => {
        for (const name of ["left", "right"]) {
          pi.registerTool({
            name,
            description: "d",
            executionMode: "parallel",
            parameters: { type: "object", properties: {} },
            execute: async () => {
              if (started.push(name) === 2) startedBoth();
              await gate;
              return { content: [{ type: "text" as const, text: name }] };
            },
          });
        }
      },
      [
        {
          toolCalls: [
            { name: "left", arguments: {} },
            { name: "right", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    );
    await host.start();
    const run = host.agent.run("go");
    await bothStarted; // a sequential batch would never start the second before the first returned
    release();
    await run;
    await host.shutdown();
    expect(started).toEqual(["left", "right"]);
  });

  it("ctx.modelRegistry finds the known and the registered providers' models as Pi's Model objects, and refuses model calls and credentials", async () => {
    const seen: unknown[] = [];
    const { host, mine } = await hostWith((pi) => {
      (pi as unknown as { registerProvider(n: string, c: unknown): void }).registerProvider("local", {
        baseUrl: "http://127.0.0.1:9/v1",
        apiKey: "k",
        api: "openai-completions",
        models: [{ id: "small", name: "Small" }],
      });
      pi.on("session_start", async (_e, ctx) => {
        const registry = (ctx as unknown as { modelRegistry: Record<string, (...a: unknown[]) => JsonObject> })
          .modelRegistry;
        const model = registry.find!("local", "small");
        seen.push(
          model,
          registry.find!("openai", "gpt-5"),
          registry.hasConfiguredAuth!(model),
          registry.getAll!().map((m: { provider: string; id: string }) => `${m.provider}/${m.id}`),
        );
        seen.push(await registry.complete!(model, { messages: [] }).catch((e: Error) => e.message));
        seen.push(await registry.getApiKeyForProvider!("local").catch((e: Error) => e.message));
      });
    });
    await host.start();
    await host.shutdown();
    expect(seen).toEqual([
      {
        id: "small",
        name: "Small",
        api: "openai-completions",
        provider: "local",
        baseUrl: "http://127.0.0.1:9/v1",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 128_000,
        maxTokens: 16_384,
      },
      expect.objectContaining({
        id: "gpt-5",
        provider: "openai",
        api: "openai-responses",
        reasoning: true,
        cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
      }),
      true,
      expect.arrayContaining([
        expect.stringMatching(/^scripted\//),
        "anthropic/claude-sonnet-5-5",
        "openai/gpt-5",
        "local/small",
      ]),
      "ctx.modelRegistry.complete is not available in mypi: extensions cannot call a model directly; the host owns the model (see docs/pi-compat.md)",
      "ctx.modelRegistry.getApiKeyForProvider is not available in mypi: provider credentials stay with the host (see docs/pi-compat.md)",
    ]);
    // Each host feature is reported once, on its own line.
    expect(
      mine()
        .filter((d) => d.includes("ctx.modelRegistry"))
        .map((d) => d.split(":")[1]!.trim()),
    ).toEqual(["ctx.modelRegistry.complete", "ctx.modelRegistry.getApiKeyForProvider"]);
  });

  it("session_before_compact and session_compact say why (manual), session_before_fork says where (before)", async () => {
    const seen: unknown[] = [];
    const manager = new ExtensionManager();
    await manager.loadExtension((pi) => {
      pi.on("session_before_compact", (e) => void seen.push(["before_compact", e.reason, e.willRetry]));
      pi.on("session_compact", (e) => void seen.push(["compact", e.reason, e.willRetry]));
      pi.on("session_before_fork", (e) => void seen.push(["before_fork", e.position]));
    }, "why");
    const session = SessionManager.inMemory(process.cwd());
    const host = createExtensionHost({
      manager,
      model: createScriptedModel({ turns: [{ text: "one" }, { text: "two" }, { text: "summary" }] }),
      session,
      compaction: { enabled: false, contextWindow: 100_000, keepRecentTokens: 1 },
    });
    await host.start();
    await host.agent.run("first");
    await host.agent.run("second");
    expect((await host.compact()).status).toBe("compacted");
    await host.fork(session.getEntries().find((e) => e.type === "message" && e.message.role === "user")!.id);
    await manager.drain();
    await host.shutdown();
    expect(seen).toEqual([
      ["before_compact", "manual", false],
      ["compact", "manual", false],
      ["before_fork", "before"],
    ]);
  });

  it("session_info_changed tells every extension the session's new name", async () => {
    const names: unknown[] = [];
    const { host, manager } = await hostWith((pi) => {
      (pi.on as unknown as (e: string, h: (e: { name?: string }) => void) => void)(
        "session_info_changed",
        (e) => void names.push(e.name),
      );
      pi.registerCommand("name", { handler: async (args) => pi.setSessionName(args) });
    });
    await host.start();
    await manager.runCommand("name", "refactor auth");
    host.setSessionName("from the client");
    await manager.drain();
    await host.shutdown();
    expect(names).toEqual(["refactor auth", "from the client"]);
  });

  it("pi.getSettings returns the effective settings and registerToolRenderer does nothing headless", async () => {
    let settings: unknown;
    const { failed, mine } = await hostWith((pi) => {
      settings = pi.getSettings();
      (pi as unknown as { registerToolRenderer(r: unknown): void }).registerToolRenderer(() => undefined);
    });
    expect(failed).toEqual([]);
    expect(settings).toEqual({ theme: "dark" });
    expect(mine()).toEqual([expect.stringContaining("pi.registerToolRenderer: terminal-UI calls do nothing in mypi")]);
  });
});

describe("Pi's tool factories", () => {
  it("wrap mypi's builtin tools: a redrawn read registered over the builtin one reads the workspace's files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mypi-factories-"));
    try {
      const { writeFileSync } = await import("node:fs");
      const { createBuiltinTools } = await import("@mypi/builtin-tools");
      writeFileSync(join(dir, "notes.txt"), "remember the milk\n");
      const diagnostics: string[] = [];
      const manager = new ExtensionManager({ cwd: dir, onDiagnostic: (d) => diagnostics.push(d) });
      await manager.loadExtension(createBuiltinTools({ root: dir }), "builtin-tools", { replaceable: true });
      const seen: unknown[] = [];
      const { failed } = await manager.loadExtension((pi) => {
        const agent = piVirtualModules(() => {}, {
          cwd: dir,
          tools: () => manager.tools(),
          diagnostic: (d) => diagnostics.push(d),
        })["@earendil-works/pi-coding-agent"] as Record<string, (...a: unknown[]) => JsonObject>;
        const read = agent.createReadToolDefinition!(dir);
        seen.push([read.name, typeof read.parameters, typeof read.execute]);
        pi.registerTool({ ...read, renderCall: () => undefined } as never);
        expect(() => agent.createBashTool!(dir, { spawnHook: () => {} })).toThrow(
          "createBashTool() with spawnHook from @earendil-works/pi-coding-agent is not available in mypi",
        );
      }, "redraw");
      expect(failed).toEqual([]);
      const host = createExtensionHost({
        manager,
        model: createScriptedModel({
          turns: [{ toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] }, { text: "done" }],
        }),
        session: SessionManager.inMemory(dir),
      });
      await host.start();
      const end = await host.agent.prompt("read it");
      await host.shutdown();
      const result = end.messages.find((m) => m.role === "toolResult") as {
        isError: boolean;
        content: { text: string }[];
      };
      expect(seen).toEqual([["read", "object", "function"]]);
      expect([result.isError, result.content.map((c) => c.text).join("")]).toEqual([
        false,
        expect.stringContaining("remember the milk"),
      ]);
      expect(diagnostics).toContain("tool 'read' from redraw replaces the one from builtin-tools");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("withFileMutationQueue", () => {
  it("is the queue mypi's write and edit tools use, keyed by the real path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mypi-queue-"));
    try {
      const modules = piVirtualModules();
      const { withFileMutationQueue } = modules["@earendil-works/pi-coding-agent"] as {
        withFileMutationQueue: (p: string, fn: () => unknown) => Promise<unknown>;
      };
      expect(toolsQueue).toBe(defaultMutationQueue);
      let pending: string[] = [];
      await withFileMutationQueue(
        join(dir, "sub", "..", "new.txt"),
        () => void (pending = defaultMutationQueue.pendingPaths),
      );
      expect(pending).toContain(join(realpathSync(dir), "new.txt"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
