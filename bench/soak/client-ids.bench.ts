/**
 * Soak: does the server's memory stay flat under a long mixed load of orders with client order
 * ids? (src/core/client-ids.ts: client order ids in bounded memory.)
 *
 *   this process ── keep-alive HTTP, open loop at --rate ──▶ the exchange (real server, temp db)
 *        │                                                      (started as bench:load starts it:
 *        └── every 10 s: RSS (/proc), main-thread heap (/metrics)   scripts/node-flags.mjs)
 *
 * Load: --rate order requests a second (default 1,200), each a signed create-order with a new
 * client order id or a cancel: 45% passive limits (1..50 steps off the mid: they rest), 45%
 * cancels of the oldest resting ones (all cancels above 2,000 resting: the books stay about one size), 10% crossing IOC
 * limits (they trade with other users' resting orders and leave nothing behind).
 *
 * Verdict: the largest RSS over minutes 6-10 is at most 10% above the largest over minutes 2-5
 * (for another --minutes, the same fractions of the run: 10%-50% against 50%-100%). Exit 1 if not.
 *
 *   npx tsx bench/soak/client-ids.bench.ts [--minutes 10] [--rate 1200] [--users 64] [--conns 32]
 *     [--env NAME=VALUE ...]   extra environment for the server (e.g. EXCHANGE_OLD_SPACE_MB=default)
 *     [--server-flags="<node flags>"]   (e.g. --server-flags=--trace-gc)
 *     [--server-log <dir>]   the server's output into <dir>/exchange-<pid>.log
 *     [--script <checkout>/src/main.ts]   another version's server (its own node_modules), to compare
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ExchangeClient, ok, signText } from "../../src/client/index.ts";
import { mulberry32 as prng } from "../../test/support/prng.ts";
import { amountOf, type BenchUser, FUNDING, LEVELS, PAIR_PLANS, priceAt } from "../load/common.ts";
import { Pool } from "../load/http-clients.ts";
import { REPO_ROOT, spawnServer, waitHealthy } from "../load/servers.ts";

const { values: flags } = parseArgs({
  options: {
    minutes: { type: "string" },
    rate: { type: "string" },
    users: { type: "string" },
    conns: { type: "string" },
    env: { type: "string", multiple: true },
    "server-flags": { type: "string" },
    script: { type: "string" },
    "server-log": { type: "string" },
  },
});
const MINUTES = Number(flags.minutes ?? 10);
const RATE = Number(flags.rate ?? 1200);
const USERS = Number(flags.users ?? 64);
const CONNS = Number(flags.conns ?? 32);
if (!(MINUTES > 0) || !(RATE > 0) || !Number.isInteger(USERS) || !Number.isInteger(CONNS) || USERS < 2)
  throw new Error("--minutes and --rate must be positive, --users (>= 2) and --conns whole numbers");
const SERVER_ENV: Record<string, string> = {};
for (const pair of flags.env ?? []) {
  const eq = pair.indexOf("=");
  if (eq <= 0) throw new Error(`--env ${pair}: expected NAME=VALUE`);
  SERVER_ENV[pair.slice(0, eq)] = pair.slice(eq + 1);
}
const SAMPLE_MS = 10_000;
/** Resting orders of the run above which the next request is a cancel. */
const RESTING_CAP = 2000;
const TICK_MS = 10;
const DURATION_MS = MINUTES * 60_000;
const MIB = 1024 * 1024;

// ---- the server ------------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "soak-client-ids-"));
const shipped = JSON.parse(readFileSync(join(REPO_ROOT, "data", "config.json"), "utf8")) as {
  pairs: unknown[];
};
writeFileSync(join(dir, "config.json"), JSON.stringify({ pairs: shipped.pairs, users: [] }));
const adminToken = randomBytes(24).toString("hex");
const server = await spawnServer({
  name: "exchange",
  script: flags.script ?? "src/main.ts",
  nodeFlags: (flags["server-flags"] ?? "").split(/\s+/).filter((f) => f !== ""),
  args: [
    "--port",
    "0",
    "--db",
    join(dir, "exchange.db"),
    "--config",
    join(dir, "config.json"),
    "--rate-limit",
    "0",
  ],
  env: { ...SERVER_ENV, ADMIN_TOKEN: adminToken, RATE_LIMIT: "0" },
  logDir: flags["server-log"],
});
const origin = `http://127.0.0.1:${server.port}`;
let stopped = false;
async function cleanUp(): Promise<void> {
  if (stopped) return;
  stopped = true;
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.once("SIGINT", () => void cleanUp().then(() => process.exit(130)));

try {
  await waitHealthy(server.port);
  const admin = new ExchangeClient({ baseUrl: origin, adminToken, timeoutMs: 15_000 });
  const users: BenchUser[] = [];
  for (let i = 0; i < USERS; i++) {
    const u = ok(await admin.createUser(), "admin create user");
    for (const [currency, amount] of Object.entries(FUNDING))
      ok(await admin.deposit(u.uid, currency, amount), "deposit");
    users.push({ uid: u.uid, apiToken: u.apiToken, secretKey: u.secretKey });
  }
  console.log(
    `soak: ${flags.script ?? "src/main.ts"}, ${MINUTES} min at ${RATE} order requests/s, ${USERS} users, ${CONNS} connections; server pid ${server.pid}` +
      (Object.keys(SERVER_ENV).length > 0 ? `, env ${JSON.stringify(SERVER_ENV)}` : ""),
  );
  const verdict = await soak(users);
  console.log(verdict.text);
  process.exitCode = verdict.pass ? 0 : 1;
} finally {
  await cleanUp();
}

// ---- the load ------------------------------------------------------------------------------------

interface Sample {
  t: number;
  rssMib: number;
  heapUsedMib: number;
  heapTotalMib: number;
}

async function soak(users: BenchUser[]): Promise<{ pass: boolean; text: string }> {
  const pool = await Pool.open("raw", "127.0.0.1", server.port, CONNS);
  const rnd = prng(0x50a6);
  const runId = randomBytes(3).toString("hex");
  const resting: { user: number; id: number }[] = [];
  let restingHead = 0;
  let nextCid = 0;
  const counts = { create: 0, cancel: 0, ok: 0, rejected: 0, busy: 0, failed: 0, duplicate: 0 };
  let userCursor = 0;

  const post = (user: number, path: string, body: string, onOk: (answer: Buffer) => void): void => {
    const u = users[user];
    pool.submit(
      {
        method: "POST",
        path,
        headers: {
          "Content-Type": "application/json",
          Authorization: u.apiToken,
          "X-Signature": signText(u.secretKey, body),
        },
        body,
      },
      (status, answer) => {
        if (status === 200) {
          counts.ok++;
          onOk(answer);
        } else if (status === 503) counts.busy++;
        else if (status === 400) {
          counts.rejected++;
          if (answer.includes("CLIENT_ORDER_ID_DUPLICATE")) counts.duplicate++;
        } else counts.failed++;
      },
    );
  };

  const ID = Buffer.from('{"id":', "latin1");
  const RESTING = Buffer.from('"amountUsed":0,', "latin1");
  const create = (): void => {
    const user = userCursor++ % users.length;
    const plan = PAIR_PLANS[Math.floor(rnd() * PAIR_PLANS.length)];
    const buy = rnd() < 0.5;
    const passive = rnd() < 0.45 / 0.55;
    const k = passive ? 1 + Math.floor(rnd() * LEVELS) : 1 + Math.floor(rnd() * 3);
    const price = priceAt(plan, buy === passive ? -k : k);
    const cid = `${runId}-${(nextCid++).toString(36)}`;
    const tif = passive ? "" : ',"timeInForce":"IOC"';
    const body = `{"pairName":"${plan.name}","tradeType":"limit","directionType":"${buy ? "buy" : "sell"}","price":"${price}","amount":"${amountOf(plan)}","clientOrderId":"${cid}"${tif}}`;
    counts.create++;
    post(user, "/1.0/trade/create-order", body, (answer) => {
      if (!passive || !answer.includes(RESTING)) return;
      const at = answer.indexOf(ID) + ID.length;
      resting.push({ user, id: Number.parseInt(answer.toString("latin1", at, at + 20), 10) });
    });
  };
  const cancel = (): boolean => {
    if (restingHead >= resting.length) return false;
    const o = resting[restingHead++];
    if (restingHead > 65_536) {
      resting.splice(0, restingHead);
      restingHead = 0;
    }
    counts.cancel++;
    post(o.user, "/1.0/trade/cancel-order", `{"orderId":${o.id}}`, () => {});
    return true;
  };

  const samples: Sample[] = [];
  const started = performance.now();
  const sample = async (): Promise<void> => {
    const t = (performance.now() - started) / 1000;
    const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
    const metrics = await (await fetch(`${origin}/metrics`)).text();
    const metric = (name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(metrics)?.[1]);
    const s: Sample = {
      t,
      rssMib: rssKb / 1024,
      heapUsedMib: metric("nodejs_heap_size_used_bytes") / MIB,
      heapTotalMib: metric("nodejs_heap_size_total_bytes") / MIB,
    };
    samples.push(s);
    console.log(
      `t=${t.toFixed(0).padStart(4)} s  rss ${s.rssMib.toFixed(0).padStart(4)} MiB  heap used ${s.heapUsedMib.toFixed(0).padStart(4)} / ${s.heapTotalMib.toFixed(0)} MiB  ` +
        `creates ${counts.create} cancels ${counts.cancel} ok ${counts.ok} 400 ${counts.rejected} (duplicate ${counts.duplicate}) 503 ${counts.busy} other ${counts.failed}  ` +
        `resting ${resting.length - restingHead}  ids in memory ${metric("exchange_client_ids_in_memory")}  db checks ${metric("exchange_client_id_db_checks_total")}`,
    );
  };

  // Open loop: each tick sends what the rate owes since the start (a slow tick is made up).
  let sent = 0;
  await new Promise<void>((resolve) => {
    let nextSample = SAMPLE_MS;
    const tick = setInterval(() => {
      const elapsed = performance.now() - started;
      if (elapsed >= DURATION_MS) {
        clearInterval(tick);
        void sample().then(resolve);
        return;
      }
      const owed = Math.floor((elapsed / 1000) * RATE) - sent;
      for (let i = 0; i < owed; i++) {
        // Above RESTING_CAP resting orders cancels come first, so the books stay about one size.
        const r = rnd();
        if ((r >= 0.45 && resting.length - restingHead < RESTING_CAP) || !cancel()) create();
      }
      sent += Math.max(owed, 0);
      if (elapsed >= nextSample) {
        nextSample += SAMPLE_MS;
        void sample();
      }
    }, TICK_MS);
  });
  pool.close();

  // Minutes 2-5 against 6-10, as fractions of the run.
  const total = DURATION_MS / 1000;
  const maxIn = (from: number, to: number) =>
    Math.max(...samples.filter((s) => s.t > from * total && s.t <= to * total + 1).map((s) => s.rssMib));
  const early = maxIn(0.1, 0.5);
  const late = maxIn(0.5, 1);
  const pass = late <= early * 1.1;
  const heap = samples.map((s) => s.heapUsedMib);
  const rss = samples.map((s) => s.rssMib);
  return {
    pass,
    text:
      `RSS ${Math.min(...rss).toFixed(0)}-${Math.max(...rss).toFixed(0)} MiB, heap used ${Math.min(...heap).toFixed(0)}-${Math.max(...heap).toFixed(0)} MiB; ` +
      `${counts.ok} answered 200 of ${counts.create + counts.cancel} sent (${((counts.create + counts.cancel) / total).toFixed(0)}/s)\n` +
      `largest RSS over ${(0.1 * MINUTES).toFixed(1)}-${(0.5 * MINUTES).toFixed(1)} min ${early.toFixed(0)} MiB, over ` +
      `${(0.5 * MINUTES).toFixed(1)}-${MINUTES} min ${late.toFixed(0)} MiB (${(((late - early) / early) * 100).toFixed(1)}%): ` +
      (pass ? "PASS (at most 10% above)" : "FAIL (more than 10% above)"),
  };
}
