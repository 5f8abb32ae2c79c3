/**
 * Seeded, deterministic workloads for the matching benchmark, generated up front into typed arrays
 * so that generation costs nothing inside the timed replays.
 *
 * The generator keeps an exact model of the book (price-time priority, lazy deletion in per-price
 * FIFO queues) so that "crossing" limits really cross, "passive" limits really rest, cancels
 * target orders that are resting at that moment, and aggressive orders of workload (b) are sized
 * to sweep a chosen number of levels. The model also counts the trades it expects, which the
 * benchmark prints as a third opinion next to the two engines.
 *
 * Users: there are 100 of them, but every user trades on one side only (even users buy, odd users
 * sell). The peer (nodejs-order-book) matches a user against itself unless it is given an STP mode,
 * and its EXPIRE_MAKER mode differs from our self-trade prevention (docs/API.md 6) on market orders that meet only the
 * taker's own orders (we refuse with ERR_NO_LIQUIDITY and touch nothing, it expires the makers).
 * One-sided users make self-trades impossible, so both engines do exactly the same fills while our
 * engine still performs its per-fill user comparison.
 */
import { BUY, SELL, type Side } from "../../src/protocol/pair/engine.ts";
import { mulberry32 } from "../../test/support/prng.ts";

export const OP_LIMIT = 0;
export const OP_MARKET = 1;
export const OP_CANCEL = 2;

/** A list of book commands as parallel typed arrays (a cancel uses only `id`). */
export interface Ops {
  readonly n: number;
  readonly kind: Uint8Array;
  readonly id: Int32Array;
  readonly user: Int32Array;
  readonly side: Uint8Array;
  readonly price: Int32Array;
  readonly qty: Int32Array;
}

export interface WorkloadStats {
  limits: number;
  crossingLimits: number;
  limitsThatTraded: number;
  markets: number;
  marketsWithoutLiquidity: number;
  cancels: number;
  cancelMisses: number;
  sweeps: number;
  sweptLevels: number;
  /** Trades the generator's model expects over `ops` (prefill never trades). */
  expectedTrades: number;
  /** Resting orders after the prefill and after the last op. */
  restingAfterPrefill: number;
  restingAtEnd: number;
  /** Mean number of resting orders, sampled every 1,000 ops. */
  meanResting: number;
}

export interface Workload {
  readonly name: string;
  /** Untimed: replayed on every fresh book before the timed `ops`. */
  readonly prefill: Ops;
  readonly ops: Ops;
  /** Highest order id used (ids are 1..maxId). */
  readonly maxId: number;
  readonly stats: WorkloadStats;
}

// ---------------------------------------------------------------------------------------------
// Op list builder
// ---------------------------------------------------------------------------------------------

class OpsBuilder implements Ops {
  n = 0;
  readonly kind: Uint8Array;
  readonly id: Int32Array;
  readonly user: Int32Array;
  readonly side: Uint8Array;
  readonly price: Int32Array;
  readonly qty: Int32Array;

  constructor(cap: number) {
    this.kind = new Uint8Array(cap);
    this.id = new Int32Array(cap);
    this.user = new Int32Array(cap);
    this.side = new Uint8Array(cap);
    this.price = new Int32Array(cap);
    this.qty = new Int32Array(cap);
  }

  push(kind: number, id: number, user: number, side: Side, price: number, qty: number): void {
    const i = this.n++;
    this.kind[i] = kind;
    this.id[i] = id;
    this.user[i] = user;
    this.side[i] = side;
    this.price[i] = price;
    this.qty[i] = qty;
  }
}

// ---------------------------------------------------------------------------------------------
// Exact book model (generator side only)
// ---------------------------------------------------------------------------------------------

/**
 * Prices are indexes into per-side arrays of size `maxPrice + 1`. Each level is a FIFO of ids
 * (an array plus a head index); cancelled ids stay in the array with `left` 0 and are skipped.
 */
class ModelBook {
  readonly left: Float64Array;
  readonly oSide: Uint8Array;
  readonly oPrice: Int32Array;
  /** Resting ids in an unordered list with O(1) swap-removal, for picking cancel victims. */
  readonly resting: Int32Array;
  readonly posOf: Int32Array;
  restingCount = 0;

  readonly queue: [(number[] | undefined)[], (number[] | undefined)[]] = [[], []];
  readonly qHead: [Int32Array, Int32Array];
  readonly levelCount: [Int32Array, Int32Array];
  readonly levelTotal: [Float64Array, Float64Array];
  readonly sideCount = [0, 0];
  best = [-1, -1];
  trades = 0;

  constructor(maxId: number, maxPrice: number) {
    this.left = new Float64Array(maxId + 1);
    this.oSide = new Uint8Array(maxId + 1);
    this.oPrice = new Int32Array(maxId + 1);
    this.resting = new Int32Array(maxId + 1);
    this.posOf = new Int32Array(maxId + 1).fill(-1);
    this.qHead = [new Int32Array(maxPrice + 1), new Int32Array(maxPrice + 1)];
    this.levelCount = [new Int32Array(maxPrice + 1), new Int32Array(maxPrice + 1)];
    this.levelTotal = [new Float64Array(maxPrice + 1), new Float64Array(maxPrice + 1)];
  }

  bestBid(): number {
    return this.best[BUY];
  }

  bestAsk(): number {
    return this.best[SELL];
  }

  /** Limit (price >= 0) or market (price -1). Returns the quantity left (rested for a limit). */
  submit(id: number, side: Side, price: number, qty: number): number {
    const opp = side === BUY ? SELL : BUY;
    let left = qty;
    while (left > 0) {
      const p = this.best[opp];
      if (p < 0) break;
      if (price >= 0 && (side === BUY ? p > price : p < price)) break;
      const q = this.queue[opp][p]!;
      let h = this.qHead[opp][p];
      while (left > 0 && h < q.length) {
        const m = q[h];
        const ml = this.left[m];
        if (ml === 0) {
          h++;
          continue;
        }
        const fill = Math.min(left, ml);
        this.trades++;
        left -= fill;
        this.left[m] = ml - fill;
        this.levelTotal[opp][p] -= fill;
        if (ml === fill) {
          h++;
          this.forget(m, opp, p);
        }
      }
      // When the level emptied, forget() dropped its queue and reset its head.
      if (this.levelCount[opp][p] > 0) this.qHead[opp][p] = h;
    }
    if (left > 0 && price >= 0) this.rest(id, side, price, left);
    return left;
  }

  cancel(id: number): boolean {
    const l = this.left[id];
    if (l === 0) return false;
    const side = this.oSide[id] as Side;
    const p = this.oPrice[id];
    this.left[id] = 0;
    this.levelTotal[side][p] -= l;
    this.forget(id, side, p);
    return true;
  }

  /** Price of the k-th non-empty level (0 = best) of `side`, or -1. Also sums the totals before it. */
  levelPrice(side: Side, k: number, out: { before: number; total: number }): number {
    let p = this.best[side];
    out.before = 0;
    out.total = 0;
    if (p < 0) return -1;
    const step = side === BUY ? -1 : 1;
    const cnt = this.levelCount[side];
    const tot = this.levelTotal[side];
    for (let i = 0; ; p += step) {
      if (p < 0 || p >= cnt.length) return -1;
      if (cnt[p] === 0) continue;
      if (i === k) {
        out.total = tot[p];
        return p;
      }
      out.before += tot[p];
      i++;
    }
  }

  private rest(id: number, side: Side, price: number, left: number): void {
    this.left[id] = left;
    this.oSide[id] = side;
    this.oPrice[id] = price;
    let q = this.queue[side][price];
    if (q === undefined) {
      q = [];
      this.queue[side][price] = q;
    }
    q.push(id);
    this.levelCount[side][price]++;
    this.levelTotal[side][price] += left;
    this.sideCount[side]++;
    const b = this.best[side];
    if (b < 0 || (side === BUY ? price > b : price < b)) this.best[side] = price;
    this.posOf[id] = this.restingCount;
    this.resting[this.restingCount++] = id;
  }

  /** Bookkeeping for an order that left the book (filled or cancelled; `left` is already 0). */
  private forget(id: number, side: Side, p: number): void {
    const pos = this.posOf[id];
    const last = this.resting[--this.restingCount];
    this.resting[pos] = last;
    this.posOf[last] = pos;
    this.posOf[id] = -1;
    this.sideCount[side]--;
    if (--this.levelCount[side][p] === 0) {
      // Drop the dead queue so it does not grow forever.
      this.queue[side][p] = undefined;
      this.qHead[side][p] = 0;
      if (this.best[side] === p) {
        if (this.sideCount[side] === 0) this.best[side] = -1;
        else {
          const step = side === BUY ? -1 : 1;
          let q = p + step;
          while (this.levelCount[side][q] === 0) q += step;
          this.best[side] = q;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------

const USERS_PER_SIDE = 50;
/** Even users buy, odd users sell (see the header comment). */
const userFor = (rand: () => number, side: Side): number => 2 * ((rand() * USERS_PER_SIDE) | 0) + side;
const randInt = (rand: () => number, n: number): number => (rand() * n) | 0;

function emptyStats(): WorkloadStats {
  return {
    limits: 0,
    crossingLimits: 0,
    limitsThatTraded: 0,
    markets: 0,
    marketsWithoutLiquidity: 0,
    cancels: 0,
    cancelMisses: 0,
    sweeps: 0,
    sweptLevels: 0,
    expectedTrades: 0,
    restingAfterPrefill: 0,
    restingAtEnd: 0,
    meanResting: 0,
  };
}

/** Emits a cancel: usually a resting order; `missRate` of them pick any past id (maybe gone). */
function pushCancel(
  ops: OpsBuilder,
  model: ModelBook,
  rand: () => number,
  nextId: number,
  missRate: number,
  st: WorkloadStats,
): void {
  let id: number;
  if (model.restingCount > 0 && rand() >= missRate) id = model.resting[randInt(rand, model.restingCount)];
  else id = 1 + randInt(rand, Math.max(1, nextId - 1));
  st.cancels++;
  if (!model.cancel(id)) st.cancelMisses++;
  ops.push(OP_CANCEL, id, 0, BUY, 0, 0);
}

function pushOrder(
  ops: OpsBuilder,
  model: ModelBook,
  kind: number,
  id: number,
  user: number,
  side: Side,
  price: number,
  qty: number,
  st: WorkloadStats,
): void {
  const before = model.trades;
  const left = model.submit(id, side, kind === OP_LIMIT ? price : -1, qty);
  if (kind === OP_LIMIT) {
    st.limits++;
    if (model.trades > before) st.limitsThatTraded++;
  } else {
    st.markets++;
    if (left === qty) st.marketsWithoutLiquidity++;
  }
  ops.push(kind, id, user, side, kind === OP_LIMIT ? price : 0, qty);
}

/**
 * (a) Mixed thin book: 60% limits (half of them priced through the opposite touch), 30% cancels of
 * resting orders (2% of those aimed at any past id, so some miss), 10% market orders; every price
 * inside a 1,000-tick band around the mid. Passive limits are placed from the mid outwards but
 * never through the opposite touch, skewed towards the touch. Because cancels remove resting orders
 * as fast as passive limits add them and every taker consumes some, the book stays genuinely thin
 * (about 5 resting orders on average): a fair share of market orders find no liquidity and some
 * cancels find the book empty and aim at an id that is gone. Both engines see the same ops.
 */
export function mixedThinBook(n = 1_000_000, seed = 0xa11ce): Workload {
  const rand = mulberry32(seed);
  const MID = 100_000;
  const LO = MID - 500;
  const HI = MID + 499;
  const ops = new OpsBuilder(n);
  const model = new ModelBook(n + 1, HI + 1);
  const st = emptyStats();
  let nextId = 1;
  let restingSum = 0;
  for (let i = 0; i < n; i++) {
    if (i % 1000 === 0) restingSum += model.restingCount;
    const r = rand();
    if (r < 0.6) {
      const side: Side = rand() < 0.5 ? BUY : SELL;
      const user = userFor(rand, side);
      const qty = 1 + randInt(rand, 100);
      const bid = model.bestBid();
      const ask = model.bestAsk();
      let price: number;
      if (rand() < 0.5) {
        st.crossingLimits++;
        // Through the opposite touch by 0-4 ticks (or at the mid when that side is empty).
        if (side === BUY) price = ask >= 0 ? Math.min(HI, ask + randInt(rand, 5)) : MID;
        else price = bid >= 0 ? Math.max(LO, bid - randInt(rand, 5)) : MID;
      } else {
        const u = rand();
        const off = (u * u * u * 500) | 0;
        if (side === BUY) {
          price = MID - 1 - off;
          if (ask >= 0 && price >= ask) price = ask - 1;
          if (price < LO) price = LO;
        } else {
          price = MID + off;
          if (bid >= 0 && price <= bid) price = bid + 1;
          if (price > HI) price = HI;
        }
      }
      pushOrder(ops, model, OP_LIMIT, nextId++, user, side, price, qty, st);
    } else if (r < 0.9) {
      pushCancel(ops, model, rand, nextId, 0.02, st);
    } else {
      const side: Side = rand() < 0.5 ? BUY : SELL;
      pushOrder(ops, model, OP_MARKET, nextId++, userFor(rand, side), side, 0, 1 + randInt(rand, 100), st);
    }
  }
  st.expectedTrades = model.trades;
  st.restingAtEnd = model.restingCount;
  st.meanResting = restingSum / Math.ceil(n / 1000);
  const empty = new OpsBuilder(0);
  return { name: "a: mixed thin book", prefill: empty, ops, maxId: nextId - 1, stats: st };
}

/**
 * (b) Deep book: 100,000 resting orders prefilled over 10,000 ticks (bids below the mid, asks at
 * and above it), then `n` ops: 5% aggressive orders (half limits priced at the k-th level, half
 * market orders) sized to sweep k-1 levels and part of the k-th (k = 2..6), and passive limits and
 * cancels for the rest, their mix steered to keep about 100,000 orders resting. Passive limits are
 * placed relative to the current touch, a third of them within 20 ticks of it (refilling what the
 * sweeps take), the others anywhere over 5,000 ticks.
 */
export function deepBook(n = 1_000_000, prefillCount = 100_000, seed = 0xdeeb): Workload {
  const rand = mulberry32(seed);
  const MID = 100_000;
  const HALF = 5_000;
  const TARGET = prefillCount;
  const maxId = prefillCount + n;
  const prefill = new OpsBuilder(prefillCount);
  const ops = new OpsBuilder(n);
  // Passive prices may drift with the touch; give the model room on both sides.
  const model = new ModelBook(maxId, 2 * MID);
  const st = emptyStats();
  const pre = emptyStats();
  let nextId = 1;
  for (let i = 0; i < prefillCount; i++) {
    const side: Side = rand() < 0.5 ? BUY : SELL;
    const price = side === BUY ? MID - 1 - randInt(rand, HALF) : MID + randInt(rand, HALF);
    pushOrder(
      prefill,
      model,
      OP_LIMIT,
      nextId++,
      userFor(rand, side),
      side,
      price,
      1 + randInt(rand, 100),
      pre,
    );
  }
  if (model.trades !== 0) throw new Error("deep-book prefill must not trade");
  st.restingAfterPrefill = model.restingCount;
  const lv = { before: 0, total: 0 };
  let restingSum = 0;
  for (let i = 0; i < n; i++) {
    if (i % 1000 === 0) restingSum += model.restingCount;
    const r = rand();
    if (r < 0.05) {
      const side: Side = rand() < 0.5 ? BUY : SELL;
      const opp: Side = side === BUY ? SELL : BUY;
      const k = 1 + randInt(rand, 5);
      const p = model.levelPrice(opp, k, lv);
      if (p < 0) throw new Error("deep book ran dry");
      const qty = lv.before + 1 + randInt(rand, lv.total);
      st.sweeps++;
      st.sweptLevels += k + 1;
      const kind = rand() < 0.5 ? OP_LIMIT : OP_MARKET;
      if (kind === OP_LIMIT) st.crossingLimits++;
      pushOrder(ops, model, kind, nextId++, userFor(rand, side), side, p, qty, st);
    } else {
      const pPassive = Math.min(0.9, Math.max(0.2, 0.5 + (TARGET - model.restingCount) / 2_000));
      if (rand() < pPassive) {
        const side: Side = rand() < 0.5 ? BUY : SELL;
        const off = rand() < 1 / 3 ? randInt(rand, 20) : randInt(rand, HALF);
        const bid = model.bestBid();
        const ask = model.bestAsk();
        let price: number;
        if (side === BUY) price = (ask >= 0 ? ask : bid + 1) - 1 - off;
        else price = (bid >= 0 ? bid : ask - 1) + 1 + off;
        price = Math.min(2 * MID - 1, Math.max(1, price));
        pushOrder(
          ops,
          model,
          OP_LIMIT,
          nextId++,
          userFor(rand, side),
          side,
          price,
          1 + randInt(rand, 100),
          st,
        );
      } else {
        pushCancel(ops, model, rand, nextId, 0.02, st);
      }
    }
  }
  st.expectedTrades = model.trades;
  st.restingAtEnd = model.restingCount;
  st.meanResting = restingSum / Math.ceil(n / 1000);
  return { name: "b: deep book", prefill, ops, maxId: nextId - 1, stats: st };
}
