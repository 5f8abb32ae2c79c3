/**
 * Binary records exchanged with a pair worker through two SpscRings (./ring.ts):
 *
 *   main thread ──commands (CMD_SLOT_WORDS per slot)──▶ pair worker ──events (EV_SLOT_WORDS)──▶ main thread
 *
 * Every word is a Float64, so ids, prices, quantities and budgets (integers below 2^53, see
 * ./engine.ts) travel exactly. Words 0 and 1 of every record are its kind and the command's `seq`:
 * a number the main thread assigns, increasing per pair, and which the worker copies into every
 * event the command produces. Each command is answered by its book events, in BookEvents order,
 * then one END record carrying the command's ResultCode. Words past a record's last field are left
 * as they were (stale).
 *
 * Each record kind is defined once, by its field table below: the names of its fields in order.
 * The table gives each name its word offset (`f[o + TRADE.price]`), computed once at module load;
 * the slot sizes are checked against the tables. An event table lists the arguments of the
 * BookEvents method of the same name, in order, and EventRecordWriter (below) is the one place
 * that turns those arguments into records. Adding a field to an event is: its name in the table,
 * the argument in BookEvents and EventRecordWriter, the books that produce it and the code that
 * reads it (src/core/exchange.ts's `pairEventHandler`); to a command: the table, PairChannel's send
 * (src/pair/pair-client.ts) and `runCommand`.
 *
 * Command kinds and event kinds do not overlap, so a record read from the wrong ring is detected.
 * Writing and running records allocates nothing (`eventTuple`, for tests, does).
 */
import type { DoneReason, MatchingBook, PENDING, ResultCode, Side, StopEvents } from "./engine.ts";

/** A record kind as data: its number, its name and its fields in order (after the two header words). */
export interface RecordSpec {
  readonly kind: number;
  readonly name: string;
  readonly fields: readonly string[];
}

/** Header words of every record, command or event. */
export const CMD_KIND = 0;
export const CMD_SEQ = 1;
export const EV_KIND = 0;
export const EV_SEQ = 1;
const HEADER_WORDS = 2;

/** Every command kind's table, then every event kind's, as data (tests, decoding, slot checks). */
export const COMMAND_RECORDS: RecordSpec[] = [];
export const EVENT_RECORDS: RecordSpec[] = [];

/** Registers a record kind in `specs` and returns its word offsets by field name. */
function record<const F extends readonly string[]>(
  specs: RecordSpec[],
  kind: number,
  name: string,
  fields: F,
): { readonly [K in F[number]]: number } {
  specs.push({ kind, name, fields });
  const offsets: Record<string, number> = {};
  fields.forEach((field, i) => {
    offsets[field] = HEADER_WORDS + i;
  });
  return Object.freeze(offsets) as { readonly [K in F[number]]: number };
}

// ------------------------------------------------------------------------------------ commands

/**
 * The operation codes a command record carries in its CMD_KIND word: what the matching engine is
 * asked to do. They are not the core's command kinds (src/core/command.ts CMD_*), which one record
 * kind may serve several of (a cancel-all is many OP_CANCEL records).
 */
export const OP_LIMIT = 1;
export const OP_MARKET = 2;
export const OP_CANCEL = 3;
/** Ends the worker's loop after an END record for it; the thread then exits. */
export const OP_SHUTDOWN = 4;
/** Lowers a resting order's open quantity, keeping its place (MatchingBook.reduce). */
export const OP_REDUCE = 5;
/** New price and/or quantity for a resting order, which goes to the back (MatchingBook.move). */
export const OP_MOVE = 6;

/** Starts a quote (MatchingBook.quoteBegin); `levels` QUOTE_LEVEL records follow it. */
export const OP_QUOTE = 7;
/** One level of the quote started by the OP_QUOTE record just before it (MatchingBook.quoteLevel). */
export const OP_QUOTE_LEVEL = 8;
/** MatchingBook.mmpSet. */
export const OP_MMP_SET = 9;
/** MatchingBook.mmpReset. */
export const OP_MMP_RESET = 10;

/**
 * `time` in LIMIT, MARKET, MOVE and QUOTE: the command's time in Unix ms, taken by the main thread
 * when it sends the command; the MMP window and freeze are measured in it (the worker reads no
 * clock, so matching is deterministic).
 */
/** MatchingBook.limit: `flags` TIF_* | FLAG_POST_ONLY | FLAG_MMP | STP_* (./engine.ts). */
export const LIMIT_CMD = record(COMMAND_RECORDS, OP_LIMIT, "limit", [
  "orderId",
  "user",
  "side",
  "price",
  "qty",
  "flags",
  "time",
] as const);
/** MatchingBook.market: `budget` in ticks × lots, or NO_BUDGET; `flags` STP_* only. */
export const MARKET_CMD = record(COMMAND_RECORDS, OP_MARKET, "market", [
  "orderId",
  "user",
  "side",
  "qty",
  "budget",
  "flags",
  "time",
] as const);
export const CANCEL_CMD = record(COMMAND_RECORDS, OP_CANCEL, "cancel", ["orderId"] as const);
/** MatchingBook.reduce: `by` lots to take off. */
export const REDUCE_CMD = record(COMMAND_RECORDS, OP_REDUCE, "reduce", ["orderId", "by"] as const);
/**
 * MatchingBook.move: `delta` is the signed change of the open quantity (a Float64 holds it exactly).
 * For a waiting stop order (docs/API.md 18, StopBook.amend in workers/matching/stops.ts):
 * `stopPrice` its new stop price, `trailingDelta` a trailing stop's new delta (0: unchanged).
 */
export const MOVE_CMD = record(COMMAND_RECORDS, OP_MOVE, "move", [
  "orderId",
  "price",
  "delta",
  "flags",
  "time",
  "stopPrice",
  "trailingDelta",
] as const);
record(COMMAND_RECORDS, OP_SHUTDOWN, "shutdown", [] as const);
/**
 * A quote is one QUOTE record then `levels` QUOTE_LEVEL records, written one after another by the
 * main thread (the one producer of the ring, so nothing comes between them) and sharing one `seq`.
 * The worker answers only the last of them (the QUOTE itself when `levels` is 0): its events, then
 * one END. The main thread must publish them together so the worker never waits inside a quote;
 * a quote of 2 × MAX_QUOTE_LEVELS levels takes 41 slots, so the command ring needs at least that many.
 */
export const QUOTE_CMD = record(COMMAND_RECORDS, OP_QUOTE, "quote", ["user", "levels", "time"] as const);
export const QUOTE_LEVEL_CMD = record(COMMAND_RECORDS, OP_QUOTE_LEVEL, "quoteLevel", [
  "orderId",
  "side",
  "price",
  "qty",
] as const);
/** MatchingBook.mmpSet: `qtyLimit` in lots. */
export const MMP_SET_CMD = record(COMMAND_RECORDS, OP_MMP_SET, "mmpSet", [
  "user",
  "intervalSeconds",
  "qtyLimit",
  "frozenSeconds",
] as const);
export const MMP_RESET_CMD = record(COMMAND_RECORDS, OP_MMP_RESET, "mmpReset", ["user"] as const);
/**
 * (Command kinds go on past the event kinds, 11-20.) A stop order arrives and waits (docs/API.md 18, workers/matching/stops.ts): `mode` STOP_* bits
 * (./engine.ts), `price` its limit price (0 for a stop-market), `flags` those it arrives with when
 * triggered (time in force, self-trade mode); no time: a triggered order runs at the time of the
 * command whose trades triggered it. `trailingDelta` > 0: a trailing stop, whose `stopPrice` is
 * only read when it is put back (STOP_RESTORE).
 */
export const OP_STOP = 21;
/**
 * The budget of a triggered market buy that asked for it (EV_FUNDS): the worker resumes the step
 * that triggered it. Not a command of the FIFO: it belongs to the command whose step waits, gets
 * no END of its own, and the worker takes it before any command sent before it.
 */
export const OP_FUNDS = 22;
export const STOP_CMD = record(COMMAND_RECORDS, OP_STOP, "stop", [
  "orderId",
  "user",
  "mode",
  "price",
  "qty",
  "flags",
  "stopPrice",
  "trailingDelta",
] as const);
export const FUNDS_CMD = record(COMMAND_RECORDS, OP_FUNDS, "funds", ["orderId", "budget"] as const);
/**
 * (After the event kind 23.) An OCO arrives (docs/API.md 18, StopBook.addOco): its limit leg
 * `orderId`, a post-only GTC limit order at `price`, rests now, and its stop leg `orderId + 1`
 * (`mode` STOP_* bits, `stopLimitPrice` its limit price, 0 for a stop-market) waits at `stopPrice`;
 * both or neither (ERR_OCO_PRICE, ERR_STOP_WOULD_TRIGGER, ERR_WOULD_TAKE: nothing happened).
 */
export const OP_OCO = 24;
export const OCO_CMD = record(COMMAND_RECORDS, OP_OCO, "oco", [
  "orderId",
  "user",
  "mode",
  "price",
  "qty",
  "stopPrice",
  "stopLimitPrice",
  "time",
] as const);

/** Words per command slot: 80 bytes (STOP, 10 words, is the largest record). */
export const CMD_SLOT_WORDS = 10;

// ------------------------------------------------------------------------------------ events

export const EV_TRADE = 11;
export const EV_RESTED = 12;
export const EV_DONE = 13;
export const EV_LEVEL = 14;
/** Last record of every command; carries its ResultCode. */
export const EV_END = 15;
export const EV_AMENDED = 16;
export const EV_MMP = 17;
export const EV_QUOTED = 18;
export const EV_TRIGGERED = 19;
export const EV_FUNDS = 20;
/** (After the command kinds 21-22.) */
export const EV_TRAILED = 23;

/** BookEvents.trade. */
export const TRADE = record(EVENT_RECORDS, EV_TRADE, "trade", [
  "takerId",
  "takerUser",
  "takerSide",
  "makerId",
  "makerUser",
  "price",
  "qty",
  "takerLeft",
  "makerLeft",
] as const);
/** BookEvents.rested. */
export const RESTED = record(EVENT_RECORDS, EV_RESTED, "rested", [
  "orderId",
  "user",
  "side",
  "price",
  "left",
] as const);
/** BookEvents.done. */
export const DONE = record(EVENT_RECORDS, EV_DONE, "done", [
  "orderId",
  "user",
  "side",
  "reason",
  "left",
] as const);
/** BookEvents.level. */
export const LEVEL = record(EVENT_RECORDS, EV_LEVEL, "level", ["side", "price", "total"] as const);
/** BookEvents.amended. */
export const AMENDED = record(EVENT_RECORDS, EV_AMENDED, "amended", [
  "orderId",
  "user",
  "side",
  "oldPrice",
  "newPrice",
  "oldLeft",
  "newLeft",
] as const);
/** BookEvents.mmp: a trigger froze the user (`frozen` 1), or a reset unfroze it (0). */
export const MMP = record(EVENT_RECORDS, EV_MMP, "mmp", ["user", "frozen", "frozenUntil"] as const);
/** BookEvents.quoted: the outcome of one quote level. */
export const QUOTED = record(EVENT_RECORDS, EV_QUOTED, "quoted", [
  "user",
  "index",
  "orderId",
  "result",
] as const);
/** StopEvents.triggered. */
export const TRIGGERED = record(EVENT_RECORDS, EV_TRIGGERED, "triggered", [
  "orderId",
  "user",
  "side",
] as const);
/** StopEvents.fundsAsked. */
export const FUNDS_ASKED = record(EVENT_RECORDS, EV_FUNDS, "fundsAsked", ["orderId", "user"] as const);
/** StopEvents.trailed: a trailing stop's stop price moved (docs/API.md 18); not an order change. */
export const TRAILED = record(EVENT_RECORDS, EV_TRAILED, "trailed", [
  "orderId",
  "user",
  "stopPrice",
] as const);
/** The command's ResultCode; not a BookEvents call. */
export const END = record(EVENT_RECORDS, EV_END, "end", ["result"] as const);

/** Words per event slot: the largest record (TRADE, 11 words) plus one spare; 96 bytes. */
export const EV_SLOT_WORDS = 12;

for (const [specs, slotWords, ring] of [
  [COMMAND_RECORDS, CMD_SLOT_WORDS, "CMD_SLOT_WORDS"],
  [EVENT_RECORDS, EV_SLOT_WORDS, "EV_SLOT_WORDS"],
] as const) {
  for (const spec of specs) {
    if (HEADER_WORDS + spec.fields.length > slotWords) {
      throw new Error(`${ring} is smaller than the ${spec.name} record`);
    }
  }
}

// ------------------------------------------------------------------------------------ run commands

/**
 * Runs the book command at `o` on `book` (whose events go wherever the book sends them). PENDING:
 * a quote still collecting its levels (no END yet). SHUTDOWN and unknown kinds are the caller's
 * business: this throws on them.
 */
export function runCommand(book: MatchingBook, f: Float64Array, o: number): ResultCode | typeof PENDING {
  switch (f[o + CMD_KIND]) {
    case OP_LIMIT:
      return book.limit(
        f[o + LIMIT_CMD.orderId],
        f[o + LIMIT_CMD.user],
        f[o + LIMIT_CMD.side] as Side,
        f[o + LIMIT_CMD.price],
        f[o + LIMIT_CMD.qty],
        f[o + LIMIT_CMD.flags],
        f[o + LIMIT_CMD.time],
      );
    case OP_MARKET:
      return book.market(
        f[o + MARKET_CMD.orderId],
        f[o + MARKET_CMD.user],
        f[o + MARKET_CMD.side] as Side,
        f[o + MARKET_CMD.qty],
        f[o + MARKET_CMD.budget],
        f[o + MARKET_CMD.flags],
        f[o + MARKET_CMD.time],
      );
    case OP_CANCEL:
      return book.cancel(f[o + CANCEL_CMD.orderId]);
    case OP_REDUCE:
      return book.reduce(f[o + REDUCE_CMD.orderId], f[o + REDUCE_CMD.by]);
    case OP_MOVE:
      return book.move(
        f[o + MOVE_CMD.orderId],
        f[o + MOVE_CMD.price],
        f[o + MOVE_CMD.delta],
        f[o + MOVE_CMD.flags],
        f[o + MOVE_CMD.time],
      );
    case OP_QUOTE:
      return book.quoteBegin(f[o + QUOTE_CMD.user], f[o + QUOTE_CMD.levels], f[o + QUOTE_CMD.time]);
    case OP_QUOTE_LEVEL:
      return book.quoteLevel(
        f[o + QUOTE_LEVEL_CMD.orderId],
        f[o + QUOTE_LEVEL_CMD.side] as Side,
        f[o + QUOTE_LEVEL_CMD.price],
        f[o + QUOTE_LEVEL_CMD.qty],
      );
    case OP_MMP_SET:
      return book.mmpSet(
        f[o + MMP_SET_CMD.user],
        f[o + MMP_SET_CMD.intervalSeconds],
        f[o + MMP_SET_CMD.qtyLimit],
        f[o + MMP_SET_CMD.frozenSeconds],
      );
    case OP_MMP_RESET:
      return book.mmpReset(f[o + MMP_RESET_CMD.user]);
    default:
      throw new Error(`not a book command: kind ${f[o + CMD_KIND]} at offset ${o}`);
  }
}

// ------------------------------------------------------------------------------------ write events

/**
 * The book's events as records: each BookEvents call writes one record (kind, `seq`, the fields
 * in table order) at the offset `slot()` returns, in `f`. The pair worker's subclass takes its
 * slots from the event ring; tests and benchmarks take theirs from a buffer of their own. This is
 * the one place where the BookEvents arguments meet the field tables.
 */
export abstract class EventRecordWriter implements StopEvents {
  /** Seq of the command being run; stamped on every event it produces. */
  seq = 0;
  /**
   * The lowest and highest trade price since the stop orders last reset them (high -1: no trade
   * since), and the last trade's price (-1: none yet): what their trigger reads
   * (workers/matching/stops.ts), kept here so that watching trades costs no call per event.
   */
  tradeLow = Number.POSITIVE_INFINITY;
  tradeHigh = -1;
  lastTradePrice = -1;
  /**
   * Every trade price in order since the stops last emptied it, or null: only while trailing stops
   * wait (docs/API.md 18), which follow the prices in their order.
   */
  tradePrices: number[] | null = null;
  /**
   * The OCO legs waiting or resting (docs/API.md 18), each id to its sibling's, or null while there
   * are none; `ocoHits` gets the id of each leg that trades as a maker or ends, for the stops to
   * cancel its sibling (workers/matching/stops.ts). One compare per trade while there are none.
   */
  ocoLegs: Map<number, number> | null = null;
  readonly ocoHits: number[] = [];

  constructor(
    /** Where the records go; `slot()` offsets index into it. */
    readonly f: Float64Array,
  ) {}

  /** Offset in `f` of the next record's first word. */
  abstract slot(): number;

  trade(
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
    if (price < this.tradeLow) this.tradeLow = price;
    if (price > this.tradeHigh) this.tradeHigh = price;
    this.lastTradePrice = price;
    if (this.tradePrices !== null) this.tradePrices.push(price);
    if (this.ocoLegs?.has(makerId)) this.ocoHits.push(makerId);
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_TRADE;
    f[o + EV_SEQ] = this.seq;
    f[o + TRADE.takerId] = takerId;
    f[o + TRADE.takerUser] = takerUser;
    f[o + TRADE.takerSide] = takerSide;
    f[o + TRADE.makerId] = makerId;
    f[o + TRADE.makerUser] = makerUser;
    f[o + TRADE.price] = price;
    f[o + TRADE.qty] = qty;
    f[o + TRADE.takerLeft] = takerLeft;
    f[o + TRADE.makerLeft] = makerLeft;
  }

  rested(orderId: number, user: number, side: Side, price: number, left: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_RESTED;
    f[o + EV_SEQ] = this.seq;
    f[o + RESTED.orderId] = orderId;
    f[o + RESTED.user] = user;
    f[o + RESTED.side] = side;
    f[o + RESTED.price] = price;
    f[o + RESTED.left] = left;
  }

  done(orderId: number, user: number, side: Side, reason: DoneReason, left: number): void {
    if (this.ocoLegs?.has(orderId)) this.ocoHits.push(orderId);
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_DONE;
    f[o + EV_SEQ] = this.seq;
    f[o + DONE.orderId] = orderId;
    f[o + DONE.user] = user;
    f[o + DONE.side] = side;
    f[o + DONE.reason] = reason;
    f[o + DONE.left] = left;
  }

  level(side: Side, price: number, total: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_LEVEL;
    f[o + EV_SEQ] = this.seq;
    f[o + LEVEL.side] = side;
    f[o + LEVEL.price] = price;
    f[o + LEVEL.total] = total;
  }

  amended(
    orderId: number,
    user: number,
    side: Side,
    oldPrice: number,
    newPrice: number,
    oldLeft: number,
    newLeft: number,
  ): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_AMENDED;
    f[o + EV_SEQ] = this.seq;
    f[o + AMENDED.orderId] = orderId;
    f[o + AMENDED.user] = user;
    f[o + AMENDED.side] = side;
    f[o + AMENDED.oldPrice] = oldPrice;
    f[o + AMENDED.newPrice] = newPrice;
    f[o + AMENDED.oldLeft] = oldLeft;
    f[o + AMENDED.newLeft] = newLeft;
  }

  mmp(user: number, frozen: number, frozenUntil: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_MMP;
    f[o + EV_SEQ] = this.seq;
    f[o + MMP.user] = user;
    f[o + MMP.frozen] = frozen;
    f[o + MMP.frozenUntil] = frozenUntil;
  }

  quoted(user: number, index: number, orderId: number, result: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_QUOTED;
    f[o + EV_SEQ] = this.seq;
    f[o + QUOTED.user] = user;
    f[o + QUOTED.index] = index;
    f[o + QUOTED.orderId] = orderId;
    f[o + QUOTED.result] = result;
  }

  triggered(orderId: number, user: number, side: Side): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_TRIGGERED;
    f[o + EV_SEQ] = this.seq;
    f[o + TRIGGERED.orderId] = orderId;
    f[o + TRIGGERED.user] = user;
    f[o + TRIGGERED.side] = side;
  }

  fundsAsked(orderId: number, user: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_FUNDS;
    f[o + EV_SEQ] = this.seq;
    f[o + FUNDS_ASKED.orderId] = orderId;
    f[o + FUNDS_ASKED.user] = user;
  }

  trailed(orderId: number, user: number, stopPrice: number): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_TRAILED;
    f[o + EV_SEQ] = this.seq;
    f[o + TRAILED.orderId] = orderId;
    f[o + TRAILED.user] = user;
    f[o + TRAILED.stopPrice] = stopPrice;
  }

  /** The END record of the command `seq`. */
  end(result: ResultCode): void {
    const f = this.f;
    const o = this.slot();
    f[o + EV_KIND] = EV_END;
    f[o + EV_SEQ] = this.seq;
    f[o + END.result] = result;
  }
}

// ------------------------------------------------------------------------------------ read events

const EVENT_BY_KIND = new Map(EVENT_RECORDS.map((spec) => [spec.kind, spec]));

/**
 * The event record at `o` as a tuple: its table's name, then its fields in table order, e.g.
 * `["trade", takerId, takerUser, ...]`, `["end", result]`. For tests and diagnostics: it allocates.
 */
export function eventTuple(f: Float64Array, o: number): [string, ...number[]] {
  const spec = EVENT_BY_KIND.get(f[o + EV_KIND]);
  if (spec === undefined) throw new Error(`not an event record: kind ${f[o + EV_KIND]} at offset ${o}`);
  const tuple: [string, ...number[]] = [spec.name];
  for (let i = 0; i < spec.fields.length; i++) tuple.push(f[o + HEADER_WORDS + i]);
  return tuple;
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
  /** The pair's minimum order value in ticks × lots (docs/API.md 20.5); 0n or absent: none. */
  minNotional?: bigint;
  /**
   * The price of the pair's last committed trade in ticks, -1 or absent: it never traded. A stop
   * order that it already meets is refused (docs/API.md 18).
   */
  lastPrice?: number;
}

/** The one message the worker posts: its book is built and it is about to read commands. */
export const READY_MESSAGE = "pair-worker-ready";
