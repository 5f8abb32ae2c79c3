/**
 * The port the core writes its records through (R2 and results, src/core/results.ts): the database
 * writer (src/db/writer.ts) implements it. The core names what it needs here, so it imports nothing
 * of the database.
 */

/** docs/API.md 18: an order's stop as stored (migration 015); every field 0 for an order without one. */
export interface StopFacts {
  /** Ticks. */
  stopPrice: number;
  /** 1 up, 2 down. */
  stopDirection: number;
  /** When it triggered (µs), 0 while it waits. */
  triggerMicro: number;
  /** The engine's done reason of a triggered order cancelled whole (DONE_NO_LIQUIDITY ...), else 0. */
  cancelReason: number;
  /**
   * A trailing stop's delta in ticks (migration 016), 0 for any other order; its `stopPrice` is the
   * current one, 0 until the pair's first trade (DECISIONS.md "Trailing stops").
   */
  trailingDelta: number;
  /**
   * docs/API.md 18 (migration 017): both legs of an OCO carry the limit leg's id, 0 for any other
   * order. A leg's row carries its stop facts even when it is the limit leg (its `cancelReason`).
   */
  ocoId: number;
}

/** What the core needs from the database writer. */
export interface RecordSink {
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
    flags?: number,
    clientOrderId?: string,
    /** The number of this change in the user's execution sequence (docs/API.md 16). */
    execSeq?: number,
    /** docs/API.md 5.1 `executedQuote`: ticks × lots its fills executed so far. */
    executedQuote?: bigint,
    /** docs/API.md 18: its stop, trigger and cancel reason (absent: none). */
    stop?: StopFacts,
  ): void;
  updateOrder(
    id: number,
    price: number,
    amount: number,
    amountUsed: number,
    isCancelled: boolean,
    updateMicro: number,
    execSeq?: number,
    executedQuote?: bigint,
    /** docs/API.md 18: only its trigger time and cancel reason change. */
    stop?: StopFacts,
  ): void;
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
    takerFeeRate?: number,
    makerFeeRate?: number,
    /** The trade's number in each side's execution sequence. */
    takerExecSeq?: number,
    makerExecSeq?: number,
  ): void;
  /**
   * Number `execSeq` of `userId`'s execution sequence: an order change (`kind` 0, `refId` the
   * order) or a trade side (`kind` 1, `refId` the trade), committed with the change it numbers.
   */
  execution(userId: number, execSeq: number, kind: number, refId: number): void;
  balance(userId: number, currency: string, available: bigint, reserved: bigint): void;
  candle(
    pair: string,
    period: string,
    startMs: number,
    open: number,
    high: number,
    low: number,
    close: number,
    volume: number,
  ): void;
  meta(key: string, value: number): void;
  mmpSetting(
    userId: number,
    pair: string,
    intervalSeconds: number,
    qtyLimit: number,
    frozenSeconds: number,
  ): void;
  /**
   * A leader with followers (DECISIONS.md "Live streams on a follower"): book change `seq` of
   * `pair` at `micro`, with its `trades` trades of the batch and the L3 events after it (flat,
   * src/core/read-models/l3-view.ts), journaled for the followers' live streams only.
   */
  bookStep(pair: string, seq: number, micro: number, trades: number, l3: readonly number[]): void;
  /** Runs `cb` once everything added before it is committed. */
  afterCommit(cb: () => void): void;
  /** Runs `fn` as each batch is sealed, before it is sent (src/db/writer.ts says what it may add). */
  beforeSend(fn: () => void): void;
  /** `fn` tells, as each batch is sealed, the lowest order id that may still get a record later. */
  settledOrderIds(fn: () => number): void;
  /** `fn` tells the id of the last trade whose legs the ledger holds now (stamped on balances). */
  tradesThroughMark(fn: () => number): void;
}

/** The writer's counters, for the metrics. */
export interface WriterStats {
  /** Batches acknowledged (each one transaction, or none when it held only callbacks). */
  batches: number;
  /** Records in those batches, as added (before the writer coalesces repeated upserts). */
  records: number;
}
