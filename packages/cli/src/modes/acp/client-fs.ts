/**
 * The builtin file tools through the editor (`FileAccess`, builtin-tools): where the client
 * offers `fs.readTextFile`, `read` and `edit` take a file's text from the editor — its unsaved
 * changes included — and where it offers `fs.writeTextFile`, `write` and `edit` hand the new text
 * to the editor, which shows and saves it. The tools still check every path (inside the
 * workspace, not frozen by the sandbox) and report as always. A read the editor cannot answer
 * falls back to the disk; a write it refuses fails the call with the editor's reason.
 */
import { errorMessage } from "@mypi/kernel";
import type { AgentContext, FileSystemCapabilities } from "@agentclientprotocol/sdk";
import type { FileAccess } from "@mypi/builtin-tools";

interface ClientFiles {
  client(): AgentContext | undefined;
  sessionId(): string | undefined;
  capabilities: FileSystemCapabilities | undefined;
}

export function clientFiles(o: ClientFiles): FileAccess | undefined {
  const { readTextFile, writeTextFile } = o.capabilities ?? {};
  if (!readTextFile && !writeTextFile) return undefined;
  const target = () => {
    const client = o.client();
    const sessionId = o.sessionId();
    return client && sessionId !== undefined ? { client, sessionId } : undefined;
  };
  return {
    ...(readTextFile && {
      async readText(path: string) {
        const to = target();
        if (!to) return undefined;
        try {
          return (await to.client.request("fs/read_text_file", { sessionId: to.sessionId, path })).content;
        } catch {
          return undefined; // the editor does not have it: the disk's copy is the file
        }
      },
    }),
    ...(writeTextFile && {
      async writeText(path: string, content: string) {
        const to = target();
        if (!to) return false;
        try {
          await to.client.request("fs/write_text_file", { sessionId: to.sessionId, path, content });
          return true;
        } catch (error) {
          throw new Error(`the editor did not write ${path}: ${errorMessage(error)}`);
        }
      },
    }),
  };
}
