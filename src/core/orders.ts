/**
 * An order's options (CONTRACT 8.2), as the core keeps them in one integer (`OrderState.flags`, the
 * `flags` column of migration 003): the matching engine's flags (time in force in bits 0-1,
 * post-only in bit 2, src/protocol/pair/engine.ts) plus bit 3, set when the client named the time in
 * force. A record shows `timeInForce` only when that bit is set and `postOnly` only when true, so
 * an order placed without options looks exactly as it did before they existed.
 */
import { FLAG_POST_ONLY, TIF_FOK, TIF_GTC, TIF_IOC, TIF_MASK } from "../protocol/pair/engine.ts";

export { FLAG_POST_ONLY, TIF_FOK, TIF_GTC, TIF_IOC, TIF_MASK };

/** The client named the time in force. */
export const TIF_GIVEN = 8;
/**
 * Cancel on disconnect (CONTRACT 11.4): the order was created by a session that cancels its open
 * orders when it ends; stored with the other options, so recovery finds the orders a crash left.
 */
export const FLAG_CANCEL_ON_DISCONNECT = 16;
/**
 * A quote order (CONTRACT 12.1): placed by a mass quote (src/core/quotes.ts), post-only and
 * protected; its record shows `quote`, `postOnly` and `mmp`. Bit 8, clear of the engine's bits and
 * of the options above, so a stored row keeps it and recovery rests it again as a quote order.
 */
export const FLAG_QUOTE_ORDER = 256;
/** The bits the matching engine reads. */
export const ENGINE_FLAGS = TIF_MASK | FLAG_POST_ONLY;

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
  quote?: true;
  mmp?: true;
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
  if ((flags & FLAG_QUOTE_ORDER) !== 0) {
    view.quote = true;
    view.mmp = true;
  }
  return view;
}

/** CONTRACT 8.2: a client order id. */
export const CLIENT_ORDER_ID_RE = /^[A-Za-z0-9_-]{1,36}$/;
