/**
 * Users and API keys held in memory (loaded from the database at start, changed by the admin
 * interface and the config file). Users have a small integer id (the ledger's index) and a UUID.
 */
import { randomUUID } from "node:crypto";
import { generateSecret, HmacKey } from "./hmac.ts";

export interface ApiKey {
  readonly token: string;
  readonly userId: number;
  /** The secret, prepared as the HMAC key of the key's signatures. */
  readonly hmac: HmacKey;
  revoked: boolean;
}

/**
 * Replay guard: the last accepted nonce per API token (docs/API.md 3). Call `check` only after the
 * signature verified, and before validating the request, so that a correctly signed request
 * consumes its nonce even when it then fails validation. The guard itself is in memory; the server
 * persists each accepted nonce (the `nonces` table, written with the next group commit) and loads
 * them at start, so a replay is refused across restarts too.
 */
export class NonceGuard {
  readonly #last = new Map<string, bigint>();

  /**
   * True when the request may proceed: no nonce, or a nonce strictly greater than the last one
   * accepted for `token` (which it then becomes). `nonce` must be an integer (use the extractors).
   */
  check(token: string, nonce: bigint | number | undefined): boolean {
    if (nonce === undefined) return true;
    const value = typeof nonce === "bigint" ? nonce : BigInt(nonce);
    const last = this.#last.get(token);
    if (last !== undefined && value <= last) return false;
    this.#last.set(token, value);
    return true;
  }

  /** The last accepted nonce of a token, if any. */
  last(token: string): bigint | undefined {
    return this.#last.get(token);
  }

  /** Drop a token's state (on revocation). */
  forget(token: string): void {
    this.#last.delete(token);
  }

  get size(): number {
    return this.#last.size;
  }
}

export class Users {
  /** uid by user id. */
  readonly uids: string[] = [];
  private readonly byUid = new Map<string, number>();
  private readonly keys = new Map<string, ApiKey>();
  /** Each user's keys in the order they were added. */
  private readonly keysByUser = new Map<number, ApiKey[]>();
  readonly nonces = new NonceGuard();

  get count(): number {
    return this.uids.length;
  }

  add(id: number, uid: string): void {
    this.uids[id] = uid;
    this.byUid.set(uid, id);
  }

  /** A new user id (ids are dense: 0, 1, 2, ...). */
  nextId(): number {
    return this.uids.length;
  }

  idOf(uid: string): number | undefined {
    return this.byUid.get(uid.toLowerCase());
  }

  addKey(token: string, userId: number, secret: string, revoked: boolean): ApiKey {
    const key: ApiKey = { token, userId, hmac: new HmacKey(secret), revoked };
    this.keys.set(token, key);
    const list = this.keysByUser.get(userId);
    if (list === undefined) this.keysByUser.set(userId, [key]);
    else list.push(key);
    return key;
  }

  /** The active key for `token`, or undefined when unknown or revoked. */
  key(token: string): ApiKey | undefined {
    const k = this.keys.get(token);
    return k === undefined || k.revoked ? undefined : k;
  }

  /** Every key of a user, revoked ones included, in the order they were added. */
  keysOf(userId: number): readonly ApiKey[] {
    return this.keysByUser.get(userId) ?? [];
  }

  hasToken(token: string): boolean {
    return this.keys.has(token);
  }

  /** Called with the token of each key revoked (the trading sessions end theirs, docs/API.md 13). */
  readonly revokeListeners: ((token: string) => void)[] = [];

  /** Marks a key revoked; false when the token is unknown. */
  revoke(token: string): boolean {
    const k = this.keys.get(token);
    if (k === undefined) return false;
    k.revoked = true;
    for (const f of this.revokeListeners) f(token);
    return true;
  }

  static newUid(): string {
    return randomUUID();
  }

  /** A fresh API token / secret pair (random hex, 256 bits each). */
  static newKeyPair(): { apiToken: string; secretKey: string } {
    return { apiToken: generateSecret(), secretKey: generateSecret() };
  }
}
