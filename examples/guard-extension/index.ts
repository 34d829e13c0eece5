/**
 * An example extension package (see README.md): lock files are never written by the model,
 * `git push` asks the user first, and a `now` tool tells the time.
 */
import { defineTool, z, type ExtensionAPI } from "@mypi/extension-api";

export default function guard(pi: ExtensionAPI) {
  pi.on("tool_call", async (event, ctx) => {
    const path = String(event.input.path ?? "");
    if ((event.toolName === "write" || event.toolName === "edit") && /\.lock$|package-lock\.json$/.test(path)) {
      return {
        block: true,
        reason: "lock files are generated; change the manifest and run the package manager instead",
      };
    }
    const command = String(event.input.command ?? "");
    if (event.toolName === "bash" && /^\s*git\s+push\b/.test(command)) {
      const ok = await ctx.ui.confirm("Push?", `The agent wants to run: ${command}`);
      if (!ok) return { block: true, reason: "the user did not allow the push" };
    }
    return undefined;
  });

  pi.registerTool(
    defineTool({
      name: "now",
      description: "The current time as ISO 8601",
      parameters: z.strictObject({}),
      execute: () => new Date().toISOString(),
    }),
  );
}
