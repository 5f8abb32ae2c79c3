/**
 * Question: how many order records per second does the database writer make durable, with one
 * record per transaction (baseline) versus group commit (candidate), at synchronous FULL and NORMAL?
 *
 *   main thread                                   writer thread
 *   producer ── records + afterCommit ──▶ batch ──postMessage──▶ BEGIN; upserts; COMMIT (fsync)
 *      ▲                                                               │
 *      └───────────────── afterCommit callbacks ◀──────── {ack} ◀─────┘
 *
 * - batch-1 (baseline): one client adds a record and waits for its commit before the next: one
 *   transaction, one fsync per record.
 * - clients-256 (candidate): 256 clients do the same concurrently (closed loop, each waits for its
 *   own ack, like HTTP requests answered after commit); their records share transactions.
 * - flood (candidate): an open-loop producer adds BURST records per event-loop turn without
 *   waiting; records arriving during a commit ride in the next transaction, so this measures the
 *   writer thread's ceiling (batches grow until SQLite itself is the limit).
 * rows/s counts records from the first one added to the last acknowledgement.
 * Checksum: the rows read back from each database must equal the rows written.
 *
 * Run: npx tsx bench/db/group-commit.bench.ts [--quick]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase, type Synchronous } from "../../src/protocol/db/db-open.ts";

const QUICK = process.argv.includes("--quick");
const SINGLE_N = QUICK ? 200 : 2_000;
const CLIENTS = 256;
const CLIENTS_N = QUICK ? 20_000 : 100_000;
const FLOOD_N = QUICK ? 20_000 : 200_000;
const BURST = 100;

interface Result {
  variant: Variant;
  sync: Synchronous;
  rows: number;
  transactions: number;
  seconds: number;
}

function addOrder(w: DbWriter, id: number): void {
  w.order(id, 1 + (id % 1000), "btc_usdt", id & 1, 0, 5_000_000 + (id % 500), 1_000, 0, false, id, id);
}

/** `clients` concurrent clients, each adding a record and waiting for its commit, n in all. */
function closedLoop(w: DbWriter, n: number, clients: number): Promise<void> {
  return new Promise((resolve) => {
    let id = 0;
    let finished = 0;
    const step = (): void => {
      if (id >= n) {
        if (++finished === clients) resolve();
        return;
      }
      addOrder(w, ++id);
      w.afterCommit(step);
    };
    for (let c = 0; c < clients; c++) step();
  });
}

function flood(w: DbWriter, n: number): Promise<void> {
  return new Promise((resolve) => {
    let id = 0;
    const turn = (): void => {
      for (let i = 0; i < BURST && id < n; i++) addOrder(w, ++id);
      if (id < n) setImmediate(turn);
      else w.afterCommit(resolve); // runs after every earlier record is committed
    };
    turn();
  });
}

type Variant = "batch-1" | "clients-256" | "flood";

function drive(w: DbWriter, variant: Variant, n: number): Promise<void> {
  if (variant === "batch-1") return closedLoop(w, n, 1);
  if (variant === "clients-256") return closedLoop(w, n, CLIENTS);
  return flood(w, n);
}

async function run(dir: string, variant: Variant, sync: Synchronous, n: number): Promise<Result> {
  const file = path.join(dir, `${variant}-${sync}.db`);
  const w = await DbWriter.start(file, { synchronous: sync });
  w.onFatal((err) => {
    throw err;
  });
  const t0 = performance.now();
  await drive(w, variant, n);
  const seconds = (performance.now() - t0) / 1000;
  const transactions = w.stats.batches;
  await w.close();
  return { variant, sync, rows: n, transactions, seconds };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-group-commit-"));
try {
  const results: Result[] = [];
  for (const sync of ["FULL", "NORMAL"] as const) {
    results.push(await run(dir, "batch-1", sync, SINGLE_N));
    results.push(await run(dir, "clients-256", sync, CLIENTS_N));
    results.push(await run(dir, "flood", sync, FLOOD_N));
  }

  const header = ["variant", "synchronous", "rows", "transactions", "rows/tx", "seconds", "rows/s"];
  const lines = results.map((r) => [
    r.variant,
    r.sync,
    String(r.rows),
    String(r.transactions),
    (r.rows / r.transactions).toFixed(1),
    r.seconds.toFixed(3),
    Math.round(r.rows / r.seconds).toLocaleString("en-US"),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => c.padStart(widths[i])).join(" | ")} |`;
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${os.platform()}, db in ${dir}`);
  console.log(fmt(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const l of lines) console.log(fmt(l));

  // Checksum: every row written is there, so nothing above measured dropped work.
  let expected = 0;
  let actual = 0;
  for (const r of results) {
    const db = openDatabase(path.join(dir, `${r.variant}-${r.sync}.db`), { readonly: true });
    actual += db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders").get()!.n;
    db.close();
    expected += r.rows;
  }
  console.log(`checksum: ${actual} rows read back, ${expected} written`);
  if (actual !== expected) throw new Error(`checksum failed: expected ${expected} rows, read ${actual}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
