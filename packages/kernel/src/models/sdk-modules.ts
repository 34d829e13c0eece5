/**
 * The model SDKs, imported by the first stream of a client that needs one and shared by all
 * clients. The published kernel carries each SDK bundled into a few files (dist/vendor/<name>/,
 * made at build time by scripts/vendor-sdks.mjs): Node resolves and links those instead of the
 * package's hundreds of modules, which were most of a one-turn run's start. The sources (tests,
 * the dev bin) have no vendor folder and import the package itself, as does a build without it.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

type OpenAIModule = typeof import("openai");
type AnthropicModule = typeof import("@anthropic-ai/sdk");

let openai: Promise<OpenAIModule> | undefined;
let anthropic: Promise<AnthropicModule> | undefined;

/** The bundle of `name` beside the compiled kernel, when there is one. */
function vendored(name: string): string | undefined {
  const url = new URL(`../vendor/${name}/index.js`, import.meta.url);
  return url.protocol === "file:" && existsSync(fileURLToPath(url)) ? url.href : undefined;
}

export function loadOpenAI(): Promise<OpenAIModule> {
  if (openai) return openai;
  const bundle = vendored("openai");
  openai = bundle ? import(bundle) : import("openai");
  return openai;
}

export function loadAnthropic(): Promise<AnthropicModule> {
  if (anthropic) return anthropic;
  const bundle = vendored("anthropic");
  anthropic = bundle ? import(bundle) : import("@anthropic-ai/sdk");
  return anthropic;
}
