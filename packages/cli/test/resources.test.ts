// Context files, skills and prompt templates as files on disk (docs/resources.md).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseFrontmatter } from "@mypi/extension-api";
import { loadContextFiles } from "../src/workspace/resources/context-files.ts";
import { loadResources } from "../src/workspace/resources/index.ts";
import {
  expandTemplate,
  loadPromptTemplates,
  splitArguments,
  type PromptTemplate,
} from "../src/workspace/resources/prompts.ts";
import { expandSkill, loadSkills, skillsPromptSection } from "../src/workspace/resources/skills.ts";
import { buildSystemPrompt } from "../src/workspace/system-prompt.ts";

const root = mkdtempSync(join(tmpdir(), "mypi-resources-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
// ~/.agents/skills is a user folder of skills: the real one must not leak into these tests.
process.env.HOME = join(root, "user-home");
let dirs = 0;
function tree(files: Record<string, string>): string {
  const dir = join(root, `t${++dirs}`);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}
const skillFile = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\nBody of ${name}.\n`;

describe("parseFrontmatter", () => {
  it("splits YAML from the body, only at the very start, and says what is wrong with bad YAML", () => {
    expect(parseFrontmatter("---\nname: x\nlist: [1, 2]\n---\nBody\n")).toEqual({
      frontmatter: { name: "x", list: [1, 2] },
      body: "Body\n",
    });
    expect(parseFrontmatter("---\r\nname: x\r\n---\r\nBody")).toEqual({ frontmatter: { name: "x" }, body: "Body" });
    expect(parseFrontmatter("---\n---\nBody")).toEqual({ frontmatter: {}, body: "Body" });
    expect(parseFrontmatter("Text\n---\nname: x\n---\n")).toEqual({
      frontmatter: {},
      body: "Text\n---\nname: x\n---\n",
    });
    expect(() => parseFrontmatter("---\nname: [unclosed\n---\nBody")).toThrow(/^malformed frontmatter: /);
    expect(() => parseFrontmatter("---\n- a\n- b\n---\nBody")).toThrow("frontmatter must be a YAML mapping");
    // Not YAML (a colon in a plain value), but plain key: value lines, as Claude Code skills write them.
    expect(parseFrontmatter("---\nname: board\ndescription: Show this: the files that cost most\n---\nBody")).toEqual({
      frontmatter: { name: "board", description: "Show this: the files that cost most" },
      body: "Body",
    });
  });
});

describe("context files", () => {
  it("come from the home, then from / down to the workspace, AGENTS.md before CLAUDE.md in one folder, each real file once", () => {
    const dir = tree({
      "home/AGENTS.md": "home",
      "AGENTS.md": "top",
      "a/CLAUDE.md": "claude only",
      "a/b/AGENTS.md": "agents wins",
      "a/b/CLAUDE.md": "not read",
    });
    symlinkSync(join(dir, "home", "AGENTS.md"), join(dir, "a", "b", "c-link.md"));
    mkdirSync(join(dir, "a", "b", "ws"));
    symlinkSync(join(dir, "home"), join(dir, "a", "b", "ws", "linked-home"));
    const files = loadContextFiles({ home: join(dir, "a", "b", "ws", "linked-home"), cwd: join(dir, "a", "b", "ws") });
    expect(files.map((f) => [f.path.slice(dir.length), f.content])).toEqual([
      ["/a/b/ws/linked-home/AGENTS.md", "home"],
      ["/AGENTS.md", "top"],
      ["/a/CLAUDE.md", "claude only"],
      ["/a/b/AGENTS.md", "agents wins"],
    ]);
  });

  it("that cannot be read are a warning, and the others still load", () => {
    const dir = tree({ "ws/CLAUDE.md": "fine" });
    mkdirSync(join(dir, "AGENTS.md")); // a folder where a file should be
    const warnings: string[] = [];
    const files = loadContextFiles({
      home: join(dir, "nohome"),
      cwd: join(dir, "ws"),
      onWarning: (w) => warnings.push(w),
    });
    expect(files.map((f) => f.content)).toEqual(["fine"]);
    expect(warnings).toEqual([`context file ${join(dir, "AGENTS.md")} cannot be read (EISDIR); skipped`]);
  });
});

describe("skills", () => {
  it("are SKILL.md folders found recursively; bad ones are warnings, a clash keeps the first", () => {
    const dir = tree({
      "user/deploy/SKILL.md": skillFile("deploy", "Ship the app."),
      "user/group/lint/SKILL.md": skillFile("lint", "Lint the code."),
      "user/deploy/nested/SKILL.md": skillFile("nested", "Material of deploy, not a skill."),
      "user/.hidden/SKILL.md": skillFile("hidden", "Skipped."),
      "user/node_modules/x/SKILL.md": skillFile("x", "Skipped."),
      "user/Bad_Name/SKILL.md": skillFile("Bad_Name", "Loads with a warning."),
      "user/spaced/SKILL.md": skillFile("'has space'", "Cannot be typed."),
      "user/nodesc/SKILL.md": "---\nname: nodesc\n---\nNo description.\n",
      "user/broken/SKILL.md": "---\nname: [oops\n---\n",
      "user/unnamed/SKILL.md": "---\ndescription: Named after its folder.\n---\nBody\n",
      "project/deploy/SKILL.md": skillFile("deploy", "A second deploy."),
      "project/quiet/SKILL.md": skillFile("quiet", "Only by command.", "disable-model-invocation: true\n"),
    });
    const warnings: string[] = [];
    const skills = loadSkills(
      [
        { path: join(dir, "user"), scope: "user" },
        { path: join(dir, "project"), scope: "project" },
      ],
      (w) => warnings.push(w),
    );
    expect(skills.map((s) => [s.name, s.scope, s.disableModelInvocation])).toEqual([
      ["Bad_Name", "user", false],
      ["deploy", "user", false],
      ["lint", "user", false],
      ["spaced", "user", false],
      ["unnamed", "user", false],
      ["quiet", "project", true],
    ]);
    expect(warnings.map((w) => w.slice(w.indexOf(": ") + 2))).toEqual([
      'the name "Bad_Name" should be at most 64 lowercase letters, digits and single hyphens (Agent Skills)',
      expect.stringMatching(/^malformed frontmatter: .*; not loaded$/),
      "no description in its frontmatter (the model picks skills by it); not loaded",
      'the name "has space" has spaces and cannot be typed; it is /skill:spaced, after its folder',
      `the name "deploy" is taken by ${join(dir, "user", "deploy", "SKILL.md")}; the first one is kept`,
    ]);

    const section = skillsPromptSection(skills);
    expect(section).toContain(`- deploy: Ship the app. (file: ${join(dir, "user", "deploy", "SKILL.md")})`);
    expect(section).not.toContain("quiet");
    const quiet = skills.find((s) => s.name === "quiet")!;
    expect(expandSkill(quiet, " now ")).toBe(
      `<skill name="quiet" location="${quiet.path}">\nPaths in this skill are relative to ${quiet.baseDir}.\n\nBody of quiet.\n</skill>\n\nnow`,
    );
  });
});

describe("prompt templates", () => {
  const template = (body: string): PromptTemplate => ({
    name: "t",
    description: "",
    body,
    path: "/t.md",
    scope: "user",
  });

  it("split arguments like shell words: quotes open only at a word's start, an unclosed quote is text", () => {
    expect(splitArguments(`a "b c" 'd e' doesn't "x \\"y\\" z" back\\slash "open`)).toEqual([
      "a",
      "b c",
      "d e",
      "doesn't",
      'x "y" z',
      "back\\slash",
      '"open',
    ]);
    expect(splitArguments("   ")).toEqual([]);
  });

  it("fill $1, $@, $ARGUMENTS, defaults and slices; with no placeholder the arguments are appended", () => {
    const t = template("1=$1 2=$2 all=$@ args=$ARGUMENTS d=${3:-none} alld=${@:-nothing} from2=${@:2} two=${@:2:2}");
    expect(expandTemplate(t, `one "two words" three four`)).toBe(
      "1=one 2=two words all=one two words three four args=one two words three four d=three alld=one two words three four from2=two words three four two=two words three",
    );
    expect(expandTemplate(t, "")).toBe("1= 2= all= args= d=none alld=nothing from2= two=");
    expect(expandTemplate(template("Review the diff.\n"), "focus on errors")).toBe(
      "Review the diff.\n\nfocus on errors",
    );
    expect(expandTemplate(template("Review the diff.\n"), "")).toBe("Review the diff.\n");
    // A placeholder's value is not read again as a placeholder.
    expect(expandTemplate(template("[$1] [$2]"), "$2 b")).toBe("[$2] [b]");
  });

  it("are the direct .md children of a folder, described by frontmatter or their first line", () => {
    const dir = tree({
      "p/review.md": '---\ndescription: Review staged changes\nargument-hint: "[focus]"\n---\nReview $1.\n',
      "p/plain.md": "\n\nFirst line describes it.\nMore.\n",
      "p/sub/deep.md": "not loaded",
      "p/notes.txt": "not loaded",
      "q/review.md": "second review",
    });
    const warnings: string[] = [];
    const found = loadPromptTemplates(
      [
        { path: join(dir, "p"), scope: "user" },
        { path: join(dir, "q", "review.md"), scope: "project" },
      ],
      (w) => warnings.push(w),
    );
    expect(found.map((t) => [t.name, t.description, t.argumentHint])).toEqual([
      ["plain", "First line describes it.", undefined],
      ["review", "Review staged changes", "[focus]"],
    ]);
    expect(warnings).toEqual([
      `prompt template ${join(dir, "q", "review.md")}: /review is taken by ${join(dir, "p", "review.md")}; the first one is kept`,
    ]);
  });
});

describe("loadResources and the system prompt", () => {
  it("puts SYSTEM.md, APPEND_SYSTEM.md, appended text, context files and skills in that order; the project's files only when allowed", () => {
    const dir = tree({
      "home/SYSTEM.md": "Home system.",
      "home/APPEND_SYSTEM.md": "Home append.",
      "home/AGENTS.md": "Home conventions.",
      "ws/.mypi/SYSTEM.md": "Project system.",
      "ws/.mypi/skills/deploy/SKILL.md": skillFile("deploy", "Ship it."),
      "ws/.mypi/prompts/review.md": "Review $1.",
      "ws/.agents/skills/agents-skill/SKILL.md": skillFile("agents-skill", "From .agents."),
      "ws/.git/HEAD": "ref",
      "ws/AGENTS.md": "Project conventions.",
    });
    const options = { home: join(dir, "home"), cwd: join(dir, "ws"), contextFiles: true, skillCommands: true };
    const trusted = loadResources({ ...options, project: true });
    expect(trusted.warnings).toEqual([]);
    const prompt = buildSystemPrompt({
      cwd: options.cwd,
      tools: ["read"],
      resources: trusted,
      append: ["Flag append."],
    });
    const order = [
      "Project system.",
      "Home append.",
      "Flag append.",
      "Home conventions.",
      "Project conventions.",
      "- deploy: Ship it.",
      "- agents-skill: From .agents.",
    ].map((t) => prompt.indexOf(t));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(prompt).not.toContain("Home system.");
    expect(trusted.expand("/review auth")).toBe("Review auth.");
    expect(trusted.expand("/skill:deploy")).toContain("Body of deploy.");
    expect(trusted.expand("/unknown x")).toBeUndefined();
    expect(trusted.expand("plain text")).toBeUndefined();
    expect(trusted.commands().map((c) => [c.name, c.source])).toEqual([
      ["review", "prompt"],
      ["skill:deploy", "skill"],
      ["skill:agents-skill", "skill"],
    ]);
    // Without the read tool the model could not load a skill: none is listed.
    expect(buildSystemPrompt({ cwd: options.cwd, tools: ["ls"], resources: trusted })).not.toContain("# Skills");

    const untrusted = loadResources({ ...options, project: false, skillCommands: false });
    const plain = buildSystemPrompt({ cwd: options.cwd, tools: ["read"], resources: untrusted });
    expect(plain.startsWith("Home system.\n\nHome append.")).toBe(true);
    expect(plain).toContain("Project conventions."); // context files load either way
    expect(plain).not.toContain("deploy");
    expect(untrusted.commands()).toEqual([]);
    expect(untrusted.expand("/review x")).toBeUndefined();

    const noContext = loadResources({ ...options, project: true, contextFiles: false });
    expect(noContext.contextFiles).toEqual([]);
  });
});
