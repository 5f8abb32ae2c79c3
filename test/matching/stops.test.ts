/**
 * Stop orders around the book (workers/matching/stops.ts, docs/API.md 18), run against both book
 * implementations: waiting, the trigger in both directions, id order, the cascade, the refusals
 * of a triggered market order, cancels, the budget a triggered market buy waits for, and OCO pairs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type BookEvents,
  BUY,
  DONE_CANCELLED,
  DONE_INSUFFICIENT_FUNDS,
  DONE_NO_LIQUIDITY,
  DONE_OCO,
  ERR_AMEND_TOO_SMALL,
  ERR_DUPLICATE_ID,
  ERR_OCO_PRICE,
  ERR_ORDER_NOT_FOUND,
  ERR_STOP_WOULD_TRIGGER,
  ERR_WOULD_TAKE,
  FLAG_POST_ONLY,
  type MatchingBook,
  OK,
  SELL,
  STOP_MARKET,
  STOP_OCO,
  STOP_RESTORE,
  STOP_SELL,
  STOP_UP,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { StopBook } from "../../workers/matching/stops.ts";
import { RecordingEvents, ReferenceOrderBook } from "./reference-book.ts";

type BookFactory = (events: BookEvents) => MatchingBook;

const BOOKS: [string, BookFactory][] = [
  ["ReferenceOrderBook", (events) => new ReferenceOrderBook(events)],
  ["OrderBook", (events) => new OrderBook(events)],
];

function setup(make: BookFactory, lastPrice = -1) {
  const rec = new RecordingEvents();
  const book = make(rec);
  const stops = new StopBook(book, rec, lastPrice);
  /** Runs a book command as the worker does: then the stops its trades trigger. */
  const step = (run: () => number): number => {
    stops.begin(1);
    const r = run();
    assert.equal(stops.cascade(), true, "the step completes");
    return r;
  };
  const names = () => rec.take().filter((e) => e[0] !== "level");
  return { rec, stops, book, step, names };
}

for (const [name, make] of BOOKS) {
  describe(`stop orders around ${name}`, () => {
    it("a waiting stop is in no level and an up stop triggers at a trade price >= its stop", () => {
      const { stops, book, step, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_UP, 105, 2, 0, 100), OK);
      assert.equal(book.size(), 0);
      assert.equal(book.bestBid(), -1);
      step(() => book.limit(1, 1, SELL, 99, 5));
      step(() => book.limit(2, 2, BUY, 99, 1));
      // The trade at 99 is below 100: nothing triggers.
      assert.deepEqual(
        names().map((e) => e[0]),
        ["rested", "trade"],
      );
      assert.equal(stops.size, 1);
      step(() => book.limit(3, 1, SELL, 100, 5));
      step(() => book.limit(4, 2, BUY, 100, 5));
      const events = names();
      // 4 takes 99 (the rest of 1), then 100; the stop triggers at 100 and buys 2 at 100.
      assert.deepEqual(
        events.map((e) => e[0]),
        ["rested", "trade", "trade", "triggered", "trade"],
      );
      assert.deepEqual(events[3], ["triggered", 10, 7, BUY]);
      assert.equal(stops.size, 0);
    });

    it("a down stop triggers at a trade price <= its stop, not above it", () => {
      const { stops, book, step, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_SELL | STOP_MARKET, 0, 1, 0, 100), OK);
      step(() => book.limit(1, 1, BUY, 101, 1));
      step(() => book.limit(2, 2, SELL, 101, 1));
      assert.equal(stops.size, 1);
      step(() => book.limit(3, 1, BUY, 100, 3));
      step(() => book.limit(4, 2, SELL, 100, 1));
      const events = names().map((e) => e[0]);
      assert.deepEqual(events.slice(-4), ["rested", "trade", "triggered", "trade"]);
      assert.equal(stops.size, 0);
    });

    it("refuses a stop that the last trade price already meets, and a repeated id", () => {
      const { stops } = setup(make, 100);
      assert.equal(stops.add(1, 1, STOP_UP, 0, 1, 0, 100), ERR_STOP_WOULD_TRIGGER);
      assert.equal(stops.add(1, 1, 0, 0, 1, 0, 100), ERR_STOP_WOULD_TRIGGER);
      assert.equal(stops.add(1, 1, STOP_UP, 0, 1, 0, 101), OK);
      assert.equal(stops.add(2, 1, 0, 0, 1, 0, 99), OK);
      assert.equal(stops.add(1, 1, STOP_UP, 0, 1, 0, 102), ERR_DUPLICATE_ID);
      // Recovery puts back what waited, whatever the last price.
      assert.equal(stops.add(3, 1, STOP_UP | STOP_RESTORE, 0, 1, 0, 50), OK);
    });

    it("triggers simultaneous stops in id order and runs the cascade in the same step", () => {
      const { stops, book, step, names } = setup(make);
      // Three stop-limit buys waiting above; the second arrived first but has the higher id.
      assert.equal(stops.add(12, 7, STOP_UP, 120, 1, 0, 100), OK);
      assert.equal(stops.add(11, 8, STOP_UP, 120, 1, 0, 101), OK);
      // A cascade: 13 triggers at 110, which only the fill of a triggered order reaches.
      assert.equal(stops.add(13, 9, STOP_UP, 120, 1, 0, 110), OK);
      step(() => book.limit(1, 1, SELL, 101, 2));
      step(() => book.limit(2, 1, SELL, 110, 5));
      names();
      step(() => book.limit(3, 2, BUY, 101, 1));
      const order = names()
        .filter((e) => (e[0] as string) === "triggered")
        .map((e) => e[1]);
      assert.deepEqual(order, [11, 12, 13]);
      assert.equal(stops.size, 0);
      assert.equal(book.remaining(2), 3);
    });

    it("ends a triggered market order without liquidity cancelled whole", () => {
      const { stops, book, step, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_SELL | STOP_MARKET, 0, 4, 0, 100), OK);
      step(() => book.limit(1, 1, BUY, 100, 1));
      step(() => book.limit(2, 2, SELL, 100, 1));
      const events = names();
      assert.deepEqual(events.slice(-2), [
        ["triggered", 10, 7, SELL],
        ["done", 10, 7, SELL, DONE_NO_LIQUIDITY, 4],
      ]);
    });

    it("a triggered market buy waits for its budget, then is refused when the walk costs more", () => {
      const { stops, book, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_UP | STOP_MARKET, 0, 2, 0, 100), OK);
      stops.begin(1);
      book.limit(1, 1, SELL, 100, 3);
      assert.equal(stops.cascade(), true);
      stops.begin(1);
      book.limit(2, 2, BUY, 100, 1);
      assert.equal(stops.cascade(), false);
      assert.equal(stops.suspended, true);
      assert.deepEqual(names().slice(-2), [
        ["triggered", 10, 7, BUY],
        ["fundsAsked", 10, 7],
      ]);
      assert.equal(stops.funds(10, 199), true);
      assert.deepEqual(names(), [["done", 10, 7, BUY, DONE_INSUFFICIENT_FUNDS, 2]]);
      assert.equal(book.remaining(1), 2);
    });

    it("a triggered market buy with enough budget fills", () => {
      const { stops, book, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_UP | STOP_MARKET, 0, 2, 0, 100), OK);
      stops.begin(1);
      book.limit(1, 1, SELL, 100, 3);
      stops.cascade();
      stops.begin(1);
      book.limit(2, 2, BUY, 100, 1);
      assert.equal(stops.cascade(), false);
      names();
      assert.equal(stops.funds(10, 200), true);
      assert.deepEqual(names()[0], ["trade", 10, 7, BUY, 1, 1, 100, 2, 0, 0]);
      assert.equal(book.size(), 0);
    });

    it("runs a cascade of 10,000 stops triggered by one trade in one step, in id order", () => {
      const { stops, book, step, rec } = setup(make);
      const n = 10_000;
      // Stop i waits for a trade at 100 + i and buys 1 lot up to 100 + n: each one's fill meets the next.
      for (let i = 0; i < n; i++) assert.equal(stops.add(1000 + i, 7, STOP_UP, 100 + n, 1, 0, 100 + i), OK);
      for (let i = 0; i <= n; i++) book.limit(100_001 + i, 1, SELL, 100 + i, 1);
      rec.take();
      const started = performance.now();
      step(() => book.limit(200_000, 2, BUY, 100, 1));
      const ms = performance.now() - started;
      const triggered = rec
        .take()
        .filter((e) => (e[0] as string) === "triggered")
        .map((e) => e[1]);
      assert.equal(triggered.length, n);
      assert.deepEqual(
        triggered,
        Array.from({ length: n }, (_, i) => 1000 + i),
      );
      assert.equal(stops.size, 0);
      assert.equal(book.size(), 0);
      assert.ok(ms < 10_000, `the cascade took ${ms} ms`);
    });

    it("cancels a waiting stop with its whole quantity, and resting orders through the book", () => {
      const { stops, book, names } = setup(make);
      assert.equal(stops.add(10, 7, STOP_UP, 105, 2, 0, 100), OK);
      assert.equal(stops.add(11, 7, STOP_UP, 105, 2, 0, 100), OK);
      book.limit(1, 1, SELL, 100, 3);
      names();
      assert.equal(stops.cancel(10, DONE_CANCELLED), OK);
      assert.equal(stops.cancel(1, DONE_CANCELLED), OK);
      assert.deepEqual(names(), [
        ["done", 10, 7, BUY, DONE_CANCELLED, 2],
        ["done", 1, 1, SELL, DONE_CANCELLED, 3],
      ]);
      assert.equal(stops.size, 1);
      assert.equal(stops.has(11), true);
    });

    it("amends a waiting stop's price, quantity and stop price, refused when the last trade meets it", () => {
      const { stops, book, step, names } = setup(make, 100);
      assert.equal(stops.add(10, 7, STOP_UP, 105, 2, 0, 110), OK);
      assert.equal(stops.add(11, 7, STOP_SELL, 90, 1, 0, 95), OK);
      // Would trigger against 100: nothing changes, no event.
      assert.equal(stops.amend(10, 106, 1, 100), ERR_STOP_WOULD_TRIGGER);
      assert.equal(stops.amend(11, 90, 0, 100), ERR_STOP_WOULD_TRIGGER);
      assert.deepEqual(names(), []);
      assert.equal(stops.amend(12, 90, 0, 95), ERR_ORDER_NOT_FOUND);
      assert.equal(stops.amend(10, 106, -2, 108), ERR_AMEND_TOO_SMALL);
      assert.equal(stops.amend(10, 106, 1, 102), OK);
      assert.deepEqual(names(), [["amended", 10, 7, BUY, 105, 106, 2, 3]]);
      assert.equal(book.size(), 0);
      assert.equal(stops.size, 2);
      // 101 is below the new stop 102 (and the old 110 would not have been met by 102).
      step(() => book.limit(1, 1, SELL, 101, 1));
      step(() => book.limit(2, 2, BUY, 101, 1));
      assert.equal(stops.has(10), true);
      step(() => book.limit(3, 1, SELL, 102, 5));
      step(() => book.limit(4, 2, BUY, 102, 1));
      const events = names();
      assert.deepEqual(
        events.filter((e) => (e[0] as string) === "triggered"),
        [["triggered", 10, 7, BUY]],
      );
      // It bought 3 at 102 (its new limit 106, its new quantity 3).
      assert.deepEqual(events[events.length - 1], ["trade", 10, 7, BUY, 3, 1, 102, 3, 0, 1]);
      assert.equal(stops.has(11), true);
    });

    it("a down trailing stop follows the highest trade price up and triggers on a drop of its delta", () => {
      const { stops, book, step, names } = setup(make, 100);
      const only = (kind: string) => names().filter((e) => (e[0] as string) === kind);
      assert.equal(stops.add(10, 7, STOP_SELL | STOP_MARKET, 0, 1, 0, 0, 5), OK);
      assert.deepEqual(only("trailed"), [["trailed", 10, 7, 95]]);
      book.limit(1, 1, SELL, 103, 5);
      step(() => book.limit(2, 2, BUY, 103, 1));
      assert.deepEqual(only("trailed"), [["trailed", 10, 7, 98]]);
      book.cancel(1);
      // Lower trades move nothing and trigger nothing above 98.
      book.limit(3, 1, BUY, 101, 1);
      step(() => book.limit(4, 2, SELL, 101, 1));
      assert.deepEqual(only("trailed"), []);
      // One sell walking 110 then 104 in one step: the stop rises to 105 at 110, then 104 meets it.
      book.limit(5, 3, BUY, 110, 1);
      book.limit(6, 3, BUY, 104, 1);
      book.limit(7, 3, BUY, 90, 5);
      names();
      step(() => book.limit(8, 2, SELL, 104, 2));
      const events = names().filter((e) => e[0] !== "rested");
      assert.deepEqual(
        events.map((e) => e[0]),
        ["trade", "trade", "trailed", "triggered", "trade"],
      );
      assert.deepEqual(events[2], ["trailed", 10, 7, 105]);
      assert.equal(stops.size, 0);
    });

    it("an up trailing stop follows the lowest trade price down; an ascending walk does not trigger it early", () => {
      const { stops, book, step, names } = setup(make);
      const only = (kind: string) => names().filter((e) => (e[0] as string) === kind);
      // The pair never traded: no stop price until the first trade.
      assert.equal(stops.add(10, 7, STOP_UP, 200, 1, 0, 0, 4), OK);
      assert.deepEqual(only("trailed"), []);
      book.limit(1, 1, SELL, 100, 5);
      step(() => book.limit(2, 2, BUY, 100, 1));
      assert.deepEqual(only("trailed"), [["trailed", 10, 7, 104]]);
      book.limit(3, 1, BUY, 97, 1);
      step(() => book.limit(4, 2, SELL, 97, 1));
      assert.deepEqual(only("trailed"), [["trailed", 10, 7, 101]]);
      // A buy walking 100 then 102: 100 < 101 and 102 >= 101.
      book.limit(5, 1, SELL, 102, 5);
      names();
      step(() => book.limit(6, 2, BUY, 102, 5));
      assert.deepEqual(only("triggered"), [["triggered", 10, 7, BUY]]);
      // Restored with the stop price it had, it goes on from there.
      const again = setup(make, 90);
      assert.equal(again.stops.add(11, 7, STOP_UP | STOP_RESTORE, 200, 1, 0, 101, 4), OK);
      assert.deepEqual(again.names(), []);
      again.book.limit(1, 1, SELL, 99, 5);
      again.step(() => again.book.limit(2, 2, BUY, 99, 1));
      assert.deepEqual(
        again.names().filter((e) => (e[0] as string) === "trailed"),
        [],
      );
      again.book.limit(3, 1, BUY, 96, 1);
      again.step(() => again.book.limit(4, 2, SELL, 96, 1));
      assert.deepEqual(
        again.names().filter((e) => (e[0] as string) === "trailed"),
        [["trailed", 11, 7, 100]],
      );
      assert.equal(again.stops.cancel(11, DONE_CANCELLED), OK);
      assert.equal(again.stops.size, 0);
    });

    it("an OCO rests its limit leg and waits its stop leg; a trade of the limit leg cancels the stop leg", () => {
      const { stops, book, step, names } = setup(make, 100);
      assert.equal(stops.addOco(10, 7, STOP_SELL, 110, 5, 90, 89, 1), OK);
      assert.equal(book.remaining(10), 5);
      assert.equal(stops.has(11), true);
      assert.deepEqual(names(), [["rested", 10, 7, SELL, 110, 5]]);
      step(() => book.limit(1, 2, BUY, 110, 2));
      assert.deepEqual(names(), [
        ["trade", 1, 2, BUY, 10, 7, 110, 2, 0, 3],
        ["done", 11, 7, SELL, DONE_OCO, 5],
      ]);
      assert.equal(stops.size, 0);
      assert.equal(book.remaining(10), 3);
    });

    it("refuses an OCO whose price or stop price is on the wrong side, or whose limit leg would take", () => {
      const { stops, book, step, names } = setup(make, 100);
      assert.equal(stops.addOco(10, 7, STOP_SELL, 100, 5, 90, 0, 1), ERR_OCO_PRICE);
      assert.equal(stops.addOco(10, 7, STOP_SELL, 110, 5, 100, 0, 1), ERR_STOP_WOULD_TRIGGER);
      assert.equal(stops.addOco(10, 7, STOP_UP, 100, 5, 110, 0, 1), ERR_OCO_PRICE);
      assert.equal(stops.addOco(10, 7, STOP_UP, 90, 5, 99, 0, 1), ERR_STOP_WOULD_TRIGGER);
      step(() => book.limit(1, 2, BUY, 111, 1));
      names();
      assert.equal(stops.addOco(10, 7, STOP_SELL, 111, 5, 90, 0, 1), ERR_WOULD_TAKE);
      assert.deepEqual(names(), []);
      assert.equal(stops.size, 0);
      assert.equal(book.remaining(10), -1);
    });

    it("a trigger of the stop leg cancels the limit leg before it runs", () => {
      const { stops, book, step, names } = setup(make, 100);
      assert.equal(stops.addOco(10, 7, STOP_SELL, 110, 5, 90, 85, 1), OK);
      step(() => book.limit(1, 2, BUY, 86, 10));
      step(() => book.limit(2, 3, SELL, 90, 1));
      names();
      step(() => book.limit(3, 2, BUY, 90, 1));
      assert.deepEqual(names(), [
        ["trade", 3, 2, BUY, 2, 3, 90, 1, 0, 0],
        ["triggered", 11, 7, SELL],
        ["done", 10, 7, SELL, DONE_OCO, 5],
        ["trade", 11, 7, SELL, 1, 2, 86, 5, 0, 5],
      ]);
      assert.equal(book.remaining(10), -1);
    });

    it("a cancel of either leg cancels the other, and a restored stop leg is linked to the order before it", () => {
      const { stops, book, step, names } = setup(make, 100);
      assert.equal(stops.addOco(10, 7, STOP_UP, 90, 5, 110, 0, 1), OK);
      names();
      step(() => stops.cancel(11, DONE_CANCELLED));
      assert.deepEqual(names(), [
        ["done", 11, 7, BUY, DONE_CANCELLED, 5],
        ["done", 10, 7, BUY, DONE_OCO, 5],
      ]);
      // Recovery: the limit leg rests again, then its stop leg waits again, linked (STOP_OCO).
      step(() => book.limit(20, 7, SELL, 110, 5, FLAG_POST_ONLY));
      assert.equal(stops.add(21, 7, STOP_SELL | STOP_RESTORE | STOP_OCO, 0, 5, 0, 90), OK);
      names();
      step(() => book.cancel(20));
      assert.deepEqual(names(), [
        ["done", 20, 7, SELL, DONE_CANCELLED, 5],
        ["done", 21, 7, SELL, DONE_OCO, 5],
      ]);
      assert.equal(stops.size, 0);
    });
  });
}
