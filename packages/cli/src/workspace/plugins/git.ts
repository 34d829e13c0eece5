/**
 * Fetching a git repository for a Claude Code plugin or marketplace: a shallow clone (a branch or
 * tag with `--branch`), a full clone and a checkout for a commit; no prompt for credentials, the
 * URL after `--` so that it can never be read as an option.
 */
import { spawn } from "node:child_process";
import { dirname } from "node:path";

export async function cloneRepository(url: string, dest: string, ref?: string): Promise<string | undefined> {
  if (url.startsWith("-")) return `${url}: not a repository URL`;
  const commit = ref !== undefined && /^[0-9a-f]{40}$/i.test(ref);
  const branch = ref !== undefined && !commit ? ["--branch", ref] : [];
  const clone = await git(
    ["clone", "--quiet", ...(commit ? [] : ["--depth", "1"]), ...branch, "--", url, dest],
    dirname(dest),
  );
  if (clone.code !== 0) return `git clone ${url}${ref ? ` (${ref})` : ""} failed: ${lastLines(clone.output)}`;
  if (commit) {
    const checkout = await git(["-c", "advice.detachedHead=false", "checkout", "--quiet", ref], dest);
    if (checkout.code !== 0) return `git checkout ${ref} in ${url} failed: ${lastLines(checkout.output)}`;
  }
  return undefined;
}

function git(args: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0" };
    const child = spawn("git", args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.on("error", (error) => resolve({ code: -1, output: `git: ${error.message}` }));
    child.on("close", (code) => resolve({ code, output }));
  });
}

function lastLines(output: string): string {
  return (
    output
      .trim()
      .split("\n")
      .filter((l) => l.trim() !== "")
      .slice(-3)
      .join(" / ")
      .replace(/\.$/, "") || "no output"
  );
}
