/**
 * Client order ids (docs/API.md 8.2: unique per user over all of that user's orders ever) in bounded
 * memory. Three parts, on the main thread:
 *
 *   in flight   the keys of creates accepted and not yet committed (bounded by the pairs' FIFOs)
 *   window      the keys of the last `window` committed creates, oldest dropped first
 *   filter      a blocked Bloom filter over every key ever (a few bytes each, with a cap)
 *
 * A key in flight or in the window is a duplicate, decided at once. A key the filter has never
 * seen is new, decided at once (the common case: the hot path stays synchronous). Anything else
 * (the filter says "maybe") is decided by the database: the key's order row, if any, is readable
 * because a key leaves the window only after its create committed, and reads wait for every
 * committed batch's rows (DbWriter.applied). See DECISIONS.md "Client order ids in bounded memory".
 */

/** What `ClientIds.check` decides at once. */
export const CID_NEW = 0;
export const CID_DUPLICATE = 1;
/** The filter has seen a key like it: only the database can tell. */
export const CID_MAYBE = 2;

/** Settings (src/config.ts): `--client-id-window`, `--client-id-filter-mb`. */
export const DEFAULT_CLIENT_ID_WINDOW = 65_536;
export const DEFAULT_CLIENT_ID_FILTER_MB = 64;

/** A key's two 32-bit hashes, written by `hashKey` (one pair of numbers, no allocation). */
let hash1 = 0;
let hash2 = 0;

/** Murmur3's finaliser: every input bit reaches every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Two independent 32-bit hashes of (user, client order id) into `hash1`, `hash2`. */
function hashKey(user: number, id: string): void {
  let a = 0x811c9dc5 ^ user;
  let b = Math.imul(user, 0x9e3779b1) ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul((b << 5) | (b >>> 27), 0x27d4eb2d) ^ c;
  }
  hash1 = fmix(a ^ id.length);
  hash2 = fmix(b + Math.imul(id.length, 0x165667b1));
}

/** Bits per 64-byte block (one cache line): all of a key's bits are in one block. */
const BLOCK_BITS = 512;
const BLOCK_WORDS = BLOCK_BITS / 32;
/** Bits set per key, and bits given per key of capacity: about 0.1% false positives when full. */
const PROBES = 8;
const BITS_PER_KEY = 16;
/**
 * A key's bits in its block: the top 9 bits of each step of a 32-bit LCG started at the second
 * hash and stepped by the first, so they depend on all 64 bits of both. (Two 9-bit steps of the
 * second hash alone left 33 bits with the block: in a sparse filter, one look-up in about 16,000
 * met another key's exact bits.)
 */
const LCG_MUL = 0x2c1b3c6d;
const BIT_SHIFT = 32 - 9;

/**
 * A blocked Bloom filter (Putze, Sanders, Singler 2007): the first hash picks a 512-bit block, the
 * second the PROBES bits in it, so a look-up costs one cache miss however large the filter is.
 */
export class BlockedBloom {
  private readonly words: Int32Array;
  private readonly blockMask: number;
  /** Keys added (a key added twice counts twice). */
  count = 0;

  /** Room for about `capacity` keys (rounded up to a power of two of blocks). */
  constructor(readonly capacity: number) {
    let blocks = 1;
    while (blocks * BLOCK_BITS < capacity * BITS_PER_KEY) blocks *= 2;
    this.words = new Int32Array(blocks * BLOCK_WORDS);
    this.blockMask = blocks - 1;
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  /** Adds the key last hashed by `hashKey`. */
  addHashed(): void {
    const words = this.words;
    const base = (hash1 & this.blockMask) * BLOCK_WORDS;
    let s = hash2;
    for (let i = 0; i < PROBES; i++) {
      const bit = s >>> BIT_SHIFT;
      words[base + (bit >>> 5)] |= 1 << (bit & 31);
      s = (Math.imul(s, LCG_MUL) + hash1) | 0;
    }
    this.count++;
  }

  /** Whether the key last hashed by `hashKey` may have been added (false: certainly not). */
  hasHashed(): boolean {
    const words = this.words;
    const base = (hash1 & this.blockMask) * BLOCK_WORDS;
    let s = hash2;
    for (let i = 0; i < PROBES; i++) {
      const bit = s >>> BIT_SHIFT;
      if ((words[base + (bit >>> 5)] & (1 << (bit & 31))) === 0) return false;
      s = (Math.imul(s, LCG_MUL) + hash1) | 0;
    }
    return true;
  }

  add(user: number, id: string): void {
    hashKey(user, id);
    this.addHashed();
  }

  has(user: number, id: string): boolean {
    hashKey(user, id);
    return this.hasHashed();
  }
}

/** The smallest layer: 2^20 keys, 2 MiB. */
const FIRST_LAYER_KEYS = 1 << 20;

/**
 * A growing filter over every key ever (a scalable Bloom filter, Almeida et al. 2007): when the
 * newest layer is full, a layer of twice its capacity is added, while the total stays within
 * `maxBytes`; past that the newest layer takes every key and its false positives rise (the
 * database still decides exactly, only more often).
 */
export class ClientIdFilter {
  private readonly layers: BlockedBloom[] = [];
  private total = 0;

  /** `expected`: keys to make room for at once (those in the database at start). */
  constructor(
    readonly maxBytes: number,
    expected = 0,
  ) {
    let first = FIRST_LAYER_KEYS;
    while (first < expected * 2 && first * (BITS_PER_KEY / 8) * 2 <= maxBytes) first *= 2;
    this.push(first);
  }

  private push(capacity: number): void {
    const layer = new BlockedBloom(capacity);
    this.layers.push(layer);
    this.total += layer.bytes;
  }

  get bytes(): number {
    return this.total;
  }

  get count(): number {
    let n = 0;
    for (const l of this.layers) n += l.count;
    return n;
  }

  add(user: number, id: string): void {
    hashKey(user, id);
    this.addHashed();
  }

  /** Adds the key last hashed (by `has`), without hashing it again. */
  addHashed(): void {
    let last = this.layers[this.layers.length - 1];
    if (last.count >= last.capacity) {
      const next = last.capacity * 2;
      if (this.total + next * (BITS_PER_KEY / 8) <= this.maxBytes) {
        this.push(next);
        last = this.layers[this.layers.length - 1];
      }
    }
    last.addHashed();
  }

  has(user: number, id: string): boolean {
    hashKey(user, id);
    const layers = this.layers;
    for (let i = 0; i < layers.length; i++) if (layers[i].hasHashed()) return true;
    return false;
  }
}

/** The client order ids of the core (src/core/exchange.ts), as the header says. */
export class ClientIds {
  /** Keys of accepted creates whose batch has not committed: how many creates hold each. */
  private readonly inFlight = new Map<string, number>();
  /** The last `window` committed keys, as a set and as a ring in commit order. */
  private readonly recent = new Set<string>();
  private readonly ring: string[];
  private ringNext = 0;
  readonly filter: ClientIdFilter;
  /** Creates the filter sent to the database, and how many of those were duplicates. */
  dbChecks = 0;
  dbDuplicates = 0;
  /** The key `check` last hashed into the filter's look-up (`accepted` adds it without hashing again). */
  private hashed: string | null = null;

  constructor(
    readonly window = DEFAULT_CLIENT_ID_WINDOW,
    filterMb = DEFAULT_CLIENT_ID_FILTER_MB,
    expected = 0,
  ) {
    this.ring = new Array<string>(Math.max(window, 0)).fill("");
    this.filter = new ClientIdFilter(filterMb * 1024 * 1024, expected);
  }

  static key(user: number, id: string): string {
    return `${user}:${id}`;
  }

  /** CID_NEW, CID_DUPLICATE, or CID_MAYBE (ask the database; `checked` when it said "unused"). */
  check(user: number, id: string, key: string, checked: boolean): number {
    this.hashed = null;
    if (this.inFlight.has(key) || this.recent.has(key)) return CID_DUPLICATE;
    if (checked) return CID_NEW;
    const maybe = this.filter.has(user, id);
    this.hashed = key;
    return maybe ? CID_MAYBE : CID_NEW;
  }

  /** A create with this key was accepted: it holds the key until `committed` or `refused`. */
  accepted(user: number, id: string, key: string): void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    // Nothing hashes between a create's `check` and its `accepted` (one synchronous step).
    if (this.hashed === key) this.filter.addHashed();
    else this.filter.add(user, id);
    this.hashed = null;
  }

  /** The create was refused after all (nothing was created): the key is free again. */
  refused(key: string): void {
    this.release(key);
  }

  /** The create's rows committed: the key moves to the window, and the window's oldest drops out. */
  committed(key: string): void {
    this.release(key);
    if (this.ring.length === 0 || this.recent.has(key)) return;
    const i = this.ringNext;
    const old = this.ring[i];
    if (old !== "") this.recent.delete(old);
    this.ring[i] = key;
    this.recent.add(key);
    this.ringNext = i + 1 === this.ring.length ? 0 : i + 1;
  }

  /** Recovery: a stored key (only the filter keeps it; the database holds the row). */
  restore(user: number, id: string): void {
    this.hashed = null;
    this.filter.add(user, id);
  }

  /** Keys held in memory now (in flight and window). */
  get held(): number {
    return this.inFlight.size + this.recent.size;
  }

  private release(key: string): void {
    const n = this.inFlight.get(key);
    if (n === undefined) return;
    if (n > 1) this.inFlight.set(key, n - 1);
    else this.inFlight.delete(key);
  }
}
