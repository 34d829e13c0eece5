/**
 * Every TypeScript and JavaScript block of README.md and docs/*.md as a user would paste it: all
 * of them type-checked together in one `tsc` run over a generated folder (each block its own
 * module, `@mypi/*` resolved to this repository's sources; only mypi's packages and Node's modules
 * imported, as in a reader's project), and the examples that show their
 * output (a `<!-- docs-test: prints -->` comment before the block, the output in the next plain
 * block) run and compared line for line.
 *
 * A block that is not a whole program — a fragment using names defined elsewhere, a signature
 * listing — carries `<!-- docs-test: skip: why -->` right before it. The skip list is checked to
 * stay short, and each skip must say why. A block whose first line names its file
 * (`// .mypi/extensions/no-rm.ts`) is also written there in the folder the examples run in, so an
 * example that loads it finds it, as the docs tell the reader to save it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "./helpers/mypi.ts";

interface Block {
  doc: string;
  line: number;
  lang: string;
  code: string;
  skip?: string;
  /** The output the docs show for it (`docs-test: prints`). */
  prints?: string;
  /** `// path` on its first line: where the docs say to save it. */
  savedAs?: string;
}

const CODE = /^(\s*)```(ts|typescript|js|mjs|javascript)\s*$/;
const MARK = /^<!--\s*docs-test:\s*(skip:\s*(.+?)|prints)\s*-->$/;
/** The most fragments the docs may hold: a block that runs is worth more than a skip. */
const MAX_SKIPS = 20;

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(REPO, doc), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = CODE.exec(lines[i]!);
    if (!open) continue;
    // A block inside a list item is indented: its fence and lines, by the same amount.
    const indent = open[1]!;
    let end = i + 1;
    while (end < lines.length && lines[end] !== `${indent}\`\`\``) end++;
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join("\n");
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === "") before--;
    const mark = MARK.exec(lines[before]?.trim() ?? "");
    const block: Block = { doc, line: i + 1, lang: open[2]!, code };
    if (mark?.[2]) block.skip = mark[2];
    if (mark?.[1] === "prints") block.prints = outputAfter(lines, end + 1, doc);
    const saved = /^\/\/ (\.?[\w./-]+\.(?:ts|mjs|js))\b/.exec(code);
    if (saved) block.savedAs = saved[1];
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The first plain ``` block after `from`: the output a `prints` example shows. */
function outputAfter(lines: string[], from: number, doc: string): string {
  for (let i = from; i < lines.length; i++) {
    if (lines[i] !== "```") continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== "```") end++;
    return lines.slice(i + 1, end).join("\n");
  }
  throw new Error(`${doc}:${from}: a docs-test: prints block needs its output in a plain \`\`\` block after it`);
}

/** The block with its relative imports resolved from its doc's folder, as they read there. */
function fromDocFolder(b: Block): string {
  return b.code.replace(
    /(from\s+|import\()"(\.\.?\/[^"]+)"/g,
    (_m, lead: string, spec: string) => `${lead}"${join(REPO, dirname(b.doc), spec)}"`,
  );
}

const docs = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
const blocks = docs.flatMap(blocksOf);
const where = (b: Block) => `${b.doc}:${b.line}`;
const fileName = (b: Block) =>
  `${b.doc.replace(/[/.]/g, "_")}_${b.line}.${b.lang === "ts" || b.lang === "typescript" ? "ts" : "mjs"}`;

// Inside the repository, so that `@mypi/*`, zod and vitest resolve from its node_modules.
const generated = join(REPO, "node_modules", ".cache", "docs-code-blocks");
afterAll(() => rmSync(generated, { recursive: true, force: true }));

describe("the code blocks of the docs", () => {
  it("skip only fragments, each with a reason, and few of them", () => {
    const skipped = blocks.filter((b) => b.skip !== undefined);
    expect(skipped.filter((b) => b.skip!.trim().length < 10).map(where)).toEqual([]);
    expect(skipped.length).toBeLessThanOrEqual(MAX_SKIPS);
    // Most of the docs' code is checked, not skipped.
    expect(blocks.length - skipped.length).toBeGreaterThan(skipped.length);
  });

  it("import only what a project with mypi installed has: mypi's packages and Node's modules", () => {
    // zod, say, resolves in this repository but not in the reader's project: import it as `z` from @mypi/extension-api.
    const allowed =
      /^(@mypi\/(kernel|extension-api|extension-api\/testing|extension-api\/host|builtin-tools|extensions\/[\w-]+|cli)|node:[\w/]+|\.\.?\/.*|vitest)$/;
    const imports = blocks
      .filter((b) => b.skip === undefined)
      .flatMap((b) =>
        [...b.code.matchAll(/(?:from\s+|import\()"([^"]+)"/g)].map((m) => ({ at: where(b), spec: m[1]! })),
      );
    expect(imports.filter((i) => !allowed.test(i.spec))).toEqual([]);
  });

  it("type-check as written, in one tsc run", { timeout: 240_000 }, () => {
    rmSync(generated, { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    const checked = blocks.filter((b) => b.skip === undefined);
    // `export {}` keeps each block a module of its own, as a file of the reader's would be.
    for (const b of checked) writeFileSync(join(generated, fileName(b)), `${fromDocFolder(b)}\nexport {};\n`);
    writeFileSync(
      join(generated, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2023",
          lib: ["es2023"],
          module: "preserve",
          moduleResolution: "bundler",
          customConditions: ["mypi-source"],
          allowImportingTsExtensions: true,
          noEmit: true,
          strict: true,
          types: ["node"],
          skipLibCheck: true,
          // JavaScript blocks are parsed, not typed (their readers run them with node); the ones that show output run below.
          allowJs: true,
          checkJs: false,
          // What the blocks import is the repository's own source: its errors are the type check's, not the docs'.
          noUnusedLocals: false,
        },
        include: ["*.ts", "*.mjs"],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", generated], {
      encoding: "utf8",
    });
    // Each error names the block's doc and line: the generated file's name is `<doc>_<line>`.
    const errors = `${tsc.stdout}${tsc.stderr}`
      .split("\n")
      .filter((l) => l.includes("error TS") && !l.includes("/packages/") && !l.includes("/extensions/"));
    expect(errors).toEqual([]);
    expect(tsc.status, `${tsc.stdout}${tsc.stderr}`).toBe(0);
  });

  const runnable = blocks.filter((b) => b.prints !== undefined);
  it.each(runnable.map((b) => [where(b), b] as const))(
    "%s prints what the docs show",
    { timeout: 120_000 },
    (_where, b) => {
      const cwd = mkdtempSync(join(tmpdir(), "mypi-docs-run-"));
      try {
        for (const saved of blocks.filter((x) => x.savedAs !== undefined && x.doc === b.doc)) {
          mkdirSync(join(cwd, dirname(saved.savedAs!)), { recursive: true });
          writeFileSync(join(cwd, saved.savedAs!), saved.code);
        }
        const file = join(cwd, `example-${fileName(b)}`);
        writeFileSync(file, b.code);
        const out = execFileSync(process.execPath, [join(REPO, "test", "helpers", "run-source.mjs"), file], {
          cwd,
          encoding: "utf8",
          env: { ...process.env, NO_COLOR: "1" },
        });
        expect(out.trimEnd()).toBe(b.prints!.trimEnd());
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  );

  it("include the examples that show their output", () => {
    expect(runnable.map(where)).toEqual([
      expect.stringMatching(/^docs\/architecture\.md:/),
      expect.stringMatching(/^docs\/extensions\.md:/),
      expect.stringMatching(/^docs\/extensions\.md:/),
      expect.stringMatching(/^docs\/kernel\.md:/),
      expect.stringMatching(/^docs\/resume\.md:/),
    ]);
  });
});
