/**
 * An order's options (docs/API.md 8.2, 8.9, 8.10-8.12), as the core keeps them in one integer
 * (`OrderState.flags`, the `flags` column of migration 004): bits 0-1 time in force and bit 2
 * post-only (the matching engine's own bits, src/protocol/pair/engine.ts), bit 3 set when the
 * client named the time in force, bit 4 cancel-on-disconnect, bits 5-6 the self-trade prevention
 * mode (the engine's STP_* bits), bit 7 market-maker protection, bit 8 a quote order. A record shows each option only
 * when set (and `timeInForce` only when named), so an order placed without options looks exactly
 * as it did before they existed. `engineFlags` is the one translation to the engine's bits.
 */
import {
  FLAG_MMP,
  FLAG_POST_ONLY,
  STP_CANCEL_BOTH,
  STP_CANCEL_TAKER,
  STP_MASK,
  TIF_FOK,
  TIF_GTC,
  TIF_IOC,
  TIF_MASK,
} from "../protocol/pair/engine.ts";

export { FLAG_POST_ONLY, STP_CANCEL_BOTH, STP_CANCEL_TAKER, STP_MASK, TIF_FOK, TIF_GTC, TIF_IOC, TIF_MASK };

/** The client named the time in force. */
export const TIF_GIVEN = 8;
/**
 * Cancel on disconnect (docs/API.md 8.9): the order was created by a session that cancels its open
 * orders when it ends; stored with the other options, so recovery finds the orders a crash left.
 */
export const FLAG_CANCEL_ON_DISCONNECT = 16;
/**
 * Self-trade prevention mode (docs/API.md 8.11), bits 5-6: the engine's own STP_* bits, at the same
 * place in both (0: cancelMaker, the default). A resting order keeps its mode, so does the row.
 */
export const STP_NAMES = ["cancelMaker", "cancelTaker", "cancelBoth"] as const;
export type SelfTradePrevention = (typeof STP_NAMES)[number];
/**
 * A protected order (docs/API.md 8.10, `"mmp": true`), bit 7. The engine's bit for it (FLAG_MMP, 8)
 * is this column's TIF_GIVEN, so `engineFlags` translates. Quote orders (docs/API.md 8.12) are
 * protected too: whoever places them sets this bit with theirs.
 */
export const ORDER_MMP = 128;

/**
 * The flags a limit order is sent to the matching engine with: time in force, post-only, the STP
 * mode and, for a protected order, the engine's FLAG_MMP. The one place the column's bits become
 * the engine's.
 */
export function engineFlags(flags: number): number {
  const out = flags & (TIF_MASK | FLAG_POST_ONLY | STP_MASK);
  return (flags & ORDER_MMP) !== 0 ? out | FLAG_MMP : out;
}

/** The flags of a self-trade prevention name, or -1 for anything else. */
export function selfTradePreventionFlags(name: unknown): number {
  if (name === "cancelMaker") return 0;
  if (name === "cancelTaker") return STP_CANCEL_TAKER;
  if (name === "cancelBoth") return STP_CANCEL_BOTH;
  return -1;
}
/**
 * A quote order (docs/API.md 8.12): placed by a mass quote (src/core/quotes.ts), post-only and
 * protected; its record shows `quote`, `postOnly` and `mmp`. Bit 8, clear of the engine's bits and
 * of the options above, so a stored row keeps it and recovery rests it again as a quote order.
 */
export const FLAG_QUOTE_ORDER = 256;

export type TimeInForce = "GTC" | "IOC" | "FOK";
export const TIF_NAMES: readonly TimeInForce[] = ["GTC", "IOC", "FOK"];

/** The flags of a time-in-force name, or -1 for anything else. */
export function timeInForceFlags(name: unknown): number {
  if (name === "GTC") return TIF_GTC | TIF_GIVEN;
  if (name === "IOC") return TIF_IOC | TIF_GIVEN;
  if (name === "FOK") return TIF_FOK | TIF_GIVEN;
  return -1;
}

/** The optional fields of an order record. */
export interface OrderOptionsView {
  clientOrderId?: string;
  timeInForce?: TimeInForce;
  postOnly?: true;
  cancelOnDisconnect?: true;
  mmp?: true;
  selfTradePrevention?: SelfTradePrevention;
  quote?: true;
}

/** Adds the options an order has to its record (in place) and returns it. */
export function withOrderOptions<T extends OrderOptionsView>(
  view: T,
  flags: number,
  clientOrderId: string | null | undefined,
): T {
  if (clientOrderId !== undefined && clientOrderId !== null) view.clientOrderId = clientOrderId;
  if ((flags & TIF_GIVEN) !== 0) view.timeInForce = TIF_NAMES[flags & TIF_MASK];
  if ((flags & FLAG_POST_ONLY) !== 0) view.postOnly = true;
  if ((flags & FLAG_CANCEL_ON_DISCONNECT) !== 0) view.cancelOnDisconnect = true;
  if ((flags & ORDER_MMP) !== 0) view.mmp = true;
  // Shown only when it is not the default (docs/API.md 8.11): old clients see what they saw.
  const stp = flags & STP_MASK;
  if (stp !== 0) view.selfTradePrevention = stp === STP_CANCEL_BOTH ? "cancelBoth" : "cancelTaker";
  if ((flags & FLAG_QUOTE_ORDER) !== 0) {
    view.quote = true;
    view.mmp = true;
  }
  return view;
}

/** docs/API.md 8.2: a client order id. */
export const CLIENT_ORDER_ID_RE = /^[A-Za-z0-9_-]{1,36}$/;
