/**
 * Pi's `Theme` (`ctx.ui.theme`, the `theme` a renderer or a widget factory gets, the class
 * `@earendil-works/pi-coding-agent` exports), with Pi 1.6's members: data where Pi has data
 * (`name`, `sourcePath`, `sourceInfo`, `appearance`, `colors`), functions where it has functions.
 * Its colours come from a `ThemePaint`: none by default (headless modes: the text is returned as
 * it is, and the escape getters return ""), the interactive mode's palette there (cli/tui/theme.ts).
 *
 * As in Pi, a colour token the theme does not know is an error (`Unknown theme color: x`), so a
 * misspelt token fails here as it fails under Pi, instead of passing unnoticed.
 */

/** Pi 1.6's foreground tokens (`THEME_TOKENS` with slot `foreground`). */
const THEME_FG_TOKENS = [
  "accent",
  "border",
  "borderAccent",
  "borderMuted",
  "success",
  "error",
  "warning",
  "muted",
  "dim",
  "text",
  "thinkingText",
  "scrollbarTrack",
  "scrollbarThumb",
  "searchMatchText",
  "userMessageText",
  "customMessageText",
  "customMessageLabel",
  "toolTitle",
  "toolOutput",
  "mdHeading",
  "mdLink",
  "mdLinkUrl",
  "mdCode",
  "mdCodeBlock",
  "mdCodeBlockBorder",
  "mdQuote",
  "mdQuoteBorder",
  "mdHr",
  "mdListBullet",
  "toolDiffAdded",
  "toolDiffRemoved",
  "toolDiffContext",
  "syntaxComment",
  "syntaxKeyword",
  "syntaxFunction",
  "syntaxVariable",
  "syntaxString",
  "syntaxNumber",
  "syntaxType",
  "syntaxOperator",
  "syntaxPunctuation",
  "thinkingOff",
  "thinkingMinimal",
  "thinkingLow",
  "thinkingMedium",
  "thinkingHigh",
  "thinkingXhigh",
  "thinkingMax",
  "bashMode",
] as const;

/** Pi 1.6's background tokens. */
const THEME_BG_TOKENS = [
  "selectedBg",
  "searchMatchBg",
  "userMessageBg",
  "customMessageBg",
  "toolPendingBg",
  "toolSuccessBg",
  "toolErrorBg",
] as const;

const FG = new Set<string>(THEME_FG_TOKENS);
const BG = new Set<string>(THEME_BG_TOKENS);

type Paint = (text: string) => string;

/** How a theme colours text; every member is optional (absent: the text unchanged, no escape). */
export interface ThemePaint {
  fg?(token: string, text: string): string;
  bg?(token: string, text: string): string;
  bold?: Paint;
  italic?: Paint;
  underline?: Paint;
  inverse?: Paint;
  strikethrough?: Paint;
  /** The escape that opens a token's colour (Pi's `getFgAnsi`); default "". */
  fgAnsi?(token: string): string;
  bgAnsi?(token: string): string;
}

interface ThemeOptions {
  name?: string;
  sourcePath?: string;
  sourceInfo?: unknown;
  appearance?: "dark" | "light";
  /** Pi's `TerminalColorMode`. */
  colorMode?: "truecolor" | "256color";
}

const same: Paint = (text) => text;
const PAINTS = new WeakMap<Theme, ThemePaint>();

/** Pi's thinking levels and the token of each one's border. */
const THINKING: Record<string, string> = {
  off: "thinkingOff",
  minimal: "thinkingMinimal",
  low: "thinkingLow",
  medium: "thinkingMedium",
  high: "thinkingHigh",
  xhigh: "thinkingXhigh",
  max: "thinkingMax",
};

export class Theme {
  readonly name?: string;
  readonly sourcePath?: string;
  sourceInfo?: unknown;
  readonly #appearance: "dark" | "light";
  readonly #mode: "truecolor" | "256color";

  /**
   * Pi's signature `(fgColors, bgColors, mode, options)`, so an extension's `new Theme(…)` loads;
   * the colour values are not read (mypi draws with its own palette). `paintedTheme` makes one that paints.
   */
  constructor(_fgColors?: unknown, _bgColors?: unknown, mode?: "truecolor" | "256color", options: ThemeOptions = {}) {
    if (options.name !== undefined) this.name = options.name;
    if (options.sourcePath !== undefined) this.sourcePath = options.sourcePath;
    if (options.sourceInfo !== undefined) this.sourceInfo = options.sourceInfo;
    this.#appearance = options.appearance ?? "dark";
    this.#mode = mode ?? options.colorMode ?? "256color";
  }

  /** The background the theme is made for. */
  get appearance(): "dark" | "light" {
    return this.#appearance;
  }

  /** Every token's colour: the terminal's default (mypi does not expose concrete colours). */
  get colors(): Readonly<Record<string, { kind: "default" }>> {
    return Object.freeze(
      Object.fromEntries([...THEME_FG_TOKENS, ...THEME_BG_TOKENS].map((t) => [t, { kind: "default" as const }])),
    );
  }

  style(
    text: string,
    options: {
      fg?: string;
      bg?: string;
      bold?: boolean;
      italic?: boolean;
      underline?: boolean;
      inverse?: boolean;
      strikethrough?: boolean;
    } = {},
  ): string {
    let out = text;
    for (const attribute of ["bold", "italic", "underline", "inverse", "strikethrough"] as const)
      if (options[attribute]) out = this[attribute](out);
    if (options.fg !== undefined) out = this.fg(options.fg, out);
    if (options.bg !== undefined) out = this.bg(options.bg, out);
    return out;
  }

  fg(color: string, text: string): string {
    return (paintOf(this).fg ?? ((_t: string, s: string) => s))(token(FG, color), text);
  }

  bg(color: string, text: string): string {
    return (paintOf(this).bg ?? ((_t: string, s: string) => s))(token(BG, color), text);
  }

  bold(text: string): string {
    return (paintOf(this).bold ?? same)(text);
  }

  italic(text: string): string {
    return (paintOf(this).italic ?? same)(text);
  }

  underline(text: string): string {
    return (paintOf(this).underline ?? same)(text);
  }

  inverse(text: string): string {
    return (paintOf(this).inverse ?? same)(text);
  }

  strikethrough(text: string): string {
    return (paintOf(this).strikethrough ?? same)(text);
  }

  getFgAnsi(color: string): string {
    return paintOf(this).fgAnsi?.(token(FG, color)) ?? (token(FG, color), "");
  }

  getBgAnsi(color: string): string {
    return paintOf(this).bgAnsi?.(token(BG, color)) ?? (token(BG, color), "");
  }

  getColorMode(): "truecolor" | "256color" {
    return this.#mode;
  }

  /** A function that paints a border in the level's colour (Pi returns a function, not a colour). */
  getThinkingBorderColor(level: string): (text: string) => string {
    const color = THINKING[level] ?? "thinkingOff";
    return (text) => this.fg(color, text);
  }

  getBashModeBorderColor(): (text: string) => string {
    return (text) => this.fg("bashMode", text);
  }
}

function paintOf(theme: Theme): ThemePaint {
  return PAINTS.get(theme) ?? {};
}

function token(known: ReadonlySet<string>, name: string): string {
  if (!known.has(name)) throw new Error(`Unknown theme color: ${String(name)}`);
  return name;
}

/** A `Theme` that colours with `paint` (the interactive mode's palette). */
export function paintedTheme(paint: ThemePaint, options: ThemeOptions = {}): Theme {
  const theme = new Theme(undefined, undefined, options.colorMode, options);
  PAINTS.set(theme, paint);
  return theme;
}

/** The headless theme: Pi's members, no colour (text returned as it is, escape getters ""). */
export const PLAIN_PI_THEME = Object.freeze(
  new Theme(undefined, undefined, "256color", { name: "plain", appearance: "dark" }),
) as Theme;
