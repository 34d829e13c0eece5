/**
 * `mypi install | remove | list | update`: packages of extensions (and skills, prompts) declared in
 * a settings file's `packages` and installed into the scope's package folder.
 *
 *   mypi install SOURCE [--local]   install, then declare it (global settings, or the workspace's)
 *   mypi remove SOURCE [--local]    undeclare it and delete what was installed for it
 *   mypi list                       both scopes: source, version, where it is
 *   mypi update [SOURCE]            re-install unpinned npm sources and git sources; install missing ones
 *
 * Exit codes: 0 done, 1 an install / update failed (nothing of it changed), 2 usage errors.
 */
import { mypiHome } from "@mypi/kernel";
import { join } from "node:path";
import { EXIT } from "../args.ts";
import type { CliIO } from "../io.ts";
import { readSettingsFile, type PackageEntry } from "../workspace/settings.ts";
import { entrySource, updatePackages } from "../workspace/settings-write.ts";
import { TrustStore } from "../workspace/trust.ts";
import { findInstalled, installSource, uninstallSource, type Installed } from "../workspace/packages/install.ts";
import { checkPackage } from "../workspace/packages/load.ts";
import { installDir, parseSource, type PackageSource } from "../workspace/packages/source.ts";

type PackageCommand = "install" | "remove" | "list" | "update";

export interface Scope {
  name: "global" | "project";
  settingsFile: string;
  packagesDir: string;
}

/** The two scopes: yours (`$MYPI_HOME`) and the workspace's (`<cwd>/.mypi`). */
export function scopes(home: string, cwd: string): Record<Scope["name"], Scope> {
  return {
    global: { name: "global", settingsFile: join(home, "settings.json"), packagesDir: join(home, "packages") },
    project: {
      name: "project",
      settingsFile: join(cwd, ".mypi", "settings.json"),
      packagesDir: join(cwd, ".mypi", "packages"),
    },
  };
}

const USAGE: Record<PackageCommand, string> = {
  install: "usage: mypi install npm:NAME[@VERSION] | git:URL[@REF] | PATH [--local]",
  remove: "usage: mypi remove SOURCE [--local]",
  list: "usage: mypi list",
  update: "usage: mypi update [SOURCE] [--trust-project]",
};

export async function runPackageCommand(command: PackageCommand, argv: readonly string[], io: CliIO): Promise<number> {
  const usage = (message?: string) => (
    io.stderr.write(`mypi: ${message ? `${message} ` : ""}${USAGE[command]}\n`), EXIT.usage
  );
  const words = argv.filter((a) => !a.startsWith("-") || a === "-");
  const flags = argv.filter((a) => a.startsWith("-") && a !== "-");
  const allowed =
    command === "install" || command === "remove" ? ["--local", "-l"] : command === "update" ? ["--trust-project"] : [];
  const unknown = flags.find((f) => !allowed.includes(f));
  if (unknown !== undefined) return usage(`unknown option ${unknown}.`);
  const all = scopes(mypiHome(), io.cwd);
  const scope = flags.includes("--local") || flags.includes("-l") ? all.project : all.global;
  const say = (line: string) => void io.stdout.write(`${line}\n`);
  const fail = (line: string) => (io.stderr.write(`mypi: ${line}\n`), EXIT.error);

  switch (command) {
    case "install": {
      if (words.length !== 1) return usage();
      const source = parseSource(words[0]!, io.cwd);
      if (typeof source === "string") return usage(`${source}.`);
      const checked = readSettingsFile(scope.settingsFile);
      if (checked !== undefined && "error" in checked)
        return fail(`${checked.error}. Fix the file first; nothing was installed.`);
      if (source.kind !== "local") say(`Installing ${source.declaration} …`);
      const stop = stopOnSignal();
      const installed = await installSource(source, scope.packagesDir, {
        check: checkPackage,
        signal: stop.signal,
      }).finally(stop.dispose);
      if (stop.signal.aborted) return stopped(stop.signal, io);
      if (typeof installed === "string") return fail(`install failed: ${installed}. Nothing was changed.`);
      const error = updatePackages(scope.settingsFile, (list) => declare(list, source, scope));
      if (error !== undefined) return fail(error);
      say(`Installed ${source.declaration}${describe(installed)} → ${scope.settingsFile}`);
      noteScripts(installed, installDir(scope.packagesDir, source), say);
      if (scope.name === "project")
        say("It loads when this workspace is trusted (interactive mode asks; or `mypi trust`).");
      return EXIT.ok;
    }
    case "remove": {
      if (words.length !== 1) return usage();
      const source = parseSource(words[0]!, io.cwd);
      if (typeof source === "string") return usage(`${source}.`);
      if (!declared(scope).some((d) => typeof d.source !== "string" && d.source.identity === source.identity)) {
        return fail(
          `${words[0]} is not among the packages of ${scope.settingsFile}; \`mypi list\` shows them${scope.name === "global" ? " (--local for the workspace's)" : ""}.`,
        );
      }
      const error = updatePackages(scope.settingsFile, (list) =>
        list.filter((e) => identityOf(e, scope) !== source.identity),
      );
      if (error !== undefined) return fail(error);
      uninstallSource(source, scope.packagesDir);
      say(`Removed ${words[0]} from ${scope.settingsFile}`);
      return EXIT.ok;
    }
    case "list": {
      if (words.length > 0) return usage();
      let any = false;
      const trusted = new TrustStore(mypiHome()).lookup(io.cwd)?.trusted === true;
      for (const s of [all.global, all.project]) {
        const list = declared(s);
        if (list.length === 0) continue;
        any = true;
        say(
          `${s.name === "global" ? "Global" : `This workspace${trusted ? "" : " (not trusted: these do not load)"}`} — ${s.settingsFile}`,
        );
        for (const d of list) {
          if (typeof d.source === "string") say(`  ${d.text}  ✗ ${d.source}`);
          else {
            const installed = findInstalled(d.source, s.packagesDir);
            say(
              `  ${d.source.declaration}  ${installed ? `${describe(installed).trim() || "installed"}  ${installed.root}` : "not installed (run `mypi update`)"}`,
            );
          }
        }
      }
      if (!any)
        say("No packages. Install one with `mypi install npm:NAME`, `mypi install git:URL` or `mypi install PATH`.");
      return EXIT.ok;
    }
    case "update": {
      if (words.length > 1) return usage();
      const wanted = words[0] === undefined ? undefined : parseSource(words[0], io.cwd);
      if (typeof wanted === "string") return usage(`${wanted}.`);
      // The workspace names its packages; fetching and installing them runs their install steps.
      const projectTrusted =
        flags.includes("--trust-project") || new TrustStore(mypiHome()).lookup(io.cwd)?.trusted === true;
      let failed = 0;
      let seen = 0;
      for (const s of [all.global, all.project]) {
        for (const d of declared(s)) {
          if (typeof d.source === "string") {
            failed++;
            io.stderr.write(`mypi: ${s.settingsFile}: ${d.text}: ${d.source}\n`);
            continue;
          }
          const source = d.source;
          if (wanted !== undefined && source.identity !== wanted.identity) continue;
          seen++;
          if (s.name === "project" && !projectTrusted) {
            say(`${source.declaration}: skipped, the workspace is not trusted (--trust-project or \`mypi trust\`)`);
            continue;
          }
          const current = findInstalled(source, s.packagesDir);
          if (source.kind === "local" || (source.pinned && current)) {
            say(
              `${source.declaration}: ${source.kind === "local" ? "a local path, used where it is" : "pinned"}${current ? describe(current) : ""}`,
            );
            continue;
          }
          const stop = stopOnSignal();
          const installed = await installSource(source, s.packagesDir, {
            check: checkPackage,
            signal: stop.signal,
          }).finally(stop.dispose);
          if (stop.signal.aborted) return stopped(stop.signal, io);
          if (typeof installed === "string") {
            failed++;
            io.stderr.write(`mypi: update failed: ${installed}. The installed copy is unchanged.\n`);
          } else {
            say(`${source.declaration}: ${current ? "updated" : "installed"}${describe(installed)}`);
            noteScripts(installed, installDir(s.packagesDir, source), say);
          }
        }
      }
      if (wanted !== undefined && seen === 0)
        return fail(`${words[0]} is not among the declared packages; \`mypi list\` shows them.`);
      if (seen === 0 && wanted === undefined) say("No packages to update.");
      return failed > 0 ? EXIT.error : EXIT.ok;
    }
  }
}

/** The scope's declarations, parsed (a string `source` is why one cannot be). */
export function declared(scope: Scope): { entry: PackageEntry; text: string; source: PackageSource | string }[] {
  const read = readSettingsFile(scope.settingsFile);
  if (read === undefined || "error" in read) return [];
  return (read.value.packages ?? []).map((entry) => ({
    entry,
    text: entrySource(entry),
    source: parseSource(entrySource(entry), baseOf(scope)),
  }));
}

/** Relative paths in a settings file resolve from the file's folder. */
function baseOf(scope: Scope): string {
  return join(scope.settingsFile, "..");
}

function identityOf(entry: PackageEntry, scope: Scope): string | undefined {
  const source = parseSource(entrySource(entry), baseOf(scope));
  return typeof source === "string" ? undefined : source.identity;
}

/** The list with `source` declared once: an entry of the same package is replaced where it is (an object form keeps its filters). */
function declare(list: PackageEntry[], source: PackageSource, scope: Scope): PackageEntry[] {
  const i = list.findIndex((e) => identityOf(e, scope) === source.identity);
  if (i === -1) return [...list, source.declaration];
  const old = list[i]!;
  const next = [...list];
  next[i] = typeof old === "string" ? source.declaration : { ...old, source: source.declaration };
  return next.filter((e, j) => j <= i || identityOf(e, scope) !== source.identity);
}

/**
 * Ctrl+C or SIGTERM while npm or git runs: the install is stopped (its process group killed, its
 * temporary folder removed) instead of the process dying with npm left running.
 */
function stopOnSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => controller.abort(sig);
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const sig of signals) process.on(sig, onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const sig of signals) process.off(sig, onSignal);
    },
  };
}

function stopped(signal: AbortSignal, io: CliIO): number {
  const sig = signal.reason as NodeJS.Signals;
  io.stderr.write(
    `mypi: stopped (${sig}): npm and git were stopped and their temporary folder removed. Nothing was changed.\n`,
  );
  return sig === "SIGTERM" ? EXIT.terminated : sig === "SIGHUP" ? EXIT.hangup : EXIT.aborted;
}

/** What npm did not run (`--ignore-scripts`), and how to run it once the user has read it. */
function noteScripts(installed: Installed, dir: string | undefined, say: (line: string) => void): void {
  if (!installed.skippedScripts?.length || dir === undefined) return;
  say(
    `Note: mypi runs no install scripts (npm --ignore-scripts), and these declare some: ${installed.skippedScripts.join(", ")}. ` +
      `If the package needs them, read them, then run them in ${dir}: npm rebuild (or npm run <script>).`,
  );
}

function describe(installed: Installed): string {
  const parts = [installed.version, installed.commit && `commit ${installed.commit}`].filter(Boolean);
  return parts.length ? ` (${parts.join(", ")})` : "";
}
