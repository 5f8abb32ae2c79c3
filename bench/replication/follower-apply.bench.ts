/**
 * Question: how much main-thread CPU does a follower spend per command of its leader, and does it
 * grow with the number of open orders?
 *
 *   leader (real process) ──journal rows──▶ follower (real process): commit, then read models
 *      ▲ REST: OPEN resting orders, then FLOW commands one at a time (each its own batch)
 *
 * For each contender and each size in OPEN: a leader with a replication port, OPEN resting orders
 * placed far from the mid (they never trade) while a follower follows, then FLOW commands on the
 * leader one after the other (a crossing pair of orders that trade, or an order and its cancel).
 * The follower's main-thread CPU over the flow
 * (from /proc/<pid>/task/<pid>/stat, from the first command until its reads show the leader's last
 * commit) divided by FLOW. The candidate applies each batch in place (src/replication/
 * follower-apply.ts); a baseline checkout from before rebuilt every read model from its database
 * after each batch. Checksum: after the flow, each pair's book checksum and BBO on the follower
 * equal the leader's.
 *
 *   npx tsx bench/replication/follower-apply.bench.ts [--open 1000,5000,20000] [--flow 300]
 *                                                     [--baseline <checkout>]
 *
 * A baseline checkout needs node_modules beside its src/ (a symlink to this one's does).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { expectOk, limit, TestServer, type TestUser } from "../../test/e2e/harness.ts";

const { values: flags } = parseArgs({
  options: {
    open: { type: "string" },
    flow: { type: "string" },
    baseline: { type: "string" },
  },
});
const OPEN = (flags.open ?? "1000,5000,20000").split(",").map(Number);
const FLOW = Number(flags.flow ?? 300);
const PAIR = "btc_usdt";
const TOKEN = randomBytes(16).toString("hex");
const FUNDS = { usdt: "100000000", btc: "100000", eth: "1000" };
/** Requests in flight while the resting orders are placed. */
const PLACING = 32;

function mainThreadCpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  const parts = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return ((Number(parts[11]) + Number(parts[12])) * 1000) / 100;
}

/** The follower's book shows the leader's last change (every command of the flow changes the book). */
async function caughtUp(leader: TestServer, follower: TestServer): Promise<void> {
  const { seq } = expectOk(await leader.public.orderBook(PAIR), "leader book");
  while (expectOk(await follower.public.orderBook(PAIR), "follower book").seq !== seq)
    await new Promise((r) => setTimeout(r, 20));
}

/** `n` resting orders of `users`: bids below 20,000, asks above 40,000 (the flow trades at 30,000). */
async function placeResting(users: readonly TestUser[], n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PLACING }, async () => {
      while (next < n) {
        const i = next++;
        const u = users[i % users.length];
        const buy = i % 2 === 0;
        const price = buy ? 19_000 - (i % 500) : 41_000 + (i % 500);
        expectOk(
          await u.client.createOrder(limit(PAIR, buy ? "buy" : "sell", String(price), "0.001")),
          "resting order",
        );
      }
    }),
  );
}

interface Result {
  cpuPerCommand: number;
  checksum: string;
}

async function run(entry: string, open: number): Promise<Result> {
  const leader = await TestServer.start({
    entry,
    args: ["--replication-port", "0"],
    env: { REPLICATION_TOKEN: TOKEN },
  });
  let follower: TestServer | null = null;
  try {
    const users = await leader.newUsers(4, FUNDS);
    // Started before the resting orders, it follows them (a start on a copy holding thousands of
    // open orders replays them into its pair workers first, which is not the question).
    follower = await TestServer.start({
      entry,
      args: ["--follow", `127.0.0.1:${leader.replicationPort}`],
      env: { REPLICATION_TOKEN: TOKEN },
    });
    await placeResting(users, open);
    await caughtUp(leader, follower);
    const pid = follower.pid!;
    const cpu0 = mainThreadCpuMs(pid);
    const [a, b] = users;
    // Two commands a step: a trade (a resting sell, then a buy that takes it), or an order and its cancel.
    for (let k = 0; k < FLOW / 2; k++) {
      if (k % 2 === 0) {
        expectOk(await a.client.createOrder(limit(PAIR, "sell", "30000", "0.001")), "maker");
        expectOk(await b.client.createOrder(limit(PAIR, "buy", "30000", "0.001")), "taker");
      } else {
        const o = expectOk(await a.client.createOrder(limit(PAIR, "buy", "25000", "0.001")), "order");
        expectOk(await a.client.cancelOrder(o.id), "cancel");
      }
    }
    await caughtUp(leader, follower);
    const cpu = mainThreadCpuMs(pid) - cpu0;
    const lb = expectOk(await leader.public.orderBook(PAIR), "leader book");
    const fb = expectOk(await follower.public.orderBook(PAIR), "follower book");
    assert.equal(fb.checksum, lb.checksum, "the follower's book equals the leader's");
    assert.deepEqual(
      expectOk(await follower.public.bbo(PAIR), "follower bbo"),
      expectOk(await leader.public.bbo(PAIR), "leader bbo"),
    );
    return { cpuPerCommand: cpu / FLOW, checksum: `${open} open, book ${lb.checksum}` };
  } finally {
    await follower?.close();
    await leader.close();
  }
}

const contenders: [string, string][] = [
  ["candidate (this checkout)", resolve(import.meta.dirname, "../../src/main.ts")],
];
if (flags.baseline !== undefined)
  contenders.push([`baseline (${flags.baseline})`, resolve(flags.baseline, "src/main.ts")]);

console.log(`${FLOW} commands on the leader per run; follower main-thread CPU per command (ms)`);
console.log(`| contender | ${OPEN.map((n) => `${n} open`).join(" | ")} |`);
console.log(`|---|${OPEN.map(() => "---:").join("|")}|`);
const sums = new Map<number, Set<string>>(OPEN.map((n) => [n, new Set()]));
for (const [name, entry] of contenders) {
  const cells: string[] = [];
  for (const open of OPEN) {
    const r = await run(entry, open);
    cells.push(r.cpuPerCommand.toFixed(3));
    sums.get(open)!.add(r.checksum.split(",")[0]);
  }
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}
for (const [open, s] of sums) if (s.size !== 1) throw new Error(`${open} open: runs differ: ${[...s]}`);
