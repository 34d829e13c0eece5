/// <reference types="node" preserve="true" />
/**
 * @mypi/cli — the `mypi` host. The bin (`bin/mypi.mjs`) calls `main`; the rest is exported for
 * hosts that embed a part of it (an RPC server, the terminal renderer, the argument parser, the
 * HTML session view).
 */
export { main } from "./main.ts";
export { processIO, type CliIO } from "./io.ts";
export { EXIT, HELP, exitCodeFor, parseArgs, resolveMode, type CliArgs, type Mode } from "./args.ts";
export { discoverExtensions, listExtensionFolder, type DiscoveredExtension } from "./workspace/discovery.ts";
export { createJsonlSplitter, readJsonlLines, toJsonLine } from "./modes/rpc/jsonl.ts";
export { runRpcMode, type RpcTarget } from "./modes/rpc.ts";
export { createRpcUI, type RpcUI, type WidgetContent, type WidgetPlacement } from "./modes/rpc-ui.ts";
export { createHostSession, type HostSession, type SessionState, type CompactResult } from "@mypi/extension-api/host";
export { loadExtensionSet } from "./workspace/extension-set.ts";
export { initialRenderState, liveLines, renderEvent, type RenderState, type Style } from "./render/renderer.ts";
export { Screen } from "./render/screen.ts";
export { renderSessionHtml, type SessionView } from "./export/html.ts";
export { listSessions, type SessionSummary } from "@mypi/kernel";
