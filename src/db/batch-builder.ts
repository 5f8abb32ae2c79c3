/**
 * The batch being built on the main thread: the database writer's record methods append fixed-
 * stride records of each kind (src/protocol/db/writer-batch.ts) to growable columns, interning
 * pair, currency and period names; `seal` copies them, kind after kind, into the smallest shared
 * wire buffer that holds them and returns the message that sends the batch to the writer thread.
 * Appending does no I/O and makes no promise. DbWriter (src/db/writer.ts) extends this class and
 * decides when a batch is sent.
 */

import type { StopFacts } from "../core/record-sink.ts";
import {
  API_KEY,
  BALANCE,
  BOOK_STEP,
  CANDLE,
  CURRENCY,
  EXECUTION,
  KIND_COUNT,
  KINDS,
  L3_EVENT,
  META,
  MMP_SETTING,
  NONCE,
  ORDER,
  ORDER_UPDATE,
  PAIR,
  REVOKE_KEY,
  type RecordKind,
  STR,
  SYM,
  TRADE,
  TRANSFER,
  USER,
} from "../protocol/db/writer-batch.ts";
import type { ToWriter } from "../protocol/db/writer-messages.ts";

export type TransferKind = "deposit" | "withdraw";

/**
 * Growable column of fixed-stride records of one kind, reused from batch to batch: a batch's
 * records are copied out when it is sent, so the next one starts writing at 0 again.
 */
class Rows {
  buf: Float64Array;
  /** Records held. */
  n = 0;
  constructor(readonly stride: number) {
    this.buf = new Float64Array(stride * MIN_CAPACITY);
  }
  /** Reserves one record and returns the index of its first slot. Read `buf` after calling. */
  add(): number {
    const at = this.n * this.stride;
    if (at + this.stride > this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.n++;
    return at;
  }
}

/** What a batch holds besides its records (those are in BatchBuilder.rows until it is sent). */
export class Batch {
  readonly strs: string[] = [];
  readonly syms: string[] = [];
  readonly callbacks: (() => void)[] = [];
  /** No record and no callback yet. */
  empty = true;
}

const MIN_CAPACITY = 16;
/** The smallest buffer a batch is sent in: 2^10 slots (8 KiB). */
const MIN_WIRE_BITS = 10;

export abstract class BatchBuilder {
  /** The batch records and callbacks join now. */
  protected cur = new Batch();
  /** Records of the current batch, per kind. */
  private readonly rows: Rows[] = KINDS.map((k) => new Rows(k.stride));
  /**
   * Buffers a batch's records are sent in, side by side, kind after kind; index i holds 2^i slots.
   * They are SharedArrayBuffers: postMessage shares the one a batch uses instead of copying it.
   * The main thread writes a buffer again only for a later batch, and a later batch is sent only
   * after the writer acknowledged this one (at most one batch is in flight), which it does after
   * it has read every record: the writer never sees a buffer change under it. A batch takes the
   * smallest that holds it.
   */
  private readonly wires: Float64Array[] = [];
  private readonly symIds = new Map<string, number>();
  private settledBelow: (() => number) | null = null;
  /** A follower's batch carries its leader's `settledBelow` (appendBatch), not this side's. */
  private settledOverride: number | null = null;
  private tradesThrough: () => number = () => Number.MAX_SAFE_INTEGER;
  /** Slot offset of the record `add` reserved last. */
  private at = 0;
  /**
   * `order()` only: orders sent as ORDER and still open: their later records are ORDER_UPDATE
   * (fewer columns, no insert attempt). An order leaves the set with its closing record, so it
   * holds about the open orders. One recovered from the database is not in it: its first record
   * is ORDER, an upsert.
   */
  private readonly openSent = new Set<number>();

  /** The current batch got its first record or callback: the subclass schedules its sending. */
  protected abstract batchStarted(): void;

  // ---- records: append only (no I/O, no promise) ----------------------------------------------

  pair(name: string, priceDecimals: number, amountDecimals: number): void {
    const b = this.add(PAIR);
    const o = this.at;
    b[o + PAIR.at.name] = this.sym(name);
    b[o + PAIR.at.price_decimals] = priceDecimals;
    b[o + PAIR.at.amount_decimals] = amountDecimals;
  }

  currency(name: string, scale: number): void {
    const b = this.add(CURRENCY);
    const o = this.at;
    b[o + CURRENCY.at.name] = this.sym(name);
    b[o + CURRENCY.at.scale] = scale;
  }

  user(id: number, uid: string, micro: number): void {
    const b = this.add(USER);
    const o = this.at;
    b[o + USER.at.id] = id;
    b[o + USER.at.uid] = this.str(uid);
    b[o + USER.at.created_micro] = micro;
  }

  apiKey(token: string, userId: number, secret: string, micro: number): void {
    const b = this.add(API_KEY);
    const o = this.at;
    b[o + API_KEY.at.token] = this.str(token);
    b[o + API_KEY.at.user_id] = userId;
    b[o + API_KEY.at.secret] = this.str(secret);
    b[o + API_KEY.at.created_micro] = micro;
  }

  revokeKey(token: string): void {
    const b = this.add(REVOKE_KEY);
    const o = this.at;
    b[o + REVOKE_KEY.at.token] = this.str(token);
  }

  /** Last accepted nonce of a token (upsert; last wins). */
  nonce(token: string, nonce: bigint): void {
    const b = this.add(NONCE);
    const o = this.at;
    b[o + NONCE.at.token] = this.str(token);
    b[o + NONCE.at.last_nonce] = this.str(nonce.toString());
  }

  /** Latest balance of (user, currency) (upsert; within a batch the last one wins). */
  balance(userId: number, currency: string, available: bigint, reserved: bigint): void {
    const b = this.add(BALANCE);
    const o = this.at;
    b[o + BALANCE.at.user_id] = userId;
    b[o + BALANCE.at.currency] = this.sym(currency);
    b[o + BALANCE.at.available] = this.str(available.toString());
    b[o + BALANCE.at.reserved] = this.str(reserved.toString());
    b[o + BALANCE.at.through_trade] = this.tradesThrough();
  }

  /** A deposit (amount > 0) or withdrawal (amount < 0), at the currency's ledger scale. */
  transfer(userId: number, currency: string, amount: bigint, kind: TransferKind, micro: number): void {
    const b = this.add(TRANSFER);
    const o = this.at;
    b[o + TRANSFER.at.user_id] = userId;
    b[o + TRANSFER.at.currency] = this.sym(currency);
    b[o + TRANSFER.at.amount] = this.str(amount.toString());
    b[o + TRANSFER.at.kind] = this.sym(kind);
    b[o + TRANSFER.at.time_micro] = micro;
  }

  /**
   * The order as it stands, for a caller that does not track which orders it has sent (tests,
   * tools): the first record of an order (or the first after it closed) inserts the row, later
   * ones update its mutable fields (price, amount, amountUsed, isCancelled, updateMicro) and leave
   * the others as they were. The core knows this itself (OrderState.rowSent) and calls
   * insertOrder / updateOrder: no set of ids to look up per record. Arguments as insertOrder's.
   */
  order(...row: Parameters<BatchBuilder["insertOrder"]>): void {
    const [
      id,
      ,
      ,
      ,
      ,
      price,
      amount,
      amountUsed,
      isCancelled,
      ,
      updateMicro,
      ,
      ,
      execSeq,
      executedQuote,
      stop,
    ] = row;
    const closed = isCancelled || amountUsed === amount;
    if (this.openSent.has(id)) {
      // Sent before (while open): only what changes. A closed order gets no further record.
      if (closed) this.openSent.delete(id);
      this.updateOrder(id, price, amount, amountUsed, isCancelled, updateMicro, execSeq, executedQuote, stop);
      return;
    }
    if (!closed) this.openSent.add(id);
    this.insertOrder(...row);
  }

  /** An order's whole row (ORDER is an upsert: a row recovered from the database is fine too). */
  insertOrder(
    id: number,
    userId: number,
    pair: string,
    side: number,
    type: number,
    price: number,
    amount: number,
    amountUsed: number,
    isCancelled: boolean,
    createMicro: number,
    updateMicro: number,
    flags = 0,
    clientOrderId?: string,
    execSeq = 0,
    executedQuote = 0n,
    stop?: StopFacts,
  ): void {
    const b = this.add(ORDER);
    const o = this.at;
    b[o + ORDER.at.id] = id;
    b[o + ORDER.at.user_id] = userId;
    b[o + ORDER.at.pair] = this.sym(pair);
    b[o + ORDER.at.side] = side;
    b[o + ORDER.at.type] = type;
    b[o + ORDER.at.price] = price;
    b[o + ORDER.at.amount] = amount;
    b[o + ORDER.at.amount_used] = amountUsed;
    b[o + ORDER.at.is_cancelled] = isCancelled ? 1 : 0;
    b[o + ORDER.at.create_micro] = createMicro;
    b[o + ORDER.at.update_micro] = updateMicro;
    b[o + ORDER.at.flags] = flags;
    b[o + ORDER.at.client_order_id] = clientOrderId === undefined ? -1 : this.str(clientOrderId);
    b[o + ORDER.at.exec_seq] = execSeq;
    b[o + ORDER.at.executed_quote] = this.bigint(executedQuote);
    if (stop !== undefined) {
      b[o + ORDER.at.stop_price] = stop.stopPrice;
      b[o + ORDER.at.stop_direction] = stop.stopDirection;
      b[o + ORDER.at.trigger_micro] = stop.triggerMicro;
      b[o + ORDER.at.cancel_reason] = stop.cancelReason;
      b[o + ORDER.at.trailing_delta] = stop.trailingDelta;
      b[o + ORDER.at.oco_id] = stop.ocoId;
    } else {
      b[o + ORDER.at.stop_price] = 0;
      b[o + ORDER.at.stop_direction] = 0;
      b[o + ORDER.at.trigger_micro] = 0;
      b[o + ORDER.at.cancel_reason] = 0;
      b[o + ORDER.at.trailing_delta] = 0;
      b[o + ORDER.at.oco_id] = 0;
    }
  }

  /**
   * The mutable fields of an order whose row an earlier record inserted (or that was recovered
   * from its row): the row is updated, its other fields stay.
   */
  updateOrder(
    id: number,
    price: number,
    amount: number,
    amountUsed: number,
    isCancelled: boolean,
    updateMicro: number,
    execSeq = 0,
    executedQuote = 0n,
    stop?: StopFacts,
  ): void {
    const b = this.add(ORDER_UPDATE);
    const o = this.at;
    b[o + ORDER_UPDATE.at.id] = id;
    b[o + ORDER_UPDATE.at.price] = price;
    b[o + ORDER_UPDATE.at.amount] = amount;
    b[o + ORDER_UPDATE.at.amount_used] = amountUsed;
    b[o + ORDER_UPDATE.at.is_cancelled] = isCancelled ? 1 : 0;
    b[o + ORDER_UPDATE.at.update_micro] = updateMicro;
    b[o + ORDER_UPDATE.at.exec_seq] = execSeq;
    b[o + ORDER_UPDATE.at.executed_quote] = this.bigint(executedQuote);
    b[o + ORDER_UPDATE.at.trigger_micro] = stop === undefined ? 0 : stop.triggerMicro;
    b[o + ORDER_UPDATE.at.cancel_reason] = stop === undefined ? 0 : stop.cancelReason;
  }

  /** A trade, plus its two user_trades rows (the maker's side is the opposite of the taker's). */
  trade(
    id: number,
    pair: string,
    price: number,
    amount: number,
    takerOrderId: number,
    makerOrderId: number,
    takerUserId: number,
    makerUserId: number,
    takerSide: number,
    takerType: number,
    makerType: number,
    micro: number,
    takerFeeRate = 0,
    makerFeeRate = 0,
    takerExecSeq = 0,
    makerExecSeq = 0,
  ): void {
    const b = this.add(TRADE);
    const o = this.at;
    b[o + TRADE.at.id] = id;
    b[o + TRADE.at.pair] = this.sym(pair);
    b[o + TRADE.at.price] = price;
    b[o + TRADE.at.amount] = amount;
    b[o + TRADE.at.taker_order_id] = takerOrderId;
    b[o + TRADE.at.maker_order_id] = makerOrderId;
    b[o + TRADE.at.taker_user_id] = takerUserId;
    b[o + TRADE.at.maker_user_id] = makerUserId;
    b[o + TRADE.at.taker_side] = takerSide;
    b[o + TRADE.at.taker_type] = takerType;
    b[o + TRADE.at.maker_type] = makerType;
    b[o + TRADE.at.time_micro] = micro;
    b[o + TRADE.at.taker_fee_rate] = takerFeeRate;
    b[o + TRADE.at.maker_fee_rate] = makerFeeRate;
    b[o + TRADE.at.taker_exec_seq] = takerExecSeq;
    b[o + TRADE.at.maker_exec_seq] = makerExecSeq;
  }

  /**
   * Number `execSeq` of `userId`'s execution sequence (docs/API.md 16): an order change
   * (EXEC_ORDER, `refId` the order's id) or a trade side (EXEC_TRADE, the trade's id).
   */
  execution(userId: number, execSeq: number, kind: number, refId: number): void {
    const b = this.add(EXECUTION);
    const o = this.at;
    b[o + EXECUTION.at.user_id] = userId;
    b[o + EXECUTION.at.exec_seq] = execSeq;
    b[o + EXECUTION.at.kind] = kind;
    b[o + EXECUTION.at.ref_id] = refId;
  }

  /**
   * Book change `seq` of `pair` and its L3 events (`L3_FIELDS` numbers each), journal only
   * (writer-batch.ts BOOK_STEP, L3_EVENT): what a follower's live streams need beyond the rows.
   */
  bookStep(pair: string, seq: number, micro: number, trades: number, l3: readonly number[]): void {
    const b = this.add(BOOK_STEP);
    const o = this.at;
    b[o + BOOK_STEP.at.pair] = this.sym(pair);
    b[o + BOOK_STEP.at.seq] = seq;
    b[o + BOOK_STEP.at.micro] = micro;
    b[o + BOOK_STEP.at.trades] = trades;
    b[o + BOOK_STEP.at.l3_events] = l3.length / L3_EVENT.stride;
    for (let i = 0; i < l3.length; i += L3_EVENT.stride) {
      const e = this.add(L3_EVENT);
      const at = this.at;
      for (let c = 0; c < L3_EVENT.stride; c++) e[at + c] = l3[i + c];
    }
  }

  /** Upsert of an integer in `meta` (a pair's book sequence: `book_seq:<pair>`). */
  meta(key: string, value: number): void {
    const b = this.add(META);
    const o = this.at;
    b[o + META.at.key] = this.sym(key);
    b[o + META.at.value] = value;
  }

  /** Upsert of a user's MMP settings on a pair (docs/API.md 8.10; `qtyLimit` in lots). */
  mmpSetting(
    userId: number,
    pair: string,
    intervalSeconds: number,
    qtyLimit: number,
    frozenSeconds: number,
  ): void {
    const b = this.add(MMP_SETTING);
    const o = this.at;
    b[o + MMP_SETTING.at.user_id] = userId;
    b[o + MMP_SETTING.at.pair] = this.sym(pair);
    b[o + MMP_SETTING.at.interval_seconds] = intervalSeconds;
    b[o + MMP_SETTING.at.qty_limit] = qtyLimit;
    b[o + MMP_SETTING.at.frozen_seconds] = frozenSeconds;
  }

  /** Upsert of one candle (prices in ticks, volume in lots). */
  candle(
    pair: string,
    period: string,
    startMs: number,
    open: number,
    high: number,
    low: number,
    close: number,
    volume: number,
  ): void {
    const b = this.add(CANDLE);
    const o = this.at;
    b[o + CANDLE.at.pair] = this.sym(pair);
    b[o + CANDLE.at.period] = this.sym(period);
    b[o + CANDLE.at.start_ms] = startMs;
    b[o + CANDLE.at.open] = open;
    b[o + CANDLE.at.high] = high;
    b[o + CANDLE.at.low] = low;
    b[o + CANDLE.at.close] = close;
    b[o + CANDLE.at.volume] = volume;
  }

  /**
   * A follower (docs/OPERATIONS.md, "A second box: follower"): appends every record of a batch its
   * leader journaled, as the leader wrote it, in kind order. `leaderSyms` is the leader's symbol
   * table of the run that wrote it; its strings and symbols are interned anew here. The batch's
   * `settledBelow` is the leader's (the highest of those appended to one batch). Consecutive
   * batches of one leader run may share a batch, as if the leader had committed them together;
   * batches of different leader runs must not (one could apply an older order update after a
   * newer whole row).
   */
  appendBatch(
    counts: readonly number[],
    slots: Float64Array,
    strs: readonly string[],
    leaderSyms: readonly string[],
    settledBelow: number,
  ): void {
    let from = 0;
    for (let k = 0; k < KIND_COUNT; k++) {
      const kind = KINDS[k];
      const types = kind.slots;
      for (let r = 0; r < counts[k]; r++) {
        const b = this.add(kind);
        const o = this.at;
        for (let c = 0; c < kind.stride; c++) {
          const v = slots[from + c];
          const t = types[c];
          if (t === STR) b[o + c] = v < 0 ? -1 : this.str(strs[v]);
          else if (t === SYM) {
            const name = leaderSyms[v];
            if (name === undefined) throw new Error(`leader batch: symbol ${v} is not in its table`);
            b[o + c] = this.sym(name);
          } else b[o + c] = v;
        }
        from += kind.stride;
      }
    }
    this.settledOverride =
      this.settledOverride === null ? settledBelow : Math.max(this.settledOverride, settledBelow);
  }

  /**
   * `fn` tells, as each batch is sealed (after the beforeSend hooks), the lowest order id that may
   * still get an order record in a later batch: every id below it has all its records in this
   * batch or an earlier one. The writer needs it to know which orders its `user_orders` rows
   * cover; without it those rows are still written, but readers keep scanning every order since
   * the writer started.
   */
  settledOrderIds(fn: () => number): void {
    this.settledBelow = fn;
  }

  /**
   * `fn` tells the id of the last trade whose legs the ledger holds now (the core's last trade id):
   * every balance record is stamped with it (migration 005). Without it a balance is taken to hold
   * every trade there will ever be (no trades are written through this writer then).
   */
  tradesThroughMark(fn: () => number): void {
    this.tradesThrough = fn;
  }

  /**
   * Takes the current batch out (what is added from now on starts the next one) and returns the
   * message that sends it: its records copied into a wire buffer, its new names and strings.
   */
  protected seal(seq: number): ToWriter {
    const b = this.cur;
    this.cur = new Batch();
    const rows = this.rows;
    let total = 0;
    for (let k = 0; k < KIND_COUNT; k++) total += rows[k].n * rows[k].stride;
    let size = MIN_WIRE_BITS;
    while (1 << size < total) size++;
    let wire = this.wires[size];
    if (wire === undefined) {
      wire = new Float64Array(new SharedArrayBuffer(8 << size));
      this.wires[size] = wire;
    }
    const counts: number[] = new Array(KIND_COUNT);
    let at = 0;
    for (let k = 0; k < KIND_COUNT; k++) {
      const r = rows[k];
      const len = r.n * r.stride;
      counts[k] = r.n;
      if (len > 0) wire.set(r.buf.subarray(0, len), at);
      at += len;
      r.n = 0;
    }
    const override = this.settledOverride;
    this.settledOverride = null;
    const settledBelow = override ?? (this.settledBelow === null ? -1 : this.settledBelow());
    // Shared, not copied: `wire` is written again only after this batch's ack (see `wires`).
    return {
      t: "batch",
      seq,
      syms: b.syms,
      strs: b.strs,
      slots: wire.buffer as SharedArrayBuffer,
      counts,
      settledBelow,
    };
  }

  /** Forgets the current batch: its records, strings and callbacks. */
  protected drop(): void {
    this.cur = new Batch();
    for (const r of this.rows) r.n = 0;
  }

  /**
   * Reserves one record of kind `k` in the current batch and returns the buffer to write it in;
   * the record's first slot is at `this.at`. (Two results without an object per record.)
   */
  private add(k: RecordKind): Float64Array {
    const r = this.rows[k.id];
    this.at = r.add();
    this.touch();
    return r.buf;
  }

  private str(s: string): number {
    const strs = this.cur.strs;
    strs.push(s);
    return strs.length - 1;
  }

  /** A bigint as its text among the batch's strings (an order not filled yet: one shared "0"). */
  private bigint(v: bigint): number {
    return this.str(v === 0n ? "0" : v.toString());
  }

  /** Interned id of a pair, currency or period name; a new name travels with the current batch. */
  private sym(name: string): number {
    let id = this.symIds.get(name);
    if (id === undefined) {
      id = this.symIds.size;
      this.symIds.set(name, id);
      this.cur.syms.push(name);
    }
    return id;
  }

  /** Marks the current batch non-empty; the first mark of a batch schedules its sending. */
  protected touch(): void {
    const cur = this.cur;
    if (!cur.empty) return;
    cur.empty = false;
    this.batchStarted();
  }
}
