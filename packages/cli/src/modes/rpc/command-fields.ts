/**
 * Reading a command's fields. A field of the wrong shape throws `CommandError`, whose message
 * becomes the response's `error` (`success:false`); nothing runs.
 */
import type { ImageContent } from "@mypi/kernel";
import type { Command } from "./state.ts";

/** Thrown by a command handler: becomes `success:false` with this message. */
export class CommandError extends Error {}

export function requireString(c: Command, field: string): string {
  const value = c[field];
  if (typeof value !== "string") throw new CommandError(`"${c.type}" needs a string "${field}".`);
  return value;
}

export function optionalString(c: Command, field: string): string | undefined {
  const value = c[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new CommandError(`"${field}" must be a string.`);
  return value;
}

/**
 * A prompt's `images`: absent, or a list of `{type: "image", data, mimeType}` with base64 `data`
 * and an `image/…` type. Copied field by field, so nothing else a client put in them goes on.
 */
export function readImages(value: unknown): ImageContent[] | undefined {
  if (value === undefined) return undefined;
  const shape = '"images" must be a list of {"type":"image","data":"<base64>","mimeType":"image/<kind>"}';
  if (!Array.isArray(value)) throw new CommandError(`${shape}.`);
  return value.map((image: unknown, i) => {
    const at = `${shape}; images[${i}]`;
    if (typeof image !== "object" || image === null || Array.isArray(image))
      throw new CommandError(`${at} is not an object.`);
    const { type, data, mimeType } = image as Record<string, unknown>;
    if (type !== "image") throw new CommandError(`${at} has type ${JSON.stringify(type) ?? "undefined"}.`);
    if (typeof mimeType !== "string" || !/^image\/[\w.+-]+$/.test(mimeType))
      throw new CommandError(`${at} has no image/… mimeType.`);
    if (typeof data !== "string" || data === "" || !BASE64.test(data))
      throw new CommandError(`${at} has no base64 data.`);
    return { type: "image", data, mimeType };
  });
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
