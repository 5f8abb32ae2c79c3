/**
 * Question: how much main-thread CPU does the exchange core spend per create-order, without HTTP?
 * The core as src/boot.ts wires it (Exchange, Ledger, read models, one real pair worker per pair
 * over its rings, the real writer thread on a temp database at synchronous FULL), fed create-order
 * commands by CLIENTS closed-loop clients whose answers are serialised as the REST edge does. The
 * workload is bench:load's (50% resting limits, 30% crossing limits, 20% market orders, three
 * pairs, 128 users).
 *
 *   main thread: R1 ─▶ SEQ ─cmd ring─▶ pair workers ─event ring─▶ R2 ─▶ writer batch
 *        ▲                                                              │ (writer thread, fsync)
 *        └─ answer (serialize.order) ◀─ OUT ◀───────────── ack ◀────────┘
 *
 * Main-thread CPU comes from /proc/self/task/<pid>/stat. With `--baseline <checkout>` the same
 * run is made with that checkout's core (its src/ modules, its workers) in alternating rounds, so
 * a change to the main thread's work can be told from the machine's drift (bench:load's own spread
 * is about ±10%). Run it under `node --cpu-prof` (or `--perf-basic-prof` and perf) to see where the
 * time goes. Checksum: every order answered in every round (the trades made vary by a few per
 * mille with how the clients' turns interleave, and are shown).
 *
 * With `--journal-steps` the core journals every book change with its L3 events, as a leader with a
 * replication port does (ExchangeOptions.journalSteps; a baseline without the option ignores it).
 *
 *   npx tsx bench/core/create-order.bench.ts [--orders 60000] [--clients 64] [--rounds 3]
 *                                            [--baseline <checkout>] [--journal-steps]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { mulberry32 } from "../../test/support/prng.ts";

const { values: flags } = parseArgs({
  options: {
    orders: { type: "string" },
    clients: { type: "string" },
    rounds: { type: "string" },
    baseline: { type: "string" },
    "journal-steps": { type: "boolean" },
  },
});
const ORDERS = Number(flags.orders ?? 60_000);
const CLIENTS = Number(flags.clients ?? 64);
const ROUNDS = Number(flags.rounds ?? (flags.baseline === undefined ? 1 : 3));
const USERS = 128;
const LIMIT = 0;
const MARKET = 1;
const BUY = 0;
const SELL = 1;
const PAIRS = [
  {
    index: 0,
    name: "btc_usdt",
    base: "btc",
    quote: "usdt",
    priceDecimals: 2,
    amountDecimals: 6,
    mid: 10_000_000,
  },
  {
    index: 1,
    name: "eth_usdt",
    base: "eth",
    quote: "usdt",
    priceDecimals: 2,
    amountDecimals: 4,
    mid: 300_000,
  },
  { index: 2, name: "eth_btc", base: "eth", quote: "btc", priceDecimals: 5, amountDecimals: 4, mid: 3_000 },
];
const SCALE = 10;

/** The parts of one checkout's core the run wires together (as src/boot.ts does). */
interface Core {
  // biome-ignore lint/suspicious/noExplicitAny: each checkout's own classes, loaded at run time.
  [name: string]: any;
}

async function loadCore(root: string): Promise<Core> {
  // Each path as this checkout names it first, then as older checkouts (a baseline) named it.
  const m = async (...paths: string[]) =>
    import(resolve(root, paths.find((f) => existsSync(resolve(root, f))) ?? paths[paths.length - 1]));
  return {
    ...(await m("src/db/writer.ts", "src/db/writer.ts")),
    ...(await m("src/core/exchange.ts", "src/exchange.ts")),
    ...(await m("src/entry/answers.ts", "src/http/answers.ts")),
    ...(await m("src/wire/schemas.ts", "src/http/schemas.ts")),
    ...(await m("src/core/ledger.ts", "src/ledger.ts")),
    ...(await m("src/core/read-models/pair-market.ts", "src/core/market-data.ts", "src/market-data.ts")),
    ...(await m("src/pair/pair-client.ts", "src/pair-client.ts")),
  };
}

function mainThreadCpuMs(): number {
  const f = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const parts = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return ((Number(parts[11]) + Number(parts[12])) * 1000) / 100;
}

interface Result {
  ordersPerSecond: number;
  cpuPerOrder: number;
  checksum: string;
  made: string;
}

async function run(core: Core): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), "bench-core-"));
  const writer = await core.DbWriter.start(join(dir, "core.db"));
  const ledger = new core.Ledger(["btc", "eth", "usdt"]);
  const answers = new core.Answers();
  // A checkout whose Exchange takes one options object gets everything in its constructor; an
  // older one takes the ledger and writer and is given the sink after.
  let exchange: Core[string];
  if (core.Exchange.length === 1)
    exchange = new core.Exchange({
      ledger,
      db: writer,
      sink: answers,
      journalSteps: flags["journal-steps"] === true,
    });
  else {
    exchange = new core.Exchange(ledger, writer);
    exchange.sink = answers;
  }
  const channels: { ready: Promise<void>; close(): Promise<number> }[] = [];
  for (const p of PAIRS) {
    const channel = new core.PairChannel({
      pairName: p.name,
      onEvent: core.pairEventHandler(exchange, p.index),
    });
    channels.push(channel);
    exchange.addPair(
      p,
      new core.PairMarket(p.name, p.priceDecimals, p.amountDecimals),
      channel,
      SCALE,
      SCALE,
    );
  }
  await Promise.all(channels.map((c) => c.ready));
  for (let u = 0; u < USERS; u++)
    for (const c of ["btc", "eth", "usdt"]) ledger.deposit(u, ledger.currencyIndex(c), 10n ** 17n);

  // bench:load's mix, seeded: every contender gets the same orders.
  const rand = mulberry32(12345);
  let sent = 0;
  let answered = 0;
  let refused = 0;
  let bytes = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const serializeOrder = core.serialize.order;

  const sendOne = (client: number): void => {
    if (sent >= ORDERS) return;
    sent++;
    const p = PAIRS[Math.floor(rand() * PAIRS.length)];
    const side = rand() < 0.5 ? BUY : SELL;
    const r = rand();
    const step = Math.max(1, Math.round(p.mid / 10_000));
    let type = LIMIT;
    let price = 0;
    if (r < 0.5)
      price =
        side === BUY
          ? p.mid - step * (1 + Math.floor(rand() * 50))
          : p.mid + step * (1 + Math.floor(rand() * 50));
    else if (r < 0.8)
      price =
        side === BUY
          ? p.mid + step * (1 + Math.floor(rand() * 3))
          : p.mid - step * (1 + Math.floor(rand() * 3));
    else type = MARKET;
    const user = (client * 2 + (sent & 1)) % USERS;
    const settle = () => {
      answered++;
      if (answered === ORDERS) done();
      else queueMicrotask(() => sendOne(client));
    };
    const request = answers.order((err: number, order: unknown) => {
      if (err === 0) bytes += serializeOrder(order).length;
      else refused++;
      settle();
    });
    // Every OrderInputs field (a checkout that lacks one ignores it): a missing `session` would
    // read as a session tag.
    const order = {
      type,
      side,
      price,
      amount: 100,
      flags: 0,
      clientOrderId: undefined,
      expiresAt: 0,
      session: 0,
    };
    if (exchange.createOrder(user, p.index, order, request) !== 0) {
      answers.drop(request);
      refused++;
      settle();
    }
  };

  const cpu0 = mainThreadCpuMs();
  const t0 = performance.now();
  for (let c = 0; c < CLIENTS; c++) sendOne(c);
  await finished;
  const ms = performance.now() - t0;
  const cpu = mainThreadCpuMs() - cpu0;
  const checksum = `${answered} answered`;
  const made = `${refused} refused, ${exchange.ids.nextTradeId - 1} trades, ${bytes} answer bytes`;
  await Promise.all(channels.map((c) => c.close()));
  await writer.close();
  rmSync(dir, { recursive: true, force: true });
  return { ordersPerSecond: (ORDERS / ms) * 1000, cpuPerOrder: (cpu * 1000) / ORDERS, checksum, made };
}

const contenders: [string, Core][] = [
  ["candidate (this checkout)", await loadCore(resolve(import.meta.dirname, "../.."))],
];
if (flags.baseline !== undefined)
  contenders.push([`baseline (${flags.baseline})`, await loadCore(flags.baseline)]);

const results = new Map<string, Result[]>(contenders.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++)
  for (const [name, core] of round % 2 === 0 ? contenders : [...contenders].reverse())
    results.get(name)!.push(await run(core));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${ORDERS} orders a round, ${CLIENTS} closed-loop clients, ${ROUNDS} round(s) each`);
console.log(
  "| contender | orders/s (median) | main thread µs CPU per order (median) | rounds (µs) | first round |",
);
console.log("|---|---:|---:|---|---|");
for (const [name] of contenders) {
  const rs = results.get(name)!;
  console.log(
    `| ${name} | ${Math.round(median(rs.map((r) => r.ordersPerSecond)))} | ${median(rs.map((r) => r.cpuPerOrder)).toFixed(1)} | ${rs.map((r) => r.cpuPerOrder.toFixed(1)).join(", ")} | ${rs[0].checksum}, ${rs[0].made} |`,
  );
}
const sums = new Set([...results.values()].flat().map((r) => r.checksum));
if (sums.size !== 1) throw new Error(`checksums differ: ${[...sums].join(" / ")}`);
if (contenders.length === 2) {
  const [a, b] = contenders.map(([name]) => median(results.get(name)!.map((r) => r.cpuPerOrder)));
  console.log(`main thread CPU per order, candidate / baseline: ${(a / b).toFixed(3)}`);
}
