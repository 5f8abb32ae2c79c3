/**
 * Pair worker: one dedicated thread per trading pair, running its OrderBook.
 *
 *   main thread ──command ring──▶ [ drain commands → book → events + END ] ──event ring──▶ main thread
 *
 * The loop drains every available command, runs each on the book (whose BookEvents sink writes
 * straight into the event ring, src/protocol/pair.ts's EventRecordWriter), appends an END record with the ResultCode, and publishes the
 * events and releases the commands every `publishEvery` commands and at the end of the batch.
 * With nothing to do it polls the command ring `spinIterations` times, then sleeps in Atomics.wait
 * until the main thread publishes (the ring's wake protocol makes the main thread notify only when
 * we announced the sleep). When the event ring is full it publishes what it has, then sleeps until
 * the main thread releases slots: this thread may block, the main thread never does. A SHUTDOWN
 * command is answered with END(OK), then the loop returns and the thread exits.
 *
 * Defaults (src/pair-client.ts), measured with bench/ring/wake.bench.ts on this 2-core VM, Node
 * 20.20, medians of 3 runs per cell. The VM is shared, so the grid was run once quiet (load 0.8)
 * and once busy (load 4.6); round trip p50 in µs, quiet / busy:
 *
 *                            main: waitAsync   16 turns, then   setImmediate
 *                            at once           waitAsync        polling only
 *   worker waits at once       20.5 / 14.5      16.7 / 11.7      17.0 / 12.5
 *   worker spins 2 µs          56.9 / 17.1       1.7 / 14.4       1.6 /  2.5
 *   worker spins 20 µs         17.3 / 17.4       2.4 / 49.8       1.6 / 30.4
 *   worker busy spin            5.5 /  6.2       1.6 /  1.7       1.6 /  1.7
 *
 *   CPU per round trip (both threads, µs, quiet / busy): waits at once + waitAsync 40 / 26;
 *   spins 2 µs + 16 turns 15 / 26; spins 20 µs + waitAsync 31 / 30; busy spin + 16 turns 17 / 16.
 *
 * Won: the worker spins ~2 µs (260 polls of ~7.7 ns) then Atomics.wait, and the main thread
 * re-checks the event ring on 16 setImmediate turns before Atomics.waitAsync. Quiet, that is
 * 1.7 µs p50 against 16.7-20.5 µs when either side sleeps at once (about 10x), at half the CPU per
 * trip (a futex or waitAsync wake-up costs more than a few polls); busy, it is no worse than
 * sleeping at once (14.4 vs 14.5 µs). Busy spinning is as fast but burns a core per pair even when
 * idle, which two cores cannot afford; a 20 µs spin is fine quiet but loses under load (49.8 µs):
 * the spinning worker holds the core the main thread needs to send the next command. Polling only
 * on the main thread is fast for one command in flight but wrecks throughput (below).
 *
 * Throughput, 1,000,000 pipelined limit orders, median of 5 runs at load ~5 (best run in
 * parentheses): in-process OrderBook 2.49M/s (4.44M); through the worker with the defaults
 * 1.34M/s (2.40M). Publishing every command 0.97M/s, every 16 1.24M/s, every 64 1.29M/s,
 * every 256 1.34M/s, per drained batch 1.55M/s (2.74M): batching publishes gains ~40% over
 * per-command, 256 keeps most of it while bounding how long events wait (~256 commands of
 * matching, ≈ 100 µs). Main polling only: 0.22M/s; worker busy spin 0.86M/s (it starves the main
 * thread). Spin 20 µs (1.49M/s), sleep at once (1.63M/s), main waitAsync at once (1.37M/s) and
 * corked sends (1.39M/s) are within this VM's noise of the defaults.
 */
import { parentPort, workerData } from "node:worker_threads";
import { OK } from "../../src/protocol/engine.ts";
import {
  CMD_KIND,
  CMD_SEQ,
  CMD_SHUTDOWN,
  EventRecordWriter,
  type PairWorkerData,
  READY_MESSAGE,
  runCommand,
} from "../../src/protocol/pair.ts";
import { SpscRing } from "../../src/protocol/ring.ts";
import { OrderBook } from "../matching/order-book.ts";

/** Sleep bound while the event ring is full; the main thread's release normally wakes us first. */
const FULL_WAIT_MS = 50;

/** The book's events, each encoded into the next slot of the event ring. */
class RingEvents extends EventRecordWriter {
  constructor(
    private readonly ring: SpscRing,
    private readonly spins: number,
  ) {
    super(ring.f64);
  }

  /** Offset of a reserved event slot, waiting for the main thread to free one if needed. */
  slot(): number {
    const o = this.ring.tryReserve();
    return o >= 0 ? o : this.slotWhenFull();
  }

  private slotWhenFull(): number {
    // The main thread can only free slots it can see: hand over what we wrote so far.
    this.ring.publish();
    for (;;) {
      this.ring.waitForSpace(this.spins, FULL_WAIT_MS);
      const o = this.ring.tryReserve();
      if (o >= 0) return o;
    }
  }
}

function serve(data: PairWorkerData, port: NonNullable<typeof parentPort>): void {
  const commands = SpscRing.attach(data.commandsSab);
  const events = SpscRing.attach(data.eventsSab);
  const spins = data.spinIterations;
  const publishEvery = data.publishEvery;
  const sink = new RingEvents(events, spins);
  const book = new OrderBook(sink, data.initialCapacity);
  const cf = commands.f64;

  port.postMessage(READY_MESSAGE);

  for (;;) {
    let n = commands.available();
    if (n === 0) {
      n = commands.waitForData(spins);
      if (n === 0) continue;
    }
    // Commands [0, released) of this batch are handed back already; `unpublished` ran since.
    let released = 0;
    let unpublished = 0;
    for (let i = 0; i < n; i++) {
      const o = commands.peekOffset(i - released);
      sink.seq = cf[o + CMD_SEQ];
      if (cf[o + CMD_KIND] === CMD_SHUTDOWN) {
        sink.end(OK);
        events.publish();
        commands.release(i + 1 - released);
        return;
      }
      sink.end(runCommand(book, cf, o));
      if (++unpublished >= publishEvery) {
        events.publish();
        commands.release(unpublished);
        released += unpublished;
        unpublished = 0;
      }
    }
    if (unpublished > 0) {
      events.publish();
      commands.release(unpublished);
    }
  }
}

if (
  parentPort !== null &&
  workerData !== null &&
  typeof workerData === "object" &&
  "commandsSab" in workerData
) {
  serve(workerData as PairWorkerData, parentPort);
}
