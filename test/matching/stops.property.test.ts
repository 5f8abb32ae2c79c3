/**
 * Differential property test of the stop orders (workers/matching/stops.ts, docs/API.md 18): random
 * sequences of limit, market, stop and trailing stop orders and cancels run through the fast `OrderBook` with
 * `StopBook` around it, and through the naive `ReferenceOrderBook` with `NaiveStops`, a direct
 * reading of the rule written here without sorted lists: after each command, scan every waiting
 * stop against every trade price of the step (a trailing stop against each price in turn, moving
 * after it), trigger the ones met in id order, run each, and scan again against its own trades. Result codes and the exact event lists must agree after every
 * command, triggered market buys included (each user's budget is fixed per run). OCO pairs too:
 * a leg that trades or ends cancels its sibling before the step's triggers; a stop leg that
 * triggers cancels its limit leg before it runs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type BookEvents,
  BUY,
  DONE_BELOW_MIN_NOTIONAL,
  DONE_CANCELLED,
  DONE_INSUFFICIENT_FUNDS,
  DONE_NO_LIQUIDITY,
  DONE_OCO,
  type DoneReason,
  ERR_BELOW_MIN_NOTIONAL,
  ERR_INSUFFICIENT_FUNDS,
  ERR_OCO_PRICE,
  ERR_STOP_WOULD_TRIGGER,
  FLAG_POST_ONLY,
  NO_BUDGET,
  OK,
  type ResultCode,
  SELL,
  type Side,
  STOP_MARKET,
  STOP_SELL,
  STOP_UP,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { StopBook } from "../../workers/matching/stops.ts";
import { RecordingEvents, ReferenceOrderBook } from "./reference-book.ts";

interface NaiveStop {
  id: number;
  user: number;
  mode: number;
  price: number;
  qty: number;
  stopPrice: number;
  /** A trailing stop's delta (0: a fixed stop price), and its extreme trade price (-1: none yet). */
  trail: number;
  extreme: number;
}

const sideOf = (mode: number): Side => ((mode & STOP_SELL) !== 0 ? SELL : BUY);
const met = (s: NaiveStop, price: number) =>
  (s.mode & STOP_UP) !== 0 ? price >= s.stopPrice : price <= s.stopPrice;
const reasonOf = (r: ResultCode): DoneReason =>
  r === ERR_INSUFFICIENT_FUNDS
    ? DONE_INSUFFICIENT_FUNDS
    : r === ERR_BELOW_MIN_NOTIONAL
      ? DONE_BELOW_MIN_NOTIONAL
      : DONE_NO_LIQUIDITY;

/** The rule, read literally, around the reference book. */
class NaiveStops {
  readonly rec = new RecordingEvents();
  private prices: number[] = [];
  private last = -1;
  private readonly waiting: NaiveStop[] = [];
  /** OCO legs: id to sibling id; the legs that traded (as makers) or ended in the current run. */
  private readonly legs = new Map<number, number>();
  private hits: number[] = [];
  /** The triggered stops of the step not run yet. */
  private queue: NaiveStop[] = [];
  readonly book: ReferenceOrderBook;

  constructor(private readonly budgets: (user: number) => number) {
    const rec = this.rec;
    // The reference book's events go to the recorder; trade prices are noted on the way.
    const sink: BookEvents = {
      trade: (...a) => {
        this.prices.push(a[5]);
        this.last = a[5];
        if (this.legs.has(a[3])) this.hits.push(a[3]);
        rec.trade(...a);
      },
      rested: (...a) => rec.rested(...a),
      done: (...a) => {
        if (this.legs.has(a[0])) this.hits.push(a[0]);
        rec.done(...a);
      },
      mmp: (...a) => rec.mmp(...a),
      quoted: (...a) => rec.quoted(...a),
      level: (...a) => rec.level(...a),
      amended: (...a) => rec.amended(...a),
    };
    this.book = new ReferenceOrderBook(sink, 30n);
  }

  stop(s: NaiveStop): ResultCode {
    if (s.trail > 0) {
      // docs/API.md 18: from the last trade price (none: from the first trade).
      s.extreme = this.last;
      s.stopPrice = this.last < 0 ? 0 : (s.mode & STOP_UP) !== 0 ? this.last + s.trail : this.last - s.trail;
      if (this.last >= 0) this.rec.trailed(s.id, s.user, s.stopPrice);
      this.waiting.push(s);
      return OK;
    }
    if (this.last >= 0 && met(s, this.last)) return ERR_STOP_WOULD_TRIGGER;
    this.waiting.push(s);
    return OK;
  }

  /**
   * docs/API.md 18: an OCO, its limit leg `id` (post-only) and its stop leg `id + 1`: a sell's
   * price above the last trade price and its stop price below it (a buy: the reverse).
   */
  oco(id: number, user: number, mode: number, price: number, qty: number, stopPrice: number, limit: number) {
    const sell = (mode & STOP_SELL) !== 0;
    if (this.last >= 0) {
      if (sell ? price <= this.last : price >= this.last) return ERR_OCO_PRICE;
      if (sell ? stopPrice >= this.last : stopPrice <= this.last) return ERR_STOP_WOULD_TRIGGER;
    }
    const r = this.book.limit(id, user, sell ? SELL : BUY, price, qty, FLAG_POST_ONLY, 1);
    if (r !== OK) return r;
    this.waiting.push({ id: id + 1, user, mode, price: limit, qty, stopPrice, trail: 0, extreme: -1 });
    this.legs.set(id, id + 1);
    this.legs.set(id + 1, id);
    return OK;
  }

  cancel(id: number, reason: DoneReason = DONE_CANCELLED): ResultCode {
    const i = this.waiting.findIndex((s) => s.id === id);
    if (i < 0) return this.book.cancel(id, reason);
    const [s] = this.waiting.splice(i, 1);
    if (this.legs.has(id)) this.hits.push(id);
    this.rec.done(s.id, s.user, sideOf(s.mode), reason, s.qty);
    return OK;
  }

  /** The sibling of each OCO leg that traded or ended is cancelled, wherever it is. */
  private settle(): void {
    for (const id of this.hits) {
      const sibling = this.legs.get(id);
      if (sibling === undefined) continue;
      this.legs.delete(id);
      this.legs.delete(sibling);
      const q = this.queue.findIndex((s) => s.id === sibling);
      if (q >= 0) {
        const [s] = this.queue.splice(q, 1);
        this.rec.done(s.id, s.user, sideOf(s.mode), DONE_OCO, s.qty);
      } else this.cancel(sibling, DONE_OCO);
    }
    this.hits = [];
  }

  run(command: () => ResultCode): ResultCode {
    this.prices = [];
    const result = command();
    const queue: NaiveStop[] = [];
    this.queue = queue;
    this.settle();
    this.collect(queue);
    while (queue.length > 0) {
      const s = queue.shift()!;
      const side = sideOf(s.mode);
      this.rec.triggered(s.id, s.user, side);
      const sibling = this.legs.get(s.id);
      if (sibling !== undefined) {
        this.legs.delete(s.id);
        this.legs.delete(sibling);
        this.book.cancel(sibling, DONE_OCO);
      }
      this.prices = [];
      if ((s.mode & STOP_MARKET) === 0) this.book.limit(s.id, s.user, side, s.price, s.qty, 0, 1);
      else {
        if (side === BUY) this.rec.fundsAsked(s.id, s.user);
        const budget = side === BUY ? this.budgets(s.user) : NO_BUDGET;
        const r = this.book.market(s.id, s.user, side, s.qty, budget, 0, 1);
        if (r !== OK) this.rec.done(s.id, s.user, side, reasonOf(r), s.qty);
      }
      this.settle();
      this.collect(queue);
    }
    return result;
  }

  private collect(queue: NaiveStop[]): void {
    const hit = this.waiting.filter((s) =>
      s.trail > 0 ? this.follow(s) : this.prices.some((p) => met(s, p)),
    );
    hit.sort((a, b) => a.id - b.id);
    for (const s of hit) {
      this.waiting.splice(this.waiting.indexOf(s), 1);
      queue.push(s);
    }
  }

  /** A trailing stop through the prices in order: true when one meets it before it moves past. */
  private follow(s: NaiveStop): boolean {
    const up = (s.mode & STOP_UP) !== 0;
    const before = s.stopPrice;
    let hit = false;
    for (const p of this.prices) {
      if (s.extreme >= 0 && met(s, p)) {
        hit = true;
        break;
      }
      if (s.extreme < 0 || (up ? p < s.extreme : p > s.extreme)) {
        s.extreme = p;
        s.stopPrice = up ? p + s.trail : p - s.trail;
      }
    }
    if (s.stopPrice !== before) this.rec.trailed(s.id, s.user, s.stopPrice);
    return hit;
  }
}

type Step =
  | { kind: "limit"; user: number; side: Side; price: number; qty: number }
  | { kind: "market"; user: number; side: Side; qty: number }
  | { kind: "stop"; user: number; mode: number; price: number; qty: number; stopPrice: number; trail: number }
  | {
      kind: "oco";
      user: number;
      sell: boolean;
      market: boolean;
      price: number;
      stopPrice: number;
      qty: number;
    }
  | { kind: "cancel"; pick: number };

const user = fc.integer({ min: 1, max: 4 });
const side = fc.constantFrom<Side>(BUY, SELL);
const price = fc.integer({ min: 95, max: 105 });
const qty = fc.integer({ min: 1, max: 6 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("limit" as const), user, side, price, qty }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("market" as const), user, side, qty }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("stop" as const),
      user,
      mode: fc.integer({ min: 0, max: 7 }),
      price,
      qty,
      stopPrice: price,
      trail: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("oco" as const),
      user,
      sell: fc.boolean(),
      market: fc.boolean(),
      price,
      stopPrice: price,
      qty,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }) },
);

/** What the runs did, so the test shows its OCO cases happened. */
const seen = { ocoCancels: 0, ocoTriggers: 0 };

/** Runs `steps` on both and checks codes and events after each. */
function duel(steps: Step[], budgetOf: number[]): void {
  const budgets = (u: number) => budgetOf[u % budgetOf.length];
  const naive = new NaiveStops(budgets);
  const rec = new AskingRecorder();
  const fast = new OrderBook(rec, 4, 30n);
  const stops = new StopBook(fast, rec);
  const ids: number[] = [];
  let nextId = 1;
  const fastStep = (run: () => ResultCode): ResultCode => {
    stops.begin(1);
    const r = run();
    let done = stops.cascade();
    // A triggered market buy waits for its user's budget: given at once, as the main thread does.
    while (!done) {
      done = stops.funds(rec.asked[0], budgets(rec.asked[1]));
    }
    return r;
  };
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    let a: ResultCode;
    let b: ResultCode;
    switch (s.kind) {
      case "limit": {
        const id = nextId++;
        ids.push(id);
        a = naive.run(() => naive.book.limit(id, s.user, s.side, s.price, s.qty, 0, 1));
        b = fastStep(() => fast.limit(id, s.user, s.side, s.price, s.qty, 0, 1));
        break;
      }
      case "market": {
        const id = nextId++;
        const budget = s.side === BUY ? budgets(s.user) : NO_BUDGET;
        a = naive.run(() => naive.book.market(id, s.user, s.side, s.qty, budget, 0, 1));
        b = fastStep(() => fast.market(id, s.user, s.side, s.qty, budget, 0, 1));
        break;
      }
      case "stop": {
        const id = nextId++;
        ids.push(id);
        const limitPrice = (s.mode & STOP_MARKET) !== 0 ? 0 : s.price;
        a = naive.stop({
          id,
          user: s.user,
          mode: s.mode,
          price: limitPrice,
          qty: s.qty,
          stopPrice: s.trail > 0 ? 0 : s.stopPrice,
          trail: s.trail,
          extreme: -1,
        });
        b = stops.add(id, s.user, s.mode, limitPrice, s.qty, 0, s.trail > 0 ? 0 : s.stopPrice, s.trail);
        break;
      }
      case "oco": {
        // The stop leg is a stop-limit at the stop price, or a stop-market; a sell's goes down.
        const id = nextId;
        nextId += 2;
        ids.push(id, id + 1);
        const mode = (s.sell ? STOP_SELL : STOP_UP) | (s.market ? STOP_MARKET : 0);
        const limit = s.market ? 0 : s.stopPrice;
        a = naive.run(() => naive.oco(id, s.user, mode, s.price, s.qty, s.stopPrice, limit));
        b = fastStep(() => stops.addOco(id, s.user, mode, s.price, s.qty, s.stopPrice, limit, 1));
        break;
      }
      case "cancel": {
        if (ids.length === 0) continue;
        const id = ids[s.pick % ids.length];
        a = naive.run(() => naive.cancel(id));
        b = fastStep(() => stops.cancel(id, DONE_CANCELLED));
        break;
      }
    }
    const context = `step ${i} ${JSON.stringify(s)}`;
    assert.equal(b, a, `result of ${context}`);
    const events = naive.rec.take();
    assert.deepEqual(rec.take(), events, `events of ${context}`);
    for (const e of events) {
      if (e[0] === "done" && e[4] === DONE_OCO) seen.ocoCancels++;
      if ((e[0] as string) === "triggered" && events.some((d) => d[0] === "done" && d[4] === DONE_OCO))
        seen.ocoTriggers++;
    }
  }
}

/** Records events and keeps the last `fundsAsked` (the order and user whose budget is asked). */
class AskingRecorder extends RecordingEvents {
  asked: [number, number] = [0, 0];

  override fundsAsked(orderId: number, user: number): void {
    this.asked = [orderId, user];
    super.fundsAsked(orderId, user);
  }
}

describe("StopBook around OrderBook against NaiveStops around ReferenceOrderBook", () => {
  it("agrees on every result and event over random orders, stops and cancels", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 80 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 5 }),
        (steps, budgets) => duel(steps, budgets),
      ),
      { numRuns: 300, seed: 20261206 },
    );
    assert.ok(seen.ocoCancels > 50, `OCO siblings cancelled: ${seen.ocoCancels}`);
    assert.ok(seen.ocoTriggers > 10, `steps with a trigger and an OCO cancel: ${seen.ocoTriggers}`);
  });
});
