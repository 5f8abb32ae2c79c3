/**
 * Pair worker: one dedicated thread per trading pair, running its OrderBook.
 *
 *   main thread ──command ring──▶ [ drain commands → book → events + END ] ──event ring──▶ main thread
 *
 * The loop drains every available command, runs each on the book (whose BookEvents sink writes
 * straight into the event ring, src/protocol/pair/records.ts's EventRecordWriter), appends an END record with the ResultCode, and publishes the
 * events and releases the commands every `publishEvery` commands and at the end of the batch.
 * With nothing to do it polls the command ring `spinIterations` times, then sleeps in Atomics.wait
 * until the main thread publishes (the ring's wake protocol makes the main thread notify only when
 * we announced the sleep). When the event ring is full it publishes what it has, then sleeps until
 * the main thread releases slots: this thread may block, the main thread never does. A SHUTDOWN
 * command is answered with END(OK), then the loop returns and the thread exits.
 *
 * Defaults (src/pair/pair-client.ts): the worker spins about 2 µs before it sleeps, the main thread
 * re-checks the event ring on 16 turns before it sleeps, and events are published every 256
 * commands. A short spin catches the next command for less than a wake-up costs, while a longer or
 * busy spin takes the core the main thread needs on a small machine; publishing in batches keeps
 * most of a drained batch's throughput while bounding how long events wait.
 * Figures: BENCHMARKS.md, "The ring and waking" (bench/ring/wake.bench.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { OK, PENDING } from "../../src/protocol/pair/engine.ts";
import {
  CMD_KIND,
  CMD_SEQ,
  EventRecordWriter,
  OP_SHUTDOWN,
  type PairWorkerData,
  READY_MESSAGE,
  runCommand,
} from "../../src/protocol/pair/records.ts";
import { SpscRing } from "../../src/protocol/pair/ring.ts";
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
  const book = new OrderBook(sink, data.initialCapacity, data.minNotional ?? 0n);
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
      if (cf[o + CMD_KIND] === OP_SHUTDOWN) {
        sink.end(OK);
        events.publish();
        commands.release(i + 1 - released);
        return;
      }
      const result = runCommand(book, cf, o);
      // A quote's records share one seq and get one END, after the last of them.
      if (result !== PENDING) sink.end(result);
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
