/**
 * A table from positive integer ids to values, for the answers waiting on the order path
 * (src/entry/answers.ts): every request adds one id and removes it again a few milliseconds later.
 *
 * Why not a `Map`: V8 rebuilds a Map's hash table once its slots are used up by deletions, and the
 * table it leaves links to its successor (for iterators). The first table of a long-lived Map is
 * in the old generation, so its successor is kept alive by that link until a major collection,
 * and so is the next one, and every callback the tables held with everything the callbacks
 * reach: with the main heap's large old generation (scripts/node-flags.mjs) the request objects of
 * create-order were promoted by the megabyte and each scavenge copied them (BENCHMARKS.md,
 * "Changes kept"). Here a removed entry's slot is cleared and nothing points from one array to the
 * next.
 *
 * Open addressing with linear probing over a power-of-two capacity, at most half full; an id's
 * home slot is `id & mask` (the ids given out count up, so consecutive ones never collide).
 * Removal shifts the rest of the probe run back (no tombstones), so lookups stay short however
 * long the table lives. It never shrinks: its size follows the most ids ever held at once (16
 * bytes a slot, two slots an id at most).
 */
export class IdTable<T> {
  private keys = new Float64Array(64);
  private values: (T | undefined)[] = new Array(64).fill(undefined);
  private mask = 63;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `id` (> 0, not present) with `value`. */
  set(id: number, value: T): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    while (keys[i] !== 0) i = (i + 1) & mask;
    keys[i] = id;
    this.values[i] = value;
    this.count++;
  }

  /** The value of `id`, or undefined. */
  get(id: number): T | undefined {
    const i = this.slotOf(id);
    return i < 0 ? undefined : this.values[i];
  }

  /** Removes `id` and returns its value (undefined when absent). */
  take(id: number): T | undefined {
    const i = this.slotOf(id);
    if (i < 0) return undefined;
    const value = this.values[i];
    this.removeAt(i);
    return value;
  }

  /** Removes `id`; false when it was absent. */
  delete(id: number): boolean {
    const i = this.slotOf(id);
    if (i < 0) return false;
    this.removeAt(i);
    return true;
  }

  private slotOf(id: number): number {
    const keys = this.keys;
    const mask = this.mask;
    for (let i = id & mask; ; i = (i + 1) & mask) {
      const k = keys[i];
      if (k === id) return i;
      if (k === 0) return -1;
    }
  }

  /** Clears slot `i` and moves back the entries after it whose home is at or before it. */
  private removeAt(i: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    let hole = i;
    for (let j = (i + 1) & mask; keys[j] !== 0; j = (j + 1) & mask) {
      const home = keys[j] & mask;
      // The entry at j may fill the hole when its home is not in (hole, j] (cyclically).
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        keys[hole] = keys[j];
        values[hole] = values[j];
        hole = j;
      }
    }
    keys[hole] = 0;
    values[hole] = undefined;
    this.count--;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    const capacity = (this.mask + 1) * 2;
    this.keys = new Float64Array(capacity);
    this.values = new Array(capacity).fill(undefined);
    this.mask = capacity - 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) if (oldKeys[i] !== 0) this.set(oldKeys[i], oldValues[i] as T);
  }
}
