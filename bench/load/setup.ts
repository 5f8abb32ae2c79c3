/**
 * bench:load's setup: a fresh exchange with funded users and the makers' book, its captured bodies
 * (for the bare server and the floor), and the load generators' users. `GroupContext` is what
 * every group (groups/) runs against.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CreateOrderRequest, ExchangeClient, ok } from "../../src/client/index.ts";
import { amountOf, type BenchUser, type ClientKind, FUNDING, LEVELS, PAIR_PLANS, priceAt } from "./common.ts";
import type { Bodies } from "./constant-routes.ts";
import { SERVER_FLAGS, SERVER_LOG, USERS } from "./flags.ts";
import { gens } from "./measure.ts";
import { REPO_ROOT, type ServerProcess, spawnServer, waitHealthy } from "./servers.ts";

export interface Exchange {
  server: ServerProcess;
  users: BenchUser[];
  dir: string;
  /** Captured bodies (for the bare server and the floor). */
  bodies: Bodies;
  /** Its ADMIN_TOKEN (the replication group makes a user of its own with it). */
  adminToken: string;
}

/** The exchange's FIX gateway on any free port (docs/API.md 17), named in its readiness line. */
export const FIX_ARGS: readonly string[] = ["--fix-port", "0"];

export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * A benchmarked server's first arguments: loopback, any free port, database `db` and the
 * config in `dir`, no rate limit.
 */
export function benchServerArgs(dir: string, db: string): string[] {
  return [
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--db",
    join(dir, db),
    "--config",
    join(dir, "config.json"),
    "--rate-limit",
    "0",
  ];
}

/** How startExchange starts a server that differs from `npm start`'s (each default: as it does). */
export interface ExchangeOptions {
  /** Node flags after SERVER_FLAGS. */
  nodeFlags?: readonly string[];
  env?: Record<string, string>;
  /** The entry (another checkout's src/main.ts for the ab group). */
  script?: string;
  /** Server arguments after the benchmark's own (`--fix-port 0` for the fix group). */
  args?: readonly string[];
  /** Funded users (besides the maker): one per closed-loop connection at least (USERS). */
  users?: number;
}

export async function startExchange(
  label: string,
  {
    nodeFlags = [],
    env: extraEnv = {},
    script = "src/main.ts",
    args = [],
    users = USERS,
  }: ExchangeOptions = {},
): Promise<Exchange> {
  const dir = mkdtempSync(join(tmpdir(), "bench-load-"));
  const shipped = JSON.parse(readFileSync(join(REPO_ROOT, "data", "config.json"), "utf8")) as {
    pairs: unknown[];
  };
  writeFileSync(
    join(dir, "config.json"),
    `${JSON.stringify({ pairs: shipped.pairs, users: [] }, null, 2)}\n`,
  );
  const adminToken = randomBytes(24).toString("hex");
  const server = await spawnServer({
    name: label,
    script,
    nodeFlags: [...SERVER_FLAGS, ...nodeFlags],
    logDir: SERVER_LOG,
    args: [...benchServerArgs(dir, "exchange.db"), ...args],
    env: { ...extraEnv, ADMIN_TOKEN: adminToken, RATE_LIMIT: "0" },
  });
  await waitHealthy(server.port);
  if (args.includes("--fix-port") && server.fixPort === 0)
    throw new Error(`${label}: started with --fix-port but its readiness line names no FIX port`);
  const origin = `http://127.0.0.1:${server.port}`;
  const admin = new ExchangeClient({ baseUrl: origin, adminToken, timeoutMs: 15_000 });

  // Users (and one maker for the prepared book), funded generously.
  const t0 = performance.now();
  const all: BenchUser[] = [];
  await pool(
    Array.from({ length: users + 1 }, (_, i) => i),
    8,
    async () => {
      const u = ok(await admin.createUser(), "admin create user");
      for (const [currency, amount] of Object.entries(FUNDING))
        ok(await admin.deposit(u.uid, currency, amount), "deposit");
      all.push({ uid: u.uid, apiToken: u.apiToken, secretKey: u.secretKey });
    },
  );
  const maker = all.pop()!;
  const makerClient = new ExchangeClient({
    baseUrl: origin,
    apiToken: maker.apiToken,
    secretKey: maker.secretKey,
  });

  // The prepared book: 50 buy and 50 sell levels per pair, 10 lots each.
  const orders: CreateOrderRequest[] = [];
  for (const plan of PAIR_PLANS) {
    for (let k = 1; k <= LEVELS; k++) {
      const amount = amountOf(plan, 10);
      orders.push({
        pairName: plan.name,
        tradeType: "limit",
        directionType: "buy",
        price: priceAt(plan, -k),
        amount,
      });
      orders.push({
        pairName: plan.name,
        tradeType: "limit",
        directionType: "sell",
        price: priceAt(plan, k),
        amount,
      });
    }
  }
  let post = "";
  await pool(orders, 8, async (o) => {
    const res = await makerClient.createOrder(o);
    ok(res, `prepare book ${o.pairName} ${o.directionType} ${o.price}`);
    post = res.text;
  });
  const book: Record<string, string> = {};
  for (const plan of PAIR_PLANS) {
    const res = await fetch(`${origin}/1.0/trade/pairs/${plan.name}/orders`);
    book[plan.name] = await res.text();
    const parsed = JSON.parse(book[plan.name]) as { buy: unknown[]; sell: unknown[] };
    if (parsed.buy.length !== LEVELS || parsed.sell.length !== LEVELS)
      throw new Error(`prepared book of ${plan.name}: ${parsed.buy.length} + ${parsed.sell.length} levels`);
  }
  const pairs = await (await fetch(`${origin}/1.0/trade/pairs`)).text();
  console.log(
    `${label}: port ${server.port}, ${all.length} users funded, book ${LEVELS}+${LEVELS} levels x ${PAIR_PLANS.length} pairs ` +
      `(${Math.round(performance.now() - t0)} ms); book body ${book.btc_usdt.length} B, pairs body ${pairs.length} B, ack ${post.length} B`,
  );
  return { server, users: all, dir, bodies: { post, book, pairs }, adminToken };
}

export async function initGens(users: BenchUser[]): Promise<void> {
  // Disjoint users per process (a user's resting ids are tracked by one process).
  await Promise.all(
    gens.map((g, i) =>
      g.init(
        users.filter((_, j) => j % gens.length === i),
        i,
      ),
    ),
  );
}

/** What every group runs against (run.ts builds it once). */
export interface GroupContext {
  /** The client kind every run uses (chosen by the select group, or --client). */
  base: { client: ClientKind };
  ex: Exchange;
  bare: ServerProcess;
  /** Throughput ceilings of the bare server by workload ("post", "get-book", "get-pairs"). */
  ceilings: Record<string, number>;
  /** Run at the end, last first. */
  cleanups: (() => unknown)[];
}
