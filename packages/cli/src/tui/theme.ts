/**
 * Colours of interactive mode, and the themes pi-tui's components and Pi extensions take. With
 * `NO_COLOR` every style is the identity, so the screen is plain text (the tests read it so).
 *
 * Code blocks are highlighted by a small tokenizer (comments, strings, numbers, keywords): enough
 * to tell code from prose at a glance without a grammar per language.
 */
import type { EditorTheme, MarkdownTheme, SelectListTheme } from "@mariozechner/pi-tui";
import { paintedTheme } from "@mypi/extension-api";
type Theme = ReturnType<typeof paintedTheme>;

export type Paint = (text: string) => string;

export interface Palette {
  green: Paint;
  red: Paint;
  yellow: Paint;
  blue: Paint;
  cyan: Paint;
  magenta: Paint;
  gray: Paint;
  dim: Paint;
  bold: Paint;
  italic: Paint;
  underline: Paint;
  strikethrough: Paint;
  inverse: Paint;
}

const sgr =
  (open: number, close: number): Paint =>
  (s) =>
    `\x1b[${open}m${s}\x1b[${close}m`;
const same: Paint = (s) => s;

export function palette(color: boolean): Palette {
  if (!color) {
    return {
      green: same,
      red: same,
      yellow: same,
      blue: same,
      cyan: same,
      magenta: same,
      gray: same,
      dim: same,
      bold: same,
      italic: same,
      underline: same,
      strikethrough: same,
      inverse: same,
    };
  }
  return {
    green: sgr(32, 39),
    red: sgr(31, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
    gray: sgr(90, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    strikethrough: sgr(9, 29),
    inverse: sgr(7, 27),
  };
}

const KEYWORDS = new Set(
  (
    "const let var function return if else for while do switch case break continue new class extends import export from default " +
    "async await try catch finally throw typeof instanceof in of void null undefined true false this super yield interface type enum " +
    "def elif lambda pass raise with as None True False self fn pub use mod impl struct match loop mut package func go defer " +
    "echo then fi esac done local"
  ).split(" "),
);
const TOKEN =
  /(\/\/[^\n]*|#[^\n]*|\/\*[^]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|\b(\d[\d_.]*(?:e[+-]?\d+)?)\b|\b([A-Za-z_$][\w$]*)\b/g;

/** Lines of `code`, coloured: comments grey, strings green, numbers yellow, keywords magenta. */
export function highlight(code: string, p: Palette, lang?: string): string[] {
  // "#" starts a comment only in languages that say so; in others it is text (C's #include, CSS colours).
  const hashComments =
    lang === undefined || /^(sh|bash|zsh|shell|py|python|rb|ruby|ya?ml|toml|conf|ini|r|perl|make(file)?)$/i.test(lang);
  return code.split("\n").map((line) =>
    line.replace(TOKEN, (all, comment?: string, str?: string, num?: string, word?: string) => {
      if (comment !== undefined) return comment.startsWith("#") && !hashComments ? all : p.gray(comment);
      if (str !== undefined) return p.green(str);
      if (num !== undefined) return p.yellow(num);
      if (word !== undefined && KEYWORDS.has(word)) return p.magenta(word);
      return all;
    }),
  );
}

export function markdownTheme(p: Palette): MarkdownTheme {
  return {
    heading: (s) => p.bold(p.cyan(s)),
    link: p.blue,
    linkUrl: p.dim,
    code: p.cyan,
    codeBlock: same,
    codeBlockBorder: p.gray,
    quote: p.italic,
    quoteBorder: p.gray,
    hr: p.gray,
    listBullet: p.cyan,
    bold: p.bold,
    italic: p.italic,
    strikethrough: p.strikethrough,
    underline: p.underline,
    highlightCode: (code, lang) => highlight(code, p, lang),
  };
}

export function selectListTheme(p: Palette): SelectListTheme {
  return { selectedPrefix: p.cyan, selectedText: p.bold, description: p.dim, scrollInfo: p.dim, noMatch: p.yellow };
}

export function editorTheme(p: Palette): EditorTheme {
  return { borderColor: p.gray, selectList: selectListTheme(p) };
}

/**
 * Pi's `Theme` as extensions use it (`fg(color, text)`, `bold(text)`, `name`, `appearance`, …:
 * `paintedTheme` of the extension API), painted with the palette: the tokens below get a colour,
 * the rest of Pi's tokens keep the text's own.
 */
export function piTheme(p: Palette): Theme {
  const fgs: Record<string, Paint> = {
    accent: p.cyan,
    border: p.gray,
    borderAccent: p.cyan,
    borderMuted: p.gray,
    success: p.green,
    error: p.red,
    warning: p.yellow,
    muted: p.gray,
    dim: p.dim,
    text: same,
    thinkingText: p.gray,
    toolTitle: p.bold,
    toolOutput: p.gray,
    mdHeading: p.cyan,
    mdLink: p.blue,
    mdCode: p.cyan,
    toolDiffAdded: p.green,
    toolDiffRemoved: p.red,
    toolDiffContext: p.gray,
    customMessageLabel: p.magenta,
  };
  return paintedTheme(
    {
      fg: (color, text) => (fgs[color] ?? same)(text),
      bold: p.bold,
      italic: p.italic,
      underline: p.underline,
      strikethrough: p.strikethrough,
      inverse: p.inverse,
    },
    { name: "mypi", appearance: "dark" },
  );
}
