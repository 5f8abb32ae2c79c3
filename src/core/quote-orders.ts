/**
 * A mass quote's level orders (docs/API.md 8.12) as the sequencer sends them and recovery restores
 * them: the QUOTE_LEVEL records, the level orders' records, and the engine flags a stored quote
 * order rests with again. Apart from src/core/quotes.ts so the sequencer needs nothing of R1.
 */
import { FLAG_MMP, FLAG_QUOTE, TIF_GTC, TIF_MASK } from "../protocol/pair/engine.ts";
import { type Command, LIMIT, type QuoteLevel, type QuoteWork } from "./command.ts";
import { engineFlags, FLAG_CANCEL_ON_DISCONNECT, FLAG_POST_ONLY, FLAG_QUOTE_ORDER } from "./order-options.ts";

/** A quote command's part before it runs (`Command.quote`). */
export function newQuoteWork(levels: readonly QuoteLevel[], session: number): QuoteWork {
  return {
    levels,
    session,
    orders: [],
    outcome: [],
    kept: [],
    holdBase: 0n,
    holdQuote: 0n,
    cancelled: [],
    result: null,
  };
}

/**
 * The engine flags a stored open order rests with again after a restart: GTC with its protection
 * and STP mode (`engineFlags`), and a quote order as a quote and protected order (FLAG_QUOTE |
 * FLAG_MMP), so the next quote replaces it and MMP counts it.
 */
export function restoreFlags(flags: number): number {
  if ((flags & FLAG_QUOTE_ORDER) !== 0) return TIF_GTC | FLAG_QUOTE | FLAG_MMP;
  return (engineFlags(flags) & ~(TIF_MASK | FLAG_POST_ONLY)) | TIF_GTC;
}

/** The QUOTE_LEVEL records of a quote whose first level order gets id `firstId`. */
export function quoteLevelRecords(w: QuoteWork, firstId: number): Float64Array {
  const levels = w.levels;
  const out = new Float64Array(levels.length * 4);
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i];
    out[i * 4] = firstId + i;
    out[i * 4 + 1] = l.side;
    out[i * 4 + 2] = l.price;
    out[i * 4 + 3] = l.amount;
  }
  return out;
}

/**
 * SEQ: the quote entered the ring with its first level order's id in `cmd.orderId`: its level
 * orders, one per level; returns the next free id.
 */
export function quoteLevelOrders(cmd: Command, micro: number): number {
  const w = cmd.quote!;
  const first = cmd.orderId;
  const flags = FLAG_POST_ONLY | FLAG_QUOTE_ORDER | (w.session !== 0 ? FLAG_CANCEL_ON_DISCONNECT : 0);
  for (let i = 0; i < w.levels.length; i++) {
    const l = w.levels[i];
    w.orders.push({
      id: first + i,
      user: cmd.user,
      pair: cmd.pair,
      side: l.side,
      type: LIMIT,
      price: l.price,
      amount: l.amount,
      used: 0,
      cancelled: false,
      createMicro: micro,
      updateMicro: micro,
      budget: 0n,
      executed: 0n,
      flags,
      clientOrderId: undefined,
      rowSent: false,
      session: w.session,
      amending: null,
      userSlot: -1,
      restSeq: 0,
      execSeq: 0,
      stopPrice: 0,
      stopDirection: 0,
      triggerMicro: 0,
      cancelReason: 0,
      trailingDelta: 0,
      ocoId: 0,
      oco: null,
    });
    w.outcome.push(-1);
    w.kept.push(undefined);
  }
  return first + w.levels.length;
}
