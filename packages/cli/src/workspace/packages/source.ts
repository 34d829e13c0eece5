/**
 * Package sources, as `mypi install` takes them and settings' `packages` hold them:
 *
 *   npm:<name>[@<version or range>]   a package of the npm registry (pinned when the version is exact)
 *   npm:<path to a .tgz> · npm:file:<path>   a packed tarball or a folder, installed by npm
 *   git:<url>[@<ref>]                 a git repository (`git:github.com/a/b` means https); also
 *                                     https://, ssh://, file:// and git@host:path URLs
 *   <path>                            a local file or folder, used where it is (never copied)
 *
 * A source's identity says when two declarations are the same package: the npm name (or the
 * tarball's absolute path), the git URL without its ref, the local absolute path.
 *
 * A name, version, URL or ref starting with "-" is refused: npm and git would read it as an
 * option (`npm:-g`, `git:…@--orphan=x`). The installer passes `--` before operands as well.
 */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

export type PackageSource =
  | {
      kind: "npm" /** What npm installs: a registry spec, or an absolute tarball/folder path. */;
      spec: string;
      name?: string;
      pinned: boolean;
      identity: string;
      declaration: string;
    }
  | { kind: "git"; url: string; ref?: string; pinned: boolean; identity: string; declaration: string }
  | { kind: "local"; path: string; pinned: true; identity: string; declaration: string };

/**
 * Parse `text`; relative paths resolve against `base` (the shell's folder for `mypi install`, the
 * settings file's folder for a declaration). A string is the error.
 */
export function parseSource(text: string, base: string): PackageSource | string {
  const source = text.trim();
  if (source === "") return "an empty package source";
  if (source.startsWith("npm:")) return parseNpm(source.slice(4), base);
  if (source.startsWith("git:")) return parseGit(source.slice(4));
  if (/^(https?|ssh|git|file):\/\//.test(source) || /^[\w.-]+@[\w.-]+:/.test(source)) return parseGit(source);
  const path = absolute(source, base);
  return { kind: "local", path, pinned: true, identity: `local:${path}`, declaration: path };
}

function parseNpm(spec: string, base: string): PackageSource | string {
  if (spec === "") return "npm: needs a package name (npm:name or npm:name@version)";
  if (spec.startsWith("-")) return `npm:${spec}: a package name cannot start with "-" (npm would read it as an option)`;
  const fileSpec = spec.startsWith("file:") ? spec.slice(5) : isPathLike(spec) ? spec : undefined;
  if (fileSpec !== undefined) {
    const path = absolute(fileSpec, base);
    return { kind: "npm", spec: path, pinned: false, identity: `npm:${path}`, declaration: `npm:${path}` };
  }
  const at = spec.indexOf("@", 1); // a leading @ is the scope
  const name = at === -1 ? spec : spec.slice(0, at);
  const version = at === -1 ? undefined : spec.slice(at + 1);
  if (!/^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(name)) {
    return `npm:${spec}: "${name}" is not an npm package name`;
  }
  if (version === "") return `npm:${spec}: give a version after @, or leave the @ out`;
  if (version?.startsWith("-")) return `npm:${spec}: a version cannot start with "-"`;
  const pinned = version !== undefined && /^\d+\.\d+\.\d+(-[\w.-]+)?(\+[\w.-]+)?$/.test(version);
  return { kind: "npm", spec, name, pinned, identity: `npm:${name}`, declaration: `npm:${spec}` };
}

function parseGit(rest: string): PackageSource | string {
  if (rest === "") return "git: needs a repository URL (git:github.com/owner/repo[@ref])";
  if (rest.startsWith("-"))
    return `git:${rest}: a repository URL cannot start with "-" (git would read it as an option)`;
  // The ref follows the last "@" that comes after the path started (not the user@ of ssh URLs).
  const pathStart = Math.max(rest.lastIndexOf("/"), rest.indexOf(":", rest.indexOf("@") + 1));
  const at = rest.lastIndexOf("@");
  const hasRef = at > pathStart && at > 0;
  let url = hasRef ? rest.slice(0, at) : rest;
  const ref = hasRef ? rest.slice(at + 1) : undefined;
  if (ref === "") return `git:${rest}: give a ref after @, or leave the @ out`;
  if (ref?.startsWith("-"))
    return `git:${rest}: a ref cannot start with "-" (git would read it as an option); give a branch, tag or commit`;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^[\w.-]+@[\w.-]+:/.test(url)) url = `https://${url}`;
  const pinned = ref !== undefined && /^[0-9a-f]{40}$/i.test(ref);
  return {
    kind: "git",
    url,
    ...(ref !== undefined && { ref }),
    pinned,
    identity: `git:${url.replace(/\.git$/, "")}`,
    declaration: `git:${url}${ref !== undefined ? `@${ref}` : ""}`,
  };
}

/** Where an npm or git source is installed under a scope's package folder; a local one is not. */
export function installDir(packagesDir: string, source: PackageSource): string | undefined {
  if (source.kind === "local") return undefined;
  return join(packagesDir, source.kind, slug(source.identity.slice(source.kind.length + 1)));
}

/** A readable folder name that two identities never share (the hash tells apart what the cleaning merged). */
function slug(identity: string): string {
  const readable = identity
    .replace(/^[a-z]+:\/\//i, "")
    .replace(/[^\w.-]+/g, "_")
    .replace(/^[_.]+/, "")
    .slice(-60);
  return `${readable}-${createHash("sha256").update(identity).digest("hex").slice(0, 10)}`;
}

function isPathLike(spec: string): boolean {
  return (
    spec.startsWith("/") ||
    spec.startsWith("./") ||
    spec.startsWith("../") ||
    spec.startsWith("~/") ||
    /\.(tgz|tar\.gz)$/.test(spec)
  );
}

function absolute(path: string, base: string): string {
  if (path === "~" || path.startsWith("~/")) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? resolve(path) : resolve(base, path);
}
