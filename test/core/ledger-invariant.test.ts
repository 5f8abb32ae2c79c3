/**
 * The ledger invariant (docs/API.md 6) under every kind of command of docs/API.md 6, 8, through the
 * real core: a real pair worker behind a 4-slot command ring (so commands queue and overlap), the
 * real writer on a temp file, the real ledger. fast-check generates bursts of limit orders with
 * every time in force and post-only, market orders, cancels, amends and cancel-alls from a few users,
 * sent without waiting for each other.
 *
 * Each run funds its users with small balances or with a treasury's (past 2^63 units, market-buy
 * budgets past 2^53 ticks × lots). Checked at every commit: per currency, available + reserved summed over users equals what was
 * deposited, nothing is negative, both in memory and in what recovery would rebuild from the
 * committed rows (the balance snapshots plus the trades committed after them, migration 005).
 * Checked whenever nothing is in flight: each user's reservation is exactly what its open orders
 * hold (a buy: price × open amount of quote; a sell: open amount of base), an OCO's two open legs
 * one shared hold (docs/API.md 18.1: the waiting stop leg only what it holds beyond its limit leg).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { Exchange, LIMIT, MARKET, pairEventHandler } from "../../src/core/exchange.ts";
import { Ledger } from "../../src/core/ledger.ts";
import { FLAG_POST_ONLY, TIF_FOK, TIF_GIVEN, TIF_GTC, TIF_IOC } from "../../src/core/order-options.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { balanceTotals, loadState } from "../../src/db/recovery.ts";
import { DbWriter } from "../../src/db/writer.ts";
import { Answers } from "../../src/entry/answers.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { applyJournal } from "../../src/protocol/db/journal.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";

const BTC = 0;
const USDT = 1;
/** btc at scale 6 (amountDecimals: 1 unit per lot), usdt at 8 (1 unit per tick × lot). */
const FUNDS: [bigint, bigint] = [10n ** 6n, 10n ** 10n];
/**
 * A treasury's funds (ledger capacity): 10^12 btc and 2^100 usdt units (about 1.3 × 10^22 usdt), so
 * a market buy's budget is far past 2^53 ticks × lots and every total past 2^63.
 */
const WHALE_FUNDS: [bigint, bigint] = [10n ** 18n, 2n ** 100n];
const USERS = 4;

type Cmd =
  | { k: "limit"; user: number; side: 0 | 1; price: number; amount: number; flags: number }
  | { k: "market"; user: number; side: 0 | 1; amount: number }
  | { k: "cancel"; user: number; pick: number }
  | { k: "amend"; user: number; pick: number; price: number; amount: number }
  | { k: "cancelAll"; user: number }
  | { k: "oco"; user: number; side: 0 | 1; price: number; gap: number; stopLimit: boolean; amount: number }
  | { k: "deposit"; user: number; currency: 0 | 1 };

const user = fc.integer({ min: 0, max: USERS - 1 });
const side = fc.constantFrom<0 | 1>(BUY, SELL);
const price = fc.integer({ min: 9_990, max: 10_010 });
const amount = fc.integer({ min: 1, max: 400 });
const flags = fc.constantFrom(
  0,
  TIF_GTC | TIF_GIVEN,
  TIF_IOC | TIF_GIVEN,
  TIF_FOK | TIF_GIVEN,
  FLAG_POST_ONLY,
  FLAG_POST_ONLY | TIF_GTC | TIF_GIVEN,
);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant("limit" as const), user, side, price, amount, flags }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("market" as const), user, side, amount }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("cancel" as const), user, pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant("amend" as const), user, pick: fc.nat(), price, amount }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("cancelAll" as const), user }) },
  // docs/API.md 18.1: the limit leg `gap` ticks on one side of `price`, the stop on the other.
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("oco" as const),
      user,
      side,
      price,
      gap: fc.integer({ min: 1, max: 12 }),
      stopLimit: fc.boolean(),
      amount,
    }),
  },
  // A deposit between balance snapshots writes its row at once, stamped with the trades so far.
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("deposit" as const),
      user,
      currency: fc.constantFrom<0 | 1>(BTC, USDT),
    }),
  },
);

describe("ledger invariant", () => {
  const tmp = tempDir("ledger-invariant");
  after(() => tmp.cleanup());

  it("holds at every commit and reservations equal open orders' holds, over random command bursts", async () => {
    const writer = await DbWriter.start(tmp.dbPath);
    const ledger = new Ledger(["btc", "usdt"]);
    const edge = new Answers();
    const exchange = new Exchange({ ledger, db: writer, sink: edge });
    const channel = new PairChannel({
      pairName: "btc_usdt",
      commandSlots: 4,
      onEvent: pairEventHandler(exchange, 0),
    });
    await channel.ready;
    exchange.addPair(
      { index: 0, name: "btc_usdt", base: "btc", quote: "usdt", priceDecimals: 2, amountDecimals: 6 },
      new PairMarket("btc_usdt", 2, 6),
      channel,
      6,
      8,
    );
    // What recovery would rebuild from what is committed: the journal applied to the tables
    // (src/protocol/db/journal.ts), in a transaction rolled back at once, then the balance snapshots plus the
    // trades committed after them (migration 005).
    const rw = openDatabase(tmp.dbPath);
    const recovered = (): ReturnType<typeof loadState> => {
      rw.exec("BEGIN IMMEDIATE");
      try {
        applyJournal(rw);
        return loadState(rw, ["btc_usdt"], Date.now());
      } finally {
        rw.exec("ROLLBACK");
      }
    };
    const replay = {
      pairsByName: new Map([
        ["btc_usdt", { base: "btc", quote: "usdt", priceDecimals: 2, amountDecimals: 6 }],
      ]),
      currencies: new Map([
        ["btc", { scale: 6 }],
        ["usdt", { scale: 8 }],
      ]),
    };
    const deposited: [bigint, bigint] = [0n, 0n];
    const violations: string[] = [];
    let commits = 0;
    let checking = true;
    writer.beforeSend(() => {
      if (!checking) return;
      // After this batch commits: the ledger as it stands then, and the rows the batch wrote.
      writer.afterCommit(() => {
        commits++;
        for (const v of ledger.check(deposited)) violations.push(`memory: ${v}`);
        const sums = new Map<string, bigint>();
        const state = recovered();
        for (const { c, total } of balanceTotals(state, replay, ledger, -1).values()) {
          const name = c === BTC ? "btc" : "usdt";
          if (total < 0n) violations.push(`recovered ${name} negative`);
          sums.set(name, (sums.get(name) ?? 0n) + total);
        }
        if ((sums.get("btc") ?? 0n) !== deposited[BTC]) violations.push(`recovered btc ${sums.get("btc")}`);
        if ((sums.get("usdt") ?? 0n) !== deposited[USDT])
          violations.push(`recovered usdt ${sums.get("usdt")}`);
      });
    });

    let nextUser = 0;
    let ocoPairsSeen = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(FUNDS, WHALE_FUNDS),
          fc.array(fc.array(cmd, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 }),
          async (funds, bursts) => {
            // Fresh users for each run; every one funded in both currencies.
            const users = Array.from({ length: USERS }, () => nextUser++);
            for (const u of users) {
              ledger.deposit(u, BTC, funds[BTC]);
              ledger.deposit(u, USDT, funds[USDT]);
              deposited[BTC] += funds[BTC];
              deposited[USDT] += funds[USDT];
              // A deposit writes its balance rows at once, as Admin.deposit does.
              writer.balance(u, "btc", ledger.available(u, BTC), ledger.reserved(u, BTC));
              writer.balance(u, "usdt", ledger.available(u, USDT), ledger.reserved(u, USDT));
            }
            const ids: number[][] = users.map(() => []);
            for (const burst of bursts) {
              const answers: Promise<unknown>[] = [];
              for (const c of burst) {
                const u = users[c.user];
                answers.push(
                  new Promise<void>((resolve) => {
                    const done = () => resolve();
                    // 0: accepted (the answer comes by request id); else refused now.
                    let code = 0;
                    let request = 0;
                    if (c.k === "deposit") {
                      ledger.deposit(u, c.currency, funds[c.currency]);
                      deposited[c.currency] += funds[c.currency];
                      const name = c.currency === BTC ? "btc" : "usdt";
                      writer.balance(
                        u,
                        name,
                        ledger.available(u, c.currency),
                        ledger.reserved(u, c.currency),
                      );
                      return done();
                    }
                    if (c.k === "limit" || c.k === "market") {
                      request = edge.order((err, order) => {
                        if (err === 0) ids[c.user].push(order!.id);
                        done();
                      });
                      code = exchange.createOrder(
                        u,
                        0,
                        {
                          type: c.k === "limit" ? LIMIT : MARKET,
                          side: c.side,
                          price: c.k === "limit" ? c.price : 0,
                          amount: c.amount,
                          flags: c.k === "limit" ? c.flags : 0,
                          clientOrderId: undefined,
                          expiresAt: 0,
                          session: 0,
                        },
                        request,
                      );
                    } else if (c.k === "oco") {
                      request = edge.order((err, limit, stop) => {
                        if (err === 0) ids[c.user].push(limit!.id, stop!.id);
                        done();
                      });
                      const sell = c.side === SELL;
                      const stopPrice = sell ? c.price - c.gap : c.price + c.gap;
                      code = exchange.createOco(
                        u,
                        0,
                        {
                          side: c.side,
                          price: sell ? c.price + c.gap : c.price - c.gap,
                          amount: c.amount,
                          stopPrice,
                          stopLimitPrice: c.stopLimit ? stopPrice : 0,
                          clientOrderId: undefined,
                          expiresAt: 0,
                          session: 0,
                        },
                        request,
                      );
                    } else if (c.k === "cancel" || c.k === "amend") {
                      const mine = ids[c.user];
                      if (mine.length === 0) return done();
                      const id = mine[c.pick % mine.length];
                      if (c.k === "cancel") {
                        request = edge.cancel(done);
                        code = exchange.cancelOrder(u, id, request);
                      } else {
                        const o = exchange.ownOpenOrder(u, id);
                        if (o === undefined) return done();
                        request = edge.order(done);
                        code = exchange.amendOrder(o, c.price, c.amount, request);
                      }
                    } else {
                      request = edge.cancelAll(done);
                      code = exchange.cancelAll(u, 0, request);
                    }
                    if (code !== 0) {
                      // Refused at once, nothing changed (funds, not above executed, ...): never busy.
                      edge.drop(request);
                      assert.notEqual(code, Code.BUSY);
                      done();
                    }
                  }),
                );
              }
              await Promise.all(answers);
              await writer.flush();
              assert.equal(exchange.inFlight(0), 0);
              // Quiet: each reservation is exactly what the open orders hold.
              const held = new Map<string, bigint>();
              const own = (o: { side: number; price: number; amount: number; used: number }) => {
                const left = BigInt(o.amount - o.used);
                return o.side === BUY ? BigInt(o.price) * left : left;
              };
              let ocos = 0;
              for (const o of exchange.open.values()) {
                const key = `${o.user}:${o.side === BUY ? USDT : BTC}`;
                let hold = own(o);
                // A waiting OCO stop leg beside its open limit leg: the shared hold's rest.
                const limitLeg =
                  o.ocoId !== o.id && o.triggerMicro === 0 ? exchange.open.get(o.ocoId) : undefined;
                if (o.ocoId !== 0 && limitLeg !== undefined) {
                  ocos++;
                  hold = hold > own(limitLeg) ? hold - own(limitLeg) : 0n;
                }
                held.set(key, (held.get(key) ?? 0n) + hold);
              }
              ocoPairsSeen += ocos;
              for (const u of users) {
                for (const c of [BTC, USDT]) {
                  assert.equal(ledger.reserved(u, c), held.get(`${u}:${c}`) ?? 0n, `user ${u} currency ${c}`);
                }
              }
              assert.deepEqual(violations, []);
            }
            // Leave an empty book for the next run: cancel-all must find every open order of a user.
            for (const u of users)
              await new Promise((r) => assert.equal(exchange.cancelAll(u, 0, edge.cancelAll(r)), 0));
            await writer.flush();
            for (const o of exchange.open.values())
              assert.ok(!users.includes(o.user), `order ${o.id} left open`);
          },
        ),
        { numRuns: 25, seed: 20261123 },
      );
      assert.ok(commits > 25, `${commits} commits checked`);
      assert.ok(ocoPairsSeen > 10, `${ocoPairsSeen} open OCO pairs checked`);
      assert.deepEqual(violations, []);
    } finally {
      checking = false;
      await writer.flush();
      rw.close();
      await channel.close();
      await writer.close();
    }
  });
});
