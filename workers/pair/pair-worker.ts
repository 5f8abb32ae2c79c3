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
import { OK, PENDING, type ResultCode } from "../../src/protocol/pair/engine.ts";
import {
  CMD_KIND,
  CMD_SEQ,
  CMD_SLOT_WORDS,
  EventRecordWriter,
  FUNDS_CMD,
  OP_FUNDS,
  OP_SHUTDOWN,
  type PairWorkerData,
  READY_MESSAGE,
} from "../../src/protocol/pair/records.ts";
import { SpscRing } from "../../src/protocol/pair/ring.ts";
import { OrderBook } from "../matching/order-book.ts";
import { runWithStops, StopBook, SUSPENDED } from "../matching/stops.ts";

const EMPTY = new Float64Array(0);

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
  // The stop orders (docs/API.md 18) read the trade prices the sink notes.
  const stops = new StopBook(book, sink, data.lastPrice ?? -1);
  const cf = commands.f64;
  // While a step waits for a triggered market buy's budget (OP_FUNDS), the commands that arrive
  // are copied here and run after it, in order: no other command runs inside a step.
  const deferred: Float64Array[] = [];
  let deferredHead = 0;
  let suspendedSeq = 0;
  let suspendedResult: ResultCode = OK;

  /** Runs one command record; false for SHUTDOWN (answered: the loop ends). */
  const exec = (f: Float64Array, o: number): boolean => {
    sink.seq = f[o + CMD_SEQ];
    if (f[o + CMD_KIND] === OP_SHUTDOWN) {
      sink.end(OK);
      return false;
    }
    const result = runWithStops(stops, book, f, o);
    if (result === SUSPENDED) {
      suspendedSeq = sink.seq;
      suspendedResult = stops.result;
    } else if (result !== PENDING) {
      // A quote's records share one seq and get one END, after the last of them.
      sink.end(result);
    }
    return true;
  };

  /** A FUNDS record for the waiting step: it resumes, and ends unless it waits again. */
  const resume = (f: Float64Array, o: number): void => {
    sink.seq = suspendedSeq;
    if (stops.funds(f[o + FUNDS_CMD.orderId], f[o + FUNDS_CMD.budget])) sink.end(suspendedResult);
  };

  port.postMessage(READY_MESSAGE);

  for (;;) {
    // Commands deferred by a step that has ended run first, until one waits again.
    if (!stops.suspended && deferredHead < deferred.length) {
      while (!stops.suspended && deferredHead < deferred.length) {
        const d = deferred[deferredHead];
        deferred[deferredHead++] = EMPTY;
        if (!exec(d, 0)) {
          events.publish();
          return;
        }
      }
      events.publish();
      if (deferredHead === deferred.length) {
        deferred.length = 0;
        deferredHead = 0;
      }
    }
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
      if (stops.suspended || deferredHead < deferred.length) {
        if (stops.suspended && cf[o + CMD_KIND] === OP_FUNDS) resume(cf, o);
        else deferred.push(cf.slice(o, o + CMD_SLOT_WORDS));
      } else if (!exec(cf, o)) {
        events.publish();
        commands.release(i + 1 - released);
        return;
      }
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
