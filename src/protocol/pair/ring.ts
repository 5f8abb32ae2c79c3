/// <reference lib="es2024.sharedmemory" />
/**
 * Single-producer / single-consumer ring of fixed-size binary records in a SharedArrayBuffer.
 * One thread only writes (producer), one thread only reads (consumer); each side keeps its own
 * `SpscRing` object over the same buffer (`create` on one side, `attach` on the other).
 *
 * Buffer layout (bytes):
 *
 *   0    SLOTS, SLOT_WORDS         geometry, written once by `create`
 *   64   TAIL                      written by the producer only
 *   128  HEAD                      written by the consumer only
 *   192  CONSUMER_SLEEPING         raised by the consumer, lowered by either; the consumer's futex word
 *   256  PRODUCER_SLEEPING         raised by the producer, lowered by either; the producer's futex word
 *   320  slots × slotWords Float64 words: the records
 *
 * The written words are 64 bytes apart, so no two share a cache line whatever the buffer's
 * alignment (LMAX Disruptor pads its `Sequence` the same way): the producer publishing does not
 * invalidate the line the consumer releases on, and neither touches a sleeping flag's line.
 *
 * Invariant. HEAD and TAIL are free-running 32-bit counters (they wrap from 2^31 - 1 to -2^31 and
 * from -1 to 0); a record's slot is `index & mask`, `slots` being a power of two. All distances are
 * taken as `(a - b) | 0`, which is exact across wraparound because a distance never exceeds
 * `slots` <= 2^30. Then:
 *   empty  when TAIL === HEAD,
 *   full   when TAIL - HEAD === slots (counting slots reserved but not yet published),
 *   0 <= TAIL - HEAD <= slots always;
 *   slots [HEAD, TAIL) hold published records the consumer may read; the rest belong to the producer.
 *
 * Sleeping (no lost wakeups). A side that finds nothing to do may sleep on its own flag word
 * (CONSUMER_SLEEPING waits for TAIL to move, PRODUCER_SLEEPING for HEAD):
 *   sleeper: store FLAG = 1; re-read the counter; if still nothing to do, wait(FLAG, 1);
 *            store FLAG = 0 once awake.
 *   waker:   store the counter (publish / release); if load(FLAG) = 1 and
 *            compareExchange(FLAG, 1, 0) succeeds, notify(FLAG).
 * The stores and loads are sequentially consistent, so either the sleeper's re-read sees the new
 * counter or the waker's load sees the flag. The sleeper waits on the flag itself, not on the
 * counter: a waker that clears the flag before the sleeper reaches `wait` makes that `wait` return
 * at once (the word is no longer 1), so a notify can never be lost. (Waiting on TAIL instead loses
 * wakeups: a waker late to check the flag can clear a flag raised for a later sleep whose re-read
 * already saw that waker's records, and the sleep then waits for a TAIL change nobody announces.)
 * A cleared-then-reraised flag can cost one spurious wake, after which the caller loops. Worker
 * threads sleep with `Atomics.wait` (`waitForData`, `waitForSpace`); the main thread must never
 * block and uses `Atomics.waitAsync` (`*Async`).
 *
 * Nothing here allocates per record: the producer gets a slot offset into `f64`, writes the
 * words, and publishes; the consumer reads at `peekOffset(i)` and releases.
 */

/** Int32 words per 64-byte cache line. */
const LINE = 16;

/** Header word: slot count (a power of two). */
export const SLOTS = 0;
/** Header word: Float64 words per slot. */
export const SLOT_WORDS = 1;
/** Header word: producer index, one past the last published record. */
export const TAIL = LINE;
/** Header word: consumer index, the oldest record not yet released. */
export const HEAD = 2 * LINE;
/** Header word: 1 while the consumer is (about to be) asleep waiting for TAIL to move; it waits on this word. */
export const CONSUMER_SLEEPING = 3 * LINE;
/** Header word: 1 while the producer is (about to be) asleep waiting for HEAD to move; it waits on this word. */
export const PRODUCER_SLEEPING = 4 * LINE;
/** Int32 words of header; the records start on the next cache line. */
export const HEADER_INTS = 5 * LINE;
export const HEADER_BYTES = HEADER_INTS * 4;
/** Largest slot count: keeps every distance between the counters below 2^31. */
export const MAX_SLOTS = 2 ** 30;

export class SpscRing {
  readonly sab: SharedArrayBuffer;
  /** Header view; the words are named by the constants above. */
  readonly i32: Int32Array;
  /** The records: slot k occupies words [k * slotWords, (k + 1) * slotWords). */
  readonly f64: Float64Array;
  readonly slots: number;
  readonly slotWords: number;
  readonly mask: number;

  // Producer-side state (only the producer's object uses it).
  /** TAIL as last stored by us: only the producer writes TAIL, so no load is needed. */
  private tail: number;
  /** Slots handed out by tryReserve and not yet published. */
  private reserved = 0;
  /** A possibly stale HEAD; reloaded only when the ring looks full. */
  private headSeen: number;

  // Consumer-side state.
  /** HEAD as last stored by us: only the consumer writes HEAD. */
  private head: number;

  /** Bytes of SharedArrayBuffer a ring of this geometry needs. */
  static byteLength(slots: number, slotWords: number): number {
    return HEADER_BYTES + slots * slotWords * 8;
  }

  /**
   * Allocates a ring. `firstIndex` is a test hook: it starts both counters there (e.g. 2^32 - 8)
   * so tests can drive them across the 32-bit wraparound.
   */
  static create(slots: number, slotWords: number, firstIndex = 0): SpscRing {
    checkGeometry(slots, slotWords);
    const sab = new SharedArrayBuffer(SpscRing.byteLength(slots, slotWords));
    const i32 = new Int32Array(sab, 0, HEADER_INTS);
    i32[SLOTS] = slots;
    i32[SLOT_WORDS] = slotWords;
    i32[TAIL] = firstIndex | 0;
    i32[HEAD] = firstIndex | 0;
    // Plain writes are enough: the buffer reaches the other thread through postMessage/workerData,
    // which orders everything written before it.
    return new SpscRing(sab, slots, slotWords);
  }

  /** The other side's view of a ring made by `create`; the geometry comes from the header. */
  static attach(sab: SharedArrayBuffer): SpscRing {
    const i32 = new Int32Array(sab, 0, HEADER_INTS);
    return new SpscRing(sab, i32[SLOTS], i32[SLOT_WORDS]);
  }

  constructor(sab: SharedArrayBuffer, slots: number, slotWords: number) {
    checkGeometry(slots, slotWords);
    if (sab.byteLength < SpscRing.byteLength(slots, slotWords)) {
      throw new RangeError(`ring buffer of ${sab.byteLength} bytes is too small for ${slots} × ${slotWords}`);
    }
    this.sab = sab;
    this.i32 = new Int32Array(sab, 0, HEADER_INTS);
    if (this.i32[SLOTS] !== slots || this.i32[SLOT_WORDS] !== slotWords) {
      throw new RangeError("ring header does not match the requested geometry");
    }
    this.f64 = new Float64Array(sab, HEADER_BYTES, slots * slotWords);
    this.slots = slots;
    this.slotWords = slotWords;
    this.mask = slots - 1;
    this.tail = Atomics.load(this.i32, TAIL);
    this.headSeen = Atomics.load(this.i32, HEAD);
    this.head = this.headSeen;
  }

  // ------------------------------------------------------------------------------ producer

  /**
   * Reserves the next free slot and returns its offset in `f64`, or -1 when the ring is full.
   * Successive calls reserve successive slots; none is visible to the consumer before `publish`.
   */
  tryReserve(): number {
    const index = (this.tail + this.reserved) | 0;
    if (((index - this.headSeen) | 0) >= this.slots) {
      this.headSeen = Atomics.load(this.i32, HEAD);
      if (((index - this.headSeen) | 0) >= this.slots) return -1;
    }
    this.reserved++;
    return (index & this.mask) * this.slotWords;
  }

  /** Slots reserved and not yet published. */
  pending(): number {
    return this.reserved;
  }

  /** Publishes the oldest `n` reserved slots (all of them by default) and wakes a sleeping consumer. */
  publish(n: number = this.reserved): void {
    if (n <= 0) return;
    if (n > this.reserved) throw new RangeError(`publish(${n}) with only ${this.reserved} reserved`);
    this.reserved -= n;
    this.tail = (this.tail + n) | 0;
    const h = this.i32;
    // A consumer that loads this TAIL also sees every record word we wrote before this store.
    Atomics.store(h, TAIL, this.tail);
    if (
      Atomics.load(h, CONSUMER_SLEEPING) === 1 &&
      Atomics.compareExchange(h, CONSUMER_SLEEPING, 1, 0) === 1
    ) {
      // Wakes a consumer waiting on its flag; one not yet in wait finds the flag 0 and does not sleep.
      Atomics.notify(h, CONSUMER_SLEEPING, 1);
    }
  }

  /** Free slots as seen now (reserved ones count as used). */
  freeSlots(): number {
    return this.slots - ((this.tail + this.reserved - Atomics.load(this.i32, HEAD)) | 0);
  }

  /**
   * Producer, worker threads only (blocks): spins `spins` times, then sleeps until the consumer
   * releases a slot or `timeoutMs` passes. Returns `freeSlots()`.
   */
  waitForSpace(spins: number, timeoutMs = Number.POSITIVE_INFINITY): number {
    const h = this.i32;
    for (let i = 0; i < spins; i++) {
      if (this.freeSlots() > 0) return this.freeSlots();
    }
    this.checkCanWaitForSpace();
    // Raised before the re-read below: a release that the re-read misses will see the flag.
    Atomics.store(h, PRODUCER_SLEEPING, 1);
    const head = Atomics.load(h, HEAD);
    if (((this.tail + this.reserved - head) | 0) >= this.slots) {
      Atomics.wait(h, PRODUCER_SLEEPING, 1, timeoutMs);
    }
    // We are awake: the consumer's next release need not notify.
    Atomics.store(h, PRODUCER_SLEEPING, 0);
    return this.freeSlots();
  }

  /**
   * Producer on the main thread (never blocks): resolves with `freeSlots()` once the consumer
   * releases a slot, after `timeoutMs`, or on wakeProducer.
   */
  async waitForSpaceAsync(timeoutMs = Number.POSITIVE_INFINITY): Promise<number> {
    const h = this.i32;
    this.checkCanWaitForSpace();
    // Raised before the re-read below: a release that the re-read misses will see the flag.
    Atomics.store(h, PRODUCER_SLEEPING, 1);
    const head = Atomics.load(h, HEAD);
    if (((this.tail + this.reserved - head) | 0) >= this.slots) {
      const r = Atomics.waitAsync(h, PRODUCER_SLEEPING, 1, timeoutMs);
      if (r.async) await r.value;
    }
    // We are awake: the consumer's next release need not notify.
    Atomics.store(h, PRODUCER_SLEEPING, 0);
    return this.freeSlots();
  }

  /** Wakes a producer sleeping for space without releasing anything (shutdown). */
  wakeProducer(): void {
    // A producer between raising its flag and waiting sees 0 and does not sleep; one asleep wakes.
    Atomics.store(this.i32, PRODUCER_SLEEPING, 0);
    Atomics.notify(this.i32, PRODUCER_SLEEPING);
  }

  private checkCanWaitForSpace(): void {
    if (this.reserved >= this.slots) {
      throw new Error("every slot is reserved and unpublished: publish before waiting for space");
    }
  }

  // ------------------------------------------------------------------------------ consumer

  /** Published records not yet released. */
  available(): number {
    return (Atomics.load(this.i32, TAIL) - this.head) | 0;
  }

  /** Offset in `f64` of the `i`-th unreleased record (0 is the oldest); `i < available()`. */
  peekOffset(i: number): number {
    return ((this.head + i) & this.mask) * this.slotWords;
  }

  /** Hands the `n` oldest records back to the producer and wakes it if it sleeps for space. */
  release(n: number): void {
    if (n <= 0) return;
    this.head = (this.head + n) | 0;
    const h = this.i32;
    // A producer that loads this HEAD may overwrite the n slots: we have finished reading them.
    Atomics.store(h, HEAD, this.head);
    if (
      Atomics.load(h, PRODUCER_SLEEPING) === 1 &&
      Atomics.compareExchange(h, PRODUCER_SLEEPING, 1, 0) === 1
    ) {
      // Wakes a producer waiting on its flag; one not yet in wait finds the flag 0 and does not sleep.
      Atomics.notify(h, PRODUCER_SLEEPING, 1);
    }
  }

  /**
   * Consumer, worker threads only (blocks): spins `spins` times (Infinity: never sleeps), then
   * sleeps until a publish or `timeoutMs`. Returns `available()`, 0 after a timeout or wakeConsumer.
   */
  waitForData(spins: number, timeoutMs = Number.POSITIVE_INFINITY): number {
    const h = this.i32;
    for (let i = 0; i < spins; i++) {
      const n = (Atomics.load(h, TAIL) - this.head) | 0;
      if (n !== 0) return n;
    }
    // Raised before the re-read below: a publish that the re-read misses will see the flag.
    Atomics.store(h, CONSUMER_SLEEPING, 1);
    const tail = Atomics.load(h, TAIL);
    if (tail === this.head) Atomics.wait(h, CONSUMER_SLEEPING, 1, timeoutMs);
    // We are awake: the producer's next publish need not notify.
    Atomics.store(h, CONSUMER_SLEEPING, 0);
    return this.available();
  }

  /**
   * Consumer on the main thread (never blocks): resolves with `available()` after a publish,
   * `timeoutMs`, or wakeConsumer. Callers check `available()` first; this is the slow path.
   */
  async waitForDataAsync(timeoutMs = Number.POSITIVE_INFINITY): Promise<number> {
    const h = this.i32;
    // Raised before the re-read below: a publish that the re-read misses will see the flag.
    Atomics.store(h, CONSUMER_SLEEPING, 1);
    const tail = Atomics.load(h, TAIL);
    if (tail === this.head) {
      const r = Atomics.waitAsync(h, CONSUMER_SLEEPING, 1, timeoutMs);
      if (r.async) await r.value;
    }
    // We are awake: the producer's next publish need not notify.
    Atomics.store(h, CONSUMER_SLEEPING, 0);
    return this.available();
  }

  /** Wakes a consumer sleeping for data without publishing (shutdown, the producer died). */
  wakeConsumer(): void {
    // A consumer between raising its flag and waiting sees 0 and does not sleep; one asleep wakes.
    Atomics.store(this.i32, CONSUMER_SLEEPING, 0);
    Atomics.notify(this.i32, CONSUMER_SLEEPING);
  }
}

function checkGeometry(slots: number, slotWords: number): void {
  if (!Number.isInteger(slots) || slots < 1 || slots > MAX_SLOTS || (slots & (slots - 1)) !== 0) {
    throw new RangeError(`ring slots must be a power of two in [1, 2^30], got ${slots}`);
  }
  if (!Number.isInteger(slotWords) || slotWords < 1) {
    throw new RangeError(`ring slotWords must be a positive integer, got ${slotWords}`);
  }
}
