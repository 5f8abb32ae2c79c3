/**
 * What each engine's output costs and how it is checked: both engines feed their trades through
 * the same checksum (`mixTrade`), and our engine's `BookEvents` sink also writes every event into a
 * preallocated Float64Array ring with the pair worker's record writer, so that events are not free.
 *
 * The checksum has two lanes, both exact:
 * - `hash`: murmur3-style 32-bit mix of (takerId, makerId, price, qty) of every trade, in order
 *   (Math.imul and shifts only, so no float rounding);
 * - `notional`: sum of price * qty, an integer below 2^53 for these workloads.
 */
import type { Side } from "../../src/protocol/pair/engine.ts";
import { EV_SLOT_WORDS, EventRecordWriter } from "../../src/protocol/pair/records.ts";

const RING = 1 << 14;

const HASH_SEED = 0x2545f491;

function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Folds one trade into the running hash; every argument is a non-negative integer < 2^31 here. */
export function mixTrade(h: number, takerId: number, makerId: number, price: number, qty: number): number {
  return mix(mix(mix(mix(h, takerId), makerId), price), qty);
}

/** What one replay produced, compared across engines. */
export interface ReplayResult {
  trades: number;
  hash: number;
  notional: number;
  cancelMisses: number;
  /** Commands an engine refused for a reason the workload never intends (must stay 0). */
  errors: number;
}

export function checksumOf(r: ReplayResult): string {
  return `${(r.hash >>> 0).toString(16).padStart(8, "0")}/${r.notional}`;
}

/**
 * Our engine's sink: every event written as a ring record, as the pair worker writes it
 * (src/protocol/pair/records.ts's EventRecordWriter), into a ring of its own, plus the trade checksum.
 */
export class RingSink extends EventRecordWriter implements ReplayResult {
  pos = 0;
  trades = 0;
  hash = HASH_SEED;
  notional = 0;
  cancelMisses = 0;
  errors = 0;

  constructor() {
    super(new Float64Array(RING));
  }

  slot(): number {
    let p = this.pos;
    if (p + EV_SLOT_WORDS > RING) p = 0;
    this.pos = p + EV_SLOT_WORDS;
    return p;
  }

  override trade(
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
    super.trade(takerId, takerUser, takerSide, makerId, makerUser, price, qty, takerLeft, makerLeft);
    this.trades++;
    this.hash = mixTrade(this.hash, takerId, makerId, price, qty);
    this.notional += price * qty;
  }
}

/** The peer's side of the same bookkeeping: trades recovered from its responses, same ring and hash. */
export class TradeTape implements ReplayResult {
  readonly ring = new Float64Array(RING);
  pos = 0;
  trades = 0;
  hash = HASH_SEED;
  notional = 0;
  cancelMisses = 0;
  errors = 0;

  trade(takerId: number, makerId: number, price: number, qty: number): void {
    const r = this.ring;
    let p = this.pos;
    if (p + 5 > RING) p = 0;
    r[p] = 1;
    r[p + 1] = takerId;
    r[p + 2] = makerId;
    r[p + 3] = price;
    r[p + 4] = qty;
    this.pos = p + 5;
    this.trades++;
    this.hash = mixTrade(this.hash, takerId, makerId, price, qty);
    this.notional += price * qty;
  }
}
