/**
 * A `session/prompt`'s content blocks as mypi's prompt: one text and its images.
 *
 * - `text` blocks are the text, in order;
 * - `image` blocks are the prompt's images (as RPC's `images`);
 * - `resource_link` blocks (a file the user mentioned) become `@path` in the text — relative to
 *   the workspace when inside it — so the model reads the file itself with its tools;
 * - `resource` blocks (embedded context: the editor sent the file's text, unsaved changes
 *   included) are appended as `<file name="path">…</file>`, Pi's form for `@file` arguments;
 *   an embedded image is an image; other binary content cannot enter a prompt and is refused.
 * - `audio` is refused: `initialize` says `promptCapabilities.audio: false`.
 */
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import type { ImageContent } from "@mypi/kernel";

interface PromptInput {
  text: string;
  images: ImageContent[];
}

export function promptInput(blocks: readonly ContentBlock[], cwd: string): PromptInput {
  const text: string[] = [];
  const files: string[] = [];
  const images: ImageContent[] = [];
  for (const [i, block] of blocks.entries()) {
    switch (block.type) {
      case "text":
        text.push(block.text);
        break;
      case "image":
        images.push(image(block.data, block.mimeType, `prompt[${i}]`));
        break;
      case "resource_link":
        text.push(`@${shownPath(block.uri, cwd)}`);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) files.push(`<file name="${shownPath(resource.uri, cwd)}">\n${resource.text}\n</file>`);
        else if (resource.mimeType?.startsWith("image/"))
          images.push(image(resource.blob, resource.mimeType, `prompt[${i}]`));
        else
          throw RequestError.invalidParams(
            { index: i },
            `prompt[${i}] embeds binary content (${resource.mimeType ?? "no mimeType"}) of ${resource.uri}: mypi passes text and images only; send the file as a resource_link instead`,
          );
        break;
      }
      case "audio":
        throw RequestError.invalidParams(
          { index: i },
          `prompt[${i}] is audio, which mypi does not take (promptCapabilities.audio is false)`,
        );
    }
  }
  const joined = joinWords(text);
  return { text: files.length === 0 ? joined : [joined, ...files].filter((part) => part !== "").join("\n\n"), images };
}

/** Editors split a prompt around mentions ("look at", link, "please"): the parts are joined by a space unless one already ends in white space. */
function joinWords(parts: readonly string[]): string {
  let out = "";
  for (const part of parts) out = out === "" || /\s$/.test(out) || /^\s/.test(part) ? out + part : `${out} ${part}`;
  return out;
}

function image(data: string, mimeType: string, at: string): ImageContent {
  if (!/^image\/[\w.+-]+$/.test(mimeType))
    throw RequestError.invalidParams(undefined, `${at} has mimeType ${JSON.stringify(mimeType)}, not an image/… type`);
  if (data === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(data))
    throw RequestError.invalidParams(undefined, `${at} has no base64 data`);
  return { type: "image", data, mimeType };
}

/** A `file://` URI as a path (relative to the workspace when inside it); any other URI as it is. */
function shownPath(uri: string, cwd: string): string {
  let path: string;
  try {
    path = uri.startsWith("file:") ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel) ? rel : path;
}
