/**
 * `mypi export` end to end: a real run (redact-secrets and permission-gate loaded) writes the
 * session, a second branch is added to the file, the export is opened in a real headless
 * Chromium (Debian's `chromium`; CI installs it, see .ci/run). Skipped only when the binary is
 * missing outside CI.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mypi/kernel";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MYPI_BIN, createSandbox } from "./helpers/mypi.ts";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);

// Assembled, so that no secret-shaped literal sits in the repository.
const GITHUB = `ghp_${"Zq7X".repeat(9)}`;
const OPENAI = ["sk", "proj", "Qw3rTy9UiOp0AsDfGhJkL1zXcVbNm2"].join("-");
const XSS = `<img src="http://127.0.0.1:9/x.png" onerror="alert(1)"><script>alert(2)</script>`;

const sandbox = createSandbox("mypi-export-");
const sessionFile = join(sandbox.root, "sessions", "run.jsonl");
const outFile = join(sandbox.root, "view.html");
let html = "";
let firstBranchUser = "";
let secondBranchUser = "";

beforeAll(async () => {
  sandbox.file("ws/config.env", `OPENAI_API_KEY=${OPENAI}\nDEBUG=1\n`);
  const script = sandbox.script([
    {
      text: "Reading it.",
      toolCalls: [
        { name: "read", arguments: { path: "config.env" } },
        { name: "bash", arguments: { command: "rm -rf /" } },
      ],
    },
    { text: "The file sets two variables." },
  ]);
  const run = await sandbox.run([
    "--model",
    `scripted:${script}`,
    "-e",
    "redact-secrets",
    "-e",
    "permission-gate",
    "--session",
    sessionFile,
    "-p",
    `what is in config.env? my token is ${GITHUB}`,
  ]);
  // Print mode says the refusal as it happens, then one line about the decisions: the secrets
  // masked (prompt and result), the rm blocked; a run with a refused call exits 1.
  expect(run.stderr).toBe(
    'mypi: permission-gate refused a tool call: "rm -rf /" looks destructive (recursive rm) and there is no user to confirm it. Do it another way or ask the user to run it.\n' +
      "mypi: decisions: redact-secrets rewrote 2 · permission-gate blocked 1 (--verbose shows each)\n" +
      "mypi: a tool call was refused by a policy (above); exit code 1.\n",
  );
  expect(run.code).toBe(1);
  // A second branch, re-asking the first prompt differently, with a hostile text in it.
  const session = SessionManager.open(sessionFile);
  const first = session.getEntries().find((e) => e.type === "message" && e.message.role === "user")!;
  firstBranchUser = first.id;
  session.appendLabel(first.id, "first try");
  session.fork(first.id);
  secondBranchUser = session.appendMessage({
    role: "user",
    content: [{ type: "text", text: `Try again ${XSS}` }],
    timestamp: Date.now(),
  });
  session.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "Second branch answer." }],
    model: "scripted",
    stopReason: "stop",
    usage: { input: 1, output: 1 },
    timestamp: Date.now(),
  });
  session.setSessionName("export test");

  const exported = await sandbox.run(["export", sessionFile, outFile]);
  expect(exported).toMatchObject({ code: 0, stderr: "", stdout: `${outFile}\n` });
  html = readFileSync(outFile, "utf8");
}, 60_000);
afterAll(() => sandbox.cleanup());

describe("mypi export", () => {
  it("writes a file without the secrets redact-secrets masked, with its masks, the gate's decision and every branch", () => {
    expect(html).not.toContain(OPENAI);
    expect(html).not.toContain(GITHUB);
    expect(html).toContain("[REDACTED:openai-key]");
    expect(html).toContain("[REDACTED:github-token]");
    expect(html).toContain("permission-gate</b> decided <b>block</b>");
    expect(html).toContain("Second branch answer.");
    expect(html).toContain("The file sets two variables.");
  });

  it("escapes session content and links to nothing outside the file", () => {
    expect(html).not.toContain(XSS);
    expect(html).toContain(`Try again &#60;img src=&#34;http://127.0.0.1:9/x.png&#34;`);
    expect(html.match(/<script\b/g)).toHaveLength(1); // the page's own
    // Every URL-bearing attribute is a data: URL (here there is none at all).
    expect(html.match(/\s(?:src|href|action|srcset|poster|data)=["'](?!data:)/gi) ?? []).toEqual([]);
    expect(html).toContain(`content="default-src 'none'`);
  });

  it("answers a usage error for a missing session file and writes nothing", async () => {
    const r = await sandbox.run(["export", join(sandbox.root, "nope.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mypi: .*nope\.jsonl: no such file/);
    expect(existsSync(join(sandbox.ws, "nope.html"))).toBe(false);
  }, 60_000);

  it("finds a session of the workspace by the start of its id", async () => {
    const run = await sandbox.run([
      "--model",
      `scripted:${sandbox.script([{ text: "By id." }])}`,
      "--no-extensions",
      "-p",
      "find me",
    ]);
    expect(run.code).toBe(0);
    const [file] = sandbox.files(join(sandbox.home, "sessions"));
    const id = SessionManager.open(file!).id;
    const out = join(sandbox.root, "by-id.html");
    expect(await sandbox.run(["export", id.slice(0, 8), out])).toMatchObject({ code: 0, stdout: `${out}\n` });
    expect(readFileSync(out, "utf8")).toContain("By id.");
    const none = await sandbox.run(["export", "zzzzzz"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^mypi: zzzzzz: no such file, and no session of this workspace has an id starting with it/,
    );
  }, 60_000);

  it("never writes over a session file: not through a link to the one exported, not another session", async () => {
    const link = join(sandbox.root, "page.html");
    symlinkSync(sessionFile, link);
    const before = readFileSync(sessionFile, "utf8");
    const viaLink = await sandbox.run(["export", sessionFile, link]);
    expect([viaLink.code, viaLink.stderr]).toEqual([
      2,
      `mypi: ${link} is the session file itself (through a link): give the page another name.\n`,
    ]);
    const other = join(sandbox.root, "sessions", "other.jsonl");
    copyFileSync(sessionFile, other);
    const onOther = await sandbox.run(["export", sessionFile, other]);
    expect([onOther.code, onOther.stderr]).toEqual([
      2,
      `mypi: ${other} is a session file: the page would replace it; give another name.\n`,
    ]);
    expect([readFileSync(sessionFile, "utf8"), readFileSync(other, "utf8")]).toEqual([before, before]);
  }, 60_000);

  it("leaves no partial page when the disk fills up: the old file stays, or none", async () => {
    const out = join(sandbox.root, "full.html");
    // A file-size limit makes every write past 8 KB fail (EFBIG), as a full disk fails it.
    const limited = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          "sh",
          ["-c", `trap '' XFSZ; ulimit -f 16; exec "$0" "$@"`, process.execPath, MYPI_BIN, ...args],
          { env: sandbox.env, cwd: sandbox.ws },
        );
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
        child.on("close", (code) => resolve({ code, stderr }));
      });
    const fresh = await limited(["export", sessionFile, out]);
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toMatch(new RegExp(`^mypi: could not write ${out}: .*EFBIG`));
    expect(existsSync(out)).toBe(false);
    writeFileSync(out, "the old page\n");
    expect((await limited(["export", sessionFile, out])).code).toBe(1);
    expect(readFileSync(out, "utf8")).toBe("the old page\n");
    expect(readdirSync(sandbox.root).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  }, 60_000);

  it("writes next to the current folder by default, named after the session file", async () => {
    const r = await sandbox.run(["export", sessionFile]);
    expect(r).toMatchObject({ code: 0, stdout: `${join(sandbox.ws, "run.html")}\n` });
    expect(readFileSync(join(sandbox.ws, "run.html"), "utf8")).toBe(html);
  }, 60_000);
});

describe.skipIf(!haveChromium && !process.env.CI)("the exported page in headless Chromium", () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const dialogs: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const context = await browser.newContext();
    // Every request the page makes, answered with a failure: there must be none at all.
    await context.route("**/*", (route) => {
      requests.push(route.request().url());
      return route.abort();
    });
    page = await context.newPage();
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
    // Loaded as a document (not a file:// navigation, which routes do not see), with the CSP in force.
    await page.setContent(html, { waitUntil: "load" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const visibleTexts = () => page.locator("article.entry:visible").allInnerTexts();

  it("renders the current branch: the second one, its hostile text shown as text", async () => {
    await expect(page.title()).resolves.toBe("export test · mypi");
    const texts = (await visibleTexts()).join("\n");
    expect(texts).toContain("Second branch answer.");
    expect(texts).toContain(`Try again ${XSS}`);
    expect(texts).not.toContain("The file sets two variables.");
    expect(await page.locator("img").count()).toBe(0);
    // No element the session's text could have made: nothing with a URL, nothing with a handler.
    const suspicious = await page.evaluate(
      `[...document.querySelectorAll("*")].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name) || ["src", "href", "action", "srcset"].includes(a.name))).length`,
    );
    expect(suspicious).toBe(0);
  });

  it("switches to the first branch when its entry is clicked in the tree, and back", async () => {
    await page.locator(`nav button.node[data-id="${firstBranchUser}"]`).click();
    const first = (await visibleTexts()).join("\n");
    expect(first).toContain("The file sets two variables.");
    expect(first).toContain("[REDACTED:openai-key]");
    expect(first).toContain("permission-gate decided block");
    expect(first).not.toContain("Second branch answer.");
    await expect(page.locator("main").getAttribute("data-leaf")).resolves.not.toBe(secondBranchUser);

    await page.locator(`nav button.node[data-id="${secondBranchUser}"]`).click();
    const second = (await visibleTexts()).join("\n");
    expect(second).toContain("Second branch answer.");
    expect(second).not.toContain("The file sets two variables.");
  });

  it("collapses and expands the blocks", async () => {
    await page.locator(`nav button.node[data-id="${firstBranchUser}"]`).click();
    const call = page.locator("details.tool-call").first();
    await expect(call.getAttribute("open")).resolves.toBe("");
    await page.locator('button[data-action="collapse"]').click();
    await expect(call.getAttribute("open")).resolves.toBeNull();
    await page.locator('button[data-action="expand"]').click();
    await expect(call.getAttribute("open")).resolves.toBe("");
  });

  it("made no request, opened no dialog and threw nothing", async () => {
    expect(requests).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("works opened as a file, the way a user opens it: renders and switches branches", async () => {
    const other = await browser.newPage();
    const failures: string[] = [];
    other.on("pageerror", (e) => failures.push(e.message));
    await other.goto(`file://${outFile}`);
    await other.locator(`nav button.node[data-id="${firstBranchUser}"]`).click();
    expect((await other.locator("article.entry:visible").allInnerTexts()).join("\n")).toContain(
      "The file sets two variables.",
    );
    expect(failures).toEqual([]);
    await other.close();
  });

  it("makes no request even without its Content-Security-Policy: nothing in it points outside", async () => {
    const bare = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, "");
    expect(bare).not.toBe(html);
    const other = await browser.newPage();
    const seen: string[] = [];
    await other.route("**/*", (route) => {
      seen.push(route.request().url());
      return route.abort();
    });
    other.on("dialog", (d) => {
      seen.push(`dialog ${d.message()}`);
      void d.dismiss();
    });
    await other.setContent(bare, { waitUntil: "load" });
    await other.locator(`nav button.node[data-id="${firstBranchUser}"]`).click();
    expect(await other.locator("article.entry:visible").count()).toBeGreaterThan(3);
    expect(seen).toEqual([]);
    await other.close();
  });
});
