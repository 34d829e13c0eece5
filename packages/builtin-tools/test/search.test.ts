import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { executeTool, ToolWorkerPool, type Tool } from "@mypi/kernel";
import { createFindTool, createGrepTool, MAX_FIND_RESULTS } from "../src/index.ts";
import { find, grep, requiredLiteral, type FindArgs, type GrepArgs } from "../src/search-worker.ts";
import { seen, tempTree } from "./helpers.ts";

const tree = tempTree({
  ".gitignore": "dist/\n*.log\n!keep.log\n",
  "src/app.ts": "import x from 'y';\nconst TODO = 1; // TODO: fix\nexport {};\n",
  "src/util.ts": "// todo lower\nexport const a = 1;\n",
  "src/nested/.gitignore": "generated.ts\n",
  "src/nested/generated.ts": "TODO generated\n",
  "src/nested/keep.ts": "TODO kept\n",
  "dist/out.js": "TODO in dist\n",
  "debug.log": "TODO in log\n",
  "keep.log": "TODO kept log\n",
  "node_modules/pkg/index.js": "TODO in deps\n",
  "node_modules/pkg/node_modules/inner/x.js": "TODO deeper\n",
  ".git/HEAD": "TODO git\n",
  "bin.dat": Buffer.from("TODO\0binary\n"),
  ".hidden/x.md": "TODO hidden\n",
  "long.txt": `${"y".repeat(600)} TODO\n`,
});
const pool = new ToolWorkerPool({ maxThreads: 1 });
afterAll(async () => {
  await pool.close();
  tree.cleanup();
});

const ctx = { cwd: tree.root, data: { root: tree.root } };
const grepIn = (args: GrepArgs) => seen(grep(args, ctx));
const findIn = (args: FindArgs) => seen(find(args, ctx));

describe("grep (the worker function)", () => {
  it("prints path:line:text relative to the root, respecting nested .gitignore files and skipping .git, node_modules and binary files", () => {
    expect(grepIn({ pattern: "TODO", glob: "!long.txt" }).text).toBe(
      [
        ".hidden/x.md:1:TODO hidden",
        "keep.log:1:TODO kept log",
        "src/app.ts:2:const TODO = 1; // TODO: fix",
        "src/nested/keep.ts:1:TODO kept",
      ].join("\n"),
    );
  });

  it("matches letters in either case with ignoreCase", () => {
    expect(grepIn({ pattern: "todo", ignoreCase: true, path: "src" }).text).toBe(
      [
        "src/app.ts:2:const TODO = 1; // TODO: fix",
        "src/nested/keep.ts:1:TODO kept",
        "src/util.ts:1:// todo lower",
      ].join("\n"),
    );
  });

  it("searches inside node_modules (nested ones too) when the path points there", () => {
    expect(grepIn({ pattern: "TODO", path: "node_modules" }).text).toBe(
      ["node_modules/pkg/index.js:1:TODO in deps", "node_modules/pkg/node_modules/inner/x.js:1:TODO deeper"].join("\n"),
    );
  });

  it("searches an ignored folder when the path names it, and a single file", () => {
    expect(grepIn({ pattern: "TODO", path: "dist" }).text).toBe("dist/out.js:1:TODO in dist");
    expect(grepIn({ pattern: "const", path: "src/util.ts" }).text).toBe("src/util.ts:2:export const a = 1;");
  });

  it("filters files by glob: a name glob anywhere, a path glob relative to the searched folder", () => {
    expect(grepIn({ pattern: "TODO", glob: "*.ts" }).text).toBe(
      ["src/app.ts:2:const TODO = 1; // TODO: fix", "src/nested/keep.ts:1:TODO kept"].join("\n"),
    );
    expect(grepIn({ pattern: "TODO", path: "src", glob: "nested/*.ts" }).text).toBe("src/nested/keep.ts:1:TODO kept");
  });

  it("stops at the limit and says there are more", () => {
    expect(grepIn({ pattern: "TODO", limit: 2 })).toEqual({
      isError: false,
      text:
        ".hidden/x.md:1:TODO hidden\nkeep.log:1:TODO kept log\n\n" +
        "[Stopped at 2 matches; there are more. Use limit=4 to see more, or narrow the pattern, path or glob.]",
    });
  });

  it("cuts long lines and says so", () => {
    expect(grepIn({ pattern: "TODO", path: "long.txt" })).toEqual({
      isError: false,
      text:
        `long.txt:1:${"y".repeat(500)}... [line cut at 500 characters]\n\n` +
        "[Lines longer than 500 characters were cut; use read to see them whole.]",
    });
  });

  it("says when nothing matches", () => {
    expect(grepIn({ pattern: "nothing-like-this" })).toEqual({
      isError: false,
      text: 'No matches for "nothing-like-this" in the workspace root.',
    });
    expect(grepIn({ pattern: "zzz", path: "src", glob: "*.md" })).toEqual({
      isError: false,
      text: 'No matches for "zzz" in src (files matching "*.md").',
    });
  });

  it("explains an invalid regular expression", () => {
    expect(grepIn({ pattern: "foo(" })).toEqual({
      isError: true,
      text: 'Invalid regular expression "foo(": Unterminated group. grep takes a JavaScript regular expression; put a backslash before ( ) [ ] { } . * + ? | ^ $ \\ to match one literally.',
    });
  });

  it("says a missing path is missing, and refuses a path outside the root", () => {
    expect(grepIn({ pattern: "x", path: "nope" })).toEqual({
      isError: true,
      text: "Path not found: nope. Use ls or find to locate it.",
    });
    expect(grepIn({ pattern: "x", path: "/etc" })).toEqual({
      isError: true,
      text: `Path "/etc" resolves to /etc, which is outside the root ${tree.root}. Paths must be inside ${tree.root}.`,
    });
  });

  it("matches line by line: a match across a line break does not count, the line after it still does", () => {
    const t = tempTree({ "f.txt": "a\nb\na b\n" });
    try {
      expect(seen(grep({ pattern: "a\\sb" }, { data: { root: t.root } })).text).toBe("f.txt:3:a b");
    } finally {
      t.cleanup();
    }
  });

  it("finds exactly the lines a per-line regex test finds, for any text (both scanning strategies)", () => {
    const t = tempTree();
    const patterns = [
      "foo",
      "fo+",
      "^foo",
      "foo$",
      "a\\sb",
      "(foo|bar)",
      "b[ar]+",
      "\\bfoo\\b",
      "o{2}",
      "x?foo",
      "(?<!a)foo",
      "f.o",
      "ö+",
      "\\.",
      "r\\r?$",
      "(?<!a)[f]o",
      "[ab]\\s[ab]",
      "^$",
      "x*",
      "o\\s*$",
      "\\s$",
      "(?<!x)$",
    ];
    const text = fc.string({
      unit: fc.constantFrom("f", "o", "a", "b", "r", " ", "\n", "\r", "x", "ö", "."),
      maxLength: 60,
    });
    try {
      fc.assert(
        fc.property(text, fc.constantFrom(...patterns), fc.boolean(), (content, pattern, ignoreCase) => {
          writeFileSync(join(t.root, "f.txt"), content);
          const regex = new RegExp(pattern, ignoreCase ? "i" : "");
          const lines = content.split("\n");
          if (lines[lines.length - 1] === "") lines.pop();
          // A line is matched as it is printed: without the \r of a CRLF line end.
          const expected = lines
            .map((line) => line.replace(/\r$/, ""))
            .map((line, i) => (regex.test(line) ? `f.txt:${i + 1}:${line}` : undefined))
            .filter((l) => l !== undefined);
          const result = grep({ pattern, ignoreCase, limit: 1000 }, { data: { root: t.root } });
          const got = seen(result).text;
          expect(got.startsWith("No matches") ? [] : got.split("\n")).toEqual(expected);
        }),
        { numRuns: 300, seed: 7 },
      );
    } finally {
      t.cleanup();
    }
  });
});

describe("requiredLiteral", () => {
  it("picks the longest run every match must contain, or none", () => {
    const cases: Array<[string, boolean, string | undefined]> = [
      ["createRequire", false, "createRequire"],
      ["createRequire\\(", false, "createRequire("],
      ["function\\s+\\w+Async\\(", false, "function"],
      ["ab*cdef", false, "cdef"],
      ["ab+c", false, "ab"],
      ["x{2,}yz", false, "yz"],
      ["a(b|c)d", false, "a"],
      ["foo|bar", false, undefined],
      ["[abc]+", false, undefined],
      ["\\x41BC", false, undefined],
      ["TODO", true, undefined],
      ["::", true, "::"],
      ["colou?r", false, "colo"],
    ];
    expect(cases.map(([p, i]) => [p, i, requiredLiteral(p, i)])).toEqual(cases);
  });
});

describe("find (the worker function)", () => {
  it("matches a name glob anywhere below the folder, respecting .gitignore, folders with a / suffix", () => {
    expect(findIn({ pattern: "*.ts" }).text).toBe(["src/app.ts", "src/nested/keep.ts", "src/util.ts"].join("\n"));
    expect(findIn({ pattern: "nest*" }).text).toBe("src/nested/");
  });

  it("matches a path glob against paths relative to the searched folder", () => {
    expect(findIn({ pattern: "nested/**", path: "src" }).text).toBe(
      ["src/nested/", "src/nested/.gitignore", "src/nested/keep.ts"].join("\n"),
    );
    expect(findIn({ pattern: "**/x.js", path: "node_modules" }).text).toBe("node_modules/pkg/node_modules/inner/x.js");
  });

  it("says when nothing matches, and refuses a file as the folder", () => {
    expect(findIn({ pattern: "*.rs" })).toEqual({
      isError: false,
      text: 'No files found matching "*.rs" in the workspace root.',
    });
    expect(findIn({ pattern: "*.ts", path: "src/app.ts" })).toEqual({
      isError: true,
      text: "Not a directory: src/app.ts. find searches folders; use read for a file.",
    });
  });

  it("lists symlinks (a folder link inside the workspace with a /) without following any, nor grepping through them", () => {
    const outside = tempTree({ "secret.ts": "TODO outside\n", "sub/deep.ts": "" });
    const t = tempTree({ "src/a.ts": "TODO inside\n" });
    try {
      symlinkSync(join(t.root, "src/a.ts"), join(t.root, "alias.ts"));
      symlinkSync(join(t.root, "src"), join(t.root, "src-link"));
      symlinkSync(join(outside.root, "secret.ts"), join(t.root, "out.ts"));
      symlinkSync(outside.root, join(t.root, "out-dir"));
      symlinkSync(join(t.root, "gone.ts"), join(t.root, "broken.ts"));
      const ws = { data: { root: t.root } };
      expect(seen(find({ pattern: "*" }, ws)).text).toBe(
        ["alias.ts", "broken.ts", "out-dir", "out.ts", "src/", "src/a.ts", "src-link/"].join("\n"),
      );
      expect(seen(find({ pattern: "*.ts" }, ws)).text).toBe(["alias.ts", "broken.ts", "out.ts", "src/a.ts"].join("\n"));
      expect(seen(grep({ pattern: "TODO" }, ws)).text).toBe("src/a.ts:1:TODO inside");
    } finally {
      t.cleanup();
      outside.cleanup();
    }
  });

  it(`stops at ${MAX_FIND_RESULTS} results and says there are more`, () => {
    const t = tempTree(
      Object.fromEntries(
        Array.from({ length: MAX_FIND_RESULTS + 1 }, (_, i) => [`f${String(i).padStart(4, "0")}.txt`, ""]),
      ),
    );
    try {
      const lines = seen(find({ pattern: "*.txt" }, { data: { root: t.root } })).text.split("\n");
      expect(lines.length).toBe(MAX_FIND_RESULTS + 2);
      expect(lines.slice(-3)).toEqual([
        "f0999.txt",
        "",
        `[Stopped at ${MAX_FIND_RESULTS} results; there are more. Narrow the pattern or the path.]`,
      ]);
    } finally {
      t.cleanup();
    }
  });
});

describe("grep and find through the kernel's worker pool", () => {
  const run = (tool: Tool, args: Record<string, unknown>, signal = new AbortController().signal) =>
    executeTool(tool, args, {
      toolCallId: "c1",
      signal,
      cwd: "/",
      onUpdate: () => {},
      abortGraceMs: 2000,
      workerPool: pool,
    });

  it("runs grep in a worker thread with the tool's root", async () => {
    const result = await run(createGrepTool(tree.root), { pattern: "kept", path: "src" });
    expect(seen(result)).toEqual({ isError: false, text: "src/nested/keep.ts:1:TODO kept" });
  });

  it("runs find in a worker thread and returns its errors as error results", async () => {
    const tool = createFindTool(tree.root);
    expect(seen(await run(tool, { pattern: "*.md" }))).toEqual({ isError: false, text: ".hidden/x.md" });
    expect(seen(await run(tool, { pattern: "*", path: "../" }))).toEqual({
      isError: true,
      text: `Path "../" resolves to ${join(tree.root, "..")}, which is outside the root ${tree.root}. Paths must be inside ${tree.root}.`,
    });
  });

  it("declares both tools parallel-safe worker tools", () => {
    const tools = [createGrepTool(tree.root), createFindTool(tree.root)];
    expect(tools.map((t) => [t.name, t.parallelSafe, t.worker?.export, t.worker?.data])).toEqual([
      ["grep", true, "grep", { root: tree.root }],
      ["find", true, "find", { root: tree.root }],
    ]);
  });
});
