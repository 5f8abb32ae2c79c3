/**
 * Listen keys (docs/API.md 10): a browser cannot set `Authorization` / `X-Signature` on a WebSocket
 * upgrade, so a signed REST call hands out a random key that authenticates the upgrade instead
 * (`/stream?streams=...&listenKey=K`).
 *
 *   POST /trade/listen-key         {}                 → a new key, valid KEY_TTL_MS
 *   POST /trade/listen-key         {"listenKey": K}   → K extended to now + KEY_TTL_MS
 *   POST /trade/listen-key/close   {"listenKey": K}   → K ends at once
 *
 * Keys live in memory only (a restart ends them). Expired keys are dropped lazily: on lookup, and
 * by a sweep of the whole map when a key is created (at most once per SWEEP_EVERY_MS).
 */
import { randomBytes } from "node:crypto";
import { Code } from "../errors/catalogue.ts";
import { LISTEN_KEY_RE } from "../wire/request-schemas.ts";

/** A key is valid this long after its creation or last extension (docs/API.md 10: 60 minutes). */
export const KEY_TTL_MS = 60 * 60 * 1000;
/** Live keys per user; creating one more drops that user's oldest (a leaky client cannot grow the map). */
export const MAX_KEYS_PER_USER = 16;
const SWEEP_EVERY_MS = 60 * 1000;
/** How often expired keys are looked for, so that their streams end within this time. */
const EXPIRY_CHECK_MS = 5 * 1000;
const KEY_RE = LISTEN_KEY_RE;

interface Entry {
  readonly userId: number;
  /** The API token whose signed call made the key: revoking that token ends it (docs/API.md 1.2). */
  readonly token: string;
  expiresAt: number;
}

/** What a route answers: the status-free result code (0 = ok) and the answer body. */
export type ListenKeyAnswer = { code: 0; body: string } | { code: number; body?: undefined };

export class ListenKeys {
  readonly #keys = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  #lastSweep = 0;
  #timer: NodeJS.Timeout | null = null;
  /** Called with each key that ends (closed or expired), e.g. to end the streams it opened. */
  onEnd: ((key: string) => void) | null = null;

  constructor(ttlMs: number = KEY_TTL_MS, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The user a live key belongs to, or undefined (unknown, closed or expired). */
  userOf(key: string): number | undefined {
    const e = this.#keys.get(key);
    if (e === undefined) return undefined;
    if (e.expiresAt <= this.#now()) {
      this.#keys.delete(key);
      this.onEnd?.(key);
      return undefined;
    }
    return e.userId;
  }

  create(userId: number, token = ""): { listenKey: string; expiresAt: number } {
    const now = this.#now();
    if (now - this.#lastSweep >= SWEEP_EVERY_MS) this.#sweep(now);
    // Map iteration is insertion order, so the first of the user's keys found is its oldest.
    let count = 0;
    let oldest: string | undefined;
    for (const [k, e] of this.#keys) {
      if (e.userId !== userId) continue;
      oldest ??= k;
      count++;
    }
    if (count >= MAX_KEYS_PER_USER && oldest !== undefined) {
      this.#keys.delete(oldest);
      this.onEnd?.(oldest);
    }
    const listenKey = randomBytes(32).toString("hex");
    const expiresAt = now + this.#ttlMs;
    this.#keys.set(listenKey, { userId, token, expiresAt });
    return { listenKey, expiresAt };
  }

  /** Extends a live key of `userId`: its new expiry, or null when it is unknown, expired or another user's. */
  extend(userId: number, key: string): number | null {
    if (this.userOf(key) !== userId) return null;
    const e = this.#keys.get(key)!;
    e.expiresAt = this.#now() + this.#ttlMs;
    return e.expiresAt;
  }

  /** Ends a live key of `userId`; false when it is unknown, expired or another user's. */
  close(userId: number, key: string): boolean {
    if (this.userOf(key) !== userId) return false;
    this.#keys.delete(key);
    this.onEnd?.(key);
    return true;
  }

  /** Ends every key made with the API token `token` (its revocation, docs/API.md 1.2). */
  endToken(token: string): void {
    for (const [k, e] of this.#keys) {
      if (e.token !== token) continue;
      this.#keys.delete(k);
      this.onEnd?.(k);
    }
  }

  /**
   * Starts looking for expired keys every EXPIRY_CHECK_MS (or `everyMs`), calling `onEnd` for each;
   * only needed while streams opened by keys may be open. `stop` ends it.
   */
  watch(everyMs = EXPIRY_CHECK_MS): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => this.#sweep(this.#now()), everyMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  get size(): number {
    return this.#keys.size;
  }

  #sweep(now: number): void {
    this.#lastSweep = now;
    for (const [k, e] of this.#keys) {
      if (e.expiresAt > now) continue;
      this.#keys.delete(k);
      this.onEnd?.(k);
    }
  }

  // ---------------------------------------------------------------- route handlers

  /** `POST /trade/listen-key` after authentication: `{}` creates, `{"listenKey"}` extends. */
  handleCreateOrExtend(userId: number, token: string, body: Record<string, unknown>): ListenKeyAnswer {
    if (body.listenKey === undefined) {
      return { code: 0, body: JSON.stringify(this.create(userId, token)) };
    }
    const key = parseKey(body.listenKey);
    if (typeof key === "number") return { code: key };
    const expiresAt = this.extend(userId, key);
    if (expiresAt === null) return { code: Code.LISTEN_KEY_UNKNOWN };
    return { code: 0, body: JSON.stringify({ listenKey: key, expiresAt }) };
  }

  /** `POST /trade/listen-key/close` after authentication. */
  handleClose(userId: number, body: Record<string, unknown>): ListenKeyAnswer {
    const key = parseKey(body.listenKey);
    if (typeof key === "number") return { code: key };
    if (!this.close(userId, key)) return { code: Code.LISTEN_KEY_UNKNOWN };
    return { code: 0, body: "[]" };
  }
}

function parseKey(value: unknown): string | number {
  if (value === undefined || value === null) return Code.LISTEN_KEY_REQUIRED;
  if (typeof value !== "string" || !KEY_RE.test(value)) return Code.LISTEN_KEY_UNKNOWN;
  return value;
}

/**
 * The `listenKey` of a raw stream query string: undefined when absent, "" when present but empty
 * or given twice (the upgrade then answers 401).
 */
export function listenKeyFromQuery(query: string): string | undefined {
  if (!query.includes("listenKey")) return undefined;
  let found: string | undefined;
  for (const part of query.split("&")) {
    if (!part.startsWith("listenKey=") && part !== "listenKey") continue;
    if (found !== undefined) return "";
    found = part.slice(10);
  }
  return found;
}
