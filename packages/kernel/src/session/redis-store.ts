/**
 * The Redis store (docs/sessions.md#stores): a session is one Redis list, `<prefix><id>`, whose
 * first element is the header line and every other element one entry line, and a lock key
 * `<prefix><id>:lock`. An element is pushed whole (Redis applies a push at once), so no line is
 * ever torn; what survives a Redis restart is what Redis persisted (docs/resume.md#redis).
 *
 * One writer: the lock key holds the writer's token with a lease (`PX`); appends are a script
 * that pushes only while the key holds that token, so a writer whose lease ran out while it was
 * stopped (and whose session another writer took) cannot interleave with its successor.
 *
 * The kernel depends on no Redis client: give it any client with the few calls of `RedisLike`
 * (ioredis has them).
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { readSessionLines, type LoadedSession } from "./load.ts";
import {
  DEFAULT_LOCK_LEASE_MS,
  SessionLockedError,
  type LockOwner,
  type SessionStore,
  type StoreAppend,
} from "./store.ts";

/** The calls the store makes (ioredis's signatures). */
export interface RedisLike {
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  get(key: string): Promise<string | null>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface RedisStoreOptions {
  client: RedisLike;
  /** The session's id: its list is `<prefix><id>`. */
  id: string;
  /** Default `mypi:session:`. */
  prefix?: string;
  /** How the store names itself (`redis://host:port/db`); the key is added after `#`. */
  url?: string;
  /** How long the lock lasts without renewal; default 30 s. */
  leaseMs?: number;
}

export const REDIS_SESSION_PREFIX = "mypi:session:";

/** KEYS: list, lock. ARGV: token, header, lines…  Pushes only for the lock's holder; the header first when the list is empty. */
const APPEND = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[2]) end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return 1`;
/** KEYS: lock, owner. ARGV: owner json, token, lease. Takes a free lock, or renews one's own. */
const LOCK = `
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
return 1`;
/** KEYS: lock, owner. ARGV: token. */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) return 1 end
return 0`;

export class RedisSessionStore implements SessionStore {
  readonly location: string;
  readonly file = undefined;
  readonly key: string;
  readonly #lockKey: string;
  readonly #client: RedisLike;
  readonly #leaseMs: number;
  readonly #token = randomBytes(12).toString("hex");
  #held = false;
  #lost: string | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RedisStoreOptions) {
    this.#client = options.client;
    this.key = `${options.prefix ?? REDIS_SESSION_PREFIX}${options.id}`;
    this.#lockKey = `${this.key}:lock`;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LOCK_LEASE_MS;
    this.location = `${options.url ?? "redis:"}#${this.key}`;
  }

  async load(): Promise<LoadedSession | undefined> {
    return readSessionLines(this.key, await this.#client.lrange(this.key, 0, -1));
  }

  async append(write: StoreAppend): Promise<void> {
    if (this.#lost) throw new Error(this.#lost);
    const pushed = await this.#client.eval(
      APPEND,
      2,
      this.key,
      this.#lockKey,
      this.#token,
      write.header,
      ...write.lines,
    );
    if (pushed !== 1) {
      this.#lost = `Lost the lock of session ${this.location}: its lease ran out while this process did not renew it, and another writer may have taken it. Nothing more is written here; reopen the session.`;
      throw new Error(this.#lost);
    }
  }

  async lock(): Promise<void> {
    if (this.#held) return;
    const answer = await this.#take();
    if (answer !== 1) {
      const owner = await this.#client.get(`${this.#lockKey}:owner`);
      throw new SessionLockedError(this.location, parseOwner(owner));
    }
    this.#held = true;
    this.#timer = setInterval(() => void this.#renew(), Math.max(10, Math.floor(this.#leaseMs / 3)));
    this.#timer.unref();
  }

  async unlock(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#held) return;
    this.#held = false;
    await this.#client.eval(UNLOCK, 2, this.#lockKey, `${this.#lockKey}:owner`, this.#token);
  }

  async holder(): Promise<LockOwner | undefined> {
    if ((await this.#client.get(this.#lockKey)) === null) return undefined;
    return (
      (parseOwner(await this.#client.get(`${this.#lockKey}:owner`)) as LockOwner | undefined) ?? {
        token: "",
        host: "?",
        pid: 0,
        expires: 0,
      }
    );
  }

  #take(): Promise<unknown> {
    const owner: LockOwner = { token: "", host: hostname(), pid: process.pid, expires: Date.now() + this.#leaseMs };
    return this.#client.eval(
      LOCK,
      2,
      this.#lockKey,
      `${this.#lockKey}:owner`,
      JSON.stringify(owner),
      this.#token,
      this.#leaseMs,
    );
  }

  async #renew(): Promise<void> {
    try {
      if ((await this.#take()) !== 1) {
        this.#lost = `Lost the lock of session ${this.location}: another writer holds it now. Nothing more is written here; reopen the session.`;
        clearInterval(this.#timer);
      }
    } catch {
      // Redis out of reach for a moment: the next tick tries again, within the lease.
    }
  }
}

function parseOwner(text: string | null): Partial<LockOwner> | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as Partial<LockOwner>;
  } catch {
    return undefined;
  }
}
