import { afterEach, describe, expect, it } from "vitest";
import { createReadTool, MAX_IMAGE_BYTES } from "../src/index.ts";
import { call, seen, tempTree } from "./helpers.ts";

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function readIn(files: Record<string, string | Uint8Array>) {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  const tool = createReadTool(t.root);
  return (args: Record<string, unknown>) => call(tool, args).then(seen);
}

const numbered = (n: number, width = 0) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}`.padEnd(width, ".")).join("\n") + "\n";

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

describe("read", () => {
  it("returns a short text file as it is, without line numbers", async () => {
    const read = readIn({ "a.txt": "one\ntwo\r\nthree\n" });
    expect(await read({ path: "a.txt" })).toEqual({ isError: false, text: "one\ntwo\r\nthree" });
  });

  it("pages with a 1-based offset and a limit, and says how to read on", async () => {
    const read = readIn({ "app.ts": numbered(80) });
    const page = await read({ path: "app.ts", offset: 11, limit: 3 });
    expect(page).toEqual({
      isError: false,
      text: "line 11\nline 12\nline 13\n\n[Showing lines 11-13 of 80. Use offset=14 to read more.]",
    });
    const last = await read({ path: "app.ts", offset: 79 });
    expect(last).toEqual({ isError: false, text: "line 79\nline 80" });
  });

  it("stops at 2000 lines and says where to continue", async () => {
    const read = readIn({ "big.txt": numbered(2500) });
    const { text } = await read({ path: "big.txt" });
    expect(text.split("\n").slice(-3)).toEqual([
      "line 2000",
      "",
      "[Showing lines 1-2000 of 2500 (2000 line limit). Use offset=2001 to read more.]",
    ]);
  });

  it("stops at 50 KB of whole lines and says where to continue", async () => {
    const read = readIn({ "wide.txt": numbered(1000, 100) });
    const { text } = await read({ path: "wide.txt" });
    // 100-byte lines plus newlines: 506 lines are 51,105 bytes, the 507th would pass 51,200.
    expect(text.split("\n").slice(-3)).toEqual([
      "line 506".padEnd(100, "."),
      "",
      "[Showing lines 1-506 of 1000 (50 KB limit). Use offset=507 to read more.]",
    ]);
  });

  it("shows the head of a single line longer than 50 KB and how to see the rest", async () => {
    const read = readIn({ "min.js": `${"x".repeat(60_000)}\nafter\n` });
    const { text, isError } = await read({ path: "min.js" });
    expect(isError).toBe(false);
    expect(text).toBe(
      `${"x".repeat(51_200)}\n\n[Line 1 is 60000 bytes, over the 50 KB limit; showing its first 51200 bytes. ` +
        "See the rest with bash: sed -n '1p' min.js | tail -c +51201. Use offset=2 to read on after it.]",
    );
  });

  it("says how many lines there are when the offset is beyond the end", async () => {
    const read = readIn({ "app.ts": numbered(80), "one.txt": "only\n", "empty.txt": "" });
    expect(await read({ path: "app.ts", offset: 200 })).toEqual({
      isError: true,
      text: "Offset 200 is beyond end of file (app.ts has 80 lines)",
    });
    expect(await read({ path: "one.txt", offset: 2 })).toEqual({
      isError: true,
      text: "Offset 2 is beyond end of file (one.txt has 1 line)",
    });
    expect(await read({ path: "empty.txt", offset: 2 })).toEqual({
      isError: true,
      text: "Offset 2 is beyond end of file (empty.txt is empty)",
    });
  });

  it("says so for an empty file", async () => {
    const read = readIn({ "empty.txt": "" });
    expect(await read({ path: "empty.txt" })).toEqual({ isError: false, text: "[empty.txt is empty]" });
  });

  it("says a missing file is missing and suggests ls or find", async () => {
    const read = readIn({});
    expect(await read({ path: "src/nope.ts" })).toEqual({
      isError: true,
      text: "File not found: src/nope.ts. Use ls or find to see which files exist.",
    });
  });

  it("refuses a folder and suggests ls", async () => {
    const read = readIn({ "src/a.ts": "" });
    expect(await read({ path: "src" })).toEqual({
      isError: true,
      text: "src is a directory, not a file. Use ls to list it.",
    });
  });

  it("returns a PNG, JPEG, GIF or WebP file as image content, told apart by its magic bytes", async () => {
    const t = tempTree({
      "shot.dat": PNG,
      "photo.jpg": Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]),
      "anim.gif": Buffer.from("GIF89a\0\0"),
      "pic.webp": Buffer.concat([Buffer.from("RIFF"), Buffer.from([0, 0, 0, 0]), Buffer.from("WEBPVP8 ")]),
    });
    cleanups.push(t.cleanup);
    const tool = createReadTool(t.root);
    const png = await call(tool, { path: "shot.dat" });
    expect(png).toEqual({
      content: [
        { type: "text", text: "Image shot.dat (image/png, 12 bytes)" },
        { type: "image", data: Buffer.from(PNG).toString("base64"), mimeType: "image/png" },
      ],
      details: { path: "shot.dat", mimeType: "image/png", bytes: 12 },
    });
    const types = [];
    for (const path of ["photo.jpg", "anim.gif", "pic.webp"]) {
      const r = await call(tool, { path });
      types.push(r.content[1]?.type === "image" ? r.content[1].mimeType : "none");
    }
    expect(types).toEqual(["image/jpeg", "image/gif", "image/webp"]);
  });

  it("refuses an image over the size limit", async () => {
    const big = new Uint8Array(MAX_IMAGE_BYTES + 1);
    big.set(PNG);
    const read = readIn({ "huge.png": big });
    expect(await read({ path: "huge.png" })).toEqual({
      isError: true,
      text: `huge.png is an image (image/png) of ${MAX_IMAGE_BYTES + 1} bytes, over the ${MAX_IMAGE_BYTES} byte limit for images.`,
    });
  });

  it("refuses other binary files with a clear message", async () => {
    const read = readIn({ "blob.bin": Uint8Array.from([1, 2, 0, 3, 4]) });
    expect(await read({ path: "blob.bin" })).toEqual({
      isError: true,
      text: "blob.bin is a binary file (5 bytes), not text or a PNG, JPEG, GIF or WebP image; read cannot show it. Use bash (e.g. file, xxd, strings) to inspect it.",
    });
  });

  it("is parallel-safe", () => {
    expect(createReadTool("/tmp").parallelSafe).toBe(true);
  });
});
