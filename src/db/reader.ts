/**
 * Paged user reads off the main thread: a small piscina pool whose threads each hold one
 * read-only connection (`workers/db/reader-worker.ts`). WAL lets these reads run while the writer
 * commits; each task sees one committed snapshot, so `total` and `items` agree.
 */
import path from "node:path";
import { Piscina } from "piscina";
import type {
  Execution,
  Page,
  PairTradesQuery,
  ReaderTask,
  ReaderWorkerData,
  ReadFilter,
  RecentForUser,
} from "../protocol/db/reader-tasks.ts";
import type { OrderRow, TradeRow, TransferRow, UserTradeRow } from "../protocol/db/rows.ts";
import { TS_ENTRY } from "../util/threads.ts";

export interface ReaderOptions {
  /**
   * Default `maxThreads`: every thread boots with the pool, not when reads first overlap. A
   * thread's boot costs about 0.8 s of CPU under tsx; started in the middle of a load it took that
   * from the orders (BENCHMARKS.md, "Changes kept").
   */
  minThreads?: number;
  /** Default 2. */
  maxThreads?: number;
  /**
   * Every read waits for this first: the writer's `applied` (src/db/writer.ts), so that a read
   * sees the rows of every batch acknowledged before it, which may still be in the journal only
   * (the apply thread writes their rows later).
   */
  before?: () => Promise<void>;
}

// Under tsx the sources run as .ts; a compiled build would carry .js files side by side. The pool's
// task file is the bootstrap (see its header), which re-exports the reader's default function.
const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

const WORKER_URL = new URL(`../../workers/db/reader-worker${EXT}`, import.meta.url);

export class DbReader {
  private constructor(
    private readonly pool: Piscina,
    private readonly before: (() => Promise<void>) | undefined,
  ) {}

  static start(file: string, opts: ReaderOptions = {}): DbReader {
    const workerData: ReaderWorkerData = { entry: WORKER_URL.href, path: path.resolve(file) };
    const maxThreads = opts.maxThreads ?? 2;
    const pool = new Piscina({
      filename: TS_ENTRY,
      minThreads: opts.minThreads ?? maxThreads,
      maxThreads,
      // Threads boot tsx and open a connection (~0.8 s of CPU): keep idle ones instead of
      // respawning one per burst of reads.
      idleTimeout: 60_000,
      workerData,
    });
    return new DbReader(pool, opts.before);
  }

  /** The user's orders, newest first (oldest first from a point: ReadFilter); `page` from 1. */
  userOrders(userId: number, page: number, pageSize: number, filter?: ReadFilter): Promise<Page<OrderRow>> {
    return this.run({ op: "userOrders", userId, page, pageSize, filter } satisfies ReaderTask);
  }

  /** The user's trades (own side and order type), newest first (oldest first from a point); `page` from 1. */
  userTrades(
    userId: number,
    page: number,
    pageSize: number,
    filter?: ReadFilter,
  ): Promise<Page<UserTradeRow>> {
    return this.run({ op: "userTrades", userId, page, pageSize, filter } satisfies ReaderTask);
  }

  /**
   * docs/API.md 20.3: a pair's trades at or after `sinceMicro` and from `fromId`, oldest first, at
   * most `limit`; with neither, its newest `limit` trades, newest first.
   */
  pairTrades(query: PairTradesQuery): Promise<TradeRow[]> {
    return this.run({ op: "pairTrades", ...query } satisfies ReaderTask);
  }

  /** The user's deposits and withdrawals, newest first; `page` from 1. */
  userTransfers(userId: number, page: number, pageSize: number): Promise<Page<TransferRow>> {
    return this.run({ op: "userTransfers", userId, page, pageSize } satisfies ReaderTask);
  }

  /** The user's `n` newest orders and `n` newest trades. */
  recentForUser(userId: number, n: number): Promise<RecentForUser> {
    return this.run({ op: "recentForUser", userId, n } satisfies ReaderTask);
  }

  /** One order by id (any user), or undefined. */
  order(orderId: number): Promise<OrderRow | undefined> {
    return this.run({ op: "order", orderId } satisfies ReaderTask);
  }

  /** The user's order with that client order id, or undefined. */
  orderByClientId(userId: number, clientOrderId: string): Promise<OrderRow | undefined> {
    return this.run({ op: "orderByClientId", userId, clientOrderId } satisfies ReaderTask);
  }

  /** Those of the orders `ids` that are open as committed, newest first. */
  openOrders(ids: number[]): Promise<OrderRow[]> {
    return this.run({ op: "openOrders", ids } satisfies ReaderTask);
  }

  /**
   * The user's executions numbered above `after` and at most `upTo`, in number order, at most
   * `limit` of them (docs/API.md 16): each trade side at its number, and each order once, at the
   * number of its latest change (an order whose row has changed after `upTo` is left out: its
   * change is reported above `upTo`).
   */
  executions(userId: number, after: number, upTo: number, limit: number): Promise<Execution[]> {
    return this.run({ op: "executions", userId, after, upTo, limit } satisfies ReaderTask);
  }

  private run<T>(task: ReaderTask): Promise<T> {
    const before = this.before;
    return before === undefined ? this.pool.run(task) : before().then(() => this.pool.run(task));
  }

  /** Ends the threads; pending tasks are rejected. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
