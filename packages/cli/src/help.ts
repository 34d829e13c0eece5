/** `mypi --help` (docs/cli.md#command-line): every option, grouped, with examples. */
export const HELP = `mypi — a plugin-first agent

Usage
  mypi [prompt]                     interactive on a terminal; with a prompt and no terminal, like -p
  mypi -p "prompt"                  print mode: run once, print the final text
  mypi --mode json -p "prompt"      every event as one JSON line on stdout
  mypi --mode rpc                   JSON lines on stdin (commands) and stdout (responses, events)
  mypi extensions [--json]          extensions, handlers per slot, tools, templates, skills
  mypi models [search] [--json]     the models that can be used here, with limits and prices
  mypi agents [--json]              the agents the agent tool can start (docs/subagents.md)
  mypi install SOURCE [--local]     install a package: npm:NAME[@VERSION], git:URL[@REF] or a path
  mypi remove SOURCE [--local]      remove an installed package
  mypi list                         the installed packages, global and of this workspace
  mypi update [SOURCE]              re-install unpinned npm packages, fetch git ones
  mypi trust [DIR]                  trust a workspace's own code (--revoke, --deny, --list)
  mypi mcp login SERVER             OAuth login to an HTTP server of mcp.json (mypi mcp logout SERVER forgets it)
  mypi export FILE.jsonl|ID [OUT]   a session as one self-contained HTML file (tree, tool calls, decisions)
  mypi replay SESSIONS… [-e EXT]    recorded sessions through the extensions, no model: what would be
                                    decided differently (mypi replay --help)
  mypi demo                         a scripted run in a temporary workspace (no API key needed)
  mypi batch tasks.jsonl            many tasks side by side, results in results.jsonl (mypi batch --help)
  mypi worker --queue redis://…     run queued batch tasks on this machine (mypi worker --help)

Model
  --model <provider>/<id>[:level]   a model of the registry (mypi models lists them): OpenAI's,
                                    Anthropic's, the settings' providers, an extension's; an id
                                    or part of one works too (--model sonnet:high)
  --model openai:<name>             an OpenAI-compatible chat model (needs OPENAI_API_KEY,
                                    or a server given with --base-url)
  --model scripted:<file>           replay a scripted model file (tests, demos)
                                    default: openai:$MYPI_MODEL, else openai:gpt-4.1-mini, when
                                    OPENAI_API_KEY is set; else anthropic/claude-sonnet-5-5 with
                                    ANTHROPIC_API_KEY
  --provider NAME                   look --model up among this provider's models
  --api-key KEY                     the chosen model's provider key, for this run only
  --thinking LEVEL                  off, minimal, low, medium, high, xhigh (clamped to the model)
  --models a,b                      the models Ctrl+P and RPC cycle_model go through (ids, globs
                                    like anthropic/*, a :level suffix each)
  --list-models [search]            as mypi models
  --base-url URL                    the API's base URL (e.g. http://127.0.0.1:8080/v1)
  --system-prompt TEXT|FILE         replace the whole system prompt (context files and skills too)
  --append-system-prompt TEXT|FILE  add to the system prompt (repeatable; an existing file is read)
  --max-turns N                     stop after N model calls in one run (default 50)

Extensions and tools
  -e, --extension PATH              load an extension file or folder (repeatable, in order)
  -ne, --no-extensions              skip ~/.mypi/extensions and <cwd>/.mypi/extensions (-e still loads)
  -a, --trust-project, --approve    load the workspace's own code and settings (.mypi/) this run
  -na, --no-trust-project, --no-approve   do not, even when the workspace is trusted
  -nbt, --no-builtin-tools          do not load read, write, edit, bash, grep, find, ls
  --no-subagents                    do not load the agent tool (child agents; also
                                    "subagents": false in settings.json)
  --strict-extensions               an extension that fails to load is fatal in every mode (exit 2);
                                    print and JSON modes are strict by default
  --allow-failed-extensions         run without the extensions that failed to load (a warning)
  --verbose                         print mode: every extension decision on stderr as it happens
                                    (without it, one line at the end sums up blocks and rewrites)
  --tool-timeout SECONDS            stop a tool call after this long when its tool sets no timeout
                                    (default 600; 0: never)
  -t, --tools a,b*                  offer the model only these tools (names, * patterns), or
                                    +name/-name entries to add to / take from all of them
  -nt, --no-tools                   offer none        -xt, --exclude-tools a,b*   never these
  -nc, --no-context-files           do not read AGENTS.md / CLAUDE.md
  --skill PATH · --prompt-template PATH   load a skill / prompt template file or folder (repeatable)
  -ns, --no-skills · -np, --no-prompt-templates   only the ones given with --skill / --prompt-template
  --no-mcp                          do not load the mcp extension (no MCP servers, no MCP tools)

Sandbox (Linux, bubblewrap; also "sandbox" in settings.json)
  --sandbox                         run bash's commands in the sandbox: only the workspace is
                                    writable, no network, home secrets hidden, private /tmp
  --no-sandbox                      not even when settings.json turns it on
  --sandbox-write PATH              one more writable path (repeatable)
  --sandbox-network                 let sandboxed commands reach the network

Workspace and session
  --cwd DIR                         the agent's workspace (default: the current directory)
  --session FILE|ID                 this session file (created when missing), or the workspace's
                                    session whose id starts with ID
  -c, --continue                    continue the most recent session of this workspace
  -r, --resume                      pick one of this workspace's sessions (interactive mode)
  --no-session                      keep nothing on disk
  --session-id ID                   this workspace's session with that id, created when missing
  --fork FILE|ID                    a new session starting from a copy of that session's branch
  --session-dir DIR                 keep and look up sessions in DIR
  -n, --name NAME                   the session's display name
  --export FILE|ID [OUT]            as \`mypi export\`

Pi's options that change nothing here are accepted: --offline (mypi makes no network request
while starting), --no-themes, --tui-mode regular. Refused, with the reason: --theme, --use-theme,
--tui-mode fullscreen.

  -h, --help                        this text        -v, --version   the version

Paths given to -e and scripted: resolve against the shell's directory; --cwd is the agent's
workspace. MYPI_HOME (default ~/.mypi) holds sessions/, extensions/, packages/, skills/, prompts/,
settings.json, trust.json, AGENTS.md, SYSTEM.md and APPEND_SYSTEM.md (docs/resources.md). A
workspace's .mypi/extensions, .mypi/settings.json and the packages it names load only once it is
trusted: interactive mode asks; other modes need --trust-project or \`mypi trust\`.
Commands the agent runs do not see OPENAI_API_KEY; MYPI_PASS_ENV=OPENAI_API_KEY passes it.

Exit codes: 0 completed, handled or terminated, 1 error / blocked / max turns, 2 usage error (an
extension that failed to load, in print and JSON modes), 130 aborted (Ctrl+C), 143 SIGTERM,
129 SIGHUP, 141 stdout closed.

Examples
  mypi demo
  OPENAI_API_KEY=… mypi "explain src/main.ts"
  mypi -p "list the TODOs in this repo" --cwd ~/code/app
  mypi --mode json -p "fix the failing test" -e ./my-policy.ts > events.jsonl
  mypi --model openai:qwen2.5-coder --base-url http://127.0.0.1:8080/v1 -p "hello"
  mypi --model scripted:script.json --no-session -p "go"
  mypi extensions --json
  mypi models sonnet
  mypi --model anthropic/claude-sonnet-5-5:high --models "anthropic/*,gpt-5.5"
`;
