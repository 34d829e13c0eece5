/**
 * The trust question of interactive mode, asked on the terminal before anything of the workspace
 * loads (the interactive screen does not exist yet), and the line-by-line dialogs a `project_trust`
 * handler gets there. The terminal is still in its ordinary line mode: it echoes, Enter ends the line.
 */
import type { ExtensionUI } from "@mypi/extension-api";
import type { CliIO } from "../io.ts";

/** One line typed on stdin (without its end); `undefined` when input ends first. */
function askLine(io: CliIO, question: string): Promise<string | undefined> {
  io.stdout.write(question);
  return new Promise((resolve) => {
    let text = "";
    const done = (line: string | undefined) => {
      io.stdin.off("data", onData);
      io.stdin.off("end", onEnd);
      io.stdin.pause?.();
      resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      const end = text.search(/\r|\n/);
      if (end !== -1) done(text.slice(0, end));
    };
    const onEnd = () => done(undefined);
    io.stdin.on("data", onData);
    io.stdin.on("end", onEnd);
    io.stdin.resume?.();
  });
}

type TrustAnswer = { trusted: boolean; remember: boolean };

/**
 * Ask whether to trust `cwd`, naming what it holds. `y` trusts and remembers, `o` trusts this
 * once, `n` declines and remembers; anything else (Enter, end of input) declines this time only.
 */
export async function askTrust(io: CliIO, cwd: string, resources: readonly string[]): Promise<TrustAnswer> {
  const question =
    `This workspace has its own mypi code or settings: ${resources.join(", ")}\n` +
    `  in ${cwd}\n` +
    "It runs with your permissions. Load it?  y = yes, remember  ·  o = only this time  ·  n = no, remember  ·  Enter = not now: ";
  const answer = (await askLine(io, question))?.trim().toLowerCase();
  if (answer === "y" || answer === "yes") return { trusted: true, remember: true };
  if (answer === "o" || answer === "once") return { trusted: true, remember: false };
  return { trusted: false, remember: answer === "n" || answer === "no" };
}

/** Dialogs on plain lines, for `project_trust` handlers in interactive mode. */
export function lineUI(io: CliIO): ExtensionUI {
  return {
    confirm: async (title, message) =>
      /^y(es)?$/i.test((await askLine(io, `${title}${message ? `\n  ${message}` : ""} [y/N] `))?.trim() ?? ""),
    select: async (title, choices) => {
      const answer = (
        await askLine(io, `${title}\n${choices.map((c, i) => `  ${i + 1}. ${c}`).join("\n")}\nnumber: `)
      )?.trim();
      const n = Number(answer);
      return Number.isInteger(n) && n >= 1 && n <= choices.length ? choices[n - 1] : choices.find((c) => c === answer);
    },
    input: async (title, placeholder) =>
      (await askLine(io, `${title}${placeholder ? ` (${placeholder})` : ""}: `)) || undefined,
    editor: async (title, prefill) => {
      const answer = await askLine(io, `${title}${prefill ? ` [${prefill}]` : ""}: `);
      return answer === undefined ? undefined : answer === "" ? prefill : answer;
    },
    notify: (message) => void io.stderr.write(`${message}\n`),
  };
}
