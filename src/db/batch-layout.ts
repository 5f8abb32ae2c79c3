/**
 * Wire layout of one writer batch, shared by the main side (`writer.ts`) and the writer thread
 * (`workers/db/writer-worker.ts`).
 *
 * A batch is one postMessage: per record kind a Float64Array of fixed-stride records whose
 * ArrayBuffer is transferred (moved, not copied), plus one string array. A numeric slot holds
 * either an integer value (ids, ticks, lots, micros: all below 2^53, so exact in a double), an
 * index into the batch's `strs` (S: uids, tokens, secrets, bigint texts), or a symbol id (Y: pair,
 * currency and period names, interned once per writer so repeated names are not resent).
 *
 * Kinds are applied in their numeric order inside one transaction, records of one kind in the
 * order they were added. The order across kinds matters once: a key created and revoked in the
 * same batch (API_KEY before REVOKE_KEY).
 */

export const K_PAIR = 0;
export const K_CURRENCY = 1;
export const K_USER = 2;
export const K_API_KEY = 3;
export const K_REVOKE_KEY = 4;
export const K_NONCE = 5;
export const K_BALANCE = 6;
export const K_TRANSFER = 7;
export const K_ORDER = 8;
export const K_TRADE = 9;
export const K_CANDLE = 10;
export const K_META = 11;
export const KIND_COUNT = 12;

/** Slots per record of each kind, indexed by kind. */
export const STRIDE: readonly number[] = [3, 2, 3, 4, 1, 2, 4, 5, 13, 14, 8, 2];

// Slot offsets inside a record. (Y) symbol id, (S) index into strs, others plain integers.
export const PAIR_NAME = 0; // Y
export const PAIR_PRICE_DECIMALS = 1;
export const PAIR_AMOUNT_DECIMALS = 2;

export const CURRENCY_NAME = 0; // Y
export const CURRENCY_SCALE = 1;

export const USER_ID = 0;
export const USER_UID = 1; // S
export const USER_MICRO = 2;

export const KEY_TOKEN = 0; // S
export const KEY_USER = 1;
export const KEY_SECRET = 2; // S
export const KEY_MICRO = 3;

export const REVOKE_TOKEN = 0; // S

export const NONCE_TOKEN = 0; // S
export const NONCE_VALUE = 1; // S (bigint text)

export const BAL_USER = 0;
export const BAL_CURRENCY = 1; // Y
export const BAL_AVAILABLE = 2; // S (bigint text)
export const BAL_RESERVED = 3; // S (bigint text)

export const XFER_USER = 0;
export const XFER_CURRENCY = 1; // Y
export const XFER_AMOUNT = 2; // S (signed bigint text)
export const XFER_KIND = 3; // XFER_DEPOSIT | XFER_WITHDRAW
export const XFER_MICRO = 4;
export const XFER_DEPOSIT = 0;
export const XFER_WITHDRAW = 1;

export const ORD_ID = 0;
export const ORD_USER = 1;
export const ORD_PAIR = 2; // Y
export const ORD_SIDE = 3;
export const ORD_TYPE = 4;
export const ORD_PRICE = 5;
export const ORD_AMOUNT = 6;
export const ORD_USED = 7;
export const ORD_CANCELLED = 8;
export const ORD_CREATE = 9;
export const ORD_UPDATE = 10;
/** The order's options (src/orders.ts). */
export const ORD_FLAGS = 11;
/** S, or -1 when the order has no client order id. */
export const ORD_CLIENT_ID = 12;

export const TR_ID = 0;
export const TR_PAIR = 1; // Y
export const TR_PRICE = 2;
export const TR_AMOUNT = 3;
export const TR_TAKER_ORDER = 4;
export const TR_MAKER_ORDER = 5;
export const TR_TAKER_USER = 6;
export const TR_MAKER_USER = 7;
export const TR_TAKER_SIDE = 8;
export const TR_TAKER_TYPE = 9;
export const TR_MAKER_TYPE = 10;
export const TR_MICRO = 11;
/** Fee rates of the two sides, in units of 10^-6 (config.ts FEE_DECIMALS). */
export const TR_TAKER_FEE = 12;
export const TR_MAKER_FEE = 13;

export const CDL_PAIR = 0; // Y
export const CDL_PERIOD = 1; // Y
export const CDL_START = 2;
export const CDL_OPEN = 3;
export const CDL_HIGH = 4;
export const CDL_LOW = 5;
export const CDL_CLOSE = 6;
export const CDL_VOLUME = 7;

/** An upsert into `meta` (the book sequence of a pair, migration 003). */
export const META_KEY = 0; // Y
export const META_VALUE = 1;

/** Main → writer thread. */
export type ToWriter =
  | {
      t: "batch";
      seq: number;
      /** Symbols first used in this batch; their ids continue the writer's symbol table. */
      syms: string[];
      strs: string[];
      /** Per kind: the records' buffer (null when the batch has none of that kind). */
      bufs: (ArrayBuffer | null)[];
      /** Per kind: number of records. */
      counts: number[];
      /**
       * Every order id below this has all its order records in this batch or an earlier one
       * (-1: not known). Lets the writer advance `user_orders_through` (migration 002).
       */
      settledBelow: number;
    }
  | { t: "close" };

/** Writer thread → main. */
export type FromWriter =
  | { t: "ready" }
  | { t: "ack"; seq: number; records: number }
  | { t: "error"; seq: number; message: string }
  | { t: "closed" };

export interface WriterWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  path: string;
  synchronous: "FULL" | "NORMAL";
  /** See OpenOptions.walAutocheckpointPages. */
  walAutocheckpointPages: number;
  /** See WriterOptions.userRowsFlushAt. */
  userRowsFlushAt: number;
}

export interface CheckpointWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  path: string;
  synchronous: "FULL" | "NORMAL";
  /** Milliseconds between two PASSIVE checkpoints. */
  intervalMs: number;
}
