/**
 * Where OAuth state for HTTP servers is kept: `$MYPI_HOME/mcp-oauth/`, a folder only its owner
 * may enter (0700), one file per server and URL (0600), written whole (a temporary file renamed
 * over the old one), so a crash never leaves half a token. The file holds what the SDK's auth
 * flow hands over to be kept: the client registration, the tokens, the discovery results. The
 * key includes a hash of the URL: a server whose `url` changed starts from nothing rather than
 * presenting its tokens to another endpoint.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface StoredAuth {
  /** The server's URL the state belongs to (for a reader of the file). */
  url?: string;
  clientInformation?: Record<string, unknown> & { client_id: string };
  tokens?: Record<string, unknown> & { access_token: string; token_type: string; refresh_token?: string };
  discoveryState?: Record<string, unknown> & { authorizationServerUrl: string };
}

export class OAuthStore {
  readonly dir: string;

  /** `home`: `$MYPI_HOME`; the files go in its `mcp-oauth` folder. */
  constructor(home: string) {
    this.dir = join(home, "mcp-oauth");
  }

  fileFor(server: string, url: string): string {
    const hash = createHash("sha256").update(url).digest("hex").slice(0, 12);
    return join(this.dir, `${server.replace(/[^a-zA-Z0-9_.-]/g, "_")}-${hash}.json`);
  }

  /**
   * What is kept for the server, `{}` when nothing is. A file that cannot be parsed counts as
   * nothing (the next login rewrites it): it can only lead to a new login, never to a wrong token.
   */
  read(server: string, url: string): StoredAuth {
    try {
      const json: unknown = JSON.parse(readFileSync(this.fileFor(server, url), "utf8"));
      return typeof json === "object" && json !== null && !Array.isArray(json) ? (json as StoredAuth) : {};
    } catch {
      return {};
    }
  }

  /** Replace what is kept; the folder is made (or narrowed to) 0700, the file is 0600. */
  write(server: string, url: string, data: StoredAuth): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const file = this.fileFor(server, url);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ ...data, url }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, file);
  }

  /** Forget the server's state (a logout). Returns whether there was any. */
  remove(server: string, url: string): boolean {
    const file = this.fileFor(server, url);
    try {
      readFileSync(file);
    } catch {
      return false;
    }
    rmSync(file, { force: true });
    return true;
  }
}
