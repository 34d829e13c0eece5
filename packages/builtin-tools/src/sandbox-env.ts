/**
 * The environment of a sandboxed command: an allow-list, not a list of suspicious names. A
 * credential can be called anything (`PGPASSWORD`, `DATABASE_URL`, `STRIPE_KEY`, `GH_PAT`,
 * `NPM_AUTH`), so only what programs need to run, build and print well is passed; the user
 * names the rest (`sandbox.env`, or `MYPI_PASS_ENV`, which also passes a withheld model key).
 */
import { PASS_ENV_VARIABLE } from "@mypi/kernel";

/**
 * Passed to every sandboxed command when set: who and where (`HOME` and `TMPDIR` are the
 * sandbox's own), the terminal and language, editors, CI markers, and where toolchains live.
 * A name ending in `*` stands for every name it starts.
 */
export const SANDBOX_ENV: readonly string[] = Object.freeze([
  // who and where
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "HOSTNAME",
  "TMPDIR",
  // terminal and language
  "TERM",
  "COLORTERM",
  "COLUMNS",
  "LINES",
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "EDITOR",
  "VISUAL",
  "PAGER",
  // CI markers (test runners change their output on them)
  "CI",
  // where configuration and caches are
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  // certificates (a company's CA for npm, pip, git, curl)
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  // toolchains
  "NODE_OPTIONS",
  "NVM_DIR",
  "NVM_BIN",
  "NVM_INC",
  "VOLTA_HOME",
  "PNPM_HOME",
  "BUN_INSTALL",
  "DENO_DIR",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "CONDA_DEFAULT_ENV",
  "PYENV_ROOT",
  "PYENV_VERSION",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "RUSTUP_TOOLCHAIN",
  "GOPATH",
  "GOROOT",
  "GOCACHE",
  "GOMODCACHE",
  "GOFLAGS",
  "JAVA_HOME",
  "LD_LIBRARY_PATH",
  "PKG_CONFIG_PATH",
]);

/**
 * Passed only with the network on (useless without it, and a proxy URL may hold a password):
 * the proxies npm, pip, git and curl read.
 */
export const SANDBOX_NETWORK_ENV: readonly string[] = Object.freeze([
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
]);

/**
 * `env` filtered to the allow-list (plus `extra` names and those in `MYPI_PASS_ENV`), with
 * `TMPDIR` the private `/tmp` and `HOME` the sandbox's home folder.
 */
export function sandboxEnvironment(
  plan: { home: string; network?: boolean; env?: readonly string[] },
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const passed = (env[PASS_ENV_VARIABLE] ?? "").split(/[\s,]+/).filter((n) => n !== "");
  const allowed = [...SANDBOX_ENV, ...(plan.network ? SANDBOX_NETWORK_ENV : []), ...(plan.env ?? []), ...passed];
  const exact = new Set(allowed.filter((n) => !n.endsWith("*")));
  const prefixes = allowed.filter((n) => n.endsWith("*")).map((n) => n.slice(0, -1));
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (exact.has(name) || prefixes.some((p) => name.startsWith(p))) out[name] = value;
  }
  out.TMPDIR = "/tmp";
  out.HOME = plan.home;
  return out;
}
