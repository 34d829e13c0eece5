/**
 * Thinking levels: which a model supports, and how a requested level is clamped to them — as Pi
 * 1.6 does, so that `--thinking`, `/thinking`, RPC `set_thinking_level` and
 * `pi.setThinkingLevel` end on the same level in both.
 *
 * A model that cannot reason supports `off` only. A reasoning model supports what its entry lists
 * (`thinkingLevels`), else `off` to `high`: `xhigh` only where the model lists it. A level it
 * does not support becomes the nearest supported one above it, else below it; Pi's `max` (which
 * mypi's clients do not have) asks for the most there is; a word that is no level becomes the
 * lowest supported level (Pi answers `set_thinking_level` with "bogus" that way too).
 */
import type { ThinkingLevel } from "@mypi/kernel";

export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
/** What may be asked for: the levels, and Pi's `max` above them. */
const REQUESTABLE = [...THINKING_LEVELS, "max"] as const;
/** Without a list, a reasoning model supports these. */
const DEFAULT_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high"];
/** Pi's default when nothing chose a level. */
export const DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium";

/** What a model says about reasoning (a registry entry; `undefined`: a model mypi knows nothing of). */
interface ReasoningSupport {
  reasoning: boolean;
  thinkingLevels?: readonly ThinkingLevel[];
}

export function isThinkingLevel(value: unknown): value is ThinkingLevel {
  return typeof value === "string" && (THINKING_LEVELS as readonly string[]).includes(value);
}

/** `off`…`xhigh`, or Pi's `max`: what the command line and RPC accept. */
export function isRequestableLevel(value: unknown): value is ThinkingLevel | "max" {
  return typeof value === "string" && (REQUESTABLE as readonly string[]).includes(value);
}

export function supportedThinkingLevels(model: ReasoningSupport | undefined): ThinkingLevel[] {
  if (!model?.reasoning) return ["off"];
  const listed = model.thinkingLevels?.length ? model.thinkingLevels : DEFAULT_LEVELS;
  return THINKING_LEVELS.filter((level) => listed.includes(level));
}

export function clampThinkingLevel(model: ReasoningSupport | undefined, requested: string): ThinkingLevel {
  const supported = supportedThinkingLevels(model);
  if ((supported as readonly string[]).includes(requested)) return requested as ThinkingLevel;
  const at = (REQUESTABLE as readonly string[]).indexOf(requested);
  if (at === -1) return supported[0]!;
  for (let i = at + 1; i < REQUESTABLE.length; i++)
    if ((supported as readonly string[]).includes(REQUESTABLE[i]!)) return REQUESTABLE[i] as ThinkingLevel;
  for (let i = at - 1; i >= 0; i--)
    if ((supported as readonly string[]).includes(REQUESTABLE[i]!)) return REQUESTABLE[i] as ThinkingLevel;
  return supported[0]!;
}

/** The level after `current` among the supported ones, wrapping; `undefined` when the model cannot reason. */
export function nextThinkingLevel(
  model: ReasoningSupport | undefined,
  current: ThinkingLevel,
): ThinkingLevel | undefined {
  const supported = supportedThinkingLevels(model);
  if (supported.length <= 1) return undefined;
  return supported[(supported.indexOf(current) + 1) % supported.length];
}

/**
 * Pi's `thinkingLevelMap` (level → the value sent, `null`: unsupported) as the list of supported
 * levels: a level the map leaves out is supported up to `high`; `xhigh` only when it is mapped.
 */
export function levelsFromPiMap(map: Readonly<Record<string, string | null | undefined>>): ThinkingLevel[] {
  return THINKING_LEVELS.filter((level) => (level === "xhigh" ? typeof map[level] === "string" : map[level] !== null));
}
