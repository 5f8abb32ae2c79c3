/**
 * Snapshots of balances and candles (migration 005). Balances and candles keep only their latest
 * values: every changed one goes into a batch as it is sealed, at most every SNAPSHOT_MS (one
 * record per changed balance or candle per snapshot, not one per command); between snapshots the
 * trades are the record, and recovery adds the trades committed after the snapshot
 * (src/db/recovery.ts).
 */

import type { Ledger } from "./ledger.ts";
import type { PairMarket } from "./read-models/pair-market.ts";
import type { RecordSink } from "./record-sink.ts";
import type { SequenceIds } from "./sequencer.ts";

/**
 * How often balances and candles are written (ms): a snapshot of every changed balance and candle
 * at most once a second instead of with every group commit, which saves about two balance rows and
 * half a candle row per order under load.
 */
export const SNAPSHOT_MS = 1000;

/** What a snapshot needs of a pair: its name and its candles. */
export interface SnapshotPair {
  spec: { name: string };
  market: PairMarket;
}

export class Snapshots {
  /** When the next batch takes a snapshot of balances and candles (Date.now() ms). */
  private due = 0;

  constructor(
    private readonly db: RecordSink,
    private readonly ledger: Ledger,
    /** The core's pairs, by index (the core's own array: pairs added later are seen). */
    private readonly pairs: readonly SnapshotPair[],
    /** The trades settled so far are those below `ids.nextTradeId`. */
    private readonly ids: SequenceIds,
  ) {
    // Every balance record says which trades it holds: all those settled so far.
    db.tradesThroughMark(() => this.ids.nextTradeId - 1);
    db.beforeSend(() => {
      const now = Date.now();
      if (now >= this.due) {
        this.take();
        this.due = now + SNAPSHOT_MS;
      }
    });
  }

  /**
   * A snapshot: every balance and candle changed since the last one goes into the current batch,
   * and meta 'balances_through' / 'candles_through' say that the rows hold every trade up to now.
   * Also taken at shutdown (src/boot.ts).
   */
  take(): void {
    const db = this.db;
    const names = this.ledger.currencies;
    this.ledger.drainDirty((user, c, available, reserved) => db.balance(user, names[c], available, reserved));
    for (const p of this.pairs) {
      if (p === undefined) continue;
      const name = p.spec.name;
      p.market.drainCandles((period, c) => db.candle(name, period, c[0], c[1], c[2], c[3], c[4], c[5]));
    }
    const through = this.ids.nextTradeId - 1;
    db.meta("balances_through", through);
    db.meta("candles_through", through);
  }
}
