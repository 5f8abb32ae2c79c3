/**
 * SpscRing: empty/full rules, wraparound of the 32-bit counters, and a two-thread stress in both
 * directions (worker → main with Atomics.waitAsync, main → worker with Atomics.wait).
 *
 * This file is also the stress worker's entry: started as a worker it runs `stressRole` and never
 * registers tests.
 *
 * A lost wakeup needs one thread to be descheduled inside a two-instruction window, so the default
 * counts (kept small for a fast suite) rarely catch a broken wake protocol. Soak with
 * RING_STRESS_SCALE=20: a sleeper waiting on the counter instead of its flag hung in one of two such
 * runs, while the defaults passed it every time.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { HEAD, SpscRing, TAIL } from "../../../src/protocol/pair/ring.ts";
import { startWorker } from "../../../src/util/threads.ts";

interface StressData {
  role: "produce" | "consume";
  sab: SharedArrayBuffer;
  count: number;
  spins: number;
}

/** Word 0 carries the sequence number, word 1 its complement, so torn or stale slots show. */
const CHECK = 0x3fffffff;

/** Runs in the worker: produces `count` records, or consumes them and reports their sum. */
function stressRole(data: StressData): void {
  const ring = SpscRing.attach(data.sab);
  const f = ring.f64;
  if (data.role === "produce") {
    let next = 0;
    while (next < data.count) {
      let o = ring.tryReserve();
      if (o < 0) {
        ring.publish();
        ring.waitForSpace(data.spins);
        continue;
      }
      // Publish in irregular batches (1..7 records) to exercise partial batches.
      for (;;) {
        f[o] = next;
        f[o + 1] = CHECK - next;
        next++;
        if (next === data.count || next % 7 === 0) break;
        o = ring.tryReserve();
        if (o < 0) break;
      }
      ring.publish();
    }
    parentPort!.postMessage({ sent: next });
  } else {
    let expected = 0;
    let bad = -1;
    while (expected < data.count) {
      let n = ring.available();
      if (n === 0) n = ring.waitForData(data.spins);
      for (let i = 0; i < n; i++) {
        const o = ring.peekOffset(i);
        if (f[o] !== expected || f[o + 1] !== CHECK - expected) bad = bad === -1 ? expected : bad;
        expected++;
      }
      ring.release(n);
    }
    parentPort!.postMessage({ received: expected, firstBad: bad });
  }
}

/**
 * Starts the stress worker on `ring`. `done` settles with its one message (or its error); `gone()`
 * turns true once it exited, and its exit wakes both sides of the ring, so a main-thread loop
 * stuck in waitAsync on a dead worker ends (a pending waitAsync does not keep Node alive: without
 * this the test would be cancelled instead of failing with the worker's error).
 */
function startStress<T>(url: URL, data: StressData, ring: SpscRing) {
  const w = startWorker(url, { workerData: data });
  let exited = false;
  const done = new Promise<T>((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
  done.catch(() => {}); // awaited after the main loop
  const exitCode = new Promise<number>((resolve) => {
    w.once("exit", (code) => {
      exited = true;
      ring.wakeConsumer();
      ring.wakeProducer();
      resolve(code);
    });
  });
  return { done, exitCode, gone: () => exited };
}

/** Pushes records 0..n-1 through the ring in one thread, `batch` at a time, checking order. */
function pumpInProcess(ring: SpscRing, n: number, batch: number): void {
  const f = ring.f64;
  let sent = 0;
  let got = 0;
  while (got < n) {
    let k = 0;
    while (k < batch && sent < n) {
      const o = ring.tryReserve();
      if (o < 0) break;
      f[o] = sent++;
      k++;
    }
    ring.publish();
    const avail = ring.available();
    for (let i = 0; i < avail; i++) assert.equal(f[ring.peekOffset(i)], got + i);
    got += avail;
    ring.release(avail);
  }
}

if (isMainThread) {
  describe("SpscRing", () => {
    test("an empty ring has nothing available and a full one refuses reservations", () => {
      const ring = SpscRing.create(4, 2);
      assert.equal(ring.available(), 0);
      assert.equal(ring.freeSlots(), 4);
      const offsets = [ring.tryReserve(), ring.tryReserve(), ring.tryReserve(), ring.tryReserve()];
      assert.deepEqual(offsets, [0, 2, 4, 6]);
      assert.equal(ring.tryReserve(), -1, "four reserved slots fill a four-slot ring");
      assert.equal(ring.available(), 0, "reserved slots are invisible until published");
      ring.publish(3);
      assert.equal(ring.available(), 3);
      assert.equal(ring.pending(), 1);
      ring.publish();
      assert.equal(ring.available(), 4);
      assert.equal(ring.tryReserve(), -1);
      ring.release(1);
      assert.equal(ring.freeSlots(), 1);
      assert.equal(ring.tryReserve(), 0, "the released slot is reused first");
      assert.equal(ring.tryReserve(), -1);
      ring.publish();
      ring.release(4);
      assert.equal(ring.available(), 0);
      assert.equal(ring.freeSlots(), 4);
    });

    test("the consumer side attached to the buffer sees the producer's records", () => {
      const producer = SpscRing.create(8, 3);
      const consumer = SpscRing.attach(producer.sab);
      assert.equal(consumer.slots, 8);
      assert.equal(consumer.slotWords, 3);
      const o = producer.tryReserve();
      producer.f64[o] = 42;
      producer.f64[o + 2] = 43;
      producer.publish();
      assert.equal(consumer.available(), 1);
      assert.equal(consumer.f64[consumer.peekOffset(0)], 42);
      assert.equal(consumer.f64[consumer.peekOffset(0) + 2], 43);
      consumer.release(1);
      assert.equal(producer.freeSlots(), 8);
    });

    test("rejects a slot count that is not a power of two", () => {
      assert.throws(() => SpscRing.create(6, 1), RangeError);
      assert.throws(() => SpscRing.create(0, 1), RangeError);
      assert.throws(() => SpscRing.create(8, 0), RangeError);
    });

    for (const [name, start] of [
      ["2^32 (-1 to 0)", 2 ** 32 - 13],
      ["2^31 (2^31 - 1 to -2^31)", 2 ** 31 - 13],
    ] as const) {
      test(`counters wrap across ${name} without losing or repeating a record`, () => {
        const ring = SpscRing.create(8, 1, start);
        assert.equal(ring.i32[TAIL], start | 0);
        for (const batch of [1, 3, 8, 5]) pumpInProcess(ring, 40, batch);
        // 160 records passed: both counters moved past the boundary and agree.
        assert.equal(ring.i32[TAIL], (start + 160) | 0);
        assert.equal(ring.i32[HEAD], (start + 160) | 0);
        assert.equal(ring.available(), 0);
        assert.equal(ring.freeSlots(), 8);
        // Full and empty are still told apart right at the boundary.
        for (let i = 0; i < 8; i++) assert.notEqual(ring.tryReserve(), -1);
        assert.equal(ring.tryReserve(), -1);
        ring.publish();
        assert.equal(ring.available(), 8);
      });
    }

    test("a full ring right after the counter wraps reports the slots in order", () => {
      const ring = SpscRing.create(4, 1, 2 ** 32 - 2);
      for (let i = 0; i < 4; i++) ring.f64[ring.tryReserve()] = i;
      ring.publish();
      assert.equal(ring.i32[TAIL], 2);
      assert.equal(ring.available(), 4);
      assert.deepEqual(
        [0, 1, 2, 3].map((i) => ring.f64[ring.peekOffset(i)]),
        [0, 1, 2, 3],
      );
    });

    test("a worker waiting for data times out with nothing available, and waitForDataAsync resolves on publish", async () => {
      const ring = SpscRing.create(4, 1);
      // The test thread may block for a millisecond; application main threads never call this.
      assert.equal(ring.waitForData(10, 1), 0);
      const consumer = SpscRing.attach(ring.sab);
      const waiting = consumer.waitForDataAsync();
      ring.f64[ring.tryReserve()] = 7;
      ring.publish();
      assert.equal(await waiting, 1);
    });

    const selfUrl = new URL(import.meta.url);
    const scale = Number(process.env.RING_STRESS_SCALE ?? 1);

    /** Worker produces `count` records; the main thread consumes them with waitForDataAsync. */
    async function workerToMain(slots: number, count: number, firstIndex: number): Promise<void> {
      const ring = SpscRing.create(slots, 2, firstIndex);
      const worker = startStress<{ sent: number }>(
        selfUrl,
        { role: "produce", sab: ring.sab, count, spins: 0 },
        ring,
      );
      const f = ring.f64;
      let expected = 0;
      let firstBad = -1;
      while (expected < count) {
        let n = ring.available();
        if (n === 0) {
          if (worker.gone()) break;
          n = await ring.waitForDataAsync();
        }
        for (let i = 0; i < n; i++) {
          const o = ring.peekOffset(i);
          if (firstBad === -1 && (f[o] !== expected || f[o + 1] !== CHECK - expected)) firstBad = expected;
          expected++;
        }
        ring.release(n);
      }
      assert.deepEqual(await worker.done, { sent: count });
      assert.equal(expected, count, "the worker exited before its records arrived");
      assert.equal(firstBad, -1, `record ${firstBad} arrived out of order or torn`);
      assert.equal(ring.available(), 0);
      assert.equal(ring.i32[HEAD], (firstIndex + count) | 0);
      assert.equal(await worker.exitCode, 0);
    }

    /** The main thread produces `count` records (waitForSpaceAsync when full); the worker consumes. */
    async function mainToWorker(slots: number, count: number, firstIndex: number): Promise<void> {
      const ring = SpscRing.create(slots, 2, firstIndex);
      const worker = startStress<{ received: number; firstBad: number }>(
        selfUrl,
        { role: "consume", sab: ring.sab, count, spins: 0 },
        ring,
      );
      const f = ring.f64;
      let next = 0;
      while (next < count) {
        let o = ring.tryReserve();
        if (o < 0) {
          if (worker.gone()) break;
          await ring.waitForSpaceAsync();
          continue;
        }
        for (;;) {
          f[o] = next;
          f[o + 1] = CHECK - next;
          next++;
          if (next === count || next % 5 === 0) break;
          o = ring.tryReserve();
          if (o < 0) break;
        }
        ring.publish();
      }
      assert.deepEqual(await worker.done, { received: count, firstBad: -1 });
      assert.equal(await worker.exitCode, 0);
    }

    // No wait has a timeout and the worker never spins, so a lost wakeup leaves a thread asleep for
    // good and the test fails on its own timeout instead of limping along. The four-slot runs put
    // nearly every record through a sleep/wake handshake.
    const stress = { timeout: 20_000 * scale };

    test(
      "a worker producer hands a million records to a main-thread consumer, none lost or repeated",
      stress,
      () => workerToMain(256, 1_000_000 * scale, 2 ** 32 - 100_000),
    );

    test("a main-thread producer hands a million records to a worker sleeping in Atomics.wait", stress, () =>
      mainToWorker(256, 1_000_000 * scale, 2 ** 31 - 100_000),
    );

    test(
      "no wakeup is lost when a four-slot ring makes the main-thread consumer sleep at almost every record",
      stress,
      () => workerToMain(4, 20_000 * scale, 2 ** 32 - 10_000),
    );

    test(
      "no wakeup is lost when a four-slot ring makes the worker consumer sleep at almost every record",
      stress,
      () => mainToWorker(4, 20_000 * scale, 2 ** 32 - 10_000),
    );
  });
} else if ((workerData as StressData | null)?.role !== undefined) {
  stressRole(workerData as StressData);
}
