/**
 * The matching contract as named examples, one suite run against every book implementation (the
 * naive reference and the fast book). Each command's events are also checked against the rules by
 * `BookMirror`, and every test ends with an invariant check of the book through its public
 * interface.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type BookEvents,
  BUY,
  DONE_CANCELLED,
  DONE_REMAINDER,
  DONE_SELF_TRADE,
  ERR_AMEND_TOO_SMALL,
  ERR_BELOW_MIN_NOTIONAL,
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  ERR_WOULD_TAKE,
  FLAG_POST_ONLY,
  MAX_BUDGET,
  type MatchingBook,
  NO_BUDGET,
  OK,
  type ResultCode,
  SELL,
  type Side,
  TIF_FOK,
  TIF_IOC,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import {
  applyCommand,
  type BookEvent,
  BookMirror,
  type Command,
  checkBookInvariants,
  RecordingEvents,
  ReferenceOrderBook,
  snapshotLevels,
} from "./reference-book.ts";

type BookFactory = (events: BookEvents, minNotional?: bigint) => MatchingBook;

interface Outcome {
  code: ResultCode;
  events: BookEvent[];
}

/** A book plus its recorded events and the mirror that checks them. */
class Harness {
  readonly book: MatchingBook;
  private readonly recorder = new RecordingEvents();
  private readonly mirror = new BookMirror();

  constructor(make: BookFactory, minNotional?: bigint) {
    this.book = make(this.recorder, minNotional);
  }

  limit(id: number, user: number, side: Side, price: number, qty: number, flags?: number): Outcome {
    return this.run({ op: "limit", id, user, side, price, qty, flags });
  }

  reduce(id: number, by: number): Outcome {
    return this.run({ op: "reduce", id, by });
  }

  move(id: number, price: number, delta: number, flags = 0): Outcome {
    return this.run({ op: "move", id, price, delta, flags });
  }

  market(id: number, user: number, side: Side, qty: number, budget = NO_BUDGET): Outcome {
    return this.run({ op: "market", id, user, side, qty, budget });
  }

  cancel(id: number): Outcome {
    return this.run({ op: "cancel", id });
  }

  levels(side: Side, depth?: number): Array<[number, number]> {
    return snapshotLevels(this.book, side, depth);
  }

  /** Invariants through the public interface (and the reference's internals when it is one). */
  check(): void {
    this.mirror.checkBook(this.book);
    if (this.book instanceof ReferenceOrderBook) checkBookInvariants(this.book);
  }

  private run(cmd: Command): Outcome {
    const code = applyCommand(this.book, cmd);
    const events = this.recorder.take();
    this.mirror.record(cmd, code, events);
    return { code, events };
  }
}

/** Expects a command to be refused and to leave the book exactly as it was. */
function assertRefusedUnchanged(h: Harness, code: ResultCode, command: () => Outcome): void {
  const before = { bids: h.levels(BUY), asks: h.levels(SELL), size: h.book.size() };
  assert.deepEqual(command(), { code, events: [] });
  assert.deepEqual({ bids: h.levels(BUY), asks: h.levels(SELL), size: h.book.size() }, before);
}

function contractSuite(make: BookFactory): void {
  const fresh = (): Harness => new Harness(make);

  describe("resting and cancelling", () => {
    it("rests a limit order that meets nothing and reports its level", () => {
      const h = fresh();
      assert.deepEqual(h.limit(1, 1, BUY, 100, 5), {
        code: OK,
        events: [
          ["rested", 1, 1, BUY, 100, 5],
          ["level", BUY, 100, 5],
        ],
      });
      assert.deepEqual(h.limit(2, 2, BUY, 100, 3).events.at(-1), ["level", BUY, 100, 8]);
      assert.equal(h.book.bestBid(), 100);
      assert.equal(h.book.bestAsk(), -1);
      assert.equal(h.book.size(), 2);
      assert.equal(h.book.remaining(1), 5);
      h.check();
    });

    it("reports -1 best prices and no levels for an empty book", () => {
      const h = fresh();
      assert.equal(h.book.bestBid(), -1);
      assert.equal(h.book.bestAsk(), -1);
      assert.equal(h.book.size(), 0);
      assert.deepEqual(h.levels(BUY), []);
      assert.deepEqual(h.levels(SELL), []);
      assert.equal(h.book.remaining(1), -1);
      h.check();
    });

    it("cancels a resting order and reports the level's new total", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 4);
      h.limit(2, 2, SELL, 101, 6);
      assert.deepEqual(h.cancel(1), {
        code: OK,
        events: [
          ["done", 1, 1, SELL, DONE_CANCELLED, 4],
          ["level", SELL, 101, 6],
        ],
      });
      assert.deepEqual(h.cancel(2).events, [
        ["done", 2, 2, SELL, DONE_CANCELLED, 6],
        ["level", SELL, 101, 0],
      ]);
      assert.equal(h.book.bestAsk(), -1);
      assert.equal(h.book.size(), 0);
      h.check();
    });

    it("rejects cancel of an unknown order id", () => {
      const h = fresh();
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.cancel(42));
      h.limit(1, 1, BUY, 100, 5);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.cancel(2));
      h.check();
    });

    it("rejects cancel of an order that was already cancelled or filled", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.cancel(1);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.cancel(1));
      h.limit(2, 1, BUY, 100, 5);
      h.limit(3, 2, SELL, 100, 5);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.cancel(2));
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.cancel(3));
      h.check();
    });

    it("reports what is left when cancelling a partially filled order", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 10);
      h.limit(2, 2, BUY, 100, 3);
      assert.equal(h.book.remaining(1), 7);
      assert.deepEqual(h.cancel(1).events, [
        ["done", 1, 1, SELL, DONE_CANCELLED, 7],
        ["level", SELL, 100, 0],
      ]);
      h.check();
    });

    it("rejects a limit order whose id is already resting and changes nothing", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 2, SELL, 105, 5);
      assertRefusedUnchanged(h, ERR_DUPLICATE_ID, () => h.limit(1, 1, BUY, 101, 7));
      // Even when it would have traded.
      assertRefusedUnchanged(h, ERR_DUPLICATE_ID, () => h.limit(1, 3, BUY, 105, 7));
      assertRefusedUnchanged(h, ERR_DUPLICATE_ID, () => h.limit(2, 3, BUY, 105, 7));
      assert.equal(h.book.remaining(1), 5);
      assert.equal(h.book.remaining(2), 5);
      h.check();
    });

    it("accepts an id again once its order has left the book", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.cancel(1);
      assert.equal(h.limit(1, 1, BUY, 99, 2).code, OK);
      assert.equal(h.book.remaining(1), 2);
      h.check();
    });
  });

  describe("matching", () => {
    it("trades at the maker's price", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      assert.deepEqual(h.limit(2, 2, BUY, 105, 5).events, [
        ["trade", 2, 2, BUY, 1, 1, 100, 5, 0, 0],
        ["level", SELL, 100, 0],
      ]);
      h.limit(3, 1, BUY, 100, 5);
      assert.deepEqual(h.limit(4, 2, SELL, 90, 5).events, [
        ["trade", 4, 2, SELL, 3, 1, 100, 5, 0, 0],
        ["level", BUY, 100, 0],
      ]);
      assert.equal(h.book.size(), 0);
      h.check();
    });

    it("does not trade a limit order beyond its limit price", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      assert.deepEqual(h.limit(2, 2, BUY, 99, 5).events, [
        ["rested", 2, 2, BUY, 99, 5],
        ["level", BUY, 99, 5],
      ]);
      assert.deepEqual(h.limit(3, 2, SELL, 101, 5).events, [
        ["rested", 3, 2, SELL, 101, 5],
        ["level", SELL, 101, 5],
      ]);
      assert.equal(h.book.bestBid(), 99);
      assert.equal(h.book.bestAsk(), 100);
      h.check();
    });

    it("fully fills a limit order without a rested or done event", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 10);
      assert.deepEqual(h.limit(2, 2, BUY, 100, 4).events, [
        ["trade", 2, 2, BUY, 1, 1, 100, 4, 0, 6],
        ["level", SELL, 100, 6],
      ]);
      assert.equal(h.book.remaining(2), -1);
      assert.equal(h.book.remaining(1), 6);
      h.check();
    });

    it("keeps FIFO within a price level", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 3);
      h.limit(2, 2, SELL, 100, 3);
      h.limit(3, 3, SELL, 100, 3);
      assert.deepEqual(h.limit(4, 4, BUY, 100, 7).events, [
        ["trade", 4, 4, BUY, 1, 1, 100, 3, 4, 0],
        ["trade", 4, 4, BUY, 2, 2, 100, 3, 1, 0],
        ["trade", 4, 4, BUY, 3, 3, 100, 1, 0, 2],
        ["level", SELL, 100, 2],
      ]);
      h.check();
    });

    it("keeps a partially filled order at the head of its level", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 2, BUY, 100, 5);
      h.limit(3, 3, SELL, 100, 2);
      assert.deepEqual(h.limit(4, 3, SELL, 100, 4).events, [
        ["trade", 4, 3, SELL, 1, 1, 100, 3, 1, 0],
        ["trade", 4, 3, SELL, 2, 2, 100, 1, 0, 4],
        ["level", BUY, 100, 4],
      ]);
      h.check();
    });

    it("sends a cancelled and re-entered order to the back of its level", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 2, SELL, 100, 5);
      h.cancel(1);
      h.limit(3, 1, SELL, 100, 5);
      assert.deepEqual(h.limit(4, 4, BUY, 100, 6).events, [
        ["trade", 4, 4, BUY, 2, 2, 100, 5, 1, 0],
        ["trade", 4, 4, BUY, 3, 1, 100, 1, 0, 4],
        ["level", SELL, 100, 4],
      ]);
      h.check();
    });

    it("prefers the better price over the earlier order", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 99, 5);
      h.limit(2, 2, BUY, 101, 5);
      h.limit(3, 3, BUY, 100, 5);
      assert.deepEqual(h.limit(4, 4, SELL, 99, 12).events, [
        ["trade", 4, 4, SELL, 2, 2, 101, 5, 7, 0],
        ["trade", 4, 4, SELL, 3, 3, 100, 5, 2, 0],
        ["trade", 4, 4, SELL, 1, 1, 99, 2, 0, 3],
        ["level", BUY, 99, 3],
        ["level", BUY, 100, 0],
        ["level", BUY, 101, 0],
      ]);
      h.check();
    });

    it("limit buy sweeps several levels then rests", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 2);
      h.limit(2, 2, SELL, 102, 3);
      h.limit(3, 1, SELL, 103, 4);
      h.limit(4, 2, SELL, 105, 1);
      assert.deepEqual(h.limit(5, 3, BUY, 103, 10).events, [
        ["trade", 5, 3, BUY, 1, 1, 101, 2, 8, 0],
        ["trade", 5, 3, BUY, 2, 2, 102, 3, 5, 0],
        ["trade", 5, 3, BUY, 3, 1, 103, 4, 1, 0],
        ["rested", 5, 3, BUY, 103, 1],
        ["level", BUY, 103, 1],
        ["level", SELL, 101, 0],
        ["level", SELL, 102, 0],
        ["level", SELL, 103, 0],
      ]);
      assert.equal(h.book.bestBid(), 103);
      assert.equal(h.book.bestAsk(), 105);
      h.check();
    });

    it("limit sell sweeps several levels then rests", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 99, 2);
      h.limit(2, 2, BUY, 98, 3);
      h.limit(3, 1, BUY, 95, 4);
      assert.deepEqual(h.limit(4, 3, SELL, 97, 10).events, [
        ["trade", 4, 3, SELL, 1, 1, 99, 2, 8, 0],
        ["trade", 4, 3, SELL, 2, 2, 98, 3, 5, 0],
        ["rested", 4, 3, SELL, 97, 5],
        ["level", BUY, 98, 0],
        ["level", BUY, 99, 0],
        ["level", SELL, 97, 5],
      ]);
      assert.equal(h.book.bestBid(), 95);
      assert.equal(h.book.bestAsk(), 97);
      h.check();
    });
  });

  describe("self-trade prevention", () => {
    it("cancels own resting order on self-trade and keeps matching others", () => {
      const h = fresh();
      h.limit(1, 2, SELL, 100, 3);
      h.limit(2, 1, SELL, 100, 4);
      h.limit(3, 3, SELL, 100, 5);
      h.limit(4, 1, SELL, 101, 6);
      h.limit(5, 2, SELL, 101, 7);
      assert.deepEqual(h.limit(6, 1, BUY, 101, 10).events, [
        ["trade", 6, 1, BUY, 1, 2, 100, 3, 7, 0],
        ["done", 2, 1, SELL, DONE_SELF_TRADE, 4],
        ["trade", 6, 1, BUY, 3, 3, 100, 5, 2, 0],
        ["done", 4, 1, SELL, DONE_SELF_TRADE, 6],
        ["trade", 6, 1, BUY, 5, 2, 101, 2, 0, 5],
        ["level", SELL, 100, 0],
        ["level", SELL, 101, 5],
      ]);
      assert.equal(h.book.remaining(2), -1);
      assert.equal(h.book.remaining(4), -1);
      h.check();
    });

    it("rests the remainder after cancelling own orders at prices it reaches", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 1, SELL, 101, 5);
      assert.deepEqual(h.limit(3, 1, BUY, 101, 4).events, [
        ["done", 1, 1, SELL, DONE_SELF_TRADE, 5],
        ["done", 2, 1, SELL, DONE_SELF_TRADE, 5],
        ["rested", 3, 1, BUY, 101, 4],
        ["level", BUY, 101, 4],
        ["level", SELL, 100, 0],
        ["level", SELL, 101, 0],
      ]);
      assert.equal(h.book.bestAsk(), -1);
      h.check();
    });

    it("does not cancel own orders beyond the limit price", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 1, SELL, 102, 5);
      assert.deepEqual(h.limit(3, 1, BUY, 101, 4).events, [
        ["done", 1, 1, SELL, DONE_SELF_TRADE, 5],
        ["rested", 3, 1, BUY, 101, 4],
        ["level", BUY, 101, 4],
        ["level", SELL, 100, 0],
      ]);
      assert.equal(h.book.remaining(2), 5);
      h.check();
    });

    it("stops cancelling own orders once the incoming order is filled", () => {
      const h = fresh();
      h.limit(1, 2, BUY, 100, 5);
      h.limit(2, 1, BUY, 100, 5);
      assert.deepEqual(h.limit(3, 1, SELL, 100, 5).events, [
        ["trade", 3, 1, SELL, 1, 2, 100, 5, 0, 0],
        ["level", BUY, 100, 5],
      ]);
      assert.equal(h.book.remaining(2), 5);
      h.check();
    });
  });

  describe("market orders", () => {
    it("fills best price first and cancels the remainder at once", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 102, 2);
      h.limit(2, 2, SELL, 101, 3);
      assert.deepEqual(h.market(3, 3, BUY, 10), {
        code: OK,
        events: [
          ["trade", 3, 3, BUY, 2, 2, 101, 3, 7, 0],
          ["trade", 3, 3, BUY, 1, 1, 102, 2, 5, 0],
          ["done", 3, 3, BUY, DONE_REMAINDER, 5],
          ["level", SELL, 101, 0],
          ["level", SELL, 102, 0],
        ],
      });
      assert.equal(h.book.size(), 0);
      assert.equal(h.book.remaining(3), -1);
      h.check();
    });

    it("fully fills a market order without a done event", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 2, BUY, 99, 5);
      assert.deepEqual(h.market(3, 3, SELL, 7).events, [
        ["trade", 3, 3, SELL, 1, 1, 100, 5, 2, 0],
        ["trade", 3, 3, SELL, 2, 2, 99, 2, 0, 3],
        ["level", BUY, 99, 3],
        ["level", BUY, 100, 0],
      ]);
      h.check();
    });

    it("refuses a market order with no liquidity from other users and changes nothing", () => {
      const h = fresh();
      assertRefusedUnchanged(h, ERR_NO_LIQUIDITY, () => h.market(1, 1, BUY, 5));
      h.limit(2, 1, SELL, 100, 5);
      h.limit(3, 1, SELL, 101, 5);
      h.limit(4, 2, BUY, 99, 5);
      assertRefusedUnchanged(h, ERR_NO_LIQUIDITY, () => h.market(5, 1, BUY, 5));
      assertRefusedUnchanged(h, ERR_NO_LIQUIDITY, () => h.market(6, 1, BUY, 5, 1_000_000));
      assertRefusedUnchanged(h, ERR_NO_LIQUIDITY, () => h.market(7, 2, SELL, 5));
      assert.equal(h.book.remaining(2), 5);
      assert.equal(h.book.remaining(3), 5);
      h.check();
    });

    it("refuses a market order whose walk over other users' orders is worth less than the minimum order value", () => {
      // docs/API.md 20.5: a minimum of 1000 ticks × lots.
      const h = new Harness(make, 1000n);
      h.limit(1, 2, SELL, 100, 5);
      h.limit(2, 3, SELL, 99, 50); // the taker's own: not in the walk
      h.limit(3, 2, SELL, 101, 5);
      // 5 × 100 + 4 × 101 = 904.
      assertRefusedUnchanged(h, ERR_BELOW_MIN_NOTIONAL, () => h.market(4, 3, BUY, 9));
      // More than the liquidity: the walk takes all of it, 1005.
      assert.equal(h.market(5, 3, BUY, 100).code, OK);
      h.limit(6, 1, BUY, 100, 10);
      // Exactly the minimum is enough: 10 × 100.
      assertRefusedUnchanged(h, ERR_BELOW_MIN_NOTIONAL, () => h.market(7, 2, SELL, 9));
      assert.equal(h.market(8, 2, SELL, 10).code, OK);
      h.check();
    });

    it("compares a minimum order value past 2^52 exactly", () => {
      const min = 2n ** 53n + 1n;
      const h = new Harness(make, min);
      h.limit(1, 2, SELL, 2 ** 27, 2 ** 27);
      // 2^26 lots at 2^27 is 2^53: one below the minimum, which a double could not tell apart.
      assertRefusedUnchanged(h, ERR_BELOW_MIN_NOTIONAL, () => h.market(2, 1, BUY, 2 ** 26));
      assert.equal(h.market(3, 1, BUY, 2 ** 26 + 1).code, OK);
      h.check();
    });

    it("cancels the user's own resting orders it meets while filling", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 2, SELL, 101, 5);
      h.limit(3, 1, SELL, 102, 5);
      assert.deepEqual(h.market(4, 1, BUY, 8).events, [
        ["done", 1, 1, SELL, DONE_SELF_TRADE, 5],
        ["trade", 4, 1, BUY, 2, 2, 101, 5, 3, 0],
        ["done", 3, 1, SELL, DONE_SELF_TRADE, 5],
        ["done", 4, 1, BUY, DONE_REMAINDER, 3],
        ["level", SELL, 100, 0],
        ["level", SELL, 101, 0],
        ["level", SELL, 102, 0],
      ]);
      h.check();
    });

    it("ignores the budget of a market sell", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      assert.deepEqual(h.market(2, 2, SELL, 5, 0).events, [
        ["trade", 2, 2, SELL, 1, 1, 100, 5, 0, 0],
        ["level", BUY, 100, 0],
      ]);
      h.check();
    });

    it("refuses a market buy whose full walk exceeds the budget", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 2);
      h.limit(2, 2, SELL, 110, 3);
      // Walk for 4 lots: 2 × 100 + 2 × 110 = 420.
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(3, 3, BUY, 4, 419));
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(4, 3, BUY, 4, 0));
      // Walk for 10 lots stops at the 5 lots there are: 2 × 100 + 3 × 110 = 530.
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(5, 3, BUY, 10, 529));
      assert.equal(h.book.remaining(1), 2);
      assert.equal(h.book.remaining(2), 3);
      h.check();
    });

    it("accepts a market buy whose budget is exactly the cost of the walk", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 2);
      h.limit(2, 2, SELL, 110, 3);
      assert.deepEqual(h.market(3, 3, BUY, 4, 420), {
        code: OK,
        events: [
          ["trade", 3, 3, BUY, 1, 1, 100, 2, 2, 0],
          ["trade", 3, 3, BUY, 2, 2, 110, 2, 0, 1],
          ["level", SELL, 100, 0],
          ["level", SELL, 110, 1],
        ],
      });
      h.check();
    });

    it("market buy stops at the budget and cancels the remainder", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 2);
      h.limit(2, 2, SELL, 110, 3);
      // 10 lots wanted, 5 there for 530: the budget is spent to the last tick and 5 lots remain.
      assert.deepEqual(h.market(3, 3, BUY, 10, 530).events, [
        ["trade", 3, 3, BUY, 1, 1, 100, 2, 8, 0],
        ["trade", 3, 3, BUY, 2, 2, 110, 3, 5, 0],
        ["done", 3, 3, BUY, DONE_REMAINDER, 5],
        ["level", SELL, 100, 0],
        ["level", SELL, 110, 0],
      ]);
      h.check();
    });

    it("counts only other users' orders in the budget walk", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 50, 10);
      h.limit(2, 2, SELL, 100, 3);
      // The own 10 lots at 50 are cancelled, not bought: the walk is 3 × 100.
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(3, 1, BUY, 3, 299));
      assert.deepEqual(h.market(4, 1, BUY, 3, 300).events, [
        ["done", 1, 1, SELL, DONE_SELF_TRADE, 10],
        ["trade", 4, 1, BUY, 2, 2, 100, 3, 0, 0],
        ["level", SELL, 50, 0],
        ["level", SELL, 100, 0],
      ]);
      h.check();
    });

    it("compares budgets exactly at 2^52 and beyond 2^53 ticks × lots", () => {
      const h = fresh();
      const lots = Math.floor(MAX_BUDGET / 3); // 3 × lots = 2^52 - 1
      h.limit(1, 1, SELL, 3, lots);
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(2, 2, BUY, lots, MAX_BUDGET - 2));
      assert.equal(h.market(3, 2, BUY, lots, MAX_BUDGET - 1).code, OK);
      // 10^9 × 2^40 ≈ 1.1 × 10^21: far past 2^53, refused even with the largest budget.
      h.limit(4, 1, SELL, 1_000_000_000, 2 ** 40);
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(5, 2, BUY, 2 ** 40, MAX_BUDGET));
      assert.deepEqual(h.market(6, 2, BUY, 2 ** 40 + 1, NO_BUDGET).events, [
        ["trade", 6, 2, BUY, 4, 1, 1_000_000_000, 2 ** 40, 1, 0],
        ["done", 6, 2, BUY, DONE_REMAINDER, 1],
        ["level", SELL, 1_000_000_000, 0],
      ]);
      h.check();
    });

    it("compares a budget past 2^52 exactly, to the last tick × lot of a sum past 2^53", () => {
      const h = fresh();
      // Safe prices whose products and sum are not exact doubles: 3 × (2^52 + 1) + (2^52 + 2).
      h.limit(1, 1, SELL, 2 ** 52 + 1, 3);
      h.limit(2, 3, SELL, 2 ** 52 + 2, 1);
      h.limit(3, 3, SELL, 2 ** 52 + 3, 1); // not reached: the walk ends after 4 lots
      h.limit(4, 2, SELL, 1, 5); // the buyer's own order: cancelled, not bought, not costed
      const cost = 3n * (2n ** 52n + 1n) + 2n ** 52n + 2n;
      assert.equal(cost, 2n ** 54n + 5n);
      // Budgets are doubles: 2^54 + 5 is none, so the nearest below (2^54 + 4) and above (2^54 + 8).
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(5, 2, BUY, 4, 2 ** 54 + 4));
      const bought = h.market(6, 2, BUY, 4, 2 ** 54 + 8);
      assert.equal(bought.code, OK);
      assert.deepEqual(
        bought.events.filter((e) => e[0] === "trade"),
        [
          ["trade", 6, 2, BUY, 1, 1, 2 ** 52 + 1, 3, 1, 0],
          ["trade", 6, 2, BUY, 2, 3, 2 ** 52 + 2, 1, 0, 0],
        ],
      );
      h.check();
    });

    it("refuses a budget past 2^52 that a rounded product would fit", () => {
      const h = fresh();
      // 6 × 3,002,399,751,580,331 = 2^54 + 2, which as a double rounds (to even) down to 2^54.
      const price = 3_002_399_751_580_331;
      h.limit(1, 1, SELL, price, 6);
      assert.equal(price * 6, 2 ** 54);
      assertRefusedUnchanged(h, ERR_INSUFFICIENT_FUNDS, () => h.market(2, 2, BUY, 6, 2 ** 54));
      assert.equal(h.market(3, 2, BUY, 6, 2 ** 54 + 4).code, OK);
      h.check();
    });
  });

  describe("level events and snapshots", () => {
    it("reports each changed level once per command", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 2);
      h.limit(2, 2, SELL, 101, 2);
      h.limit(3, 3, SELL, 101, 2);
      h.limit(4, 1, SELL, 102, 2);
      h.limit(5, 2, SELL, 102, 2);
      h.limit(6, 3, BUY, 90, 2);
      const { events } = h.limit(7, 3, BUY, 102, 10);
      assert.deepEqual(
        events.filter((e) => e[0] === "level"),
        [
          ["level", BUY, 102, 2],
          ["level", SELL, 101, 0],
          ["level", SELL, 102, 0],
        ],
      );
      assert.deepEqual(
        events.map((e) => e[0]),
        ["trade", "trade", "done", "trade", "trade", "rested", "level", "level", "level"],
      );
      h.check();
    });

    it("levels() lists the best level first and at most depth levels", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 98, 1);
      h.limit(2, 1, BUY, 100, 2);
      h.limit(3, 1, BUY, 99, 3);
      h.limit(4, 2, BUY, 100, 4);
      h.limit(5, 1, SELL, 103, 5);
      h.limit(6, 1, SELL, 101, 6);
      h.limit(7, 1, SELL, 102, 7);
      assert.deepEqual(h.levels(BUY), [
        [100, 6],
        [99, 3],
        [98, 1],
      ]);
      assert.deepEqual(h.levels(SELL), [
        [101, 6],
        [102, 7],
        [103, 5],
      ]);
      assert.deepEqual(h.levels(BUY, 2), [
        [100, 6],
        [99, 3],
      ]);
      assert.deepEqual(h.levels(SELL, 1), [[101, 6]]);
      assert.deepEqual(h.levels(SELL, 0), []);
      assert.equal(h.book.bestBid(), 100);
      assert.equal(h.book.bestAsk(), 101);
      h.check();
    });

    it("supports prices far apart (1 and 10^9 ticks) in one book", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 1, 5);
      h.limit(2, 1, SELL, 1_000_000_000, 5);
      h.limit(3, 1, BUY, 2, 1);
      h.limit(4, 1, SELL, 999_999_999, 1);
      assert.deepEqual(h.levels(BUY), [
        [2, 1],
        [1, 5],
      ]);
      assert.deepEqual(h.levels(SELL), [
        [999_999_999, 1],
        [1_000_000_000, 5],
      ]);
      assert.deepEqual(h.limit(5, 2, SELL, 1, 7).events, [
        ["trade", 5, 2, SELL, 3, 1, 2, 1, 6, 0],
        ["trade", 5, 2, SELL, 1, 1, 1, 5, 1, 0],
        ["rested", 5, 2, SELL, 1, 1],
        ["level", BUY, 1, 0],
        ["level", BUY, 2, 0],
        ["level", SELL, 1, 1],
      ]);
      assert.deepEqual(h.market(6, 2, BUY, 7).events, [
        ["done", 5, 2, SELL, DONE_SELF_TRADE, 1],
        ["trade", 6, 2, BUY, 4, 1, 999_999_999, 1, 6, 0],
        ["trade", 6, 2, BUY, 2, 1, 1_000_000_000, 5, 1, 0],
        ["done", 6, 2, BUY, DONE_REMAINDER, 1],
        ["level", SELL, 1, 0],
        ["level", SELL, 999_999_999, 0],
        ["level", SELL, 1_000_000_000, 0],
      ]);
      h.check();
    });

    it("handles quantities above 2^32 lots", () => {
      const h = fresh();
      const big = 2 ** 32 + 7;
      h.limit(1, 1, SELL, 100, big);
      h.limit(2, 2, SELL, 100, 2 ** 40);
      assert.deepEqual(h.levels(SELL), [[100, big + 2 ** 40]]);
      assert.deepEqual(h.limit(3, 3, BUY, 100, big + 5).events, [
        ["trade", 3, 3, BUY, 1, 1, 100, big, 5, 0],
        ["trade", 3, 3, BUY, 2, 2, 100, 5, 0, 2 ** 40 - 5],
        ["level", SELL, 100, 2 ** 40 - 5],
      ]);
      assert.equal(h.book.remaining(2), 2 ** 40 - 5);
      h.check();
    });
  });

  describe("time in force and post-only", () => {
    it("ends the remainder of an IOC order instead of resting it", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 3);
      h.limit(2, 1, SELL, 102, 3);
      assert.deepEqual(h.limit(3, 2, BUY, 101, 5, TIF_IOC), {
        code: OK,
        events: [
          ["trade", 3, 2, BUY, 1, 1, 100, 3, 2, 0],
          ["done", 3, 2, BUY, DONE_REMAINDER, 2],
          ["level", SELL, 100, 0],
        ],
      });
      assert.equal(h.book.remaining(3), -1);
      assert.equal(h.book.bestBid(), -1);
      h.check();
    });

    it("ends an IOC order that meets nothing at once, with its whole quantity", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 105, 3);
      assert.deepEqual(h.limit(2, 2, BUY, 100, 4, TIF_IOC), {
        code: OK,
        events: [["done", 2, 2, BUY, DONE_REMAINDER, 4]],
      });
      assert.equal(h.book.size(), 1);
      h.check();
    });

    it("fully fills an IOC order without an outcome event", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 9);
      assert.deepEqual(h.limit(2, 2, SELL, 99, 4, TIF_IOC).events, [
        ["trade", 2, 2, SELL, 1, 1, 100, 4, 0, 5],
        ["level", BUY, 100, 5],
      ]);
      h.check();
    });

    it("cancels own orders met by an IOC order and goes on matching other users", () => {
      const h = fresh();
      h.limit(1, 2, SELL, 100, 3);
      h.limit(2, 1, SELL, 100, 3);
      assert.deepEqual(h.limit(3, 2, BUY, 100, 5, TIF_IOC).events, [
        ["done", 1, 2, SELL, DONE_SELF_TRADE, 3],
        ["trade", 3, 2, BUY, 2, 1, 100, 3, 2, 0],
        ["done", 3, 2, BUY, DONE_REMAINDER, 2],
        ["level", SELL, 100, 0],
      ]);
      h.check();
    });

    it("fills a FOK order that other users' orders can fill exactly", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 3);
      h.limit(2, 3, SELL, 101, 4);
      h.limit(3, 1, SELL, 102, 9);
      assert.deepEqual(h.limit(4, 2, BUY, 101, 7, TIF_FOK), {
        code: OK,
        events: [
          ["trade", 4, 2, BUY, 1, 1, 100, 3, 4, 0],
          ["trade", 4, 2, BUY, 2, 3, 101, 4, 0, 0],
          ["level", SELL, 100, 0],
          ["level", SELL, 101, 0],
        ],
      });
      assert.equal(h.book.bestAsk(), 102);
      h.check();
    });

    it("kills a FOK order one lot short of other users' liquidity: one done event, nothing else", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 3);
      h.limit(2, 3, SELL, 101, 4);
      // 102 is beyond the limit: it does not count.
      h.limit(3, 1, SELL, 102, 9);
      assert.deepEqual(h.limit(4, 2, BUY, 101, 8, TIF_FOK), {
        code: OK,
        events: [["done", 4, 2, BUY, DONE_REMAINDER, 8]],
      });
      assert.deepEqual(h.levels(SELL), [
        [100, 3],
        [101, 4],
        [102, 9],
      ]);
      h.check();
    });

    it("kills a FOK order that only its own orders could fill, without self-trade cancels", () => {
      const h = fresh();
      h.limit(1, 2, SELL, 100, 5);
      h.limit(2, 1, SELL, 100, 2);
      assert.deepEqual(h.limit(3, 2, BUY, 100, 4, TIF_FOK), {
        code: OK,
        events: [["done", 3, 2, BUY, DONE_REMAINDER, 4]],
      });
      assert.equal(h.book.remaining(1), 5, "the own order was not self-trade cancelled");
      assert.equal(h.book.size(), 2);
      h.check();
    });

    it("fills a FOK order whose way crosses its own order, cancelling that order as self-trade", () => {
      const h = fresh();
      h.limit(1, 2, BUY, 100, 5);
      h.limit(2, 1, BUY, 100, 4);
      assert.deepEqual(h.limit(3, 2, SELL, 100, 4, TIF_FOK).events, [
        ["done", 1, 2, BUY, DONE_SELF_TRADE, 5],
        ["trade", 3, 2, SELL, 2, 1, 100, 4, 0, 0],
        ["level", BUY, 100, 0],
      ]);
      h.check();
    });

    it("rests a post-only order that reaches nothing", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 5);
      assert.deepEqual(h.limit(2, 2, BUY, 100, 5, FLAG_POST_ONLY), {
        code: OK,
        events: [
          ["rested", 2, 2, BUY, 100, 5],
          ["level", BUY, 100, 5],
        ],
      });
      h.check();
    });

    it("rejects a post-only order priced equal to the best opposite price and changes nothing", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 5);
      h.limit(2, 1, BUY, 99, 5);
      assertRefusedUnchanged(h, ERR_WOULD_TAKE, () => h.limit(3, 2, BUY, 101, 5, FLAG_POST_ONLY));
      assertRefusedUnchanged(h, ERR_WOULD_TAKE, () => h.limit(4, 2, SELL, 99, 5, FLAG_POST_ONLY));
      assert.equal(h.book.remaining(3), -1);
      h.check();
    });

    it("rejects a post-only order that would only meet the same user's order", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 5);
      assertRefusedUnchanged(h, ERR_WOULD_TAKE, () => h.limit(2, 1, BUY, 105, 5, FLAG_POST_ONLY));
      assert.equal(h.book.remaining(1), 5);
      h.check();
    });

    it("checks a duplicate id before post-only", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 101, 5);
      assertRefusedUnchanged(h, ERR_DUPLICATE_ID, () => h.limit(1, 2, BUY, 101, 5, FLAG_POST_ONLY));
      h.check();
    });
  });

  describe("reduce", () => {
    it("lowers a resting order's quantity and keeps its place in the level", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 2, SELL, 100, 5);
      assert.deepEqual(h.reduce(1, 3), {
        code: OK,
        events: [
          ["amended", 1, 1, SELL, 100, 100, 5, 2],
          ["level", SELL, 100, 7],
        ],
      });
      assert.equal(h.book.remaining(1), 2);
      // Order 1 is still first.
      assert.deepEqual(h.limit(3, 3, BUY, 100, 3).events, [
        ["trade", 3, 3, BUY, 1, 1, 100, 2, 1, 0],
        ["trade", 3, 3, BUY, 2, 2, 100, 1, 0, 4],
        ["level", SELL, 100, 4],
      ]);
      h.check();
    });

    it("reduces an order to exactly one lot", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 9);
      assert.deepEqual(h.reduce(1, 8).events, [
        ["amended", 1, 1, BUY, 100, 100, 9, 1],
        ["level", BUY, 100, 1],
      ]);
      assert.equal(h.book.remaining(1), 1);
      h.check();
    });

    it("rejects a reduce by the whole open quantity or more, or by less than one lot", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 9);
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.reduce(1, 9));
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.reduce(1, 10));
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.reduce(1, 0));
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.reduce(1, -1));
      assert.equal(h.book.remaining(1), 9);
      h.check();
    });

    it("rejects a reduce of an unknown, cancelled or filled order", () => {
      const h = fresh();
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.reduce(7, 1));
      h.limit(1, 1, BUY, 100, 5);
      h.cancel(1);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.reduce(1, 1));
      h.limit(2, 1, BUY, 100, 5);
      h.limit(3, 2, SELL, 100, 5);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.reduce(2, 1));
      h.check();
    });

    it("reduces a partially filled order from what is left", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 10);
      h.limit(2, 2, BUY, 100, 4);
      assert.deepEqual(h.reduce(1, 5).events, [
        ["amended", 1, 1, SELL, 100, 100, 6, 1],
        ["level", SELL, 100, 1],
      ]);
      h.check();
    });
  });

  describe("move", () => {
    it("moves an order to the back of its level when the price stays and the quantity does not change", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 100, 5);
      h.limit(2, 2, SELL, 100, 5);
      assert.deepEqual(h.move(1, 100, 0), {
        code: OK,
        events: [
          ["amended", 1, 1, SELL, 100, 100, 5, 5],
          ["rested", 1, 1, SELL, 100, 5],
          ["level", SELL, 100, 10],
        ],
      });
      // Order 2 is now first.
      assert.deepEqual(h.limit(3, 3, BUY, 100, 6).events, [
        ["trade", 3, 3, BUY, 2, 2, 100, 5, 1, 0],
        ["trade", 3, 3, BUY, 1, 1, 100, 1, 0, 4],
        ["level", SELL, 100, 4],
      ]);
      h.check();
    });

    it("sends an order whose quantity goes up to the back of its level", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 2, BUY, 100, 5);
      assert.deepEqual(h.move(1, 100, 3).events, [
        ["amended", 1, 1, BUY, 100, 100, 5, 8],
        ["rested", 1, 1, BUY, 100, 8],
        ["level", BUY, 100, 13],
      ]);
      assert.deepEqual(h.limit(3, 3, SELL, 100, 6).events.slice(0, 2), [
        ["trade", 3, 3, SELL, 2, 2, 100, 5, 1, 0],
        ["trade", 3, 3, SELL, 1, 1, 100, 1, 0, 7],
      ]);
      h.check();
    });

    it("moves the only order of a level in place, reporting the level once", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 1, BUY, 99, 5);
      assert.deepEqual(h.move(1, 100, -2).events, [
        ["amended", 1, 1, BUY, 100, 100, 5, 3],
        ["rested", 1, 1, BUY, 100, 3],
        ["level", BUY, 100, 3],
      ]);
      h.check();
    });

    it("moves an order to a new price, reporting the old and the new level", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 103, 5);
      h.limit(2, 2, SELL, 103, 1);
      h.limit(3, 2, SELL, 101, 2);
      assert.deepEqual(h.move(1, 101, -1), {
        code: OK,
        events: [
          ["amended", 1, 1, SELL, 103, 101, 5, 4],
          ["rested", 1, 1, SELL, 101, 4],
          ["level", SELL, 101, 6],
          ["level", SELL, 103, 1],
        ],
      });
      // At 101 it queues behind order 3.
      assert.deepEqual(h.limit(4, 3, BUY, 101, 3).events.slice(0, 2), [
        ["trade", 4, 3, BUY, 3, 2, 101, 2, 1, 0],
        ["trade", 4, 3, BUY, 1, 1, 101, 1, 0, 3],
      ]);
      h.check();
    });

    it("empties the old level when the only order of the best level moves away", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      h.limit(2, 1, BUY, 98, 5);
      assert.deepEqual(h.move(1, 97, 0).events, [
        ["amended", 1, 1, BUY, 100, 97, 5, 5],
        ["rested", 1, 1, BUY, 97, 5],
        ["level", BUY, 97, 5],
        ["level", BUY, 100, 0],
      ]);
      assert.equal(h.book.bestBid(), 98);
      h.check();
    });

    it("moves an order to a price that crosses and fills it completely as a taker", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 95, 4);
      h.limit(2, 2, SELL, 100, 3);
      h.limit(3, 3, SELL, 101, 5);
      assert.deepEqual(h.move(1, 101, 2), {
        code: OK,
        events: [
          ["amended", 1, 1, BUY, 95, 101, 4, 6],
          ["trade", 1, 1, BUY, 2, 2, 100, 3, 3, 0],
          ["trade", 1, 1, BUY, 3, 3, 101, 3, 0, 2],
          ["level", BUY, 95, 0],
          ["level", SELL, 100, 0],
          ["level", SELL, 101, 2],
        ],
      });
      assert.equal(h.book.remaining(1), -1);
      assert.equal(h.book.bestBid(), -1);
      h.check();
    });

    it("moves an order across the book: it trades, cancels its user's orders it meets, and rests the remainder", () => {
      const h = fresh();
      h.limit(1, 1, SELL, 110, 4);
      h.limit(2, 1, BUY, 99, 2);
      h.limit(3, 2, BUY, 100, 3);
      assert.deepEqual(h.move(1, 99, 2).events, [
        ["amended", 1, 1, SELL, 110, 99, 4, 6],
        ["trade", 1, 1, SELL, 3, 2, 100, 3, 3, 0],
        ["done", 2, 1, BUY, DONE_SELF_TRADE, 2],
        ["rested", 1, 1, SELL, 99, 3],
        ["level", BUY, 99, 0],
        ["level", BUY, 100, 0],
        ["level", SELL, 99, 3],
        ["level", SELL, 110, 0],
      ]);
      h.check();
    });

    it("rejects a move of an unknown id", () => {
      const h = fresh();
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.move(1, 100, 1));
      h.limit(1, 1, BUY, 100, 5);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.move(2, 100, 1));
      h.cancel(1);
      assertRefusedUnchanged(h, ERR_ORDER_NOT_FOUND, () => h.move(1, 100, 1));
      h.check();
    });

    it("rejects a move that leaves no open quantity", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 100, 5);
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.move(1, 101, -5));
      assertRefusedUnchanged(h, ERR_AMEND_TOO_SMALL, () => h.move(1, 100, -6));
      assert.equal(h.move(1, 100, -4).code, OK);
      assert.equal(h.book.remaining(1), 1);
      h.check();
    });

    it("rejects a post-only move whose new price reaches the opposite best, any user's", () => {
      const h = fresh();
      h.limit(1, 1, BUY, 98, 5);
      h.limit(2, 1, SELL, 101, 5);
      h.limit(3, 2, SELL, 102, 5);
      assertRefusedUnchanged(h, ERR_WOULD_TAKE, () => h.move(1, 101, 0, FLAG_POST_ONLY));
      assertRefusedUnchanged(h, ERR_WOULD_TAKE, () => h.move(3, 98, 0, FLAG_POST_ONLY));
      assert.deepEqual(h.move(1, 100, 1, FLAG_POST_ONLY).events, [
        ["amended", 1, 1, BUY, 98, 100, 5, 6],
        ["rested", 1, 1, BUY, 100, 6],
        ["level", BUY, 98, 0],
        ["level", BUY, 100, 6],
      ]);
      h.check();
    });

    it("keeps the order's id, user and side through moves and reduces", () => {
      const h = fresh();
      h.limit(5, 7, SELL, 120, 10);
      h.move(5, 118, 0);
      h.reduce(5, 4);
      h.move(5, 125, 5);
      assert.equal(h.book.remaining(5), 11);
      assert.deepEqual(h.limit(6, 8, BUY, 125, 11).events[0], ["trade", 6, 8, BUY, 5, 7, 125, 11, 0, 0]);
      h.check();
    });
  });

  describe("capacity", () => {
    it("grows past its initial capacity and drains back to empty", () => {
      const h = fresh();
      // 1000 bids at 9998, 9996, ... and 1000 asks at 20001, 20003, ...: one order per level.
      for (let i = 1; i <= 2000; i++) {
        if (i % 2 === 0) h.limit(i, i % 4, BUY, 10_000 - i, i);
        else h.limit(i, i % 4, SELL, 20_000 + i, i);
      }
      assert.equal(h.book.size(), 2000);
      assert.equal(h.levels(BUY).length, 1000);
      assert.equal(h.levels(SELL).length, 1000);
      assert.equal(h.book.bestBid(), 9998);
      assert.equal(h.book.bestAsk(), 20_001);
      h.check();
      for (let i = 1; i <= 2000; i += 2) assert.equal(h.cancel(i).code, OK);
      assert.equal(h.market(2001, 9, SELL, 2 ** 40).events.filter((e) => e[0] === "trade").length, 1000);
      assert.equal(h.book.size(), 0);
      assert.equal(h.limit(2002, 1, BUY, 5, 5).code, OK);
      h.check();
    });

    it("reuses and compacts levels emptied deep inside a large book", () => {
      const h = fresh();
      // 3000 ask levels, one order each; then empty most of them from the far end inwards, so
      // every emptied level sits inside the side (never at its top).
      for (let i = 1; i <= 3000; i++) h.limit(i, 1, SELL, 10_000 + i, 1);
      for (let i = 3000; i > 500; i--) {
        if (i % 7 !== 0) assert.equal(h.cancel(i).code, OK);
      }
      h.check();
      // Orders arriving at emptied prices bring those levels back at their place in price order.
      for (let i = 3000; i > 2900; i--) h.limit(10_000 + i, 2, SELL, 10_000 + i, 2);
      h.check();
      const asks = h.levels(SELL);
      assert.deepEqual(
        asks.map(([p]) => p),
        [...asks.map(([p]) => p)].sort((a, b) => a - b),
      );
      // 13000 lost its first order (3000 is not a multiple of 7) and now holds only the new one.
      assert.deepEqual(asks[asks.length - 1], [13_000, 2]);
      assert.deepEqual(asks[asks.length - 2], [12_999, 2]);
      // A sweep consumes every resting order, in price order.
      const resting = h.book.size();
      const trades = h.market(20_000, 3, BUY, 2 ** 40).events.filter((e) => e[0] === "trade");
      assert.equal(trades.length, resting);
      const prices = trades.map((e) => e[6] as number);
      assert.deepEqual(
        prices,
        [...prices].sort((a, b) => a - b),
      );
      assert.equal(h.book.size(), 0);
      assert.equal(h.book.bestAsk(), -1);
      h.check();
    });
  });
}

const implementations: Array<[string, BookFactory]> = [
  ["ReferenceOrderBook", (events, minNotional) => new ReferenceOrderBook(events, minNotional)],
  ["OrderBook", (events, minNotional) => new OrderBook(events, 16, minNotional)],
];

for (const [name, make] of implementations) {
  describe(`${name} matching contract`, () => contractSuite(make));
}
