/**
 * The time to replay a user's executions on logon (docs/API.md 16): a real server, one maker with
 * `--executions` execution numbers (resting sells, a third of them filled by a taker: each fill is
 * the maker's trade and its order's change), then `session.logon` with `resumeFrom` 0 and with the
 * middle number, timed from the logon frame to the `resumed` event over a real WebSocket, `--rounds`
 * times each (the median is the figure). Beside it, `GET /trade/executions` read through in pages
 * of 1000, the pull a client without a session does.
 *
 *   npx tsx bench/session/resume.bench.ts [--executions 100000] [--rounds 3]
 */
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { type CreateOrderRequest, ExchangeClient, ok } from "../../src/client/index.ts";
import { REPO_ROOT, spawnServer, waitHealthy } from "../load/servers.ts";
import { pool } from "../load/setup.ts";

const { values } = parseArgs({
  options: { executions: { type: "string", default: "100000" }, rounds: { type: "string", default: "3" } },
});
const EXECUTIONS = Number(values.executions);
const ROUNDS = Number(values.rounds);
/** Maker orders: each rests (1 number); a third are filled (2 numbers more each). */
const ORDERS = Math.ceil((EXECUTIONS * 3) / 5);
const FILLS = Math.floor(ORDERS / 3);
const AMOUNT = "0.001";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Logs on with `resumeFrom` and times the replay: frames, bytes and ms to the `resumed` event. */
function replay(
  port: number,
  user: { apiToken: string; secretKey: string },
  resumeFrom: number,
): Promise<{ ms: number; frames: number; bytes: number; cut: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/session`);
    let t0 = 0;
    let frames = 0;
    let bytes = 0;
    ws.on("error", reject);
    ws.on("message", (data) => {
      const text = String(data);
      const f = JSON.parse(text) as { event?: string; challenge?: string; execSeq?: number; status?: number };
      if (f.event === "hello") {
        const signature = createHmac("sha256", user.secretKey).update(f.challenge!).digest("hex");
        t0 = performance.now();
        ws.send(
          JSON.stringify({
            id: 1,
            method: "session.logon",
            params: { apiToken: user.apiToken, signature, resumeFrom },
          }),
        );
        return;
      }
      if (f.status !== undefined && f.status !== 200) reject(new Error(`logon refused: ${text}`));
      if (f.event === "order" || f.event === "trade") {
        frames++;
        bytes += text.length;
      }
      if (f.event === "resumed") {
        const ms = performance.now() - t0;
        ws.close();
        resolve({ ms, frames, bytes, cut: f.execSeq! });
      }
    });
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-resume-"));
  // The shipped pairs (data/config.json), no users.
  const shipped = JSON.parse(readFileSync(join(REPO_ROOT, "data", "config.json"), "utf8")) as {
    pairs: unknown[];
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify({ pairs: shipped.pairs, users: [] }));
  const adminToken = randomBytes(24).toString("hex");
  const server = await spawnServer({
    name: "resume",
    script: "src/main.ts",
    args: [
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--db",
      join(dir, "exchange.db"),
      "--config",
      join(dir, "config.json"),
    ],
    env: { ADMIN_TOKEN: adminToken, RATE_LIMIT: "0" },
  });
  try {
    await waitHealthy(server.port);
    const origin = `http://127.0.0.1:${server.port}`;
    const admin = new ExchangeClient({ baseUrl: origin, adminToken, timeoutMs: 60_000 });
    const users: { uid: string; apiToken: string; secretKey: string }[] = [];
    for (const funds of [{ btc: "1000" }, { usdt: "100000000" }]) {
      const u = ok(await admin.createUser(), "create user");
      for (const [c, a] of Object.entries(funds)) ok(await admin.deposit(u.uid, c, a), "deposit");
      users.push(u);
    }
    const [maker, taker] = users;
    const client = (u: (typeof users)[number]) =>
      new ExchangeClient({
        baseUrl: origin,
        apiToken: u.apiToken,
        secretKey: u.secretKey,
        timeoutMs: 60_000,
      });
    const makerClient = client(maker);
    const takerClient = client(taker);
    const t0 = performance.now();
    // Resting sells at prices 10000.00, 10000.01, ...; each buy lifts exactly one of them (the
    // lowest left, whatever the order they arrive in). 20 per create-orders call, 8 calls at a time.
    const place = (c: ExchangeClient, directionType: "buy" | "sell", n: number) => {
      const batches: CreateOrderRequest[][] = [];
      for (let i = 0; i < n; i += 20)
        batches.push(
          Array.from({ length: Math.min(20, n - i) }, (_, j) => ({
            pairName: "btc_usdt",
            tradeType: "limit" as const,
            directionType,
            price: (10000 + (i + j) / 100).toFixed(2),
            amount: AMOUNT,
          })),
        );
      return pool(batches, 8, async (orders) => {
        ok(await c.createOrders(orders), `${directionType} orders`);
      });
    };
    await place(makerClient, "sell", ORDERS);
    await place(takerClient, "buy", FILLS);
    const last = ok(await makerClient.executions({ limit: 1 }), "executions").lastExecSeq;
    console.log(
      `maker: ${ORDERS} orders, ${FILLS} filled: execution numbers 1..${last} (${Math.round(performance.now() - t0)} ms to build)`,
    );

    const rows: string[] = [];
    for (const from of [0, Math.floor(last / 2)]) {
      const runs = [];
      for (let r = 0; r < ROUNDS; r++) runs.push(await replay(server.port, maker, from));
      const ms = median(runs.map((x) => x.ms));
      const { frames, bytes } = runs[0];
      rows.push(
        `| session.logon resumeFrom ${from} | ${last - from} | ${frames} | ${(bytes / 1048576).toFixed(1)} | ${ms.toFixed(0)} | ${runs.map((x) => x.ms.toFixed(0)).join(", ")} |`,
      );
    }
    const pulls: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const p0 = performance.now();
      let after = 0;
      for (;;) {
        const page = ok(await makerClient.executions({ after, limit: 1000 }), "executions page");
        if (page.items.length === 0) break;
        after = page.items[page.items.length - 1].execSeq;
        if (after >= page.lastExecSeq) break;
      }
      pulls.push(performance.now() - p0);
    }
    rows.push(
      `| GET /trade/executions, pages of 1000 | ${last} | – | – | ${median(pulls).toFixed(0)} | ${pulls.map((x) => x.toFixed(0)).join(", ")} |`,
    );
    console.log("\n| replay | numbers after the point | reports | MiB | median ms | rounds ms |");
    console.log("|---|---:|---:|---:|---:|---|");
    for (const row of rows) console.log(row);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
