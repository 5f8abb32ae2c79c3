/**
 * Open-loop pacing without spinning: a ticker thread that sleeps until each scheduled send time and
 * then wakes the load generator's event loop.
 *
 * Spinning on setImmediate sends on time but keeps a whole core busy, and on a 2-core machine that
 * core is taken from the server being measured. A timer is only accurate to about 1 ms. This thread
 * sleeps in `Atomics.wait` with a sub-millisecond timeout (a futex with an hrtimer: late by tens of
 * µs, not a millisecond), then bumps a counter and notifies it. The event loop waits for that
 * counter with `Atomics.waitAsync`, which does not block it: answers are still read as they arrive,
 * and a tick that comes while the loop is busy is taken on its next turn. Ticks never queue: one
 * wake sends every request that is due by then.
 *
 * The lateness that remains is measured (`sendLag`) and counted in the latency, as with any pacing.
 */
import { Worker } from "node:worker_threads";

/** Counter word the ticker bumps and notifies. */
const TICK = 0;
/** Set to 1 to stop the ticker. */
const STOP = 1;

// Plain JavaScript, so the thread needs no TypeScript loader. Times are absolute
// (timeOrigin + now) because each thread has its own performance.timeOrigin.
const SOURCE = `
const { workerData } = require("node:worker_threads");
const ctl = new Int32Array(workerData.sab);
const { startAbs, intervalMs, total } = workerData;
const nowAbs = () => performance.timeOrigin + performance.now();
for (let i = 0; i < total && Atomics.load(ctl, ${STOP}) === 0; i++) {
  const due = startAbs + i * intervalMs;
  for (;;) {
    const wait = due - nowAbs();
    if (wait <= 0 || Atomics.load(ctl, ${STOP}) !== 0) break;
    // Wakes at the timeout; a store to STOP with a notify ends it early.
    Atomics.wait(ctl, ${STOP}, 0, Math.min(wait, 100));
  }
  Atomics.add(ctl, ${TICK}, 1);
  Atomics.notify(ctl, ${TICK});
}
`;

export class Ticker {
  private readonly ctl = new Int32Array(new SharedArrayBuffer(8));
  private readonly worker: Worker;
  private seen = 0;
  private stopped = false;

  /**
   * Ticks at `start + i * intervalMs` for i < total (`start` on this thread's performance.now()
   * clock) and calls `onTick` on the event loop after each tick (coalesced while it is busy).
   */
  constructor(start: number, intervalMs: number, total: number, onTick: () => void) {
    this.worker = new Worker(SOURCE, {
      eval: true,
      workerData: { sab: this.ctl.buffer, startAbs: performance.timeOrigin + start, intervalMs, total },
    });
    this.worker.unref();
    const wait = (): void => {
      if (this.stopped) return;
      const r = Atomics.waitAsync(this.ctl, TICK, this.seen);
      if (r.async) r.value.then(fire);
      else fire();
    };
    const fire = (): void => {
      if (this.stopped) return;
      this.seen = Atomics.load(this.ctl, TICK);
      onTick();
      wait();
    };
    wait();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    Atomics.store(this.ctl, STOP, 1);
    Atomics.notify(this.ctl, STOP);
    // Release a pending waitAsync so nothing keeps the loop alive.
    Atomics.add(this.ctl, TICK, 1);
    Atomics.notify(this.ctl, TICK);
    void this.worker.terminate();
  }
}
