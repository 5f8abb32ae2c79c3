/**
 * Users and API keys held in memory (loaded from the database at start, changed by the admin
 * interface and the config file). Users have a small integer id (the ledger's index) and a UUID.
 */
import { randomUUID } from "node:crypto";
import { generateSecret, HmacKey, NonceGuard } from "./auth.ts";

export interface ApiKey {
  readonly token: string;
  readonly userId: number;
  /** The secret, prepared as the HMAC key of the key's signatures. */
  readonly hmac: HmacKey;
  revoked: boolean;
}

export class Users {
  /** uid by user id. */
  readonly uids: string[] = [];
  private readonly byUid = new Map<string, number>();
  private readonly keys = new Map<string, ApiKey>();
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
    return key;
  }

  /** The active key for `token`, or undefined when unknown or revoked. */
  key(token: string): ApiKey | undefined {
    const k = this.keys.get(token);
    return k === undefined || k.revoked ? undefined : k;
  }

  hasToken(token: string): boolean {
    return this.keys.has(token);
  }

  /** Marks a key revoked; false when the token is unknown. */
  revoke(token: string): boolean {
    const k = this.keys.get(token);
    if (k === undefined) return false;
    k.revoked = true;
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
