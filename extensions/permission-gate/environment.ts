/**
 * Variables set on the command line (`NAME=value cmd`, `export NAME=…`, `env NAME=… cmd`) that
 * make a program run a command or load code: what the gate makes of each.
 *
 * The environment the command starts with is the user's and is trusted; a value the command line
 * sets is not.
 */
import type { Next } from "./next.ts";
import type { Field } from "./words.ts";

/**
 * Variables whose command the gate cannot follow, set on the line: these ask whatever the rules
 * say (`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm …' git x`,
 * `env BASH_ENV=x bash -c …`).
 */
const RUNS_COMMAND_ENV =
  /^(?:GIT_CONFIG_(?:PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)|GIT_(?:SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND)|BASH_ENV|ENV|LD_PRELOAD|LD_AUDIT|PAGER|EDITOR|VISUAL|PROMPT_COMMAND)$/;

/**
 * Variables that point a program at code or settings elsewhere (a search path, a configuration
 * file, options read from the environment): what runs then is not on the line.
 */
const POINTS_ELSEWHERE =
  /^(?:PATH|HOME|XDG_CONFIG_HOME|GIT_(?:CONFIG_GLOBAL|CONFIG_SYSTEM|CONFIG|DIR|EXEC_PATH|TEMPLATE_DIR|ALLOW_PROTOCOL)|PYTHON(?:PATH|STARTUP|HOME|USERBASE)|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|NODE_OPTIONS|NODE_PATH|LD_LIBRARY_PATH|TAR_OPTIONS|ZIPOPT|LESS|LESSKEYIN|LESSKEY|MANPAGER|MANOPT|SSH_ASKPASS|SUDO_ASKPASS|SYSTEMD_PAGER|BROWSER|VIMINIT|EXINIT|MYVIMRC|BASH_LOADABLES_PATH|MAKEFLAGS|GNUMAKEFLAGS|MAKEFILES|npm_config_\w+|NPM_CONFIG_\w+)$/;

/** Variables whose value is a command less runs through the shell (`|` first: its output is read). */
const LESS_COMMAND = /^LESS(?:OPEN|CLOSE)$/;

/** Prompts bash expands again, command substitutions included, when it shows them (`PS4` under `set -x`). */
const PROMPT = /^PS[0-4]$/;

/** What setting `name` to `value` on the command line runs (`value` undefined: not known). */
export function assignment(name: string, value: Field | undefined): Next[] {
  if (RUNS_COMMAND_ENV.test(name))
    return [{ unresolved: `${name} makes a program run a command the gate cannot follow` }];
  const known = value?.exact ? value.text : undefined;
  // An exported function (`env 'BASH_FUNC_ls%%=() { …; }' bash -c ls`): its body is read as one.
  const fn = /^BASH_FUNC_(.+)%%$/.exec(name);
  if (fn) {
    const why = `${name} exports a function the gate cannot read`;
    return known === undefined
      ? [{ unresolved: `${name} exports a function known only when it runs` }]
      : [{ inside: `__exported ${known}`, why }];
  }
  if (LESS_COMMAND.test(name)) {
    if (known === undefined) return [{ unresolved: `${name} makes less run a command known only when it runs` }];
    return [{ script: known.replace(/^\|{1,2}-?|^-/, "") }];
  }
  if (PROMPT.test(name)) {
    const why = `${name} is expanded again when bash shows it, running the command substitutions in it`;
    if (known === undefined) return [{ opaque: why }];
    return /[`$]/.test(known) ? [{ inside: `: ${known}`, why }] : [];
  }
  if (POINTS_ELSEWHERE.test(name)) {
    return [
      {
        opaque:
          name === "PATH"
            ? "PATH is set, so a command's name may run another program"
            : `${name} points a program at code or settings the gate does not read`,
      },
    ];
  }
  return [];
}
