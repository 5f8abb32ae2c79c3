/**
 * What the exchange core (src/core/exchange.ts) is built with: src/boot.ts, and tests the same way.
 * Every stage is built from these in the core's constructor; none is set later.
 */

import type { ClientIds } from "./client-ids.ts";
import type { ResultSink } from "./command.ts";
import type { Ledger } from "./ledger.ts";
import type { PairStatuses } from "./pair-status.ts";
import type { RecordSink } from "./record-sink.ts";
import type { CommitListener } from "./results.ts";

/** What the core is built with (src/boot.ts; tests build it the same way). */
export interface ExchangeOptions {
  ledger: Ledger;
  db: RecordSink;
  /** The edge (src/entry/answers.ts): told each request's result, by request id. */
  sink?: ResultSink;
  /** The stream hub and the trading sessions, told of every committed change. */
  listener?: CommitListener | null;
  /** The ids the next create and the next trade get (recovery: one past the stored ones). */
  nextOrderId?: number;
  nextTradeId?: number;
  /**
   * Client order ids, unique per user over all of the user's orders ever (docs/API.md 8.2), in bounded
   * memory (src/core/client-ids.ts); recovery fills its filter.
   */
  clientIds?: ClientIds;
  /**
   * Whether an order of `user` with this client order id is stored (its row readable: the read
   * waits for every committed batch's rows): the reader pool's query.
   */
  clientIdStored?: (user: number, clientOrderId: string) => Promise<boolean>;
  /** The fee account's user id (docs/API.md 9); needed once a pair with fees trades. */
  feeUser?: number;
  /** Each pair's status (docs/API.md 11), as recovered; the admin call changes it. */
  statuses?: PairStatuses;
  /** Each user's last execution number as stored (docs/API.md 16): `[userId, last]`. */
  execSeqs?: readonly (readonly [number, number])[];
  /**
   * A follower (docs/OPERATIONS.md, "A second box: follower"): its database takes its leader's
   * batches as they are, so this core writes nothing of its own: no balance and candle snapshots,
   * no settled-order mark. It takes no command either (the edge refuses them).
   */
  follower?: boolean;
  /**
   * A leader with a replication port (docs/OPERATIONS.md, "A second box: follower"): every book
   * change is journaled with its L3 events for the followers' live streams (RecordSink.bookStep),
   * so every pair records its L3 events whether or not its L3 book is followed here.
   */
  journalSteps?: boolean;
}
