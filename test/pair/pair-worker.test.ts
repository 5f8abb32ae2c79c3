/**
 * The pair worker through PairChannel, on a real worker thread: every command's events and END
 * must equal what the same OrderBook produces in-process for the same commands.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PairChannel, type PairChannelOptions } from "../../src/pair/pair-client.ts";
import {
  BUY,
  DONE_REMAINDER,
  ERR_AMEND_TOO_SMALL,
  ERR_ORDER_NOT_FOUND,
  ERR_WOULD_TAKE,
  FLAG_POST_ONLY,
  NO_BUDGET,
  OK,
  type ResultCode,
  SELL,
  type Side,
  TIF_FOK,
  TIF_IOC,
} from "../../src/protocol/pair/engine.ts";
import * as protocol from "../../src/protocol/pair/records.ts";
import { EV_SEQ, eventTuple } from "../../src/protocol/pair/records.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { applyCommand, type BookEvent, type Command, RecordingEvents } from "../matching/reference-book.ts";
import { mulberry32 } from "../support/prng.ts";

type Answer = BookEvent | readonly ["end", ResultCode];

/** What the in-process book answers to each command, by seq (1, 2, ...). */
function expectedAnswers(commands: readonly Command[]): Answer[][] {
  const rec = new RecordingEvents();
  const book = new OrderBook(rec, 16);
  return commands.map((cmd) => {
    const result = applyCommand(book, cmd);
    return [...rec.take(), ["end", result] as const];
  });
}

/** Collects the event records of a channel into answers by seq, resolving when `lastSeq` ends. */
class AnswerCollector {
  readonly bySeq = new Map<number, Answer[]>();
  private waitingFor = 0;
  private resolveWait: () => void = () => {};

  readonly onEvent = (f: Float64Array, o: number): void => {
    const seq = f[o + EV_SEQ];
    let list = this.bySeq.get(seq);
    if (list === undefined) {
      list = [];
      this.bySeq.set(seq, list);
    }
    const event = eventTuple(f, o) as unknown as Answer;
    list.push(event);
    if (event[0] === "end" && seq === this.waitingFor) this.resolveWait();
  };

  /** Resolves once the END of command `seq` has been handled; rejects if the worker exits first. */
  until(seq: number, ch: PairChannel): Promise<void> {
    const list = this.bySeq.get(seq);
    if (list !== undefined && list.at(-1)?.[0] === "end") return Promise.resolve();
    this.waitingFor = seq;
    const ended = new Promise<void>((resolve) => {
      this.resolveWait = resolve;
    });
    const died = ch.exited.then((code) => {
      throw new Error(`pair worker exited with code ${code} before answering command ${seq}`);
    });
    return Promise.race([ended, died]);
  }
}

function open(collector: AnswerCollector, options: Partial<PairChannelOptions> = {}): PairChannel {
  return new PairChannel({ pairName: "TEST/USD", onEvent: collector.onEvent, ...options });
}

/** Sends one command; false when the command ring is full. */
function send(ch: PairChannel, cmd: Command): boolean {
  switch (cmd.op) {
    case "limit":
      return cmd.flags === undefined
        ? ch.sendLimit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty)
        : ch.sendLimit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty, cmd.flags);
    case "market":
      return ch.sendMarket(cmd.id, cmd.user, cmd.side, cmd.qty, cmd.budget);
    case "cancel":
      return ch.sendCancel(cmd.id);
    case "reduce":
      return ch.sendReduce(cmd.id, cmd.by);
    case "move":
      return ch.sendMove(cmd.id, cmd.price, cmd.delta, cmd.flags);
  }
}

/** Sends every command (waiting for space when the ring is full) and returns the answers by seq. */
async function runThroughWorker(commands: readonly Command[], options: Partial<PairChannelOptions> = {}) {
  const collector = new AnswerCollector();
  const ch = open(collector, options);
  await ch.ready;
  for (const cmd of commands) {
    while (!send(ch, cmd)) await ch.writable();
  }
  assert.equal(ch.lastSeq, commands.length);
  await collector.until(commands.length, ch);
  assert.equal(await ch.close(), 0);
  return commands.map((_, i) => collector.bySeq.get(i + 1) ?? []);
}

/**
 * A deterministic mix of crossing limits, markets with and without budget, cancels and duplicates;
 * with `amends`, also limits with every flag combination, reduces and moves (some of unknown ids).
 */
function randomCommands(n: number, seed: number, amends = false): Command[] {
  const rand = mulberry32(seed);
  const rnd = (k: number): number => Math.floor(rand() * k);
  const out: Command[] = [];
  let nextId = 1;
  for (let i = 0; i < n; i++) {
    const r = rnd(100);
    const side: Side = rnd(2) === 0 ? BUY : SELL;
    const user = 1 + rnd(4);
    if (amends && r < 30) {
      const id = 1 + rnd(nextId);
      const flags = rnd(3) | (rnd(2) === 0 ? FLAG_POST_ONLY : 0);
      if (r < 10)
        out.push({ op: "limit", id: nextId++, user, side, price: 95 + rnd(11), qty: 1 + rnd(20), flags });
      else if (r < 18) out.push({ op: "reduce", id, by: 1 + rnd(6) });
      else
        out.push({ op: "move", id, price: 95 + rnd(11), delta: rnd(11) - 5, flags: rnd(2) * FLAG_POST_ONLY });
    } else if (r < 60) {
      out.push({ op: "limit", id: nextId++, user, side, price: 95 + rnd(11), qty: 1 + rnd(20) });
    } else if (r < 75) {
      const budget = side === BUY && rnd(2) === 0 ? rnd(3000) : NO_BUDGET;
      out.push({ op: "market", id: nextId++, user, side, qty: 1 + rnd(30), budget });
    } else if (r < 95) {
      out.push({ op: "cancel", id: 1 + rnd(nextId) });
    } else {
      // Reuses an id: refused as a duplicate when that order still rests.
      out.push({ op: "limit", id: 1 + rnd(nextId), user, side, price: 95 + rnd(11), qty: 1 + rnd(20) });
    }
  }
  return out;
}

describe("pair protocol", () => {
  test("every record's fields are distinct words 0..n-1 and fit in its ring's slot", () => {
    const p = protocol;
    const rings: Array<[string, protocol.RecordSpec[], number]> = [
      ["command", p.COMMAND_RECORDS, p.CMD_SLOT_WORDS],
      ["event", p.EVENT_RECORDS, p.EV_SLOT_WORDS],
    ];
    const tables: Record<string, Readonly<Record<string, number>>> = {
      limit: p.LIMIT_CMD,
      market: p.MARKET_CMD,
      cancel: p.CANCEL_CMD,
      reduce: p.REDUCE_CMD,
      move: p.MOVE_CMD,
      quote: p.QUOTE_CMD,
      quoteLevel: p.QUOTE_LEVEL_CMD,
      mmpSet: p.MMP_SET_CMD,
      mmpReset: p.MMP_RESET_CMD,
      trade: p.TRADE,
      rested: p.RESTED,
      done: p.DONE,
      level: p.LEVEL,
      amended: p.AMENDED,
      mmp: p.MMP,
      quoted: p.QUOTED,
      end: p.END,
    };
    assert.deepEqual([p.CMD_KIND, p.CMD_SEQ, p.EV_KIND, p.EV_SEQ], [0, 1, 0, 1]);
    for (const [ring, specs, slotWords] of rings) {
      for (const spec of specs) {
        const offsets = spec.fields.map((field) => tables[spec.name]?.[field] ?? -1);
        if (spec.name !== "shutdown") {
          assert.deepEqual(
            Object.keys(tables[spec.name]),
            [...spec.fields],
            `${spec.name}: table and spec differ`,
          );
        }
        const words = [0, 1, ...offsets];
        assert.deepEqual(words, [...Array(words.length).keys()], `${spec.name} fields are not words 0..n-1`);
        assert.ok(words.length <= slotWords, `${spec.name} does not fit a ${ring} slot`);
      }
    }
    // Every BookEvents method has its record, with as many fields as it has arguments.
    const sink = new RecordingEvents();
    const arity: Record<string, number> = {
      trade: sink.trade.length,
      rested: sink.rested.length,
      done: sink.done.length,
      level: sink.level.length,
      amended: sink.amended.length,
      mmp: sink.mmp.length,
      quoted: sink.quoted.length,
      end: sink.end.length,
    };
    assert.deepEqual(
      Object.fromEntries(p.EVENT_RECORDS.map((spec) => [spec.name, spec.fields.length])),
      arity,
    );
    assert.deepEqual(
      p.COMMAND_RECORDS.map((spec) => spec.kind).sort(),
      [
        p.CMD_LIMIT,
        p.CMD_MARKET,
        p.CMD_CANCEL,
        p.CMD_SHUTDOWN,
        p.CMD_REDUCE,
        p.CMD_MOVE,
        p.CMD_QUOTE,
        p.CMD_QUOTE_LEVEL,
        p.CMD_MMP_SET,
        p.CMD_MMP_RESET,
      ].sort(),
    );
    const kinds = [
      p.CMD_LIMIT,
      p.CMD_MARKET,
      p.CMD_CANCEL,
      p.CMD_SHUTDOWN,
      p.CMD_REDUCE,
      p.CMD_MOVE,
      p.CMD_QUOTE,
      p.CMD_QUOTE_LEVEL,
      p.CMD_MMP_SET,
      p.CMD_MMP_RESET,
      p.EV_TRADE,
      p.EV_RESTED,
      p.EV_DONE,
      p.EV_LEVEL,
      p.EV_END,
      p.EV_AMENDED,
      p.EV_MMP,
      p.EV_QUOTED,
    ];
    assert.equal(new Set([0, ...kinds]).size, kinds.length + 1, "kinds collide with each other or with 0");
  });
});

describe("pair worker", () => {
  test("answers 5000 mixed commands with exactly the in-process book's events and result codes", async () => {
    const commands = randomCommands(5000, 7);
    const want = expectedAnswers(commands);
    const got = await runThroughWorker(commands, { commandSlots: 64, eventSlots: 256 });
    assert.deepEqual(got, want);
    // The workload exercised trades and every result path, not just resting orders.
    const flat = want.flat();
    for (const kind of ["trade", "rested", "done", "level"]) {
      assert.ok(
        flat.some((e) => e[0] === kind),
        `no ${kind} event`,
      );
    }
    const codes = new Set(want.map((a) => a.at(-1)?.[1]));
    assert.ok(codes.size >= 4, `only result codes ${[...codes]}`);
  });

  test("a flagged limit, a reduce and a move round trip through the worker with their events and codes", async () => {
    const commands: Command[] = [
      { op: "limit", id: 1, user: 1, side: SELL, price: 101, qty: 5 },
      { op: "limit", id: 2, user: 2, side: SELL, price: 101, qty: 3 },
      // Post-only at the best ask: refused.
      { op: "limit", id: 3, user: 3, side: BUY, price: 101, qty: 1, flags: FLAG_POST_ONLY },
      // FOK for more than the book holds: killed whole.
      { op: "limit", id: 4, user: 3, side: BUY, price: 101, qty: 9, flags: TIF_FOK },
      // IOC: takes 5 + 3 lots, the remainder 2 ends.
      { op: "limit", id: 5, user: 3, side: BUY, price: 101, qty: 10, flags: TIF_IOC },
      { op: "limit", id: 6, user: 1, side: BUY, price: 99, qty: 8 },
      { op: "reduce", id: 6, by: 3 },
      { op: "reduce", id: 6, by: 5 },
      // A negative delta travels exactly: 5 - 2 = 3 lots at 100.
      { op: "move", id: 6, price: 100, delta: -2, flags: 0 },
      { op: "move", id: 77, price: 100, delta: 1, flags: 0 },
    ];
    const want = expectedAnswers(commands);
    // The expectations come from the in-process book; pin the points of this round trip.
    const codes = want.map((a) => a.at(-1)?.[1]);
    assert.deepEqual(codes, [
      OK,
      OK,
      ERR_WOULD_TAKE,
      OK,
      OK,
      OK,
      OK,
      ERR_AMEND_TOO_SMALL,
      OK,
      ERR_ORDER_NOT_FOUND,
    ]);
    assert.deepEqual(want[3][0], ["done", 4, 3, BUY, DONE_REMAINDER, 9]);
    assert.deepEqual(want[4].at(-3), ["done", 5, 3, BUY, DONE_REMAINDER, 2]);
    assert.deepEqual(want[6][0], ["amended", 6, 1, BUY, 99, 99, 8, 5]);
    assert.deepEqual(want[8][0], ["amended", 6, 1, BUY, 99, 100, 5, 3]);
    const got = await runThroughWorker(commands, { commandSlots: 4, eventSlots: 16 });
    assert.deepEqual(got, want);
  });

  test("answers 3000 commands mixing flags, reduces and moves exactly like the in-process book", async () => {
    const commands = randomCommands(3000, 11, true);
    const want = expectedAnswers(commands);
    const got = await runThroughWorker(commands, { commandSlots: 64, eventSlots: 256 });
    assert.deepEqual(got, want);
    const codes = new Set(want.map((a) => a.at(-1)?.[1]));
    for (const code of [ERR_WOULD_TAKE, ERR_AMEND_TOO_SMALL, ERR_ORDER_NOT_FOUND]) {
      assert.ok(codes.has(code), `no result code ${code}`);
    }
    assert.ok(
      want.flat().some((e) => e[0] === "amended" && e[4] !== e[5]),
      "no move to a new price",
    );
  });

  test("a command with more events than the event ring holds waits for the main thread and loses none", async () => {
    const commands: Command[] = [];
    for (let i = 0; i < 40; i++) {
      commands.push({ op: "limit", id: i + 1, user: 1 + (i % 3), side: SELL, price: 100 + i, qty: 2 });
    }
    // One market buy sweeps all 40 asks: 40 trades and 40 levels in a ring of 8 event slots.
    commands.push({ op: "market", id: 100, user: 9, side: BUY, qty: 1000, budget: NO_BUDGET });
    const want = expectedAnswers(commands);
    assert.ok(want[40].length > 80);
    for (const publishEvery of [1, Number.POSITIVE_INFINITY]) {
      const got = await runThroughWorker(commands, { eventSlots: 8, publishEvery });
      assert.deepEqual(got, want, `publishEvery ${publishEvery}`);
    }
  });

  test("a full command ring makes send return false, and every accepted command is still answered", async () => {
    const collector = new AnswerCollector();
    // Each resting limit answers with 3 events: the worker stalls after ~5 commands on the 16-slot
    // event ring, because this loop never yields to let the main thread consume them.
    const ch = open(collector, { commandSlots: 4, eventSlots: 16 });
    await ch.ready;
    let accepted = 0;
    while (ch.sendLimit(accepted + 1, 1, BUY, 100 - (accepted % 50), 1)) {
      accepted++;
      assert.ok(accepted <= 4 + 16, "the command ring never filled");
    }
    assert.ok(accepted >= 4);
    assert.equal(ch.lastSeq, accepted, "a refused command takes no seq");
    await collector.until(accepted, ch);
    for (let seq = 1; seq <= accepted; seq++) {
      assert.deepEqual(collector.bySeq.get(seq)?.at(-1), ["end", OK]);
    }
    assert.equal(await ch.close(), 0);
  });

  test("close answers the queued commands, then the worker exits with code 0 and sends are refused", async () => {
    const collector = new AnswerCollector();
    const ch = open(collector, { workerSpin: 0 });
    // Sent before the worker is up: they wait in the ring.
    assert.equal(ch.sendLimit(1, 1, SELL, 101, 5), true);
    assert.equal(ch.sendCancel(1), true);
    assert.equal(ch.sendCancel(1), true);
    assert.equal(await ch.close(), 0);
    assert.deepEqual(collector.bySeq.get(3)?.at(-1), ["end", ERR_ORDER_NOT_FOUND]);
    // SHUTDOWN is answered too, after everything queued before it.
    assert.deepEqual(collector.bySeq.get(4), [["end", OK]]);
    assert.equal(ch.sendLimit(2, 1, BUY, 99, 1), false);
    assert.equal(await ch.close(), 0, "close is idempotent");
  });

  test("an exception in the event handler stops the worker and close reports it", async () => {
    const ch = new PairChannel({
      pairName: "BAD/USD",
      onEvent: () => {
        throw new Error("handler failed");
      },
    });
    await ch.ready;
    ch.sendLimit(1, 1, BUY, 100, 1);
    await assert.rejects(ch.close(), /handler failed/);
  });
});
