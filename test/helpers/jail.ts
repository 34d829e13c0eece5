/**
 * A throwaway jail for a test's mypi process (bubblewrap): the whole file system read-only but the
 * test's temporary folder — so that a command a policy should have stopped can only touch that
 * folder — and jiti's transpile cache, which mypi's dev bin reads and refreshes at each start
 * (read-only, every start would transpile the sources again: seconds instead of a fraction).
 */
import { existsSync } from "node:fs";
import { jitiCacheDir } from "@mypi/kernel";

/** `bwrap … --` to put before the program and its arguments. */
export function jailPrefix(writable: string): string[] {
  const cache = jitiCacheDir();
  return [
    "bwrap",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--bind",
    writable,
    writable,
    ...(existsSync(cache) ? ["--bind", cache, cache] : []),
    "--unshare-pid",
    "--die-with-parent",
    "--",
  ];
}
