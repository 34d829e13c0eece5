/**
 * The CLI's file helpers: an atomic rewrite keeps the mode of the file it replaces and leaves no
 * temporary file behind when it fails; a lock left by a process that is gone is taken over, one
 * held by a live process is waited for.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { withFileLock, writeFileAtomic } from "../src/workspace/files.ts";

const dir = mkdtempSync(join(tmpdir(), "mypi-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("writeFileAtomic", () => {
  it("keeps the mode of the file it replaces, and makes a new file 0600", () => {
    const kept = join(dir, "kept.json");
    writeFileSync(kept, "{}");
    chmodSync(kept, 0o640);
    writeFileAtomic(kept, '{"a":1}\n');
    const made = join(dir, "new", "made.json");
    writeFileAtomic(made, "{}\n");
    expect([mode(kept), readFileSync(kept, "utf8"), mode(made), mode(join(dir, "new"))]).toEqual([
      "640",
      '{"a":1}\n',
      "600",
      "700",
    ]);
  });

  it("leaves what was there and no temporary file when the replacement fails", () => {
    // A folder where the file should go: the temporary file is written, the rename fails.
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    writeFileSync(join(folder, "inside"), "old");
    expect(() => writeFileAtomic(folder, "new")).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readFileSync(join(folder, "inside"), "utf8")).toBe("old");
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

describe("withFileLock", () => {
  it("takes over a lock whose process is gone, and removes its own lock after", () => {
    const file = join(dir, "settings.json");
    writeFileSync(`${file}.lock`, `999999999 ${hostname()} ${Date.now()} dead`);
    expect(withFileLock(file, () => readFileSync(`${file}.lock`, "utf8").startsWith(`${process.pid} `))).toBe(true);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("takes over a lock older than 30 s whatever its holder, and leaves a live one alone until then", () => {
    const file = join(dir, "trust.json");
    writeFileSync(`${file}.lock`, `${process.pid} ${hostname()} ${Date.now() - 31_000} old`);
    expect(withFileLock(file, () => "ran")).toBe("ran");
  });
});
