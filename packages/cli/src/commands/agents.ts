/**
 * `mypi agents [--json]`: the agents the `agent` tool can start (docs/subagents.md#agent-files) —
 * `~/.mypi/agents/`, a trusted workspace's `.claude/agents/` and `.mypi/agents/`, and the enabled
 * Claude Code plugins' agents (`plugin:agent`, as the claude-code extension offers them in a
 * session) — with the files that could not be used. Nothing else loads: the trust decision is the one known before
 * loading (a flag, a saved one), as for `mypi extensions`, which never asks.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { mypiHome } from "@mypi/kernel";
import { discoverAgents, listAgents } from "@mypi/extensions/subagents";
import { loadPlugins, pluginAgentSources } from "@mypi/extensions/claude-code/plugins";
import { EXIT, type CliArgs } from "../args.ts";
import type { CliIO } from "../io.ts";
import { decideTrustEarly } from "../workspace/trust-decide.ts";

export async function runAgentsCommand(args: CliArgs, io: CliIO): Promise<number> {
  const cwd = resolve(io.cwd, args.cwd ?? ".");
  const home = mypiHome();
  const trusted = decideTrustEarly({ cwd, home, flag: args.trustProject })?.trusted === true;
  const sources = pluginAgentSources(loadPlugins({ home, cwd, trusted }).enabled);
  const { agents, problems } = discoverAgents({ home, cwd, trusted, sources });
  const unread = trusted ? [] : [".mypi/agents", ".claude/agents"].filter((rel) => existsSync(join(cwd, rel)));
  if (args.json) {
    const list = agents.map(({ ignoredFields: _ignored, ...agent }) => agent);
    io.stdout.write(`${JSON.stringify({ agents: list, problems, untrusted: unread }, null, 2)}\n`);
    return EXIT.ok;
  }
  io.stdout.write(`${listAgents(agents)}\n`);
  for (const p of problems) io.stderr.write(`mypi: ${p}\n`);
  if (unread.length) {
    io.stderr.write(
      `mypi: workspace ${cwd} is not trusted: ${unread.join(", ")} not read. Allow it with --trust-project (this run) or \`mypi trust\` (from now on).\n`,
    );
  }
  return EXIT.ok;
}
