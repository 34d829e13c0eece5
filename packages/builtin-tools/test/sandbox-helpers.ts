/**
 * Shared by the sandbox tests: whether bubblewrap runs here (tests skip only when it cannot run
 * at all), a temporary tree with a fake home folder, and host-side process lookups.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { probeSandbox } from "../src/index.ts";
import { tempTree } from "./helpers.ts";

const probe = await probeSandbox();
/** Why the sandbox tests are skipped, or undefined when bubblewrap runs. */
export const sandboxSkipReason = probe.ok ? undefined : probe.reason;
if (sandboxSkipReason) console.warn(`sandbox tests skipped: ${sandboxSkipReason} (apt-get install bubblewrap)`);

/** `root/home` (the sandbox's home folder, with secrets) and `root/ws` (the workspace). */
export function sandboxTree() {
  const tree = tempTree({
    "home/.ssh/id_ed25519": "PRIVATE KEY\n",
    "home/.netrc": "machine example.com password hunter2\n",
    "home/notes.txt": "mine\n",
    "ws/README": "workspace\n",
  });
  return { ...tree, home: join(tree.root, "home"), ws: join(tree.root, "ws") };
}

/** Host pids of the processes whose command line contains `marker`, zombies left out. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (cmdline.includes(marker) && !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}
