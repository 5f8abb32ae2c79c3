/**
 * The pair worker through PairChannel, on a real worker thread: every command's events and END
 * must equal what the same OrderBook produces in-process for the same commands.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PairChannel, type PairChannelOptions } from "../../src/pair/pair-client.ts";
import {
  BUY,
  DONE_CANCELLED,
  DONE_MMP,
  DONE_REMAINDER,
  DONE_SELF_TRADE,
  ERR_AMEND_TOO_SMALL,
  ERR_MMP_FROZEN,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  ERR_WOULD_TAKE,
  FLAG_MMP,
  FLAG_POST_ONLY,
  NO_BUDGET,
  OK,
  QUOTE_KEPT,
  type ResultCode,
  SELL,
  type Side,
  STP_CANCEL_BOTH,
  STP_CANCEL_TAKER,
  TIF_FOK,
  TIF_IOC,
} from "../../src/protocol/pair/engine.ts";
import * as protocol from "../../src/protocol/pair/records.ts";
import { EV_SEQ, eventTuple } from "../../src/protocol/pair/records.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import {
  applyCommand,
  type BookEvent,
  type Command,
  type EngineCommand,
  RecordingEvents,
} from "../matching/reference-book.ts";
import { mulberry32 } from "../support/prng.ts";

type Answer = BookEvent | readonly ["end", ResultCode];

/** What the in-process book answers to each command, by seq (1, 2, ...). */
function expectedAnswers(commands: readonly EngineCommand[]): Answer[][] {
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
function send(ch: PairChannel, cmd: EngineCommand): boolean {
  switch (cmd.op) {
    case "limit":
      return cmd.flags === undefined && cmd.time === undefined
        ? ch.sendLimit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty)
        : ch.sendLimit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty, cmd.flags ?? 0, cmd.time ?? 0);
    case "market":
      return ch.sendMarket(cmd.id, cmd.user, cmd.side, cmd.qty, cmd.budget, cmd.flags ?? 0, cmd.time ?? 0);
    case "cancel":
      return ch.sendCancel(cmd.id);
    case "reduce":
      return ch.sendReduce(cmd.id, cmd.by);
    case "move":
      return ch.sendMove(cmd.id, cmd.price, cmd.delta, cmd.flags, cmd.time ?? 0);
    case "quote":
      return ch.sendQuote(cmd.user, new Float64Array(cmd.levels.flat()), cmd.time);
    case "mmpSet":
      return ch.sendMmpSet(cmd.user, cmd.intervalSeconds, cmd.qtyLimit, cmd.frozenSeconds);
    case "mmpReset":
      return ch.sendMmpReset(cmd.user);
  }
}

/** Sends every command (waiting for space when the ring is full) and returns the answers by seq. */
async function runThroughWorker(
  commands: readonly EngineCommand[],
  options: Partial<PairChannelOptions> = {},
) {
  const collector = new AnswerCollector();
  const ch = open(collector, options);
  await ch.ready;
  for (const cmd of commands) {
    while (!send(ch, cmd)) {
      await ch.writable();
      // A quote needs several free slots: let the event pump run while the worker frees them.
      if (cmd.op === "quote") await new Promise(setImmediate);
    }
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
      stop: p.STOP_CMD,
      funds: p.FUNDS_CMD,
      oco: p.OCO_CMD,
      trade: p.TRADE,
      rested: p.RESTED,
      done: p.DONE,
      level: p.LEVEL,
      amended: p.AMENDED,
      mmp: p.MMP,
      quoted: p.QUOTED,
      triggered: p.TRIGGERED,
      fundsAsked: p.FUNDS_ASKED,
      trailed: p.TRAILED,
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
      triggered: sink.triggered.length,
      fundsAsked: sink.fundsAsked.length,
      trailed: sink.trailed.length,
      end: sink.end.length,
    };
    assert.deepEqual(
      Object.fromEntries(p.EVENT_RECORDS.map((spec) => [spec.name, spec.fields.length])),
      arity,
    );
    assert.deepEqual(
      p.COMMAND_RECORDS.map((spec) => spec.kind).sort(),
      [
        p.OP_LIMIT,
        p.OP_MARKET,
        p.OP_CANCEL,
        p.OP_SHUTDOWN,
        p.OP_REDUCE,
        p.OP_MOVE,
        p.OP_QUOTE,
        p.OP_QUOTE_LEVEL,
        p.OP_MMP_SET,
        p.OP_MMP_RESET,
        p.OP_STOP,
        p.OP_FUNDS,
        p.OP_OCO,
      ].sort(),
    );
    const kinds = [
      p.OP_LIMIT,
      p.OP_MARKET,
      p.OP_CANCEL,
      p.OP_SHUTDOWN,
      p.OP_REDUCE,
      p.OP_MOVE,
      p.OP_QUOTE,
      p.OP_QUOTE_LEVEL,
      p.OP_MMP_SET,
      p.OP_MMP_RESET,
      p.OP_STOP,
      p.OP_FUNDS,
      p.OP_OCO,
      p.EV_TRADE,
      p.EV_RESTED,
      p.EV_DONE,
      p.EV_LEVEL,
      p.EV_END,
      p.EV_AMENDED,
      p.EV_MMP,
      p.EV_QUOTED,
      p.EV_TRIGGERED,
      p.EV_FUNDS,
      p.EV_TRAILED,
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

  test("a quote, an MMP trigger, the freeze, a pull, a reset and the self-trade modes round trip through the worker", async () => {
    const t = 1_700_000_000_000;
    const commands: EngineCommand[] = [
      { op: "mmpSet", user: 1, intervalSeconds: 10, qtyLimit: 5, frozenSeconds: 2 },
      {
        op: "quote",
        user: 1,
        time: t,
        levels: [
          [1, BUY, 99, 3],
          [2, BUY, 98, 3],
          [3, SELL, 101, 3],
          [4, SELL, 102, 3],
        ],
      },
      // Requote: 99 and 101 kept in place, 98 replaced by 97, 102 dropped.
      {
        op: "quote",
        user: 1,
        time: t + 10,
        levels: [
          [5, BUY, 99, 3],
          [6, BUY, 97, 3],
          [7, SELL, 101, 3],
        ],
      },
      // Takes 3 at 99 then 3 at 97 (6 lots, past the limit of 5): the ask 101 is cancelled by the
      // trigger and the rest of the IOC ends.
      { op: "limit", id: 8, user: 2, side: SELL, price: 95, qty: 9, flags: TIF_IOC, time: t + 20 },
      { op: "quote", user: 1, time: t + 1000, levels: [[9, BUY, 99, 1]] },
      { op: "limit", id: 10, user: 1, side: BUY, price: 90, qty: 1, flags: FLAG_MMP, time: t + 1000 },
      // A pull is allowed while frozen; an unprotected order too.
      { op: "quote", user: 1, time: t + 1000, levels: [] },
      { op: "limit", id: 11, user: 1, side: BUY, price: 90, qty: 1, time: t + 1000 },
      // Two seconds after the trigger the freeze is over.
      { op: "quote", user: 1, time: t + 2020, levels: [[12, BUY, 96, 1]] },
      { op: "mmpReset", user: 1 },
      // cancelTaker: the buy stops at its own ask; the ask stays.
      { op: "limit", id: 13, user: 3, side: SELL, price: 105, qty: 2, time: t + 3000 },
      {
        op: "limit",
        id: 14,
        user: 3,
        side: BUY,
        price: 106,
        qty: 2,
        flags: STP_CANCEL_TAKER,
        time: t + 3000,
      },
      // cancelBoth: both go.
      {
        op: "market",
        id: 15,
        user: 3,
        side: BUY,
        qty: 1,
        budget: NO_BUDGET,
        flags: STP_CANCEL_BOTH,
        time: t + 3000,
      },
    ];
    const want = expectedAnswers(commands);
    const codes = want.map((a) => a.at(-1)?.[1]);
    assert.deepEqual(codes, [
      OK,
      OK,
      OK,
      OK,
      ERR_MMP_FROZEN,
      ERR_MMP_FROZEN,
      OK,
      OK,
      OK,
      OK,
      OK,
      OK,
      ERR_NO_LIQUIDITY,
    ]);
    assert.ok(want[2].some((e) => e[0] === "quoted" && e[2] === 0 && e[3] === 1 && e[4] === QUOTE_KEPT));
    assert.ok(want[2].some((e) => e[0] === "done" && e[1] === 2 && e[4] === DONE_CANCELLED));
    assert.ok(want[2].some((e) => e[0] === "done" && e[1] === 4 && e[4] === DONE_CANCELLED));
    const trigger = want[3];
    assert.deepEqual(
      trigger.filter((e) => e[0] === "done" && e[4] === DONE_MMP).map((e) => e[1]),
      [3],
      "the trigger cancels the rest of user 1's protected orders",
    );
    assert.ok(trigger.some((e) => e[0] === "mmp" && e[1] === 1 && e[2] === 1 && e[3] === t + 20 + 2000));
    assert.deepEqual(want[9][0], ["mmp", 1, 0, 0]);
    assert.deepEqual(want[11][0], ["done", 14, 3, BUY, DONE_SELF_TRADE, 2]);
    const got = await runThroughWorker(commands, { commandSlots: 8, eventSlots: 16 });
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
