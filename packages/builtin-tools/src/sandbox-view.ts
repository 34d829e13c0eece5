/**
 * What a sandboxed command can see and reach outside the workspace, as lists:
 *
 * - the home folder is hidden but for what builds need (`DEFAULT_HOME_READABLE`, the `PATH`
 *   entries in it, the configured `allowRead`) — an allow-list, so a secret nobody thought of
 *   (`~/.cargo/credentials.toml`, `~/.vault-token`, rclone's config) is hidden too;
 * - the secrets of `DEFAULT_HIDDEN_PATHS` stay hidden wherever the home folder is visible (a
 *   workspace that contains it) or an allowed path contains them;
 * - `/tmp` is private, `/run` (and `/var/run`) hidden: services keep their sockets there, and a
 *   read-only mount does not stop `connect()`;
 * - every other unix socket a process of this machine listens on (`/proc/net/unix`) outside the
 *   workspace has `/dev/null` mounted over it, unless named in `allowSockets`.
 */
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";

/** Readable in the hidden home folder, when they exist: git's settings, toolchains, package caches. */
export const DEFAULT_HOME_READABLE: readonly string[] = Object.freeze([
  // git
  ".gitconfig",
  ".config/git/config",
  ".config/git/ignore",
  ".config/git/attributes",
  // JavaScript
  ".npm",
  ".nvm",
  ".volta",
  ".fnm",
  ".local/share/fnm",
  ".local/share/pnpm",
  ".bun/bin",
  ".bun/install/cache",
  ".deno",
  ".yarn/berry/cache",
  ".cache/yarn",
  ".cache/pnpm",
  ".cache/node-gyp",
  ".cache/ms-playwright",
  ".cache/puppeteer",
  ".cache/Cypress",
  ".cache/typescript",
  // Python
  ".pyenv",
  ".local/lib",
  ".local/share/uv",
  ".local/share/virtualenvs",
  ".cache/pip",
  ".cache/pypoetry",
  ".cache/uv",
  // Rust (not .cargo/credentials*)
  ".cargo/bin",
  ".cargo/registry",
  ".cargo/git",
  ".cargo/config.toml",
  ".cargo/config",
  ".cargo/env",
  ".rustup",
  // Go
  "go",
  ".cache/go-build",
  // JVM and .NET (not .m2/settings.xml, .gradle/gradle.properties: credentials live there)
  ".m2/repository",
  ".gradle/caches",
  ".gradle/wrapper",
  ".sdkman/candidates",
  ".nuget/packages",
  ".dotnet",
  // version managers, the user's programs, terminal descriptions
  ".asdf",
  ".local/share/mise",
  ".rbenv",
  ".local/bin",
  ".terminfo",
]);

/**
 * Hidden wherever they are visible, relative to the home folder: keys, cloud and registry
 * credentials, password stores, shell histories. `$MYPI_HOME` and the configured `hide` are
 * added to these.
 */
export const DEFAULT_HIDDEN_PATHS: readonly string[] = Object.freeze([
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".kube",
  ".docker",
  ".config/gh",
  ".git-credentials",
  ".config/git/credentials",
  ".netrc",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".pgpass",
  ".my.cnf",
  ".password-store",
  ".local/share/keyrings",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".vault-token",
  ".config/rclone",
  ".cache/huggingface/token",
  ".bash_history",
  ".zsh_history",
  ".mypi",
]);

/**
 * System folders every command gets empty (a fresh writable tmpfs, gone after it): `/tmp`, and
 * the runtime state and sockets of services in `/run`.
 */
export const HIDDEN_SYSTEM_PATHS: readonly string[] = Object.freeze(["/tmp", "/run", "/var/run"]);

/**
 * The paths of the unix sockets bound on this machine (in mypi's network namespace), from
 * `/proc/net/unix`; abstract ones (`@name`) and relative ones (bound in an unknown folder) are
 * left out. Read at every call: a service started since is in the next one.
 */
export function boundSocketPaths(table = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path — the path may contain spaces.
    const path = /^\S+:(?:\s+\S+){6}\s(.+)$/.exec(line)?.[1];
    if (path !== undefined && isAbsolute(path)) paths.add(path);
  }
  return [...paths];
}
