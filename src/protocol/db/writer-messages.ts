/**
 * The messages between the main thread and the database threads (writer, apply, checkpoint), and
 * the data each of those threads starts with. The batch they carry is laid out by
 * writer-batch.ts.
 */

import type { MessagePort } from "node:worker_threads";
import type { Synchronous } from "./db-open.ts";
import type { JournalBatch } from "./journal.ts";

/** Main → writer thread. */
export type ToWriter =
  | {
      t: "batch";
      seq: number;
      /** Symbols first used in this batch; their ids continue the writer's symbol table. */
      syms: string[];
      strs: string[];
      /**
       * The records, kind after kind in kind order: kind k's `counts[k]` records start after those
       * of the kinds before it. May be longer than the records (the sender's buffer is reused).
       * Shared with the sender, which writes it again only after this batch's ack.
       */
      slots: SharedArrayBuffer;
      /** Per kind: number of records. */
      counts: number[];
      /**
       * Every order id below this has all its order records in this batch or an earlier one
       * (-1: not known). Lets the writer advance `user_orders_through` (migration 002).
       */
      settledBelow: number;
    }
  /**
   * Hand every batch journaled so far to the apply thread now; answered (by the apply thread) with
   * "applied" and `asked`.
   */
  | { t: "apply" }
  /** From now on each ack of a batch with records carries its journal row as a BATCH frame. */
  | { t: "frames" }
  | { t: "close" };

/** Writer (journal) thread → main. */
export type FromWriter =
  | { t: "ready" }
  | {
      t: "ack";
      seq: number;
      records: number;
      /**
       * After a "frames" message, for a batch with records: its journal row, committed, as the
       * replication protocol's BATCH frame (src/replication/protocol.ts batchFrame), transferred;
       * `symFrom` the id of the first symbol it added, `syms` those symbols.
       */
      frame?: Uint8Array;
      symFrom?: number;
      syms?: string[];
    }
  | { t: "error"; seq: number; message: string }
  | { t: "closed" };

/** Apply thread → main. */
export type FromApplier =
  /** `base`: the applied mark; this run's journal keys are `base + seq`. */
  | { t: "ready"; base: number }
  /**
   * The rows of every batch up to `through` are committed to their tables (not only journaled).
   * Sent after each bulk apply; `asked`: the answer to an "apply" message.
   */
  | { t: "applied"; through: number; asked: boolean }
  | { t: "error"; seq: number; message: string };

/** Writer (journal) thread → apply thread (a MessagePort between them), in seq order. */
export type JournalToApplier =
  /**
   * Apply these journaled batches now, in one transaction: every batch up to `through` (those
   * that held only callbacks have no entry). `syms`: the symbols they brought, in order; the
   * batches' slots are copies the apply thread owns.
   */
  | { t: "apply"; through: number; syms: string[]; batches: JournalBatch[]; asked: boolean }
  /** Apply everything, checkpoint and close (nothing follows). */
  | { t: "close" };

/** Apply thread → writer (journal) thread. */
export type ApplierToJournal =
  /** The journal rows up to `key` are applied: they may be deleted. */
  | { t: "applied"; key: number }
  /** Closed after applying everything through `key`. */
  | { t: "closed"; key: number }
  /** The apply failed: journal no later batch (it would be acknowledged and never written). */
  | { t: "error"; message: string };

export interface WriterWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  /** The exchange database file (the journal is `<path>.journal`). */
  path: string;
  synchronous: Synchronous;
  /** See OpenOptions.walAutocheckpointPages. */
  walAutocheckpointPages: number;
  /** The applied mark at start: batch `seq` is journaled under key `base + seq`. */
  base: number;
  /** See WriterOptions.journalKeep. */
  journalKeep: number;
  /** See WriterOptions.applyAfterBatches, applyAfterRecords and applyQuietMs. */
  applyAfterBatches: number;
  applyAfterRecords: number;
  applyQuietMs: number;
  /** To the apply thread. */
  port: MessagePort;
}

export interface ApplyWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  path: string;
  synchronous: Synchronous;
  /** See OpenOptions.walAutocheckpointPages. */
  walAutocheckpointPages: number;
  /** See WriterOptions.userRowsFlushAt. */
  userRowsFlushAt: number;
  /** From the writer thread. */
  port: MessagePort;
}

export interface CheckpointWorkerData {
  /** URL of the worker module, loaded by workers/ts-entry.mjs. */
  entry: string;
  path: string;
  synchronous: Synchronous;
  /** Milliseconds between two PASSIVE checkpoints. */
  intervalMs: number;
}
