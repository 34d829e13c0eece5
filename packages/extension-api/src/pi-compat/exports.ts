/**
 * The runtime exports of Pi's four packages in 1.6.0 (`@earendil-works/*`) and 0.73.1
 * (`@mariozechner/*`), each list the union of both releases, read from each package's
 * `dist/index.js`. Every name is present in mypi's shim of the package (both scopes get the same
 * shim): mypi's own implementation where the shim has one, else a stand-in (`modules.ts`) that
 * throws a clear error naming it when called, reported once.
 */
const names = (list: string): readonly string[] => Object.freeze(list.trim().split(/\s+/));

export type PiPackage = "pi-coding-agent" | "pi-ai" | "pi-tui" | "pi-agent-core";

export const PI_PACKAGE_EXPORTS: Readonly<Record<PiPackage, readonly string[]>> = {
  "pi-coding-agent": names(`
  AgentSession AgentSessionRuntime ArminComponent AssistantMessageComponent AuthStorage
  BashExecutionComponent BorderedLoader BranchSummaryMessageComponent CONFIG_DIR_NAME
  CURRENT_SESSION_VERSION CompactionSummaryMessageComponent CredentialSynchronizationError
  CustomEditor CustomMessageComponent DEFAULT_COMPACTION_SETTINGS DEFAULT_MAX_BYTES DEFAULT_MAX_LINES
  DefaultPackageManager DefaultResourceLoader DynamicBorder ExtensionEditorComponent
  ExtensionInputComponent ExtensionRunner ExtensionSelectorComponent FileAuthStorageBackend
  FooterComponent InMemoryAuthStorageBackend InteractiveMode LoginDialogComponent ModelRegistry
  ModelRuntime ModelSelectorComponent OAuthSelectorComponent ProjectTrustStore RpcClient
  SessionManager SessionSelectorComponent SettingsManager SettingsSelectorComponent
  ShowImagesSelectorComponent SkillInvocationMessageComponent Theme ThemeSelectorComponent
  ThinkingSelectorComponent ToolExecutionComponent TreeSelectorComponent UserMessageComponent
  UserMessageSelectorComponent VERSION VIRTUAL_MODEL_STATE_ENTRY buildContextEntries
  buildSessionContext buildSessionProjection calculateContextTokens collectEntriesForBranchSummary
  compact convertToLlm convertToPng copyToClipboard createAgentSession createAgentSessionFromServices
  createAgentSessionRuntime createAgentSessionServices createBashTool createBashToolDefinition
  createCodemodeExtension createCodingTools createEditTool createEditToolDefinition createEventBus
  createExtensionRuntime createFindTool createFindToolDefinition createGrepTool
  createGrepToolDefinition createLocalBashOperations createLocalPowerShellOperations createLsTool
  createLsToolDefinition createMcpExtension createPowerShellTool createPowerShellToolDefinition
  createReadOnlyTools createReadTool createReadToolDefinition createSyntheticSourceInfo
  createToolSearchExtension createWriteTool createWriteToolDefinition defineTool
  detectSupportedImageMimeTypeFromFile discoverAndLoadExtensions estimateTokens findCutPoint
  findTurnStartIndex formatDimensionNote formatReadLineRange formatSize formatSkillsForPrompt
  generateBranchSummary generateDiffString generateSummary generateSummaryWithUsage
  generateUnifiedPatch getAgentDir getDocsPath getExamplesPath getLanguageFromPath
  getLastAssistantUsage getLatestCompactionEntry getMarkdownTheme getPackageDir getPowerShellConfig
  getReadmePath getSelectListTheme getSettingsListTheme getShellConfig
  hasTrustRequiringProjectResources highlightCode initTheme isBashToolResult isEditToolResult
  isFindToolResult isGrepToolResult isLsToolResult isPowerShellToolResult isReadToolResult
  isToolCallEventType isWriteToolResult keyHint keyText loadProjectContextFiles loadSkills
  loadSkillsFromDir main migrateSessionEntries parseArgs parseFrontmatter parseSessionEntries
  parseSkillBlock prepareBranchEntries rawKeyHint readStoredCredential renderDiff resizeImage
  resolveCliModel resolveModelScopeWithDiagnostics runPrintMode runRpcMode serializeConversation
  sessionEntryToContextMessages shouldCompact stripFrontmatter truncateHead truncateLine truncateTail
  truncateToVisualLines withFileMutationQueue wrapRegisteredTool wrapRegisteredTools
`),
  "pi-ai": names(`
  AI_TELEMETRY_SCHEMA AssistantMessageEventStream CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY
  CACHE_WARMING_MAX_AGE_MS CACHE_WARMING_MAX_IDLE_AGE_MS CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS
  DEFAULT_MAX_AGENT_RETRY_DELAY_MS EventStream InMemoryCredentialStore InMemoryModelsStore ModelsError
  PI_AI_VERSION PI_ATTRIBUTION StreamingJsonParser StringEnum ToolCallArgumentsStream Type
  appendAssistantMessageDiagnostic calculateCost clampThinkingLevel cleanupSessionResources
  clearApiProviders collapseSystemMessages complete completeSimple contentText
  createAssistantMessageDiagnostic createAssistantMessageEventStream createFauxCore
  createInitialSystemMessage createModels createProvider declarationsEqual defaultProviderAuthContext
  envApiKeyAuth evaluateCacheWarming extractDiagnosticError fauxAssistantMessage fauxProvider fauxText
  fauxThinking fauxToolCall findEnvKeys formatThrownValue formatUserAgent getApiProvider
  getApiProviders getAttributionHeaders getCacheWarmingDelayMs getCacheWarmingRequestOptions
  getClientVersion getCurrentSystemMessage getCurrentSystemPrompt getCurrentTools getDeclaredTools
  getEnvApiKey getIdentityHeaders getInitialSystemMessage getModel getModelType getModels
  getOpenCodeSessionHeaders getOverflowPatterns getPromptCacheTtlMs getProviders
  getSupportedThinkingLevels getSystemMessageText getToolStateChanges hasApi hasNonAdditiveToolChanges
  hasToolRedefinitions isCacheWarmingReplayable isContextOverflow isModelType isRecoverableLength
  isRetryableAssistantError lazyApi lazyOAuth lazyStream mergeClientIdentity modelsAreEqual
  normalizeContext parseJsonWithRepair parseStreamingJson parseToolCallArguments registerApiProvider
  registerBuiltInApiProviders registerFauxProvider registerSessionResourceCleanup
  renderSystemMessageUpdate repairJson resetApiProviders resolveTranscript resolveTranscriptTools
  retryAssistantCall retryDelayMs setBedrockProviderModule stream streamAnthropic
  streamAzureOpenAIResponses streamGoogle streamGoogleVertex streamMistral streamOpenAICodexResponses
  streamOpenAICompletions streamOpenAIResponses streamSimple streamSimpleAnthropic
  streamSimpleAzureOpenAIResponses streamSimpleGoogle streamSimpleGoogleVertex streamSimpleMistral
  streamSimpleOpenAICodexResponses streamSimpleOpenAICompletions streamSimpleOpenAIResponses
  toToolDeclaration unregisterApiProviders uuidv7 validateToolArguments validateToolCall
  withClientIdentity withoutInitialSystemMessage
`),
  "pi-tui": names(`
  Box CURSOR_MARKER CancellableLoader CombinedAutocompleteProvider Container Editor HStack Image Input
  Key KeybindingsManager Loader Markdown Marked MouseRegion ProcessTerminal ScrollView SelectList
  SettingsList Spacer StdinBuffer TUI TUI_KEYBINDINGS Text TruncatedText TuiAltScreen TuiMainScreen
  VStack allocateImageId backgroundAnsi calculateImageRows colorToHex colorToOkhsl colorToOklch
  colorToRgb compositeTuiLine decodeKittyPrintable deleteAllKittyImages deleteKittyImage
  detectCapabilities encodeITerm2 encodeKitty foregroundAnsi formatProgramStatus fuzzyFilter
  fuzzyMatch getCapabilities getCellDimensions getGifDimensions getImageDimensions getJpegDimensions
  getKeybindings getNativeClipboard getOsc8LinkAtColumn getPngDimensions getSelectPageIndex
  getTerminalColorMode getWebpDimensions hyperlink imageFallback indexedColor isAppleTerminalSession
  isFocusable isKeyRelease isKeyRepeat isKittyProtocolActive isViewportTUI matchesKey mixColors
  okhslColor oklabToOkhslLightness oklchColor parseColor parseKey parseTerminalColorSchemeReport
  renderFakeCursor renderImage renderLatex replaceControlCharacters resetCapabilitiesCache rgbColor
  setCapabilities setCapabilityOverrides setCellDimensions setImageTranscoder setKeybindings
  setKittyProtocolActive sliceByColumn stripTerminalSequences styleText styleTextWithAnsi
  truncateToWidth visibleWidth wrapTextWithAnsi
`),
  "pi-agent-core": names(`
  Agent DEFAULT_AGENT_IDENTITY agentLoop agentLoopContinue runAgentLoop runAgentLoopContinue
  runToolCall setDefaultStreamFn streamProxy
`),
};
