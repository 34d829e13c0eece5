/**
 * Start to first frame of interactive mode, in a real pseudo-terminal (test/helpers/pty-driver.py):
 * the time from spawning `mypi` until the terminal shows the banner and the input area, against a
 * one-turn `mypi -p` run of the same bin measured in the same run (the ratio is what to compare
 * between versions; the absolute numbers depend on the machine). Dev bin, warm jiti cache.
 *
 *   npm run bench interactive-start
 *   MYPI_BASE_BIN=/path/to/other/checkout/packages/cli/bin/mypi-dev.mjs npm run bench interactive-start
 *
 * With MYPI_BASE_BIN, the other checkout's bin (e.g. the commit before a change) is measured in
 * the same run, runs interleaved, so a loaded machine slows both alike.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const devBin = join(root, "packages", "cli", "bin", "mypi-dev.mjs");
const driver = join(root, "test", "helpers", "pty-driver.py");
const scratch = mkdtempSync(join(tmpdir(), "mypi-bench-interactive-"));
const script = join(scratch, "one-turn.json");
writeFileSync(script, JSON.stringify({ turns: [{ text: "Hello from the scripted model." }] }));
const env = {
  ...process.env,
  MYPI_JITI_CACHE: join(scratch, "jiti"),
  MYPI_HOME: join(scratch, "home"),
  OPENAI_API_KEY: "",
  NO_COLOR: "1",
};
const common = ["--model", `scripted:${script}`, "--no-session", "--no-extensions"];
/** The first frame: the banner is on screen and the input area below it ("> " before pi-tui, the editor's rule after). */
const FIRST_FRAME = /\/help for commands[^]*(\n> |─{10})/;

const baseBin = process.env.MYPI_BASE_BIN;

function firstFrame(bin = devBin): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn("python3", [driver, "120", "30", process.execPath, bin, ...common], { cwd: scratch, env });
    let out = "";
    let done = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      // Escape sequences removed: what is left is the text the terminal shows, in order.
      out += d.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b_[^\x07]*\x07/g, "");
      if (!done && FIRST_FRAME.test(out)) {
        done = true;
        resolve(Number(process.hrtime.bigint() - started) / 1e6);
        child.stdin.write("\x03\x03");
      }
    });
    child.on("close", (code) => {
      if (!done) reject(new Error(`mypi exited (${code}) before its first frame:\n${out}`));
    });
  });
}

function printRun(bin = devBin): number {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, ...common, "-p", "hi"], { cwd: scratch, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mypi -p: exit ${r.status}\n${r.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  printRun(); // fills the jiti cache, untimed
  await firstFrame();
  if (baseBin) {
    printRun(baseBin);
    await firstFrame(baseBin);
  }
  const frames: number[] = [];
  const prints: number[] = [];
  const baseFrames: number[] = [];
  for (let i = 0; i < 9; i++) {
    frames.push(await firstFrame());
    prints.push(printRun());
    if (baseBin) baseFrames.push(await firstFrame(baseBin));
  }
  const f = median(frames);
  const p = median(prints);
  console.log(
    `interactive: start to first frame  median ${f.toFixed(0)} ms  (min ${Math.min(...frames).toFixed(0)} ms)`,
  );
  console.log(`mypi -p, one scripted turn          median ${p.toFixed(0)} ms`);
  console.log(`first frame / one-turn -p: ${(f / p).toFixed(2)}×`);
  if (baseBin) {
    const b = median(baseFrames);
    console.log(
      `base bin: start to first frame      median ${b.toFixed(0)} ms  (min ${Math.min(...baseFrames).toFixed(0)} ms)`,
    );
    console.log(
      `first frame, this / base: ${(f / b).toFixed(2)}× (medians), ${(Math.min(...frames) / Math.min(...baseFrames)).toFixed(2)}× (minima)`,
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
