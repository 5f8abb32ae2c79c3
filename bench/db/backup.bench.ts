/**
 * Question: does an online backup (`POST /admin/backup`, docs/API.md 11) slow the orders down? The
 * create-order latency of the real server, on a database of 1 million orders, while a backup runs,
 * against the same load without one.
 *
 * The database: the server starts once on an empty file (schema, the users through the admin
 * calls, funded), stops, and then ORDERS closed orders (cancelled, spread over the users, as the
 * writer's `orders` and `user_orders` rows with the `user_orders_through` mark moved past them) are
 * written with plain SQL in a few seconds, instead of hours through the server's own flow. The
 * server started again recovers it like any database it closed itself (closed orders cost the
 * recovery nothing: it reads the open ones).
 *
 * The load: an open loop of limit buys far below the market (resting, never crossing) at RATE a
 * second from CLIENTS keep-alive connections, each latency measured from the request's scheduled
 * send time (a late send counts). Run 1: the backup is called WARMUP_MS into the load; the samples
 * are the orders scheduled between the call and its answer. Run 2: the same load for the same
 * length without a backup. Both runs: p50, p99 and max; the table's last line is the p99 ratio.
 *
 *   npx tsx bench/db/backup.bench.ts [--orders N] [--rate R] [--backup-dir DIR]
 *
 * One run, 2026-11-27, the 2-core VM quiet (load average 0.9), default settings (400/s):
 *
 *   database: 1,000,000 orders written by SQL in 2.7 s, server start on it 1.9 s;
 *   backup 58 MiB in 0.64 s
 *
 *   | create-order, 400/s          | orders | p50 ms | p99 ms | max ms |
 *   |------------------------------|-------:|-------:|-------:|-------:|
 *   | without a backup             |    258 |   1.32 |  24.40 |  26.91 |
 *   | during a backup              |    257 |   4.11 |  19.68 |  21.40 |
 *   | p99 ratio (during / without) |        |        |   0.81 |        |
 *
 * The backup raises the median (the copy's core is shared with the order path's threads) but not
 * the tail: the p99 of both runs is the group commits' fsync. An earlier run at load average 8-9,
 * with the copy on a reader-pool thread at normal priority, gave p99 148 ms without and 711 ms
 * during a 0.89 s backup (ratio 4.8); hence the backup thread of its own at nice 10.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type CreateOrderRequest, ExchangeClient } from "../../src/client/index.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { ServerProcess } from "../../test/support/server-process.ts";

const { values } = parseArgs({
  options: { orders: { type: "string" }, rate: { type: "string" }, "backup-dir": { type: "string" } },
});
const ORDERS = Number(values.orders ?? 1_000_000);
const RATE = Number(values.rate ?? 400);
const USERS = 50;
const CLIENTS = 16;
const WARMUP_MS = 2_000;

const dir = mkdtempSync(join(tmpdir(), "backup-bench-"));
const dbPath = join(dir, "exchange.db");
const backupDir = values["backup-dir"] ?? join(dir, "backups");
const configPath = join(dir, "config.json");
const adminToken = randomBytes(24).toString("hex");
writeFileSync(
  configPath,
  JSON.stringify({
    pairs: [
      {
        name: "btc_usdt",
        priceDecimals: 2,
        amountDecimals: 6,
        minAmount: "0.000001",
        maxAmount: "10000",
        maxPrice: "10000000",
      },
    ],
    users: [],
  }),
);

async function start(): Promise<ServerProcess> {
  return await ServerProcess.start({
    name: "server",
    script: "src/main.ts",
    args: ["--port", "0", "--db", dbPath, "--config", configPath, "--backup-dir", backupDir],
    env: { ...process.env, ADMIN_TOKEN: adminToken, RATE_LIMIT: "0", LOG_LEVEL: "warn" },
    startTimeoutMs: 300_000,
  });
}

function must<T>(res: { status: number; body: unknown; text: string }, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body as T;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Sample {
  scheduled: number;
  latency: number;
}

/**
 * Sends RATE orders a second, each from its scheduled time, until `until()` says stop; returns
 * every sample. Requests wait in a FIFO when every client is busy (the wait counts).
 */
async function load(clients: ExchangeClient[], until: () => boolean): Promise<Sample[]> {
  const samples: Sample[] = [];
  const queue: number[] = [];
  const idle = [...clients];
  let sent = 0;
  let inFlight = 0;
  const t0 = performance.now();
  let n = 0;
  const order = (i: number): CreateOrderRequest => ({
    pairName: "btc_usdt",
    tradeType: "limit",
    directionType: "buy",
    price: String(100 + (i % 100)),
    amount: "0.001",
  });
  const pump = () => {
    while (queue.length > 0 && idle.length > 0) {
      const scheduled = queue.shift()!;
      const client = idle.pop()!;
      inFlight++;
      const i = sent++;
      client.createOrder(order(i)).then(
        (res) => {
          if (res.status !== 200) throw new Error(`create-order: ${res.status} ${res.text}`);
          samples.push({ scheduled, latency: performance.now() - scheduled });
          inFlight--;
          idle.push(client);
          pump();
        },
        (err: unknown) => {
          throw err;
        },
      );
    }
  };
  while (!until()) {
    const next = t0 + (n * 1000) / RATE;
    const now = performance.now();
    if (next > now) {
      await new Promise((r) => setTimeout(r, Math.max(0, next - now - 1)));
      while (performance.now() < next) await new Promise((r) => setImmediate(r));
    }
    queue.push(next);
    n++;
    pump();
  }
  while (inFlight > 0 || queue.length > 0) await new Promise((r) => setTimeout(r, 5));
  return samples;
}

function row(name: string, s: Sample[]): { name: string; n: number; p50: number; p99: number; max: number } {
  const l = s.map((x) => x.latency).sort((a, b) => a - b);
  return { name, n: l.length, p50: percentile(l, 50), p99: percentile(l, 99), max: l[l.length - 1] };
}

async function main(): Promise<void> {
  // 1. Schema and users through the server.
  let server = await start();
  const url = () => `http://${server.host}:${server.port}`;
  const admin = new ExchangeClient({ baseUrl: url, adminToken });
  const keys: { apiToken: string; secretKey: string }[] = [];
  for (let u = 0; u < USERS; u++) {
    const user = must<{ uid: string; apiToken: string; secretKey: string }>(await admin.createUser(), "user");
    must(await admin.deposit(user.uid, "usdt", "100000000"), "deposit");
    keys.push(user);
  }
  await server.stop();

  // 2. The orders, with plain SQL (see the header).
  let t = performance.now();
  const db = openDatabase(dbPath, { synchronous: "NORMAL" });
  const userIds = db.prepare<[], number>("SELECT id FROM users ORDER BY id").pluck().all();
  const first = db.prepare<[], number>("SELECT COALESCE(MAX(id), 0) FROM orders").pluck().get()! + 1;
  db.transaction(() => {
    const ins = db.prepare(
      `INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
         create_micro, update_micro, flags)
       VALUES (?, ?, 'btc_usdt', ?, 0, ?, 1000, 0, 1, ?, ?, 0)`,
    );
    const micro = Date.now() * 1000 - ORDERS * 1000;
    for (let i = 0; i < ORDERS; i++) {
      const id = first + i;
      ins.run(
        id,
        userIds[i % userIds.length],
        i & 1,
        2_000_000 + (i % 5000),
        micro + i * 1000,
        micro + i * 1000,
      );
    }
    db.prepare(
      "INSERT INTO user_orders (user_id, order_id) SELECT user_id, id FROM orders WHERE id >= ?",
    ).run(first);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'user_orders_through'").run(first + ORDERS - 1);
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const fillMs = performance.now() - t;

  // 3. The server on it, and the clients.
  t = performance.now();
  server = await start();
  const startMs = performance.now() - t;
  const clients = Array.from({ length: CLIENTS }, (_, i) => {
    const k = keys[i % keys.length];
    return new ExchangeClient({ baseUrl: url, apiToken: k.apiToken, secretKey: k.secretKey });
  });
  // Warm the connections and the path.
  let warm = true;
  setTimeout(() => {
    warm = false;
  }, WARMUP_MS);
  await load(clients, () => warm);

  // 4. Run 1: a backup during the load.
  let callAt = 0;
  let answeredAt = 0;
  let made: { file: string; bytes: number; lastOrderId: number } | null = null;
  const loadStart = performance.now();
  setTimeout(() => {
    callAt = performance.now();
    admin.backup().then((res) => {
      answeredAt = performance.now();
      made = must(res, "backup");
    });
  }, WARMUP_MS);
  const during = await load(clients, () => answeredAt > 0);
  const backupMs = answeredAt - callAt;
  const inBackup = during.filter((s) => s.scheduled >= callAt && s.scheduled <= answeredAt);

  // 5. Run 2: the same load for as long, without one.
  const quietStart = performance.now();
  const without = await load(clients, () => performance.now() - quietStart > WARMUP_MS + backupMs);
  const quietFrom = quietStart + WARMUP_MS;
  const inQuiet = without.filter((s) => s.scheduled >= quietFrom);
  await server.stop();

  const a = row("without a backup", inQuiet);
  const b = row("during a backup", inBackup);
  const m = made as { file: string; bytes: number; lastOrderId: number } | null;
  const f = (x: number) => x.toFixed(2);
  console.log(
    `database: ${ORDERS.toLocaleString("en")} orders written by SQL in ${(fillMs / 1000).toFixed(1)} s, ` +
      `server start on it ${(startMs / 1000).toFixed(1)} s; backup ${m?.file} ` +
      `${((m?.bytes ?? 0) / 2 ** 20).toFixed(0)} MiB in ${(backupMs / 1000).toFixed(2)} s (lastOrderId ${m?.lastOrderId}); ` +
      `load ${RATE} create-order/s open loop, ${CLIENTS} connections (started ${((callAt - loadStart) / 1000).toFixed(1)} s before the call)`,
  );
  console.log("");
  console.log("| create-order | orders | p50 ms | p99 ms | max ms |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of [a, b]) console.log(`| ${r.name} | ${r.n} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} |`);
  console.log(`| p99 ratio (during / without) | | | ${(b.p99 / a.p99).toFixed(2)} | |`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
