/**
 * The quoting workload: one market maker (user 1, MMP on) requotes 10 levels a side around a
 * drifting mid, and random takers (users 2-9) send small market and IOC limit orders between the
 * quotes (3 takers per quote). Every op is one book command; a quote counts as one op. Seeded and
 * deterministic; run in-process on this checkout's book only (the books before mass quotes (docs/API.md 8.12) have no
 * quotes, so `--baseline` does not run it).
 */
import { BUY, FLAG_MMP, NO_BUDGET, OK, PENDING, SELL, TIF_IOC } from "../../src/protocol/pair/engine.ts";
import { mulberry32 } from "../../test/support/prng.ts";
import { OrderBook } from "../../workers/matching/order-book.ts";
import { RingSink } from "./tape.ts";

const LEVELS = 10;

export interface QuotingResult {
  ops: number;
  quotes: number;
  ms: number;
  opsPerSec: number;
  triggers: number;
  trades: number;
}

export function runQuoting(n: number, seed = 0x9007e): QuotingResult {
  const sink = new RingSink();
  const book = new OrderBook(sink);
  // Protection that trips now and then: 500 lots in 1 s, frozen 1 s (ops are 10 ms apart).
  book.mmpSet(1, 1, 500, 1);
  const rand = mulberry32(seed);
  let id = 1;
  let time = 1_700_000_000_000;
  let mid = 10_000;
  let quotes = 0;
  let triggers = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    time += 10;
    if (i % 4 === 0) {
      // Requote: the mid drifts by -1, 0 or +1 tick; most levels stay the same and keep their place.
      mid += Math.floor(rand() * 3) - 1;
      let r = book.quoteBegin(1, LEVELS * 2, time);
      for (let k = 0; k < LEVELS; k++) r = book.quoteLevel(id++, BUY, mid - 1 - k, 10);
      for (let k = 0; k < LEVELS; k++) r = book.quoteLevel(id++, SELL, mid + 1 + k, 10);
      if (r === PENDING) throw new Error("quote not run");
      if (r !== OK) triggers++;
      quotes++;
    } else {
      const user = 2 + Math.floor(rand() * 8);
      const side = rand() < 0.5 ? BUY : SELL;
      const qty = 1 + Math.floor(rand() * 15);
      if (rand() < 0.5) book.market(id++, user, side, qty, NO_BUDGET, 0, time);
      else {
        const price = side === BUY ? mid + 1 + Math.floor(rand() * 3) : mid - 1 - Math.floor(rand() * 3);
        book.limit(id++, user, side, price, qty, TIF_IOC | (rand() < 0.1 ? FLAG_MMP : 0), time);
      }
    }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ops: n, quotes, ms, opsPerSec: Math.round(n / (ms / 1000)), triggers, trades: sink.trades };
}
