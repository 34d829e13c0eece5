/**
 * A task's own workspace: a fresh folder made from its `workspace` spec, so tasks never see each
 * other's changes and a rerun starts from the same files.
 *
 * - `copy`: the folder copied; symbolic links are copied as links, never followed, so a link in
 *   the source cannot pull files from outside it into the copy.
 * - `git`: `git clone` then `git checkout <ref>` (any branch, tag or commit; default the remote's
 *   HEAD). The URL follows `--` so it is never read as an option.
 * - `files`: each file written, paths kept inside the folder (checked when the task was parsed,
 *   and again here because a task may come from a queue).
 */
import { errnoCode } from "@mypi/kernel";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { relativePathProblem, type WorkspaceSpec } from "./tasks.ts";
import { isDirectory } from "../../workspace/files.ts";

/** Make `dir` (which must not exist) from `spec`. Rejects with a one-line message. */
export async function prepareWorkspace(spec: WorkspaceSpec, dir: string, signal: AbortSignal): Promise<void> {
  mkdirSync(dirname(dir), { recursive: true });
  if ("copy" in spec) {
    if (!isDirectory(spec.copy)) throw new Error(`workspace.copy: ${spec.copy} is not a folder this machine can read`);
    cpSync(spec.copy, dir, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    return;
  }
  if ("git" in spec) {
    await git(["clone", "--quiet", "--no-checkout", "--", spec.git, dir], undefined, signal);
    await git(["checkout", "--quiet", spec.ref ?? "HEAD", "--"], dir, signal);
    return;
  }
  mkdirSync(dir);
  for (const [path, content] of Object.entries(spec.files)) {
    const problem = relativePathProblem(path);
    if (problem) throw new Error(`workspace.files: ${JSON.stringify(path)} ${problem}`);
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

function git(args: string[], cwd: string | undefined, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // No terminal prompts for credentials: a batch has nobody to answer them.
    const env = { ...process.env, GIT_TERMINAL_PROMPT: "0" };
    const child = spawn("git", args, { cwd, env, signal, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-2000)));
    child.on("error", (error) =>
      reject(new Error(`git ${args[0]}: ${errnoCode(error) === "ENOENT" ? "git is not installed" : error.message}`)),
    );
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`git ${args[0]} failed (exit ${code}): ${stderr.trim().split("\n").at(-1) ?? ""}`));
    });
  });
}
