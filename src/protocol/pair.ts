/**
 * Binary records exchanged with a pair worker through two SpscRings (./ring.ts):
 *
 *   main thread ──commands (CMD_SLOT_WORDS per slot)──▶ pair worker ──events (EV_SLOT_WORDS)──▶ main thread
 *
 * Every word is a Float64, so ids, prices, quantities and budgets (integers below 2^53, see
 * ./engine.ts) travel exactly. Offsets below are word offsets from the start of a record.
 * Word 0 is the record kind and word 1 the command's `seq`: a number the main thread assigns,
 * increasing per pair, and which the worker copies into every event the command produces. Each
 * command is answered by its book events, in BookEvents order, then one END record carrying the
 * command's ResultCode. Words past a record's last field are left as they were (stale).
 *
 * Command kinds and event kinds do not overlap, so a record read from the wrong ring is detected.
 * The helpers take the ring's Float64Array and a slot offset and allocate nothing.
 */
import type { BookEvents, DoneReason, MatchingBook, ResultCode, Side } from "./engine.ts";

// ------------------------------------------------------------------------------------ commands

/** Record word: command kind (CMD_LIMIT ...). */
export const CMD_KIND = 0;
/** Record word: command sequence number. */
export const CMD_SEQ = 1;
export const CMD_ORDER_ID = 2;
export const CMD_USER = 3;
export const CMD_SIDE = 4;
/** Limit price in ticks (LIMIT), new price (MOVE). */
export const CMD_PRICE = 5;
/**
 * Quantity in lots (LIMIT, MARKET); lots to take off (REDUCE: `by`); signed change of the open
 * quantity (MOVE: `delta`, may be negative; a Float64 holds it exactly).
 */
export const CMD_QTY = 6;
/**
 * Word 7's meaning depends on the kind: MARKET reads it as CMD_BUDGET, LIMIT and MOVE as CMD_FLAGS.
 * Sharing the word keeps a command in one 64-byte slot (one cache line); no kind uses both.
 */
/** Market-buy budget in ticks × lots, or NO_BUDGET (MARKET only). */
export const CMD_BUDGET = 7;
/** TIF_* | FLAG_POST_ONLY (./engine.ts) of a LIMIT or MOVE. */
export const CMD_FLAGS = 7;
/** Words per command slot: 64 bytes, a cache line's size. */
export const CMD_SLOT_WORDS = 8;

export const CMD_LIMIT = 1;
export const CMD_MARKET = 2;
export const CMD_CANCEL = 3;
/** Ends the worker's loop after an END record for it; the thread then exits. */
export const CMD_SHUTDOWN = 4;
/** Lowers a resting order's open quantity, keeping its place (MatchingBook.reduce). */
export const CMD_REDUCE = 5;
/** New price and/or quantity for a resting order, which goes to the back (MatchingBook.move). */
export const CMD_MOVE = 6;

// ------------------------------------------------------------------------------------ events

/** Record word: event kind (EV_TRADE ...). */
export const EV_KIND = 0;
/** Record word: seq of the command that produced the event. */
export const EV_SEQ = 1;

export const EV_TRADE = 11;
export const EV_RESTED = 12;
export const EV_DONE = 13;
export const EV_LEVEL = 14;
/** Last record of every command; carries its ResultCode. */
export const EV_END = 15;
export const EV_AMENDED = 16;

// TRADE fields: the arguments of BookEvents.trade, in order.
export const TRADE_TAKER_ID = 2;
export const TRADE_TAKER_USER = 3;
export const TRADE_TAKER_SIDE = 4;
export const TRADE_MAKER_ID = 5;
export const TRADE_MAKER_USER = 6;
export const TRADE_PRICE = 7;
export const TRADE_QTY = 8;
export const TRADE_TAKER_LEFT = 9;
export const TRADE_MAKER_LEFT = 10;
export const TRADE_WORDS = 11;

// RESTED fields.
export const RESTED_ORDER_ID = 2;
export const RESTED_USER = 3;
export const RESTED_SIDE = 4;
export const RESTED_PRICE = 5;
export const RESTED_LEFT = 6;
export const RESTED_WORDS = 7;

// DONE fields.
export const DONE_ORDER_ID = 2;
export const DONE_USER = 3;
export const DONE_SIDE = 4;
export const DONE_REASON = 5;
export const DONE_LEFT = 6;
export const DONE_WORDS = 7;

// LEVEL fields.
export const LEVEL_SIDE = 2;
export const LEVEL_PRICE = 3;
export const LEVEL_TOTAL = 4;
export const LEVEL_WORDS = 5;

// AMENDED fields: the arguments of BookEvents.amended, in order.
export const AMENDED_ORDER_ID = 2;
export const AMENDED_USER = 3;
export const AMENDED_SIDE = 4;
export const AMENDED_OLD_PRICE = 5;
export const AMENDED_NEW_PRICE = 6;
export const AMENDED_OLD_LEFT = 7;
export const AMENDED_NEW_LEFT = 8;
export const AMENDED_WORDS = 9;

// END fields.
export const END_RESULT = 2;
export const END_WORDS = 3;

/** Words per event slot: the largest record (TRADE, 11 words) plus one spare; 96 bytes. */
export const EV_SLOT_WORDS = 12;

if (Math.max(TRADE_WORDS, RESTED_WORDS, DONE_WORDS, LEVEL_WORDS, END_WORDS, AMENDED_WORDS) > EV_SLOT_WORDS) {
  throw new Error("EV_SLOT_WORDS is smaller than the largest event record");
}
if (Math.max(CMD_BUDGET, CMD_FLAGS) >= CMD_SLOT_WORDS)
  throw new Error("CMD_SLOT_WORDS is smaller than a command record");

// ------------------------------------------------------------------------------------ encode commands

export function writeLimit(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  user: number,
  side: Side,
  price: number,
  qty: number,
  flags = 0,
): void {
  f[o + CMD_KIND] = CMD_LIMIT;
  f[o + CMD_SEQ] = seq;
  f[o + CMD_ORDER_ID] = orderId;
  f[o + CMD_USER] = user;
  f[o + CMD_SIDE] = side;
  f[o + CMD_PRICE] = price;
  f[o + CMD_QTY] = qty;
  f[o + CMD_FLAGS] = flags;
}

export function writeMarket(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  user: number,
  side: Side,
  qty: number,
  budget: number,
): void {
  f[o + CMD_KIND] = CMD_MARKET;
  f[o + CMD_SEQ] = seq;
  f[o + CMD_ORDER_ID] = orderId;
  f[o + CMD_USER] = user;
  f[o + CMD_SIDE] = side;
  f[o + CMD_QTY] = qty;
  f[o + CMD_BUDGET] = budget;
}

export function writeCancel(f: Float64Array, o: number, seq: number, orderId: number): void {
  f[o + CMD_KIND] = CMD_CANCEL;
  f[o + CMD_SEQ] = seq;
  f[o + CMD_ORDER_ID] = orderId;
}

export function writeReduce(f: Float64Array, o: number, seq: number, orderId: number, by: number): void {
  f[o + CMD_KIND] = CMD_REDUCE;
  f[o + CMD_SEQ] = seq;
  f[o + CMD_ORDER_ID] = orderId;
  f[o + CMD_QTY] = by;
}

export function writeMove(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  price: number,
  delta: number,
  flags: number,
): void {
  f[o + CMD_KIND] = CMD_MOVE;
  f[o + CMD_SEQ] = seq;
  f[o + CMD_ORDER_ID] = orderId;
  f[o + CMD_PRICE] = price;
  f[o + CMD_QTY] = delta;
  f[o + CMD_FLAGS] = flags;
}

export function writeShutdown(f: Float64Array, o: number, seq: number): void {
  f[o + CMD_KIND] = CMD_SHUTDOWN;
  f[o + CMD_SEQ] = seq;
}

/**
 * Runs the LIMIT, MARKET, CANCEL, REDUCE or MOVE command at `o` on `book` (whose events go wherever the book
 * sends them). SHUTDOWN and unknown kinds are the caller's business: this throws on them.
 */
export function runCommand(book: MatchingBook, f: Float64Array, o: number): ResultCode {
  switch (f[o + CMD_KIND]) {
    case CMD_LIMIT:
      return book.limit(
        f[o + CMD_ORDER_ID],
        f[o + CMD_USER],
        f[o + CMD_SIDE] as Side,
        f[o + CMD_PRICE],
        f[o + CMD_QTY],
        f[o + CMD_FLAGS],
      );
    case CMD_MARKET:
      return book.market(
        f[o + CMD_ORDER_ID],
        f[o + CMD_USER],
        f[o + CMD_SIDE] as Side,
        f[o + CMD_QTY],
        f[o + CMD_BUDGET],
      );
    case CMD_CANCEL:
      return book.cancel(f[o + CMD_ORDER_ID]);
    case CMD_REDUCE:
      return book.reduce(f[o + CMD_ORDER_ID], f[o + CMD_QTY]);
    case CMD_MOVE:
      return book.move(f[o + CMD_ORDER_ID], f[o + CMD_PRICE], f[o + CMD_QTY], f[o + CMD_FLAGS]);
    default:
      throw new Error(`not a book command: kind ${f[o + CMD_KIND]} at offset ${o}`);
  }
}

// ------------------------------------------------------------------------------------ encode events

export function writeTrade(
  f: Float64Array,
  o: number,
  seq: number,
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
  f[o + EV_KIND] = EV_TRADE;
  f[o + EV_SEQ] = seq;
  f[o + TRADE_TAKER_ID] = takerId;
  f[o + TRADE_TAKER_USER] = takerUser;
  f[o + TRADE_TAKER_SIDE] = takerSide;
  f[o + TRADE_MAKER_ID] = makerId;
  f[o + TRADE_MAKER_USER] = makerUser;
  f[o + TRADE_PRICE] = price;
  f[o + TRADE_QTY] = qty;
  f[o + TRADE_TAKER_LEFT] = takerLeft;
  f[o + TRADE_MAKER_LEFT] = makerLeft;
}

export function writeRested(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  user: number,
  side: Side,
  price: number,
  left: number,
): void {
  f[o + EV_KIND] = EV_RESTED;
  f[o + EV_SEQ] = seq;
  f[o + RESTED_ORDER_ID] = orderId;
  f[o + RESTED_USER] = user;
  f[o + RESTED_SIDE] = side;
  f[o + RESTED_PRICE] = price;
  f[o + RESTED_LEFT] = left;
}

export function writeDone(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  user: number,
  side: Side,
  reason: DoneReason,
  left: number,
): void {
  f[o + EV_KIND] = EV_DONE;
  f[o + EV_SEQ] = seq;
  f[o + DONE_ORDER_ID] = orderId;
  f[o + DONE_USER] = user;
  f[o + DONE_SIDE] = side;
  f[o + DONE_REASON] = reason;
  f[o + DONE_LEFT] = left;
}

export function writeLevel(
  f: Float64Array,
  o: number,
  seq: number,
  side: Side,
  price: number,
  total: number,
): void {
  f[o + EV_KIND] = EV_LEVEL;
  f[o + EV_SEQ] = seq;
  f[o + LEVEL_SIDE] = side;
  f[o + LEVEL_PRICE] = price;
  f[o + LEVEL_TOTAL] = total;
}

export function writeAmended(
  f: Float64Array,
  o: number,
  seq: number,
  orderId: number,
  user: number,
  side: Side,
  oldPrice: number,
  newPrice: number,
  oldLeft: number,
  newLeft: number,
): void {
  f[o + EV_KIND] = EV_AMENDED;
  f[o + EV_SEQ] = seq;
  f[o + AMENDED_ORDER_ID] = orderId;
  f[o + AMENDED_USER] = user;
  f[o + AMENDED_SIDE] = side;
  f[o + AMENDED_OLD_PRICE] = oldPrice;
  f[o + AMENDED_NEW_PRICE] = newPrice;
  f[o + AMENDED_OLD_LEFT] = oldLeft;
  f[o + AMENDED_NEW_LEFT] = newLeft;
}

export function writeEnd(f: Float64Array, o: number, seq: number, result: ResultCode): void {
  f[o + EV_KIND] = EV_END;
  f[o + EV_SEQ] = seq;
  f[o + END_RESULT] = result;
}

// ------------------------------------------------------------------------------------ decode events

/**
 * Replays the book event at `o` into `sink` (the same call the book made in the worker) and
 * returns its kind. END is not a BookEvents call: it is returned without calling `sink`.
 */
export function dispatchEvent(f: Float64Array, o: number, sink: BookEvents): number {
  const kind = f[o + EV_KIND];
  switch (kind) {
    case EV_TRADE:
      sink.trade(
        f[o + TRADE_TAKER_ID],
        f[o + TRADE_TAKER_USER],
        f[o + TRADE_TAKER_SIDE] as Side,
        f[o + TRADE_MAKER_ID],
        f[o + TRADE_MAKER_USER],
        f[o + TRADE_PRICE],
        f[o + TRADE_QTY],
        f[o + TRADE_TAKER_LEFT],
        f[o + TRADE_MAKER_LEFT],
      );
      break;
    case EV_RESTED:
      sink.rested(
        f[o + RESTED_ORDER_ID],
        f[o + RESTED_USER],
        f[o + RESTED_SIDE] as Side,
        f[o + RESTED_PRICE],
        f[o + RESTED_LEFT],
      );
      break;
    case EV_DONE:
      sink.done(
        f[o + DONE_ORDER_ID],
        f[o + DONE_USER],
        f[o + DONE_SIDE] as Side,
        f[o + DONE_REASON] as DoneReason,
        f[o + DONE_LEFT],
      );
      break;
    case EV_LEVEL:
      sink.level(f[o + LEVEL_SIDE] as Side, f[o + LEVEL_PRICE], f[o + LEVEL_TOTAL]);
      break;
    case EV_AMENDED:
      sink.amended(
        f[o + AMENDED_ORDER_ID],
        f[o + AMENDED_USER],
        f[o + AMENDED_SIDE] as Side,
        f[o + AMENDED_OLD_PRICE],
        f[o + AMENDED_NEW_PRICE],
        f[o + AMENDED_OLD_LEFT],
        f[o + AMENDED_NEW_LEFT],
      );
      break;
    case EV_END:
      break;
    default:
      throw new Error(`not an event record: kind ${kind} at offset ${o}`);
  }
  return kind;
}

// ------------------------------------------------------------------------------------ startup

/** Handed to the pair worker once, as `workerData`; after that everything goes through the rings. */
export interface PairWorkerData {
  pairName: string;
  /** Command ring made by `SpscRing.create(slots, CMD_SLOT_WORDS)`; the worker consumes it. */
  commandsSab: SharedArrayBuffer;
  /** Event ring made by `SpscRing.create(slots, EV_SLOT_WORDS)`; the worker produces into it. */
  eventsSab: SharedArrayBuffer;
  /** Polls of an empty command ring before sleeping in Atomics.wait (Infinity: never sleep). */
  spinIterations: number;
  /**
   * The worker publishes its events and releases the commands after every `publishEvery` commands
   * and at the end of each drained batch: 1 is per command, Infinity once per drained batch.
   */
  publishEvery: number;
  /** Initial order capacity of the book. */
  initialCapacity: number;
}

/** The one message the worker posts: its book is built and it is about to read commands. */
export const READY_MESSAGE = "pair-worker-ready";
