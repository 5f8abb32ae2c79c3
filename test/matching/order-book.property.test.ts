/**
 * Differential property tests: random command sequences run through the fast `OrderBook` and the
 * naive `ReferenceOrderBook`; after every command the result codes, the exact event lists, best
 * prices, size() and full level snapshots must agree, the reference's events must obey the rules
 * (`BookMirror`), and both books must agree with what their events said.
 *
 * A failure prints the concrete commands as TypeScript lines (fast-check shrinks the sequence
 * first; the long deterministic run shrinks its own failing sequence).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  BUY,
  DONE_CANCELLED,
  DONE_MMP,
  DONE_REMAINDER,
  DONE_SELF_TRADE,
  ERR_AMEND_TOO_SMALL,
  ERR_MMP_FROZEN,
  ERR_ORDER_NOT_FOUND,
  ERR_WOULD_TAKE,
  FLAG_MMP,
  FLAG_POST_ONLY,
  MAX_BUDGET,
  NO_BUDGET,
  OK,
  QUOTE_KEPT,
  SELL,
  type Side,
  STP_CANCEL_BOTH,
  STP_CANCEL_TAKER,
  TIF_FOK,
  TIF_GTC,
  TIF_IOC,
  TIF_MASK,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { mulberry32 } from "../support/prng.ts";
import {
  applyCommand,
  type BookEvent,
  BookMirror,
  type Command,
  checkBookInvariants,
  type EngineCommand,
  formatCommand,
  RecordingEvents,
  ReferenceOrderBook,
  snapshotLevels,
} from "./reference-book.ts";

// ---------------------------------------------------------------------------------------------
// Abstract steps: resolved into concrete commands against the current book state, so that
// shrinking keeps them meaningful (ids are assigned in order, cancels pick a resting order).
// ---------------------------------------------------------------------------------------------

type BudgetMode = "none" | "exact" | "short" | "spare" | "tiny" | "max";
/** How much a reduce takes off: some lots that fit, all but one, exactly all, or more than all. */
type ReduceMode = "fit" | "toOne" | "all" | "over";
/** How a move changes the open quantity: not, up, down (still open), to exactly 0, below 0. */
type DeltaMode = "zero" | "up" | "down" | "toZero" | "below";

/** Every flag combination a limit order can carry: the three times in force, with and without post-only. */
const ALL_FLAGS = [TIF_GTC, TIF_IOC, TIF_FOK].flatMap((tif) => [tif, tif | FLAG_POST_ONLY]);

type Step =
  | { kind: "limit"; user: number; side: Side; price: number; qty: number }
  | { kind: "duplicate"; user: number; side: Side; price: number; qty: number; pick: number }
  | { kind: "market"; user: number; side: Side; qty: number; budget: BudgetMode; delta: number }
  | { kind: "cancel"; pick: number }
  | { kind: "cancelMissing"; pick: number }
  | { kind: "flagged"; user: number; side: Side; price: number; qty: number; flags: number }
  | { kind: "reduce"; pick: number; mode: ReduceMode; amount: number }
  | {
      kind: "move";
      pick: number;
      /** Price to move to; ignored when `samePrice`. */
      price: number;
      samePrice: boolean;
      mode: DeltaMode;
      amount: number;
      postOnly: boolean;
    }
  | { kind: "amendMissing"; pick: number; move: boolean };

/** Runs every command through both books and checks everything after each one. */
class Duel {
  readonly transcript: Command[] = [];
  private readonly refEvents = new RecordingEvents();
  private readonly fastEvents = new RecordingEvents();
  private readonly ref = new ReferenceOrderBook(this.refEvents);
  readonly fast = new OrderBook(this.fastEvents, 4);
  private readonly mirror = new BookMirror();
  private nextId = 1;
  /** Ids that are certainly not resting: filled, cancelled, or used by market orders. */
  private readonly goneIds: number[] = [];

  resolve(step: Step): Command {
    const resting = this.ref.restingIds();
    switch (step.kind) {
      case "limit":
        return {
          op: "limit",
          id: this.nextId++,
          user: step.user,
          side: step.side,
          price: step.price,
          qty: step.qty,
        };
      case "duplicate": {
        const id = resting.length > 0 ? resting[step.pick % resting.length] : this.nextId++;
        return { op: "limit", id, user: step.user, side: step.side, price: step.price, qty: step.qty };
      }
      case "market":
        return {
          op: "market",
          id: this.nextId++,
          user: step.user,
          side: step.side,
          qty: step.qty,
          budget: this.budget(step),
        };
      case "cancel":
        if (resting.length > 0) return { op: "cancel", id: resting[step.pick % resting.length] };
        return { op: "cancel", id: this.nextId + step.pick };
      case "cancelMissing":
        if (this.goneIds.length > 0 && step.pick % 2 === 0) {
          return { op: "cancel", id: this.goneIds[step.pick % this.goneIds.length] };
        }
        return { op: "cancel", id: this.nextId + step.pick };
      case "flagged":
        return {
          op: "limit",
          id: this.nextId++,
          user: step.user,
          side: step.side,
          price: step.price,
          qty: step.qty,
          flags: step.flags,
        };
      case "reduce": {
        const o = this.pickResting(step.pick);
        if (o === undefined) return { op: "reduce", id: this.nextId + step.pick, by: 1 };
        const by =
          step.mode === "fit"
            ? 1 + (step.amount % Math.max(1, o.left - 1))
            : step.mode === "toOne"
              ? o.left - 1
              : step.mode === "all"
                ? o.left
                : o.left + step.amount;
        return { op: "reduce", id: o.id, by };
      }
      case "move": {
        const o = this.pickResting(step.pick);
        const flags = step.postOnly ? FLAG_POST_ONLY : 0;
        if (o === undefined)
          return { op: "move", id: this.nextId + step.pick, price: step.price, delta: 0, flags };
        const delta =
          step.mode === "zero"
            ? 0
            : step.mode === "up"
              ? step.amount
              : step.mode === "down"
                ? -(step.amount % o.left)
                : step.mode === "toZero"
                  ? -o.left
                  : -o.left - step.amount;
        return { op: "move", id: o.id, price: step.samePrice ? o.price : step.price, delta, flags };
      }
      case "amendMissing": {
        const id =
          this.goneIds.length > 0 && step.pick % 2 === 0
            ? this.goneIds[step.pick % this.goneIds.length]
            : this.nextId + step.pick;
        return step.move ? { op: "move", id, price: 100, delta: 1, flags: 0 } : { op: "reduce", id, by: 1 };
      }
    }
  }

  /** A resting order of the reference book, or undefined when it is empty. */
  private pickResting(pick: number): { id: number; price: number; left: number } | undefined {
    const orders = this.ref.orders;
    return orders.length === 0 ? undefined : orders[pick % orders.length];
  }

  /** A budget relative to what the walk would cost right now. */
  private budget(step: Extract<Step, { kind: "market" }>): number {
    if (step.budget === "none") return NO_BUDGET;
    const cost = step.side === BUY ? this.ref.marketBuyCost(step.user, step.qty) : 0n;
    const clamp = (b: bigint): number =>
      Number(b < 0n ? 0n : b > BigInt(MAX_BUDGET) ? BigInt(MAX_BUDGET) : b);
    switch (step.budget) {
      case "exact":
        return clamp(cost);
      case "short":
        return clamp(cost - BigInt(step.delta));
      case "spare":
        return clamp(cost + BigInt(step.delta));
      case "tiny":
        return step.delta - 1;
      case "max":
        return MAX_BUDGET;
    }
  }

  /** How often each kind of outcome happened, so a long run can show it covered them. */
  readonly seen = new Map<string, number>();

  private tally(cmd: Command, code: number, events: readonly BookEvent[]): void {
    const add = (k: string): void => {
      this.seen.set(k, (this.seen.get(k) ?? 0) + 1);
    };
    add(`${cmd.op}:${code}`);
    const traded = events.some((e) => e[0] === "trade");
    const selfTrade = events.some((e) => e[0] === "done" && e[4] === DONE_SELF_TRADE);
    const remainder = events.some((e) => e[0] === "done" && e[4] === DONE_REMAINDER);
    if (cmd.op === "limit" && cmd.flags !== undefined && code === OK) {
      const tif = cmd.flags & TIF_MASK;
      const name = tif === TIF_IOC ? "ioc" : tif === TIF_FOK ? "fok" : "gtc";
      if (traded) add(`${name} traded`);
      if (remainder) add(`${name} remainder`);
      if (tif === TIF_FOK && !traded && remainder) add("fok killed");
      if (tif === TIF_FOK && selfTrade) add("fok self-trade");
    }
    if (cmd.op === "move" && code === OK) {
      const amended = events[0];
      if (amended[0] === "amended" && amended[4] === amended[5]) add("move same price");
      if (traded) add("move traded");
      if (traded && !events.some((e) => e[0] === "rested")) add("move filled");
      if (selfTrade) add("move self-trade");
    }
  }

  /** State of the reference book, for generators that aim at the touch. */
  size(): number {
    return this.ref.size();
  }
  bestBid(): number {
    return this.ref.bestBid();
  }
  bestAsk(): number {
    return this.ref.bestAsk();
  }

  run(step: Step): void {
    const cmd = this.resolve(step);
    this.transcript.push(cmd);
    this.apply(cmd);
  }

  /** Applies one concrete command to both books and checks everything. */
  apply(cmd: Command): void {
    const refCode = applyCommand(this.ref, cmd);
    const fastCode = applyCommand(this.fast, cmd);
    const refEvents = this.refEvents.take();
    const fastEvents = this.fastEvents.take();
    // Assertion messages read "actual" as the fast book and "expected" as the reference.
    const what = formatCommand(cmd);
    assert.equal(fastCode, refCode, `${what}: result code`);
    assert.deepEqual(fastEvents, refEvents, `${what}: events`);
    this.mirror.record(cmd, refCode, refEvents);
    this.tally(cmd, refCode, refEvents);
    if (cmd.op !== "cancel" && this.ref.remaining(cmd.id) === -1) this.goneIds.push(cmd.id);
    for (const e of refEvents) {
      if (e[0] === "done") this.goneIds.push(e[1]);
      else if (e[0] === "trade" && e[9] === 0) this.goneIds.push(e[4]);
    }

    assert.equal(this.fast.bestBid(), this.ref.bestBid(), `${what}: bestBid`);
    assert.equal(this.fast.bestAsk(), this.ref.bestAsk(), `${what}: bestAsk`);
    assert.equal(this.fast.size(), this.ref.size(), `${what}: size`);
    for (const side of [BUY, SELL] as const) {
      assert.deepEqual(
        snapshotLevels(this.fast, side),
        snapshotLevels(this.ref, side),
        `${what}: levels ${side}`,
      );
    }
    assert.equal(this.fast.remaining(cmd.id), this.ref.remaining(cmd.id), `${what}: remaining(${cmd.id})`);
    // The reference is checked against the mirror through the fast book (both compared above),
    // plus its own internal invariants; remaining() of every order is read from the fast book only
    // (the reference's lookup is a linear scan).
    checkBookInvariants(this.ref);
    this.mirror.checkBook(this.fast);
  }
}

/** Runs concrete commands through a fresh duel; returns the error of the first failing one. */
function replay(commands: readonly Command[]): { error: Error; at: number } | undefined {
  const duel = new Duel();
  for (let i = 0; i < commands.length; i++) {
    try {
      duel.apply(commands[i]);
    } catch (error) {
      return { error: error as Error, at: i };
    }
  }
  return undefined;
}

function reproduction(commands: readonly Command[]): string {
  return `Reproduction (${commands.length} commands):\n${commands.map(formatCommand).join("\n")}`;
}

/** Runs abstract steps; on failure rethrows with the concrete commands as a reproduction. */
function runSteps(steps: readonly Step[]): void {
  const duel = new Duel();
  try {
    for (const step of steps) duel.run(step);
  } catch (error) {
    const e = error as Error;
    throw new Error(`${e.message}\n${reproduction(duel.transcript)}`, { cause: e });
  }
}

/**
 * Shrinks a failing concrete sequence: cut it after the failing command, then drop chunks of
 * commands (halving the chunk size) while it still fails.
 */
function shrinkCommands(commands: readonly Command[]): Command[] {
  const first = replay(commands);
  if (first === undefined) return [...commands];
  let current = commands.slice(0, first.at + 1);
  for (let chunk = Math.max(1, current.length >> 1); chunk >= 1; chunk >>= 1) {
    for (let start = current.length - chunk; start >= 0; start -= chunk) {
      const candidate = [...current.slice(0, start), ...current.slice(start + chunk)];
      const failure = replay(candidate);
      if (failure !== undefined) current = candidate.slice(0, failure.at + 1);
    }
  }
  return current;
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

interface Scale {
  readonly users: number;
  readonly price: fc.Arbitrary<number>;
  readonly qty: fc.Arbitrary<number>;
}

/** Four users, eleven prices around 100: crossing and self-trades on most commands. */
const narrow: Scale = {
  users: 4,
  price: fc.integer({ min: 95, max: 105 }),
  qty: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 10 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }) },
  ),
};

/** Prices at both ends of the range and quantities past 2^32, so notional exceeds 2^53. */
const wide: Scale = {
  users: 3,
  price: fc.oneof(
    fc.integer({ min: 1, max: 4 }),
    fc.integer({ min: 1_000_000_000 - 3, max: 1_000_000_000 }),
    fc.constantFrom(2 ** 31, 2 ** 40, 2 ** 45),
  ),
  qty: fc.oneof(
    fc.integer({ min: 1, max: 5 }),
    fc.integer({ min: 2 ** 32 - 2, max: 2 ** 32 + 2 }),
    fc.constantFrom(2 ** 40, 2 ** 44 - 1),
  ),
};

function stepArb(scale: Scale): fc.Arbitrary<Step> {
  const user = fc.integer({ min: 0, max: scale.users - 1 });
  const side = fc.constantFrom<Side>(BUY, SELL);
  const pick = fc.nat({ max: 1000 });
  const budget = fc.constantFrom<BudgetMode>("none", "none", "exact", "short", "spare", "tiny", "max");
  return fc.oneof(
    {
      weight: 10,
      arbitrary: fc.record({ kind: fc.constant("limit"), user, side, price: scale.price, qty: scale.qty }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("duplicate"),
        user,
        side,
        price: scale.price,
        qty: scale.qty,
        pick,
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("market"),
        user,
        side,
        qty: scale.qty,
        budget,
        delta: fc.integer({ min: 1, max: 200 }),
      }),
    },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("cancel"), pick }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancelMissing"), pick }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("flagged"),
        user,
        side,
        price: scale.price,
        qty: scale.qty,
        flags: fc.constantFrom(...ALL_FLAGS),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("reduce"),
        pick,
        mode: fc.constantFrom<ReduceMode>("fit", "fit", "toOne", "all", "over"),
        amount: fc.integer({ min: 1, max: 50 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("move"),
        pick,
        price: scale.price,
        samePrice: fc.boolean(),
        mode: fc.constantFrom<DeltaMode>("zero", "up", "down", "down", "toZero", "below"),
        amount: fc.integer({ min: 1, max: 50 }),
        postOnly: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("amendMissing"), pick, move: fc.boolean() }) },
  ) as fc.Arbitrary<Step>;
}

/**
 * One random step for the long run. Most limit orders are passive (a few ticks behind the touch)
 * so the book builds depth; some are aggressive and sweep. Cancels pick up when the book is deep.
 */
function randomStep(
  rand: () => number,
  book: { bestBid(): number; bestAsk(): number; size(): number },
): Step {
  const int = (min: number, max: number): number => min + Math.floor(rand() * (max - min + 1));
  const user = int(0, 3);
  const side: Side = rand() < 0.5 ? BUY : SELL;
  const bid = book.bestBid();
  const ask = book.bestAsk();
  const mid = bid !== -1 && ask !== -1 ? (bid + ask) >> 1 : bid !== -1 ? bid : ask !== -1 ? ask : 1000;
  const passive =
    side === BUY ? (ask !== -1 ? ask : mid) - int(1, 12) : (bid !== -1 ? bid : mid) + int(1, 12);
  const price = Math.max(1, rand() < 0.75 ? passive : mid + int(-8, 8));
  const qty = rand() < 0.9 ? int(1, 10) : int(1, 80);
  const cancelBias = book.size() > 150 ? 0.3 : 0;
  const r = rand();
  if (r < cancelBias) return { kind: "cancel", pick: int(0, 1000) };
  if (r < 0.56) return { kind: "limit", user, side, price, qty };
  if (r < 0.62)
    return { kind: "flagged", user, side, price, qty, flags: ALL_FLAGS[int(0, ALL_FLAGS.length - 1)] };
  if (r < 0.64) return { kind: "duplicate", user, side, price, qty, pick: int(0, 1000) };
  if (r < 0.72) {
    const modes: BudgetMode[] = ["none", "none", "exact", "short", "spare", "tiny", "max"];
    return { kind: "market", user, side, qty, budget: modes[int(0, modes.length - 1)], delta: int(1, 200) };
  }
  if (r < 0.76) {
    const modes: ReduceMode[] = ["fit", "fit", "toOne", "all", "over"];
    return { kind: "reduce", pick: int(0, 1000), mode: modes[int(0, modes.length - 1)], amount: int(1, 20) };
  }
  if (r < 0.8) {
    const modes: DeltaMode[] = ["zero", "up", "down", "down", "toZero", "below"];
    return {
      kind: "move",
      pick: int(0, 1000),
      price,
      samePrice: rand() < 0.4,
      mode: modes[int(0, modes.length - 1)],
      amount: int(1, 20),
      postOnly: rand() < 0.3,
    };
  }
  if (r < 0.98) return { kind: "cancel", pick: int(0, 1000) };
  if (r < 0.99) return { kind: "cancelMissing", pick: int(0, 1000) };
  return { kind: "amendMissing", pick: int(0, 1000), move: rand() < 0.5 };
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("OrderBook against ReferenceOrderBook", () => {
  it("agrees on random sequences in a narrow price band with four users", () => {
    fc.assert(
      fc.property(fc.array(stepArb(narrow), { maxLength: 200, size: "max" }), (steps) => runSteps(steps)),
      { numRuns: 400, includeErrorInReport: true },
    );
  });

  it("agrees on random sequences with prices from 1 to 2^45 ticks and quantities past 2^32 lots", () => {
    fc.assert(
      fc.property(fc.array(stepArb(wide), { maxLength: 120, size: "max" }), (steps) => runSteps(steps)),
      { numRuns: 200, includeErrorInReport: true },
    );
  });

  it("agrees on one long seeded sequence of 50,000 commands", () => {
    const seed = 20240611;
    const rand = mulberry32(seed);
    const duel = new Duel();
    let maxSize = 0;
    let maxHashed = 0;
    try {
      for (let i = 0; i < 50_000; i++) {
        duel.run(randomStep(rand, duel));
        maxSize = Math.max(maxSize, duel.size());
        maxHashed = Math.max(maxHashed, duel.fast.layoutStats().hashed);
      }
    } catch (error) {
      const e = error as Error;
      const shrunk = shrinkCommands(duel.transcript);
      const at = `seed ${seed}, command #${duel.transcript.length - 1}`;
      throw new Error(`${at}: ${e.message}\n${reproduction(shrunk)}`, { cause: e });
    }
    assert.equal(duel.transcript.length, 50_000);
    // The sequence kept a deep book, not one that empties after every command.
    assert.ok(maxSize >= 50, `the book never held more than ${maxSize} orders`);
    // ...and merged chunks after cancels (the layout's compaction path).
    const { merges } = duel.fast.layoutStats();
    assert.ok(merges > 100, `only ${merges} chunk merges`);
    // ...and reached every outcome of the flags, reduces and moves.
    const seen = duel.seen;
    for (const k of [
      `limit:${ERR_WOULD_TAKE}`,
      `reduce:${OK}`,
      `reduce:${ERR_AMEND_TOO_SMALL}`,
      `reduce:${ERR_ORDER_NOT_FOUND}`,
      `move:${OK}`,
      `move:${ERR_AMEND_TOO_SMALL}`,
      `move:${ERR_WOULD_TAKE}`,
      `move:${ERR_ORDER_NOT_FOUND}`,
      "gtc traded",
      "ioc traded",
      "ioc remainder",
      "fok traded",
      "fok killed",
      "fok self-trade",
      "move same price",
      "move traded",
      "move filled",
      "move self-trade",
    ]) {
      assert.ok(
        (seen.get(k) ?? 0) >= 5,
        `${k}: seen ${seen.get(k) ?? 0} times (${JSON.stringify([...seen])})`,
      );
    }
  });

  it("agrees when old orders outlive the id window: deep orders rest through 20,000 newer ids, then trade", () => {
    const rand = mulberry32(77);
    const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
    const duel = new Duel();
    let id = 1;
    // 60 old orders far from the touch, on both sides, several users, 15 per level (two chunks).
    for (let i = 0; i < 60; i++) {
      const side = i % 2 === 0 ? BUY : SELL;
      const price = side === BUY ? 500 - (i % 4) : 1500 + (i % 4);
      duel.apply({ op: "limit", id: id++, user: 1 + (i % 3), side, price, qty: int(1, 20) });
    }
    // Churn near 1000 with fresh ids: rests, cancels of recent orders, and small sweeps.
    const recent: number[] = [];
    let maxHashed = 0;
    for (let i = 0; i < 20_000; i++) {
      const r = rand();
      const side = rand() < 0.5 ? BUY : SELL;
      if (r < 0.55 || recent.length < 20) {
        const price = side === BUY ? 1000 - int(1, 15) : 1000 + int(1, 15);
        recent.push(id);
        duel.apply({ op: "limit", id: id++, user: int(1, 4), side, price, qty: int(1, 10) });
      } else if (r < 0.9) {
        const k = recent.length - 1 - int(0, Math.min(30, recent.length - 1));
        duel.apply({ op: "cancel", id: recent[k] });
        recent.splice(k, 1);
      } else {
        const price = side === BUY ? 1000 + int(0, 16) : 1000 - int(0, 16);
        duel.apply({ op: "limit", id: id++, user: int(1, 4), side, price, qty: int(1, 30) });
      }
      if (recent.length > 400) recent.splice(0, 200);
      maxHashed = Math.max(maxHashed, duel.fast.layoutStats().hashed);
    }
    assert.ok(maxHashed >= 60, `only ${maxHashed} orders were pushed out of the id window`);
    // The old orders are still found: cancel two thirds by id (thinning their chunks, which merges
    // them and moves hashed records), then half the rest, then sweep both sides through the others.
    const mergesBefore = duel.fast.layoutStats().merges;
    for (let old = 1; old <= 60; old += 3) duel.apply({ op: "cancel", id: old });
    for (let old = 2; old <= 60; old += 3) duel.apply({ op: "cancel", id: old });
    assert.ok(duel.fast.layoutStats().merges > mergesBefore, "cancelling old orders merged no chunks");
    for (let old = 3; old <= 60; old += 6) duel.apply({ op: "cancel", id: old });
    duel.apply({ op: "market", id: id++, user: 9, side: BUY, qty: 1_000_000, budget: NO_BUDGET });
    duel.apply({ op: "market", id: id++, user: 9, side: SELL, qty: 1_000_000, budget: NO_BUDGET });
    assert.equal(duel.fast.layoutStats().hashed, 0);
    assert.equal(duel.size(), 0);
  });
});

// ---------------------------------------------------------------------------------------------
// Market-maker protection, quotes and self-trade modes (docs/API.md 8.10-8.12): commands with times, run
// through both books; after every command the codes, events, levels, size and the open quantity
// of every id ever used must agree. Every outcome is counted and must be reached.
// ---------------------------------------------------------------------------------------------

type MmpStep =
  | { kind: "limit"; user: number; side: Side; price: number; qty: number; flags: number; dt: number }
  | { kind: "market"; user: number; side: Side; qty: number; stp: number; dt: number }
  | {
      kind: "quote";
      user: number;
      bids: number;
      asks: number;
      mid: number;
      size: number;
      keep: boolean;
      dt: number;
    }
  | { kind: "cancel"; pick: number }
  | { kind: "move"; pick: number; price: number; delta: number; dt: number }
  | { kind: "mmpSet"; user: number; interval: number; limit: number; frozen: number }
  | { kind: "mmpReset"; user: number };

const STP_MODES = [0, STP_CANCEL_TAKER, STP_CANCEL_BOTH];

const mmpStepArb: fc.Arbitrary<MmpStep> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("limit" as const),
      user: fc.integer({ min: 1, max: 3 }),
      side: fc.constantFrom(BUY, SELL),
      price: fc.integer({ min: 95, max: 105 }),
      qty: fc.integer({ min: 1, max: 8 }),
      flags: fc
        .tuple(fc.constantFrom(...ALL_FLAGS), fc.constantFrom(0, FLAG_MMP), fc.constantFrom(...STP_MODES))
        .map(([a, b, c]) => a | b | c),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("market" as const),
      user: fc.integer({ min: 1, max: 3 }),
      side: fc.constantFrom(BUY, SELL),
      qty: fc.integer({ min: 1, max: 12 }),
      stp: fc.constantFrom(...STP_MODES),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("quote" as const),
      user: fc.integer({ min: 1, max: 2 }),
      bids: fc.integer({ min: 0, max: 4 }),
      asks: fc.integer({ min: 0, max: 4 }),
      mid: fc.integer({ min: 97, max: 103 }),
      size: fc.integer({ min: 1, max: 4 }),
      keep: fc.boolean(),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("move" as const),
      pick: fc.nat(),
      price: fc.integer({ min: 95, max: 105 }),
      delta: fc.integer({ min: -2, max: 3 }),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("mmpSet" as const),
      user: fc.integer({ min: 1, max: 3 }),
      interval: fc.integer({ min: 0, max: 5 }),
      limit: fc.integer({ min: 1, max: 20 }),
      frozen: fc.integer({ min: 0, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("mmpReset" as const), user: fc.integer({ min: 1, max: 3 }) }),
  },
);

class MmpDuel {
  readonly refEvents = new RecordingEvents();
  readonly fastEvents = new RecordingEvents();
  readonly ref = new ReferenceOrderBook(this.refEvents);
  readonly fast = new OrderBook(this.fastEvents, 16);
  readonly transcript: EngineCommand[] = [];
  readonly outcomes = new Set<string>();
  private nextId = 1;
  private time = 1_000_000;
  private readonly ids: number[] = [];

  run(step: MmpStep): void {
    this.apply(this.resolve(step));
  }

  private resolve(s: MmpStep): EngineCommand {
    switch (s.kind) {
      case "limit":
        this.time += s.dt;
        return {
          op: "limit",
          id: this.nextId++,
          user: s.user,
          side: s.side,
          price: s.price,
          qty: s.qty,
          flags: s.flags,
          time: this.time,
        };
      case "market":
        this.time += s.dt;
        return {
          op: "market",
          id: this.nextId++,
          user: s.user,
          side: s.side,
          qty: s.qty,
          budget: NO_BUDGET,
          flags: s.stp,
          time: this.time,
        };
      case "quote": {
        this.time += s.dt;
        const levels: Array<[number, Side, number, number]> = [];
        for (let i = 0; i < s.bids; i++)
          levels.push([this.nextId++, BUY, s.mid - 1 - i, s.keep ? 2 : s.size]);
        for (let i = 0; i < s.asks; i++)
          levels.push([this.nextId++, SELL, s.mid + 1 + i, s.keep ? 2 : s.size]);
        return { op: "quote", user: s.user, time: this.time, levels };
      }
      case "cancel":
        return { op: "cancel", id: this.ids.length === 0 ? 1 : this.ids[s.pick % this.ids.length] };
      case "move":
        this.time += s.dt;
        return {
          op: "move",
          id: this.ids.length === 0 ? 1 : this.ids[s.pick % this.ids.length],
          price: s.price,
          delta: s.delta,
          flags: 0,
          time: this.time,
        };
      case "mmpSet":
        return {
          op: "mmpSet",
          user: s.user,
          intervalSeconds: s.interval,
          qtyLimit: s.limit,
          frozenSeconds: s.frozen,
        };
      case "mmpReset":
        return { op: "mmpReset", user: s.user };
    }
  }

  apply(cmd: EngineCommand): void {
    this.transcript.push(cmd);
    const refCode = applyCommand(this.ref, cmd);
    const fastCode = applyCommand(this.fast, cmd);
    const refEvents = this.refEvents.take();
    const fastEvents = this.fastEvents.take();
    const what = formatCommand(cmd);
    assert.equal(fastCode, refCode, `${what}: result code`);
    assert.deepEqual(fastEvents, refEvents, `${what}: events`);
    this.outcomes.add(`${cmd.op}:${refCode}`);
    for (const e of refEvents) {
      if (e[0] === "done") this.outcomes.add(`done:${e[4]}`);
      else if (e[0] === "quoted") this.outcomes.add(`quoted:${e[4]}`);
      else if (e[0] === "mmp") this.outcomes.add(`mmp:${e[2]}`);
      else if (e[0] === "rested") this.ids.push(e[1]);
    }
    assert.equal(this.fast.bestBid(), this.ref.bestBid(), `${what}: bestBid`);
    assert.equal(this.fast.bestAsk(), this.ref.bestAsk(), `${what}: bestAsk`);
    assert.equal(this.fast.size(), this.ref.size(), `${what}: size`);
    for (const side of [BUY, SELL] as const) {
      assert.deepEqual(
        snapshotLevels(this.fast, side),
        snapshotLevels(this.ref, side),
        `${what}: levels ${side}`,
      );
    }
    for (const id of this.ids)
      assert.equal(this.fast.remaining(id), this.ref.remaining(id), `${what}: remaining(${id})`);
    checkBookInvariants(this.ref);
  }
}

/** Every outcome the MMP runs must reach: codes, done reasons, quote level results, mmp events. */
const MMP_OUTCOMES = [
  `limit:${OK}`,
  `limit:${ERR_MMP_FROZEN}`,
  `limit:${ERR_WOULD_TAKE}`,
  `market:${OK}`,
  `quote:${OK}`,
  `quote:${ERR_MMP_FROZEN}`,
  `move:${OK}`,
  `cancel:${OK}`,
  `mmpSet:${OK}`,
  `mmpReset:${OK}`,
  `done:${DONE_MMP}`,
  `done:${DONE_SELF_TRADE}`,
  `done:${DONE_CANCELLED}`,
  `done:${DONE_REMAINDER}`,
  `quoted:${OK}`,
  `quoted:${QUOTE_KEPT}`,
  `quoted:${ERR_WOULD_TAKE}`,
  "mmp:1",
  "mmp:0",
];

function runMmpSteps(steps: readonly MmpStep[], outcomes?: Set<string>): void {
  const duel = new MmpDuel();
  try {
    for (const s of steps) duel.run(s);
  } catch (error) {
    const lines = duel.transcript.map(formatCommand).join("\n");
    throw new Error(
      `${(error as Error).message}\nReproduction (${duel.transcript.length} commands):\n${lines}`,
    );
  }
  if (outcomes !== undefined) for (const o of duel.outcomes) outcomes.add(o);
}

describe("OrderBook against ReferenceOrderBook: quotes, MMP and self-trade modes", () => {
  it("agrees on random sequences of quotes, protected orders, MMP settings and STP modes", () => {
    fc.assert(
      fc.property(fc.array(mmpStepArb, { minLength: 1, maxLength: 120 }), (steps) => runMmpSteps(steps)),
      { numRuns: 300, includeErrorInReport: true },
    );
  });

  it("agrees on one long seeded sequence of 20,000 such commands, reaching every outcome", () => {
    const seen = new Set<string>();
    const steps = fc.sample(fc.array(mmpStepArb, { minLength: 20_000, maxLength: 20_000 }), {
      numRuns: 1,
      seed: 12,
    })[0];
    runMmpSteps(steps, seen);
    assert.deepEqual(
      MMP_OUTCOMES.filter((o) => !seen.has(o)),
      [],
      "outcomes never reached",
    );
  });
});
