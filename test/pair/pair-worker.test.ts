/**
 * The pair worker through PairChannel, on a real worker thread: every command's events and END
 * must equal what the same OrderBook produces in-process for the same commands.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PairChannel, type PairChannelOptions } from "../../src/pair-client.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import {
  BUY,
  ERR_ORDER_NOT_FOUND,
  NO_BUDGET,
  OK,
  type ResultCode,
  SELL,
  type Side,
} from "../../workers/matching/types.ts";
import * as protocol from "../../workers/pair/protocol.ts";
import { dispatchEvent, END_RESULT, EV_END, EV_SEQ } from "../../workers/pair/protocol.ts";
import { applyCommand, type BookEvent, type Command, RecordingEvents } from "../matching/reference-book.ts";

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
  private readonly rec = new RecordingEvents();
  private waitingFor = 0;
  private resolveWait: () => void = () => {};

  readonly onEvent = (f: Float64Array, o: number): void => {
    const seq = f[o + EV_SEQ];
    let list = this.bySeq.get(seq);
    if (list === undefined) {
      list = [];
      this.bySeq.set(seq, list);
    }
    if (dispatchEvent(f, o, this.rec) === EV_END) {
      list.push(["end", f[o + END_RESULT] as ResultCode]);
      if (seq === this.waitingFor) this.resolveWait();
    } else {
      list.push(...this.rec.take());
    }
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
      return ch.sendLimit(cmd.id, cmd.user, cmd.side, cmd.price, cmd.qty);
    case "market":
      return ch.sendMarket(cmd.id, cmd.user, cmd.side, cmd.qty, cmd.budget);
    case "cancel":
      return ch.sendCancel(cmd.id);
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

/** A deterministic mix of crossing limits, markets with and without budget, cancels and duplicates. */
function randomCommands(n: number, seed: number): Command[] {
  let s = seed >>> 0;
  const rnd = (k: number): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % k;
  };
  const out: Command[] = [];
  let nextId = 1;
  for (let i = 0; i < n; i++) {
    const r = rnd(100);
    const side: Side = rnd(2) === 0 ? BUY : SELL;
    const user = 1 + rnd(4);
    if (r < 60) {
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
    const layouts: Array<[string, number[], number, number]> = [
      [
        "command",
        [p.CMD_KIND, p.CMD_SEQ, p.CMD_ORDER_ID, p.CMD_USER, p.CMD_SIDE, p.CMD_PRICE, p.CMD_QTY, p.CMD_BUDGET],
        p.CMD_BUDGET + 1,
        p.CMD_SLOT_WORDS,
      ],
      [
        "trade",
        [
          p.EV_KIND,
          p.EV_SEQ,
          p.TRADE_TAKER_ID,
          p.TRADE_TAKER_USER,
          p.TRADE_TAKER_SIDE,
          p.TRADE_MAKER_ID,
          p.TRADE_MAKER_USER,
          p.TRADE_PRICE,
          p.TRADE_QTY,
          p.TRADE_TAKER_LEFT,
          p.TRADE_MAKER_LEFT,
        ],
        p.TRADE_WORDS,
        p.EV_SLOT_WORDS,
      ],
      [
        "rested",
        [p.EV_KIND, p.EV_SEQ, p.RESTED_ORDER_ID, p.RESTED_USER, p.RESTED_SIDE, p.RESTED_PRICE, p.RESTED_LEFT],
        p.RESTED_WORDS,
        p.EV_SLOT_WORDS,
      ],
      [
        "done",
        [p.EV_KIND, p.EV_SEQ, p.DONE_ORDER_ID, p.DONE_USER, p.DONE_SIDE, p.DONE_REASON, p.DONE_LEFT],
        p.DONE_WORDS,
        p.EV_SLOT_WORDS,
      ],
      [
        "level",
        [p.EV_KIND, p.EV_SEQ, p.LEVEL_SIDE, p.LEVEL_PRICE, p.LEVEL_TOTAL],
        p.LEVEL_WORDS,
        p.EV_SLOT_WORDS,
      ],
      ["end", [p.EV_KIND, p.EV_SEQ, p.END_RESULT], p.END_WORDS, p.EV_SLOT_WORDS],
    ];
    for (const [name, fields, words, slotWords] of layouts) {
      const sorted = [...fields].sort((x, y) => x - y);
      assert.deepEqual(sorted, [...Array(fields.length).keys()], `${name} fields are not words 0..n-1`);
      assert.equal(words, fields.length, `${name} word count`);
      assert.ok(words <= slotWords, `${name} does not fit its slot`);
    }
    const kinds = [
      p.CMD_LIMIT,
      p.CMD_MARKET,
      p.CMD_CANCEL,
      p.CMD_SHUTDOWN,
      p.EV_TRADE,
      p.EV_RESTED,
      p.EV_DONE,
      p.EV_LEVEL,
      p.EV_END,
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
