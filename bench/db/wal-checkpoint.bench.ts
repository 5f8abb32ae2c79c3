/**
 * Question: how much CPU does persisting an order cost with SQLite's default WAL checkpoint
 * threshold (1,000 pages, baseline) against a larger one (DEFAULT_WAL_AUTOCHECKPOINT_PAGES) and
 * against the checkpointer thread (PASSIVE checkpoints from its own connection every
 * DEFAULT_CHECKPOINT_INTERVAL_MS, the writer's own threshold only a far safety valve), and how long
 * is the longest wait for a commit?
 *
 * Each order is what the exchange writes for a create-order on the real writer thread
 * (`DbWriter`, synchronous=FULL): the order row, its user's two balances, and for half of them a
 * trade (trade row, two user_trades rows) with the maker's order update and balances. 128 users
 * are drawn at random, so the per-user indexes dirty scattered pages as they do under load.
 * `clients` concurrent clients each add one order and wait for its commit (closed loop, like HTTP
 * requests answered after commit), which sets the transaction size. Variants alternate over rounds.
 *
 * Measured: process CPU (main + writer thread) per order, commit wait (add -> afterCommit) p50,
 * p99 and max, orders per transaction, and the WAL file's size at the end.
 * Checksum: the orders and trades read back equal those written.
 *
 * Run: npx tsx bench/db/wal-checkpoint.bench.ts [--quick]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DbWriter } from "../../src/db/writer.ts";
import { DEFAULT_CHECKPOINT_INTERVAL_MS, WAL_SAFETY_VALVE_PAGES } from "../../src/db/writer-threads.ts";
import { DEFAULT_WAL_AUTOCHECKPOINT_PAGES, openDatabase } from "../../src/protocol/db/db-open.ts";
import { mulberry32 } from "../../test/support/prng.ts";

const QUICK = process.argv.includes("--quick");
const ORDERS = QUICK ? 6_000 : 30_000;
const ROUNDS = QUICK ? 1 : 2;
const USERS = 128;
const BASELINE_PAGES = 1_000;

interface Variant {
  label: string;
  pages: number;
  /** Checkpointer thread interval; 0: none. */
  intervalMs: number;
}
const VARIANTS: Variant[] = [
  { label: `${BASELINE_PAGES} pages (baseline)`, pages: BASELINE_PAGES, intervalMs: 0 },
  {
    label: `${DEFAULT_WAL_AUTOCHECKPOINT_PAGES} pages`,
    pages: DEFAULT_WAL_AUTOCHECKPOINT_PAGES,
    intervalMs: 0,
  },
  {
    label: `checkpointer every ${DEFAULT_CHECKPOINT_INTERVAL_MS} ms`,
    pages: WAL_SAFETY_VALVE_PAGES,
    intervalMs: DEFAULT_CHECKPOINT_INTERVAL_MS,
  },
];

interface Result {
  file: string;
  variant: Variant;
  clients: number;
  cpuUsPerOrder: number;
  ordersPerTx: number;
  waitMs: { p50: number; p99: number; max: number };
  walMb: number;
  trades: number;
}

/** Adds one order's records, as the exchange would for a create-order; returns trades added. */
function addOrder(w: DbWriter, rand: () => number, id: number, tradeId: number): number {
  const user = 1 + Math.floor(rand() * USERS);
  const micro = 1_700_000_000_000_000 + id;
  w.order(id, user, "btc_usdt", id & 1, 0, 5_000_000, 1_000, 0, false, micro, micro);
  w.balance(user, "usdt", 10n ** 12n + BigInt(id), 5_000n);
  w.balance(user, "btc", 10n ** 12n - BigInt(id), 0n);
  if (id === 1 || rand() >= 0.5) return 0;
  let maker = 1 + Math.floor(rand() * USERS);
  if (maker === user) maker = user === USERS ? 1 : user + 1;
  const makerOrder = 1 + Math.floor(rand() * (id - 1));
  w.trade(tradeId, "btc_usdt", 5_000_000, 10, id, makerOrder, user, maker, id & 1, 0, 0, micro);
  w.order(makerOrder, maker, "btc_usdt", 1 - (id & 1), 0, 5_000_000, 1_000, 10, false, micro, micro);
  w.balance(maker, "usdt", 10n ** 12n + BigInt(id), 0n);
  w.balance(maker, "btc", 10n ** 12n - BigInt(id), 0n);
  return 1;
}

async function run(dir: string, variant: Variant, clients: number, round: number): Promise<Result> {
  const file = path.join(dir, `p${variant.pages}-i${variant.intervalMs}-c${clients}-r${round}.db`);
  const w = await DbWriter.start(file, {
    walAutocheckpointPages: variant.pages,
    checkpointIntervalMs: variant.intervalMs,
  });
  w.onFatal((err) => {
    throw err;
  });
  const rand = mulberry32(7);
  const waits = new Float64Array(ORDERS);
  let id = 0;
  let trades = 0;
  // Process CPU: the main thread, the writer and (when there is one) the checkpointer thread.
  const cpu0 = process.cpuUsage();
  await new Promise<void>((resolve) => {
    let finished = 0;
    const step = (): void => {
      if (id >= ORDERS) {
        if (++finished === clients) resolve();
        return;
      }
      const mine = ++id;
      trades += addOrder(w, rand, mine, trades + 1);
      const t0 = performance.now();
      w.afterCommit(() => {
        waits[mine - 1] = performance.now() - t0;
        step();
      });
    };
    for (let c = 0; c < clients; c++) step();
  });
  const cpu = process.cpuUsage(cpu0);
  const transactions = w.stats.batches;
  const walBytes = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
  await w.close();
  waits.sort();
  return {
    file,
    variant,
    clients,
    cpuUsPerOrder: (cpu.user + cpu.system) / ORDERS,
    ordersPerTx: ORDERS / transactions,
    waitMs: { p50: waits[ORDERS >> 1], p99: waits[Math.floor(ORDERS * 0.99)], max: waits[ORDERS - 1] },
    walMb: walBytes / 1e6,
    trades,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-wal-checkpoint-"));
try {
  const results: Result[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const clients of [20, 60]) {
      for (const variant of VARIANTS) results.push(await run(dir, variant, clients, round));
    }
  }

  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(2)}`,
  );
  console.log(
    `${ORDERS} orders per run, ${ROUNDS} round(s), medians over rounds; baseline = SQLite's default`,
  );
  const rows = [];
  for (const clients of [20, 60]) {
    const base = median(
      results.filter((r) => r.clients === clients && r.variant === VARIANTS[0]).map((r) => r.cpuUsPerOrder),
    );
    for (const variant of VARIANTS) {
      const rs = results.filter((r) => r.clients === clients && r.variant === variant);
      const cpu = median(rs.map((r) => r.cpuUsPerOrder));
      rows.push({
        clients,
        checkpoints: variant.label,
        "orders/tx": median(rs.map((r) => r.ordersPerTx)).toFixed(1),
        "CPU µs/order": cpu.toFixed(1),
        "vs baseline": `${((cpu / base) * 100).toFixed(0)}%`,
        "commit wait p50 ms": median(rs.map((r) => r.waitMs.p50)).toFixed(2),
        "p99 ms": median(rs.map((r) => r.waitMs.p99)).toFixed(2),
        "max ms": Math.max(...rs.map((r) => r.waitMs.max)).toFixed(2),
        "WAL MB": median(rs.map((r) => r.walMb)).toFixed(1),
      });
    }
  }
  console.table(rows);

  // Checksum: every order and trade written is there.
  for (const r of results) {
    const db = openDatabase(r.file, { readonly: true });
    const orders = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders").get()!.n;
    const trades = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM trades").get()!.n;
    db.close();
    if (orders !== ORDERS || trades !== r.trades) {
      throw new Error(`checksum failed: ${orders}/${ORDERS} orders, ${trades}/${r.trades} trades`);
    }
  }
  console.log(`checksum: every run's ${ORDERS} orders and its trades read back`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
