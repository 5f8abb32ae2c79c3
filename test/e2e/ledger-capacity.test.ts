/**
 * Ledger capacity end to end: with fee rates of 6 decimals on every pair (every currency's ledger
 * scale grown by 6: btc 16, usdt 14, eth 11 decimals), accounts hold 10^12 whole units of every
 * currency and far more, trade with each other at the pairs' largest price and amount (a market buy
 * whose budget is past 2^53 ticks × lots included), and keep every value exact across a graceful
 * restart and a kill -9. A deposit past the ledger's bound (2^127 − 1 units of the currency's
 * scale, config.ts MAX_LEDGER_VALUE) is refused with a 400; one exactly at it is taken.
 */

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { FEE_ACCOUNT_UID } from "../../src/config/ledger-bounds.ts";
import { dec, fmt, mul } from "./decimal.ts";
import {
  CURRENCIES,
  expectError,
  expectOk,
  limit,
  market,
  placeLimit,
  TestServer,
  type TestUser,
} from "./harness.ts";

const FEES = {
  btc_usdt: { makerFee: "0.000125", takerFee: "0.000001" },
  eth_usdt: { makerFee: "0.000007", takerFee: "0.000125" },
  eth_btc: { makerFee: "0.000125", takerFee: "0.000003" },
};
/** The ledger scales these rates give (README "fees"; config.ts ledgerScale). */
const SCALES: Record<string, number> = { btc: 16, usdt: 14, eth: 11 };
const TRILLION = "1000000000000";
/** 21 integer digits (the most a decimal field takes) and every decimal of the scale. */
const HUGE: Record<string, string> = {
  btc: "999999999999999999999.9999999999999999",
  usdt: "999999999999999999999.99999999999999",
  eth: "999999999999999999999.99999999999",
};
/** 2^127 − 1 ledger units of btc at its scale of 16, as a decimal. */
const BTC_BOUND = "17014118346046923173168.7303715884105727";

/** Every balance (available, reserved) of these users and the fee account, as decimal text. */
async function ledgerState(server: TestServer, users: readonly TestUser[]) {
  const out: Record<string, unknown> = {};
  for (const [i, user] of users.entries()) out[`user${i}`] = await server.balanceTable(user);
  const fees = expectOk(await server.admin.fees(), "admin fees");
  out.fees = Object.fromEntries(fees.map((f) => [f.currency, fmt(dec(f.balance))]));
  return out;
}

/** docs/API.md 6 with fees: per currency, every account's total equals deposits − withdrawals. */
async function assertConserved(server: TestServer, users: readonly TestUser[]): Promise<void> {
  const fees = new Map(
    expectOk(await server.admin.fees(), "admin fees").map((f) => [f.currency, dec(f.balance)]),
  );
  const totals = new Map<string, bigint>(CURRENCIES.map((c) => [c, fees.get(c) ?? 0n]));
  for (const user of users) {
    for (const [c, b] of await server.balances(user)) {
      assert.ok(b.available >= 0n && b.reserved >= 0n, `${c} of ${user.uid} is negative`);
      totals.set(c, totals.get(c)! + b.available + b.reserved);
    }
  }
  for (const c of CURRENCIES) {
    assert.equal(
      fmt(totals.get(c)!),
      fmt(server.totals.get(c)!),
      `${c}: accounts against deposits − withdrawals`,
    );
  }
}

describe("ledger capacity: 10^12 whole units and more at 6 fee decimals", () => {
  let server: TestServer;
  let whale: TestUser;
  let treasury: TestUser;

  before(async () => {
    server = await TestServer.start({ pairFees: FEES });
  });
  after(async () => {
    await server?.close();
  });

  it("credits 10^12 whole units and 21-digit balances of every currency, each read back exactly", async () => {
    whale = await server.newUser({ btc: TRILLION, usdt: TRILLION, eth: TRILLION });
    treasury = await server.newUser(HUGE);
    assert.deepEqual(await server.balanceTable(whale), {
      btc: [TRILLION, "0"],
      usdt: [TRILLION, "0"],
      eth: [TRILLION, "0"],
    });
    assert.deepEqual(await server.balanceTable(treasury), {
      btc: [HUGE.btc, "0"],
      usdt: [HUGE.usdt, "0"],
      eth: [HUGE.eth, "0"],
    });
    for (const c of CURRENCIES) assert.equal(HUGE[c].split(".")[1].length, SCALES[c]);
    await assertConserved(server, [whale, treasury]);
  });

  it("trades at the largest price and amount between two such accounts, fees exact", async () => {
    // A resting sell of the pair's largest amount at its largest price, bought by a market buy whose
    // budget (the treasury's whole usdt, 10^29 ticks × lots) is far past 2^53.
    const sell = await placeLimit(whale, "btc_usdt", "sell", "9999999.99", "10000");
    const bought = expectOk(
      await treasury.client.createOrder(market("btc_usdt", "buy", "10000")),
      "market buy",
    );
    assert.equal(bought.amountUsed, 10000);
    const cost = mul(dec("9999999.99"), dec("10000")); // 99,999,999,900 usdt
    const btc = dec("10000");
    // The whale is the maker (0.000125 of the usdt it receives), the treasury the taker (0.000001 of the btc).
    const makerFee = mul(cost, dec(FEES.btc_usdt.makerFee));
    const takerFee = mul(btc, dec(FEES.btc_usdt.takerFee));

    // A resting limit buy that holds about 10^11 usdt, half filled by the treasury's sell.
    const buy = await placeLimit(whale, "eth_usdt", "buy", "999999.99", "100000");
    const hold = mul(dec("999999.99"), dec("100000"));
    expectOk(await treasury.client.createOrder(limit("eth_usdt", "sell", "999999.99", "40000")), "eth sell");
    const ethCost = mul(dec("999999.99"), dec("40000"));
    const ethMakerFee = mul(dec("40000"), dec(FEES.eth_usdt.makerFee)); // the whale buys eth as maker
    const ethTakerFee = mul(ethCost, dec(FEES.eth_usdt.takerFee)); // the treasury sells as taker

    // eth_btc at its largest price and amount: the treasury's limit buy takes the whale's sell.
    await placeLimit(whale, "eth_btc", "sell", "100", "100000");
    expectOk(await treasury.client.createOrder(limit("eth_btc", "buy", "100", "100000")), "eth_btc buy");
    const btcCost = mul(dec("100"), dec("100000"));
    const ebMakerFee = mul(btcCost, dec(FEES.eth_btc.makerFee)); // the whale sells as maker
    const ebTakerFee = mul(dec("100000"), dec(FEES.eth_btc.takerFee)); // the treasury buys as taker

    const one = dec(TRILLION);
    assert.deepEqual(await server.balanceTable(whale), {
      btc: [fmt(one - btc + btcCost - ebMakerFee), "0"],
      usdt: [fmt(one + cost - makerFee - hold), fmt(hold - ethCost)],
      eth: [fmt(one + dec("40000") - ethMakerFee - dec("100000")), "0"],
    });
    assert.deepEqual(await server.balanceTable(treasury), {
      btc: [fmt(dec(HUGE.btc) + btc - takerFee - btcCost), "0"],
      usdt: [fmt(dec(HUGE.usdt) - cost + ethCost - ethTakerFee), "0"],
      eth: [fmt(dec(HUGE.eth) - dec("40000") + dec("100000") - ebTakerFee), "0"],
    });
    const fees = expectOk(await server.admin.fees(), "admin fees");
    assert.deepEqual(Object.fromEntries(fees.map((f) => [f.currency, fmt(dec(f.balance))])), {
      btc: fmt(takerFee + ebMakerFee),
      usdt: fmt(makerFee + ethTakerFee),
      eth: fmt(ethMakerFee + ebTakerFee),
    });
    assert.equal(sell.id < buy.id, true);
    await assertConserved(server, [whale, treasury]);
  });

  it("keeps every balance, hold and fee exact across a graceful restart and a kill -9", async () => {
    const before = await ledgerState(server, [whale, treasury]);
    await server.restart(); // SIGTERM, exit 0 checked; the start-up ledger check passes
    assert.deepEqual(await ledgerState(server, [whale, treasury]), before);

    // More trades after the last balance snapshot, then kill -9: recovery replays them (migration 005).
    await placeLimit(treasury, "btc_usdt", "sell", "9999999.99", "5000");
    expectOk(await whale.client.createOrder(market("btc_usdt", "buy", "5000")), "whale market buy");
    const acknowledged = await ledgerState(server, [whale, treasury]);
    await server.kill();
    await server.restart();
    assert.deepEqual(await ledgerState(server, [whale, treasury]), acknowledged);
    await assertConserved(server, [whale, treasury]);
  });

  it("takes a deposit up to the ledger's bound and refuses one past it with a 400", async () => {
    const holder = await server.newUser();
    const other = await server.newUser();
    // Every btc out, fees included, so that the holder's balance becomes the whole total.
    for (const user of [whale, treasury]) {
      const { available } = (await server.balances(user)).get("btc")!;
      expectOk(await server.withdraw(user, "btc", fmt(available)), "withdraw btc");
    }
    const feeBtc = expectOk(await server.admin.fees(), "admin fees").find((f) => f.currency === "btc")!;
    assert.notEqual(feeBtc.balance, "0", "the trades above charged btc fees");
    expectOk(await server.admin.withdraw(FEE_ACCOUNT_UID, "btc", feeBtc.balance), "withdraw fees");
    server.totals.set("btc", server.totals.get("btc")! - dec(feeBtc.balance));
    // Fill btc's total up to 2^127 − 1 units, in deposits of at most 21 digits.
    let left = dec(BTC_BOUND) - server.totals.get("btc")!;
    const chunk = dec("999999999999999999999");
    while (left > chunk) {
      await server.deposit(holder, "btc", fmt(chunk));
      left -= chunk;
    }
    await server.deposit(holder, "btc", fmt(left));
    assert.equal(fmt(server.totals.get("btc")!), BTC_BOUND);

    assert.deepEqual((await server.balanceTable(holder)).btc, [BTC_BOUND, "0"]);

    // One unit more: for the holder its balance would pass the bound, for anyone else the total.
    const unit = "0.0000000000000001";
    const balance = await server.admin.deposit(holder.uid, "btc", unit);
    expectError(balance, 400, "amount", "deposit past the balance");
    assert.deepEqual((balance.body as { codes: unknown }).codes, { amount: ["BALANCE_TOO_LARGE"] });
    const total = await server.admin.deposit(other.uid, "btc", unit);
    expectError(total, 400, "amount", "deposit past the total");
    assert.deepEqual((total.body as { codes: unknown }).codes, { amount: ["LEDGER_TOTAL_TOO_LARGE"] });
    assert.deepEqual((await server.balanceTable(other)).btc, ["0", "0"]);

    // Withdrawn, the room is there again; the total at the bound survives a restart.
    expectOk(await server.withdraw(holder, "btc", unit), "withdraw");
    await server.deposit(other, "btc", unit);
    await server.restart();
    await assertConserved(server, [whale, treasury, holder, other]);
    assert.deepEqual((await server.balanceTable(other)).btc, [unit, "0"]);
  });

  it("refuses to start when a new config user would take a currency's total past the bound", async () => {
    // btc's total stands at the bound (the test above); a config user with 1 more unit cannot be credited.
    const config = JSON.parse(await readFile(server.configPath, "utf8")) as { users: object[] };
    config.users.push({
      uid: randomUUID(),
      apiToken: randomBytes(16).toString("hex"),
      secretKey: randomBytes(32).toString("hex"),
      balances: { btc: "0.0000000000000001" },
    });
    await writeFile(server.configPath, JSON.stringify(config));
    await assert.rejects(
      server.restart(),
      /balances\.btc would take the btc total of all accounts past the ledger's bound of 2\^127 - 1 units/,
    );
  });
});
