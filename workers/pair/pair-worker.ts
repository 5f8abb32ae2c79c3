/**
 * Pair worker: one dedicated thread per trading pair, running its OrderBook.
 *
 *   main thread ──command ring──▶ [ this loop: drain commands → book → events + END ] ──event ring──▶ main thread
 *
 * The loop drains every available command, runs each on the book (whose BookEvents sink writes
 * straight into the event ring), appends an END record with the ResultCode, publishes the events
 * and releases the commands. With nothing to do it polls the command ring `spinIterations` times,
 * then sleeps in Atomics.wait until the main thread publishes (the ring's wake protocol makes the
 * main thread notify only when we announced sleep). When the event ring is full it publishes what it
 * has, then sleeps until the main thread releases slots: this thread may block, the main thread
 * never does. A SHUTDOWN command is answered with END(OK), then the loop returns and the thread exits.
 *
 * Defaults, from bench/ring/wake.bench.ts: BENCH_RESULTS_PLACEHOLDER
 */
import { parentPort, workerData } from "node:worker_threads";
import { SpscRing } from "../../src/ring.ts";
import { OrderBook } from "../matching/order-book.ts";
import { type BookEvents, type DoneReason, OK, type Side } from "../matching/types.ts";
import {
  CMD_KIND,
  CMD_SEQ,
  CMD_SHUTDOWN,
  type PairWorkerData,
  READY_MESSAGE,
  runCommand,
  writeDone,
  writeEnd,
  writeLevel,
  writeRested,
  writeTrade,
} from "./protocol.ts";

/** Sleep bound while the event ring is full; the main thread's release normally wakes us first. */
const FULL_WAIT_MS = 50;

/** BookEvents sink that encodes each event into the next slot of the event ring. */
class RingEvents implements BookEvents {
  /** Seq of the command being run; stamped on every event it produces. */
  seq = 0;
  private readonly f: Float64Array;

  constructor(
    private readonly ring: SpscRing,
    private readonly spins: number,
  ) {
    this.f = ring.f64;
  }

  trade(
    takerId: number,
    takerUser: number,
    takerSide: Side,
    makerId: number,
    makerUser: number,
    price: number,
    qty: number,
    takerLeft: number,
    makerLeft: number,
  ): void {
    const o = this.slot();
    writeTrade(
      this.f,
      o,
      this.seq,
      takerId,
      takerUser,
      takerSide,
      makerId,
      makerUser,
      price,
      qty,
      takerLeft,
      makerLeft,
    );
  }

  rested(orderId: number, user: number, side: Side, price: number, left: number): void {
    writeRested(this.f, this.slot(), this.seq, orderId, user, side, price, left);
  }

  done(orderId: number, user: number, side: Side, reason: DoneReason, left: number): void {
    writeDone(this.f, this.slot(), this.seq, orderId, user, side, reason, left);
  }

  level(side: Side, price: number, total: number): void {
    writeLevel(this.f, this.slot(), this.seq, side, price, total);
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
  const perCommand = data.publishEvery === "command";
  const sink = new RingEvents(events, spins);
  const book = new OrderBook(sink, data.initialCapacity);
  const cf = commands.f64;
  const ef = events.f64;

  port.postMessage(READY_MESSAGE);

  for (;;) {
    let n = commands.available();
    if (n === 0) {
      n = commands.waitForData(spins);
      if (n === 0) continue;
    }
    // Commands [0, released) of this batch are already handed back (per-command policy).
    let released = 0;
    for (let i = 0; i < n; i++) {
      const o = commands.peekOffset(i - released);
      const seq = cf[o + CMD_SEQ];
      sink.seq = seq;
      if (cf[o + CMD_KIND] === CMD_SHUTDOWN) {
        writeEnd(ef, sink.slot(), seq, OK);
        events.publish();
        commands.release(i + 1 - released);
        return;
      }
      const result = runCommand(book, cf, o);
      writeEnd(ef, sink.slot(), seq, result);
      if (perCommand) {
        events.publish();
        commands.release(1);
        released++;
      }
    }
    if (!perCommand) {
      events.publish();
      commands.release(n);
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
