/**
 * Question: how much CPU does the database writer thread spend per create-order, with the records
 * the exchange actually hands it per order, in this checkout (candidate) against another checkout's
 * writer (baseline, default /work/main)?
 *
 *   main thread (this process)                          writer thread (each checkout's own)
 *   CLIENTS closed-loop clients: records of one order ──▶ batch ──▶ BEGIN; statements; COMMIT (FULL)
 *      ▲        + afterCommit (the HTTP answer)                            │
 *      └───────────────────────────────────────────── ack ◀───────────────┘
 *
 * Record mix per order, as bench:load's create-order workload makes it (bench/load/workload.ts):
 * 50% passive limit orders that rest (one order insert, the owner's balance), 30% crossing limits
 * and 20% market orders that fill one resting maker of another user (the taker's order closed, the
 * maker's order update, a trade, two balances per user). Per batch, as src/core/exchange.ts's
 * beforeSend hook gives them: every changed balance once, the book sequence of each pair (meta)
 * and the 11 candles of each pair that traded. Three pairs, USERS users.
 *
 * Writer-thread CPU comes from /proc (the busiest thread the writer start created); main-thread CPU
 * (encoding and posting batches) from /proc too. A and B alternate, ROUNDS each, each round a fresh
 * database. Checksum: every order and trade read back.
 *
 * --mix server: the records as the server has made them since balances and candles became
 * snapshots (migration 005, src/core/exchange.ts SNAPSHOT_MS): the changed balances and candles once a
 * second instead of in every batch, and the nonce of each signed request (one per order).
 *
 * --journal-only: the writer's ack path alone (journal commits): the rows' bulk apply is held back
 * until the close, outside the measurement. Against a normal run it splits the writer's CPU into
 * the journal commits and the bulk apply (BENCHMARKS.md, "Database").
 *
 * Run: npx tsx bench/db/writer-mix.bench.ts [--quick] [--baseline <checkout>] [--only candidate]
 *      [--clients 64] [--synchronous FULL|NORMAL] [--mix batch|server] [--journal-only]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean" },
    baseline: { type: "string" },
    only: { type: "string" },
    clients: { type: "string" },
    synchronous: { type: "string" },
    mix: { type: "string" },
    "journal-only": { type: "boolean" },
  },
});
const QUICK = flags.quick === true;
const N = QUICK ? 10_000 : 40_000;
const ROUNDS = QUICK ? 1 : 3;
const CLIENTS = Number(flags.clients ?? 64);
const SYNC = flags.synchronous === "NORMAL" ? "NORMAL" : "FULL";
const SERVER_MIX = flags.mix === "server";
const JOURNAL_ONLY = flags["journal-only"] === true;
/** Writer options of --journal-only: no bulk apply before the close. */
const HOLD_ROWS = { applyAfterBatches: 1e9, applyAfterRecords: 1e12, applyQuietMs: 1e9 };
const SNAPSHOT_MS = 1000;
const USERS = 128; // as bench:load (bench/load/run.ts --users)
const PAIRS = ["btc_usdt", "eth_usdt", "eth_btc"] as const;
const CURS: [string, string][] = [
  ["btc", "usdt"],
  ["eth", "usdt"],
  ["eth", "btc"],
];
const PERIODS = ["1m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w"];
const LOTS = 1000;

/** The record methods both writers share (the signatures exchange.ts calls). */
type Writer = Pick<
  DbWriter,
  | "order"
  | "nonce"
  | "trade"
  | "balance"
  | "meta"
  | "candle"
  | "afterCommit"
  | "beforeSend"
  | "settledOrderIds"
  | "close"
> & { stats: { batches: number } };
type WriterClass = { start(file: string, opts?: object): Promise<Writer> };

const TICKS = fs.existsSync("/proc/self/task") ? 100 : 0;
function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  if (TICKS === 0) return out;
  for (const tid of fs.readdirSync("/proc/self/task")) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), ((Number(f[11]) + Number(f[12])) * 1000) / TICKS);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** Feeds `n` orders' records into `w` from CLIENTS closed-loop clients; resolves after the last ack. */
function drive(w: Writer, n: number): Promise<void> {
  let orderId = 0;
  let tradeId = 0;
  let micro = 1_700_000_000_000_000;
  // Resting makers per pair: id, user, side, price (a FIFO in plain arrays).
  const makers = PAIRS.map(() => ({ id: [] as number[], user: [] as number[], side: [] as number[] }));
  const touchedPairs = new Set<number>();
  const tradedPairs = new Set<number>();
  // Balances change per order; the exchange hands each changed one over once per batch.
  const dirty = new Map<number, bigint>();
  let snapshotDue = 0;
  w.beforeSend(() => {
    for (const p of touchedPairs) w.meta(`book_seq:${PAIRS[p]}`, orderId);
    touchedPairs.clear();
    if (SERVER_MIX) {
      const now = Date.now();
      if (now < snapshotDue) return;
      snapshotDue = now + SNAPSHOT_MS;
    }
    for (const [key, v] of dirty) w.balance(Math.floor(key / 8), CURS[(key % 8) >> 1][key & 1], v, v / 3n);
    dirty.clear();
    for (const p of tradedPairs)
      for (const period of PERIODS) w.candle(PAIRS[p], period, 1_700_000_000_000, 100, 110, 90, 105, tradeId);
    tradedPairs.clear();
    if (SERVER_MIX) {
      w.meta("balances_through", tradeId);
      w.meta("candles_through", tradeId);
    }
  });
  w.settledOrderIds(() => orderId + 1);
  const bal = (user: number, pair: number, cur: number): void => {
    dirty.set(user * 8 + pair * 2 + cur, BigInt(user) * 1_000_000_000_000n + BigInt(orderId));
  };

  const one = (i: number): void => {
    const p = i % 3;
    const user = 1 + ((i * 7919) % USERS);
    const side = (i >> 1) & 1;
    const kind = i % 10; // 0-4 passive, 5-7 crossing limit, 8-9 market
    const m = makers[p];
    const id = ++orderId;
    micro++;
    touchedPairs.add(p);
    if (SERVER_MIX)
      w.nonce(`${user.toString(16).padStart(8, "0")}-api-token-of-this-user-0123456789abcdef`, BigInt(micro));
    // A taker needs a maker of another user on the other side; without one it rests like a passive.
    let at = -1;
    if (kind >= 5) for (let k = 0; k < m.id.length && at < 0; k++) if (m.user[k] !== user) at = k;
    if (at < 0) {
      w.order(id, user, PAIRS[p], side, 0, 10_000 + (i % 50), LOTS, 0, false, micro, micro);
      m.id.push(id);
      m.user.push(user);
      m.side.push(1 - side);
      bal(user, p, side === 0 ? 1 : 0);
      return;
    }
    const makerId = m.id[at];
    const makerUser = m.user[at];
    const takerSide = m.side[at];
    m.id.splice(at, 1);
    m.user.splice(at, 1);
    m.side.splice(at, 1);
    const type = kind >= 8 ? 1 : 0;
    w.order(id, user, PAIRS[p], takerSide, type, 10_000, LOTS, LOTS, false, micro, micro);
    w.order(makerId, makerUser, PAIRS[p], 1 - takerSide, 0, 10_000, LOTS, LOTS, false, micro - 100, micro);
    w.trade(++tradeId, PAIRS[p], 10_000, LOTS, id, makerId, user, makerUser, takerSide, type, 0, micro);
    tradedPairs.add(p);
    for (const u of [user, makerUser]) {
      bal(u, p, 0);
      bal(u, p, 1);
    }
  };

  return new Promise((resolve) => {
    let next = 0;
    let finished = 0;
    const step = (): void => {
      if (next >= n) {
        if (++finished === CLIENTS) resolve();
        return;
      }
      one(next++);
      w.afterCommit(step);
    };
    for (let c = 0; c < CLIENTS; c++) step();
  });
}

interface Round {
  label: string;
  seconds: number;
  batches: number;
  writerMs: number;
  mainMs: number;
  otherMs: number;
}

let roundNo = 0;
async function round(label: string, W: WriterClass, dir: string): Promise<Round> {
  const file = path.join(dir, `round-${++roundNo}.db`);
  const before = threadCpuMs();
  const w = await W.start(file, { synchronous: SYNC, ...(JOURNAL_ONLY ? HOLD_ROWS : {}) });
  const t0 = threadCpuMs();
  const s0 = performance.now();
  await drive(w, N);
  // A writer that journals batches and writes their rows later (issue 12) has its last rows
  // written before the clock stops, so both contenders are measured for the same work.
  const applied = (w as { applied?: () => Promise<void> }).applied;
  if (applied !== undefined && !JOURNAL_ONLY) await applied.call(w);
  const seconds = (performance.now() - s0) / 1000;
  const t1 = threadCpuMs();
  const batches = w.stats.batches;
  await w.close();
  // The writer start's threads are the ones that were not there before it; the busiest is the writer.
  let writerMs = 0;
  let otherMs = 0;
  for (const [tid, ms] of t1) {
    if (before.has(tid)) continue;
    const d = ms - (t0.get(tid) ?? 0);
    if (d > writerMs) {
      otherMs += writerMs;
      writerMs = d;
    } else otherMs += d;
  }
  const mainMs = (t1.get(process.pid) ?? 0) - (t0.get(process.pid) ?? 0);
  return { label, seconds, batches, writerMs, mainMs, otherMs };
}

const baselineDir = flags.baseline ?? "/work/main";
const contenders: [string, WriterClass][] = [];
if (flags.only !== "candidate") {
  const mod = (await import(path.resolve(baselineDir, "src/db/writer.ts"))) as { DbWriter: WriterClass };
  contenders.push([`baseline (${baselineDir})`, mod.DbWriter]);
}
contenders.push(["candidate (this checkout)", DbWriter as unknown as WriterClass]);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-writer-mix-"));
try {
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++)
    for (const [label, W] of r % 2 === 0 ? contenders : [...contenders].reverse())
      rounds.push(await round(label, W, dir));

  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(
        " ",
      )}; ${N} orders per round, ${CLIENTS} clients, synchronous ${SYNC}, ${SERVER_MIX ? "server" : "batch"} mix${JOURNAL_ONLY ? ", journal only (bulk apply held back to the close, not measured)" : ""}`,
  );
  console.log(
    "| contender | orders/s | orders/commit | writer thread µs/order | main thread µs/order | other new threads µs/order |",
  );
  console.log("|---|---:|---:|---:|---:|---:|");
  const per = new Map<string, number>();
  for (const [label] of contenders) {
    const rs = rounds.filter((x) => x.label === label);
    const sum = (f: (x: Round) => number): number => rs.reduce((a, x) => a + f(x), 0);
    const orders = N * rs.length;
    const writerUs = (sum((x) => x.writerMs) * 1000) / orders;
    per.set(label, writerUs);
    per.set(`${label} main`, (sum((x) => x.mainMs) * 1000) / orders);
    console.log(
      `| ${label} | ${Math.round(orders / sum((x) => x.seconds))} | ${(orders / sum((x) => x.batches)).toFixed(1)} | ${writerUs.toFixed(1)} | ${((sum((x) => x.mainMs) * 1000) / orders).toFixed(1)} | ${((sum((x) => x.otherMs) * 1000) / orders).toFixed(1)} |`,
    );
  }
  if (contenders.length === 2)
    console.log(
      `CPU per order, candidate / baseline: writer thread ${(per.get(contenders[1][0])! / per.get(contenders[0][0])!).toFixed(2)}, main thread ${(per.get(`${contenders[1][0]} main`)! / per.get(`${contenders[0][0]} main`)!).toFixed(2)}`,
    );

  // Checksum: every order of every round is in its database.
  let orders = 0;
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".db"))) {
    const db = openDatabase(path.join(dir, f), { readonly: true });
    orders += db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM orders").get()!.n;
    db.close();
  }
  console.log(`checksum: ${orders} orders read back, ${N * rounds.length} written`);
  if (orders !== N * rounds.length) throw new Error("checksum failed");
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
