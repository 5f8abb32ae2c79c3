/**
 * The two engines behind one small driver interface, each with its own monomorphic replay loop:
 * - `OursRun`: workers/matching/order-book.ts fed with a `RingSink`;
 * - `PeerRun`: the npm package nodejs-order-book (v10), whose trades are recovered from the
 *   `IProcessOrder` each call returns (see `PeerRun.harvest`) and fed to the same checksum.
 *
 * A run is: `prepare()` (fresh book + untimed prefill), then `replay()` (timed as a whole by
 * tinybench) or `replayTimed(lat)` (one timestamp per op, for the latency percentiles).
 */
import { type IProcessOrder, OrderBook as PeerBook, Side as PeerSide } from "nodejs-order-book";
import {
  BUY,
  ERR_NO_LIQUIDITY,
  ERR_ORDER_NOT_FOUND,
  NO_BUDGET,
  OK,
  SELL,
  type Side,
} from "../../src/protocol/pair/engine.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { type ReplayResult, RingSink, TradeTape } from "./tape.ts";
import { OP_LIMIT, OP_MARKET, type Ops, type Workload } from "./workload.ts";

/** Aggregated levels, best first, as [price, total] pairs. */
export interface Depth {
  bids: [number, number][];
  asks: [number, number][];
}

export interface EngineRun {
  readonly name: string;
  prepare(): void;
  replay(): void;
  replayTimed(lat: Float64Array): void;
  result(): ReplayResult;
  depth(): Depth;
}

// ---------------------------------------------------------------------------------------------
// Ours
// ---------------------------------------------------------------------------------------------

/** One command of `o` on our book (stops.bench.ts replays the same through the stops' step). */
export function stepOurs(book: OrderBook, sink: RingSink, o: Ops, i: number): void {
  const k = o.kind[i];
  if (k === OP_LIMIT) {
    if (book.limit(o.id[i], o.user[i], o.side[i] as Side, o.price[i], o.qty[i]) !== OK) sink.errors++;
  } else if (k === OP_MARKET) {
    const rc = book.market(o.id[i], o.user[i], o.side[i] as Side, o.qty[i], NO_BUDGET);
    if (rc !== OK && rc !== ERR_NO_LIQUIDITY) sink.errors++;
  } else {
    const rc = book.cancel(o.id[i]);
    if (rc === ERR_ORDER_NOT_FOUND) sink.cancelMisses++;
    else if (rc !== OK) sink.errors++;
  }
}

export class OursRun implements EngineRun {
  readonly name = "ours";
  private sink = new RingSink();
  private book = new OrderBook(this.sink);

  constructor(private readonly wl: Workload) {}

  prepare(): void {
    this.sink = new RingSink();
    this.book = new OrderBook(this.sink);
    const p = this.wl.prefill;
    for (let i = 0; i < p.n; i++) stepOurs(this.book, this.sink, p, i);
    if (this.sink.trades !== 0 || this.sink.errors !== 0) throw new Error("ours: prefill traded or failed");
  }

  replay(): void {
    const { book, sink } = this;
    const o = this.wl.ops;
    for (let i = 0; i < o.n; i++) stepOurs(book, sink, o, i);
  }

  replayTimed(lat: Float64Array): void {
    const { book, sink } = this;
    const o = this.wl.ops;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < o.n; i++) {
      stepOurs(book, sink, o, i);
      const t1 = process.hrtime.bigint();
      lat[i] = Number(t1 - t0);
      t0 = t1;
    }
  }

  result(): ReplayResult {
    return this.sink;
  }

  depth(): Depth {
    const n = this.book.size();
    const prices = new Float64Array(n);
    const totals = new Float64Array(n);
    const side = (s: Side): [number, number][] => {
      const k = this.book.levels(s, n, prices, totals);
      const out: [number, number][] = [];
      for (let i = 0; i < k; i++) out.push([prices[i], totals[i]]);
      return out;
    };
    return { bids: side(BUY), asks: side(SELL) };
  }
}

// ---------------------------------------------------------------------------------------------
// Peer: nodejs-order-book
// ---------------------------------------------------------------------------------------------

const PEER_SIDE = [PeerSide.BUY, PeerSide.SELL] as const;

/**
 * Turns one peer response into trades, in execution order:
 * - `done` lists every maker that was fully filled (its `size` is what it had left, so that is the
 *   fill) and, for a limit taker that got fully filled, the taker itself last (with an averaged
 *   price) - skipped by id;
 * - `partial` is the maker that was partly filled last, filled by `partialQuantityProcessed`, or,
 *   when a limit taker traded and then rested, the taker itself - skipped by id.
 * Ids are decimal strings of our integer ids, so `+id` recovers the number.
 */
function harvest(tape: TradeTape, r: IProcessOrder, takerId: number, takerStr: string): void {
  const done = r.done;
  for (let j = 0; j < done.length; j++) {
    const d = done[j] as NonNullable<IProcessOrder["partial"]>;
    if (d.id !== takerStr) tape.trade(takerId, +d.id, d.price, d.size);
  }
  const p = r.partial;
  if (p !== null && p.id !== takerStr) tape.trade(takerId, +p.id, p.price, r.partialQuantityProcessed);
}

function stepPeer(book: PeerBook, tape: TradeTape, ids: readonly string[], o: Ops, i: number): void {
  const k = o.kind[i];
  const id = o.id[i];
  if (k === OP_LIMIT) {
    const s = ids[id];
    const r = book.limit({ id: s, side: PEER_SIDE[o.side[i]], size: o.qty[i], price: o.price[i] });
    if (r.err !== null) tape.errors++;
    else harvest(tape, r, id, s);
  } else if (k === OP_MARKET) {
    const r = book.market({ side: PEER_SIDE[o.side[i]], size: o.qty[i] });
    if (r.err !== null) tape.errors++;
    else harvest(tape, r, id, "");
  } else if (book.cancel(ids[id]) === undefined) {
    tape.cancelMisses++;
  }
}

export class PeerRun implements EngineRun {
  readonly name = "nodejs-order-book";
  private tape = new TradeTape();
  private book = new PeerBook();
  /** String ids, built once outside every timed region (the peer keys orders by string). */
  private readonly ids: string[];

  constructor(private readonly wl: Workload) {
    this.ids = new Array<string>(wl.maxId + 1);
    for (let i = 0; i <= wl.maxId; i++) this.ids[i] = String(i);
  }

  prepare(): void {
    this.tape = new TradeTape();
    this.book = new PeerBook();
    const p = this.wl.prefill;
    for (let i = 0; i < p.n; i++) stepPeer(this.book, this.tape, this.ids, p, i);
    if (this.tape.trades !== 0 || this.tape.errors !== 0) throw new Error("peer: prefill traded or failed");
  }

  replay(): void {
    const { book, tape, ids } = this;
    const o = this.wl.ops;
    for (let i = 0; i < o.n; i++) stepPeer(book, tape, ids, o, i);
  }

  replayTimed(lat: Float64Array): void {
    const { book, tape, ids } = this;
    const o = this.wl.ops;
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < o.n; i++) {
      stepPeer(book, tape, ids, o, i);
      const t1 = process.hrtime.bigint();
      lat[i] = Number(t1 - t0);
      t0 = t1;
    }
  }

  result(): ReplayResult {
    return this.tape;
  }

  depth(): Depth {
    const [asks, bids] = this.book.depth();
    return { bids, asks };
  }
}
