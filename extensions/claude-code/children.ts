/**
 * Child agents as Claude Code's hooks describe them (`agent_id`, `agent_type`,
 * `agent_transcript_path`). A decision made for a child carries its path (`ctx.agentPath`); the
 * subagents extension announces each child its `agent` tool starts on the shared bus
 * (subagents/bus.ts) with the agent it runs and its session, which is what is read here. A child
 * nobody announced (a Pi package's SDK session, another extension's child) is described by its
 * path alone: its last segment is its id, the name in it its type.
 */
import { rmSync } from "node:fs";
import { segmentName, type ExtensionAPI } from "@mypi/extension-api";
import { AGENT_LIFECYCLE_CHANNEL, type AgentLifecycleEvent } from "../subagents/bus.ts";
import { Transcript, transcriptPath } from "./transcript.ts";
import type { ToolContext } from "./tools.ts";

interface ChildIdentity {
  agent_id: string;
  agent_type: string;
}

export class KnownChildren {
  private readonly announced = new Map<string, AgentLifecycleEvent>();
  private readonly transcripts = new Map<string, Transcript>();
  /** Transcripts of children kept in memory, written to a temporary folder: removed when the session ends. */
  private readonly temporary = new Set<string>();

  constructor(private readonly tools: ToolContext) {}

  /** Hear the subagents extension's announcements. */
  listen(pi: ExtensionAPI): void {
    pi.events.on(AGENT_LIFECYCLE_CHANNEL, (data) => {
      const event = data as Partial<AgentLifecycleEvent> | undefined;
      if (!Array.isArray(event?.path) || typeof event.agentType !== "string" || typeof event.session?.id !== "string")
        return;
      const key = event.path.join("/");
      if (event.kind === "created") this.announced.set(key, event as AgentLifecycleEvent);
      else if (event.kind === "closed") {
        this.announced.delete(key);
        this.transcripts.delete(key);
      }
    });
  }

  /** `undefined` for the main agent. */
  identity(path: readonly string[]): ChildIdentity | undefined {
    if (path.length <= 1) return undefined;
    const known = this.announced.get(path.join("/"));
    if (known) return { agent_id: known.session.id, agent_type: known.agentType };
    const segment = path.at(-1)!;
    return { agent_id: segment, agent_type: segmentName(segment).replace(/#\d+$/, "") };
  }

  /**
   * The child's transcript in Claude Code's shape (`agent_transcript_path`), brought up to date:
   * beside its session file, or in a temporary folder; `undefined` for a child nobody announced.
   */
  transcript(path: readonly string[], parentSessionId: string, cwd: string): string | undefined {
    const key = path.join("/");
    const known = this.announced.get(key);
    if (!known) return undefined;
    const { session } = known;
    let transcript = this.transcripts.get(key);
    if (!transcript) {
      transcript = new Transcript(transcriptPath(session.file, session.id), this.tools);
      this.transcripts.set(key, transcript);
      if (session.file === undefined) this.temporary.add(transcript.path);
    }
    transcript.sync({ sessionId: parentSessionId, agentId: session.id, cwd, branch: () => session.getBranch() });
    return transcript.path;
  }

  /** The session ended: children's temporary transcripts go. */
  clear(): void {
    for (const file of this.temporary) rmSync(file, { force: true });
    this.temporary.clear();
    this.announced.clear();
    this.transcripts.clear();
  }
}
