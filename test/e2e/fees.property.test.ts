/**
 * The fee invariant (docs/API.md 9) as a property over the real server: for random fee rates on
 * every pair and random order flows (limit and market, both sides, crossing, cancels, deposits
 * and withdrawals), per currency the sum of every user's available + reserved plus the fee
 * account's balance equals deposits − withdrawals, exactly, and no balance is negative.
 *
 * Each run starts an exchange (in this process, ephemeral port, temp SQLite) with a config of
 * random rates, drives it over signed HTTP and reads the balances back over HTTP.
 */
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { startExchange } from "../../src/boot.ts";
import { ExchangeClient } from "../../src/client/index.ts";
import { parseSettings } from "../../src/config/settings.ts";
import { silentLog } from "../../src/util/log.ts";
import { formatDecimal } from "../../src/util/numbers.ts";
import { dec, fmt } from "./decimal.ts";

const PAIRS = [
  {
    name: "btc_usdt",
    priceDecimals: 2,
    amountDecimals: 6,
    minAmount: "0.000001",
    maxAmount: "100",
    maxPrice: "100000",
  },
  {
    name: "eth_usdt",
    priceDecimals: 2,
    amountDecimals: 5,
    minAmount: "0.00001",
    maxAmount: "1000",
    maxPrice: "10000",
  },
  {
    name: "eth_btc",
    priceDecimals: 6,
    amountDecimals: 4,
    minAmount: "0.0001",
    maxAmount: "1000",
    maxPrice: "10",
  },
];
const CURRENCIES = ["btc", "usdt", "eth"];
const START = { btc: "5", usdt: "20000", eth: "50" } as Record<string, string>;
/** Prices around which each pair's orders are drawn (ticks as decimal strings). */
const MID = { btc_usdt: 300, eth_usdt: 20, eth_btc: 0.06 } as Record<string, number>;

const rate = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 1n, max: 100_000n }), // up to 0.1 with 6 decimals
  fc.constantFrom(1_000n, 2_500n, 750n), // round rates
);

const action = fc.record({
  kind: fc.constantFrom("limit", "limit", "limit", "market", "cancel", "withdraw"),
  user: fc.nat({ max: 3 }),
  pair: fc.nat({ max: 2 }),
  buy: fc.boolean(),
  /** Price offset from the pair's mid, in percent (−5..+5): orders cross often. */
  offset: fc.integer({ min: -5, max: 5 }),
  /** Amount as a number of the pair's minimum steps. */
  steps: fc.integer({ min: 1, max: 40_000 }),
});

describe("fee account invariant (property, real server)", () => {
  it("per currency, users' balances plus the fee account equal deposits − withdrawals, exactly", async () => {
    let charged = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(rate, rate), { minLength: 3, maxLength: 3 }),
        fc.array(action, { minLength: 20, maxLength: 80 }),
        async (rates, actions) => {
          const dir = await mkdtemp(join(tmpdir(), "exchange-fees-"));
          const adminToken = randomBytes(16).toString("hex");
          const users = Array.from({ length: 4 }, () => ({
            uid: randomUUID(),
            apiToken: randomBytes(16).toString("hex"),
            secretKey: randomBytes(16).toString("hex"),
            balances: START,
          }));
          const config = {
            pairs: PAIRS.map((p, i) => ({
              ...p,
              makerFee: formatDecimal(rates[i][0], 6),
              takerFee: formatDecimal(rates[i][1], 6),
            })),
            users,
          };
          await writeFile(join(dir, "config.json"), JSON.stringify(config));
          const settings = parseSettings(
            [
              "--port",
              "0",
              "--db",
              join(dir, "x.db"),
              "--config",
              join(dir, "config.json"),
              "--rate-limit",
              "0",
            ],
            { ADMIN_TOKEN: adminToken, SQLITE_SYNCHRONOUS: "NORMAL" },
          );
          const running = await startExchange(settings, silentLog);
          try {
            const admin = new ExchangeClient({ baseUrl: running.url, adminToken });
            const clients = users.map((u) => new ExchangeClient({ baseUrl: running.url, ...u }));
            const totals = new Map(CURRENCIES.map((c) => [c, dec(START[c]) * BigInt(users.length)]));
            const open: number[][] = users.map(() => []);
            // Several actions at once, so commands of different users and pairs interleave.
            for (let i = 0; i < actions.length; i += 4) {
              await Promise.all(
                actions.slice(i, i + 4).map(async (a) => {
                  const c = clients[a.user];
                  const p = PAIRS[a.pair];
                  const step = 10 ** -p.amountDecimals;
                  const amount = (a.steps * step).toFixed(p.amountDecimals);
                  if (a.kind === "cancel") {
                    const id = open[a.user].pop();
                    if (id !== undefined) await c.cancelOrder(id);
                  } else if (a.kind === "withdraw") {
                    const cur = CURRENCIES[a.pair];
                    const r = await admin.withdraw(users[a.user].uid, cur, "0.5");
                    if (r.status === 200) totals.set(cur, totals.get(cur)! - dec("0.5"));
                  } else {
                    const price = (MID[p.name] * (1 + a.offset / 100)).toFixed(p.priceDecimals);
                    const r = await c.createOrder({
                      pairName: p.name,
                      tradeType: a.kind as "limit" | "market",
                      directionType: a.buy ? "buy" : "sell",
                      ...(a.kind === "limit" ? { price } : {}),
                      amount,
                    });
                    // Insufficient funds or no liquidity are fine answers; anything else is not.
                    assert.ok(r.status === 200 || r.status === 400, `${r.status} ${r.text}`);
                    const o = r.body as {
                      id: number;
                      isCancelled: boolean;
                      amountUsed: number;
                      amount: number;
                    };
                    if (r.status === 200 && !o.isCancelled && o.amountUsed < o.amount)
                      open[a.user].push(o.id);
                  }
                }),
              );
            }
            const fees = await admin.fees();
            assert.equal(fees.status, 200);
            const held = new Map(
              (fees.body as { currency: string; balance: string }[]).map((f) => [f.currency, dec(f.balance)]),
            );
            if ([...held.values()].some((v) => v > 0n)) charged++;
            // Exact, not just conserved: the fee account holds exactly the fees the users' trade
            // histories show (a rounded fee would leave the difference with a user instead).
            const shown = new Map(CURRENCIES.map((c) => [c, 0n]));
            for (const c of clients) {
              for (let page = 1; ; page++) {
                const r = await c.userHistory({ page, pageSize: 100 });
                assert.equal(r.status, 200);
                const items = (r.body as { items: { fee: number; feeCurrency: string }[] }).items;
                for (const t of items) shown.set(t.feeCurrency, shown.get(t.feeCurrency)! + dec(t.fee));
                if (items.length < 100) break;
              }
            }
            for (const cur of CURRENCIES)
              assert.equal(fmt(shown.get(cur)!), fmt(held.get(cur)!), `fees in ${cur}`);
            for (const c of clients) {
              // btc_usdt shows btc and usdt, eth_usdt shows eth (and usdt again).
              const seen = new Map<string, { balance: string; reserved: string }>();
              for (const pair of ["btc_usdt", "eth_usdt"]) {
                const r = await c.balances(pair);
                assert.equal(r.status, 200);
                for (const b of r.body as { currency: string; balance: string; reserved: string }[])
                  seen.set(b.currency, b);
              }
              for (const [currency, b] of seen) {
                assert.ok(dec(b.balance) >= 0n && dec(b.reserved) >= 0n, `negative ${currency}`);
                held.set(currency, held.get(currency)! + dec(b.balance) + dec(b.reserved));
              }
            }
            for (const cur of CURRENCIES) {
              assert.equal(fmt(held.get(cur)!), fmt(totals.get(cur)!), `${cur} with rates ${rates}`);
            }
          } finally {
            await running.close();
            await rm(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 6 },
    );
    assert.ok(charged > 0, "some runs charged fees (the property is not vacuous)");
  });
});
