/**
 * A map from positive integer keys (order ids, prices in ticks; below 2^53) to non-negative int32
 * values (slots), in two typed arrays: open addressing with linear probing, at most half full,
 * deletion by backward shift (no tombstones, so probe chains never rot under churn).
 *
 * Invariant: a key 0 marks an empty cell; every stored key sits at or after its home cell with no
 * empty cell between home and it (wrapping around the power-of-two table).
 */

const EMPTY = 0;

export class IdIndex {
  private keys: Float64Array;
  private vals: Int32Array;
  private mask: number;
  /** 32 − log2(capacity): the hash keeps its top bits (Fibonacci hashing). */
  private shift: number;
  private count = 0;

  constructor(initialCapacity = 1024) {
    let cap = 16;
    while (cap < initialCapacity * 2) cap *= 2;
    this.keys = new Float64Array(cap);
    this.vals = new Int32Array(cap);
    this.mask = cap - 1;
    this.shift = 32 - Math.log2(cap);
  }

  get size(): number {
    return this.count;
  }

  /** The value stored for `key`, or -1. */
  get(key: number): number {
    const keys = this.keys;
    const mask = this.mask;
    let i = home(key, this.shift);
    for (;;) {
      const k = keys[i];
      if (k === key) return this.vals[i];
      if (k === EMPTY) return -1;
      i = (i + 1) & mask;
    }
  }

  /** Stores `value` for `key` (replacing any previous value). */
  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const keys = this.keys;
    const mask = this.mask;
    let i = home(key, this.shift);
    for (;;) {
      const k = keys[i];
      if (k === key) {
        this.vals[i] = value;
        return;
      }
      if (k === EMPTY) {
        keys[i] = key;
        this.vals[i] = value;
        this.count++;
        return;
      }
      i = (i + 1) & mask;
    }
  }

  /** Removes `key`; returns its value, or -1 when it was absent. */
  delete(key: number): number {
    const keys = this.keys;
    const vals = this.vals;
    const mask = this.mask;
    let i = home(key, this.shift);
    for (;;) {
      const k = keys[i];
      if (k === EMPTY) return -1;
      if (k === key) break;
      i = (i + 1) & mask;
    }
    const value = vals[i];
    // Backward shift: pull later members of the probe run into the hole when their home allows.
    let hole = i;
    let j = (i + 1) & mask;
    for (;;) {
      const k = keys[j];
      if (k === EMPTY) break;
      const h = home(k, this.shift);
      // Move k into the hole if its home is not within (hole, j] (cyclically).
      if ((j > hole && (h <= hole || h > j)) || (j < hole && h <= hole && h > j)) {
        keys[hole] = k;
        vals[hole] = vals[j];
        hole = j;
      }
      j = (j + 1) & mask;
    }
    keys[hole] = EMPTY;
    this.count--;
    return value;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldVals = this.vals;
    const cap = oldKeys.length * 2;
    this.keys = new Float64Array(cap);
    this.vals = new Int32Array(cap);
    this.mask = cap - 1;
    this.shift = 32 - Math.log2(cap);
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] !== EMPTY) this.set(oldKeys[i], oldVals[i]);
    }
  }
}

/**
 * Home cell of a key: its low 32 bits mixed with the high ones, times 2^32/φ, top bits kept.
 * (`key / 2^32` only extracts the high word of an integer key; it is not arithmetic on money.)
 */
function home(key: number, shift: number): number {
  const lo = key >>> 0;
  const hi = (key / 4294967296) >>> 0;
  return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> shift;
}
