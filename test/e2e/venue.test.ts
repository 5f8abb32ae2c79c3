/**
 * docs/API.md 9 on the real server (a child process, through HTTP and WebSocket): venue data
 * (`/time`, `/info`), machine-readable error codes, fees (settlement, fee account, user history on
 * REST and stream, restart), the book sequence across a restart, and the rate-limit headers.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { ErrorBody, OrderBook, UserTrade } from "../../src/client/index.ts";
import { StreamRejected } from "../../src/client/stream.ts";
import { ERRORS_DOC_PATH } from "../../src/errors/doc.ts";
import { sleepUntil } from "../wait.ts";
import { dec, fmt, mul } from "./decimal.ts";
import { expectError, expectOk, limit, PAIRS, TestServer, type TestUser } from "./harness.ts";

const FEE_UID = "00000000-0000-0000-0000-000000000000";
const FEES = {
  btc_usdt: { makerFee: "0.001", takerFee: "0.002" },
  eth_btc: { makerFee: "0.0005" },
};
const DOC = readFileSync(ERRORS_DOC_PATH, "utf8");

/** `errors` and `codes` hold the same fields with one upper-snake code per message, all documented. */
function assertCodes(body: unknown, what: string): Record<string, string[]> {
  const b = body as ErrorBody;
  assert.ok(
    b !== null && typeof b === "object" && b.codes !== undefined,
    `${what}: no codes in ${JSON.stringify(b)}`,
  );
  assert.deepEqual(
    Object.keys(b.codes),
    Object.keys(b.errors),
    `${what}: codes and errors name the same fields`,
  );
  for (const [field, messages] of Object.entries(b.errors)) {
    assert.equal(b.codes[field].length, messages.length, `${what}: one code per message of ${field}`);
    for (const code of b.codes[field]) {
      assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, what);
      assert.ok(DOC.includes(`| \`${code}\` |`), `${what}: ${code} is in docs/API-errors.md`);
    }
  }
  return b.codes;
}

describe("venue data, codes and fees (docs/API.md 9)", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ pairFees: FEES });
  });
  after(async () => {
    await server?.close();
  });

  it("answers GET /time with the server clock in Unix ms", async () => {
    const before = Date.now();
    const res = await server.public.time();
    const after = Date.now();
    const body = expectOk(res);
    assert.deepEqual(Object.keys(body), ["serverTime"]);
    assert.ok(Number.isInteger(body.serverTime));
    // Same machine: the server's clock reads between the two client readings (ms resolution).
    assert.ok(
      body.serverTime >= before && body.serverTime <= after,
      `${before} <= ${body.serverTime} <= ${after}`,
    );
    assert.equal(res.headers.get("x-ratelimit-limit"), null, "no limit headers when limiting is off");
  });

  it("answers GET /info with every pair's rules and fees from the config, in config order", async () => {
    const body = expectOk(await server.public.info());
    assert.ok(Number.isInteger(body.serverTime));
    const fees = FEES as Record<string, { makerFee?: string; takerFee?: string }>;
    assert.deepEqual(
      body.pairs,
      PAIRS.map((p) => ({
        name: p.name,
        base: p.base,
        quote: p.quote,
        priceDecimals: p.priceDecimals,
        amountDecimals: p.amountDecimals,
        tickSize: fmt(10n ** BigInt(18 - p.priceDecimals)),
        stepSize: fmt(10n ** BigInt(18 - p.amountDecimals)),
        minAmount: p.minAmount,
        maxAmount: p.maxAmount,
        maxPrice: p.maxPrice,
        minNotional: "0", // docs/API.md 20.5: not set
        makerFee: fees[p.name]?.makerFee ?? "0",
        takerFee: fees[p.name]?.takerFee ?? "0",
        status: "trading",
      })),
    );
    assert.equal(body.pairs[0].tickSize, "0.01");
    assert.equal(body.pairs[0].stepSize, "0.000001");
  });

  it("puts one code per message beside every error, the same in every language", async () => {
    const u = await server.newUser({ usdt: "10" });
    const bad = { pairName: "btc_usdt", tradeType: "limit", directionType: "up", price: "0", amount: "-1" };
    const res = await u.client.createOrder(bad as never);
    expectError(res, 400, "directionType", "multi-field 400", false);
    const codes = assertCodes(res.body, "multi-field 400");
    assert.deepEqual(codes, {
      directionType: ["DIRECTION_INVALID"],
      amount: ["AMOUNT_NEGATIVE"],
      price: ["PRICE_ZERO"],
    });
    const ru = await server.client(u, { lang: "ru" }).createOrder(bad as never);
    assert.deepEqual(assertCodes(ru.body, "ru 400"), codes, "codes do not depend on the language");
    assert.notDeepEqual((ru.body as ErrorBody).errors, (res.body as ErrorBody).errors);

    assert.deepEqual(
      assertCodes((await u.client.createOrder(limit("btc_usdt", "buy", "100", "1"))).body, "funds"),
      {
        amount: ["INSUFFICIENT_FUNDS"],
      },
    );
    const missing = await server.public.raw("GET", "/1.0/nowhere");
    assert.equal(missing.status, 404);
    assert.deepEqual(assertCodes(missing.body, "404"), { path: ["UNKNOWN_PATH"] });
    const unauth = await server.public.raw("GET", "/1.0/trade/pairs/user-history");
    assert.equal(unauth.status, 401);
    assertCodes(unauth.body, "401");
    assert.deepEqual(
      assertCodes((await server.public.raw("GET", "/1.0/trade/pairs/nope/orders")).body, "pair"),
      {
        pairName: ["PAIR_UNKNOWN_IN_PATH"],
      },
    );

    // Stream upgrades refused with 400 and 401 carry codes too.
    for (const [streams, status] of [
      [["orders:nope"], 400],
      [[`user_orders:${u.uid}`], 401],
    ] as const) {
      const err = await server.stream(streams).then(
        (c) => {
          void c.close();
          return null;
        },
        (e: unknown) => e,
      );
      assert.ok(err instanceof StreamRejected, `upgrade ${streams} refused`);
      assert.equal(err.status, status);
      assertCodes(JSON.parse(err.text), `upgrade ${streams}`);
    }
  });

  describe("fees", () => {
    let seller: TestUser;
    let buyer: TestUser;
    let ethBuyer: TestUser;
    let ethSeller: TestUser;

    const feeTable = async () =>
      Object.fromEntries(expectOk(await server.admin.fees()).map((f) => [f.currency, f.balance]));

    before(async () => {
      seller = await server.newUser({ btc: "1" });
      buyer = await server.newUser({ usdt: "10000" });
      ethBuyer = await server.newUser({ btc: "1" });
      ethSeller = await server.newUser({ eth: "2" });
    });

    it("charges the maker and the taker their rates on what each receives, into the fee account", async () => {
      const sellerStream = await server.stream([`user_history:${seller.uid}`], seller);
      const buyerStream = await server.stream([`user_history:${buyer.uid}`], buyer);
      try {
        // seller rests (maker 0.1%), buyer takes (taker 0.2%): 0.5 btc for 10 000 usdt.
        expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "20000", "0.5")));
        const taken = expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "20000", "0.5")));
        assert.equal(taken.amountUsed, 0.5);
        assert.deepEqual(await server.balanceTable(buyer), {
          btc: ["0.499", "0"], // 0.5 − 0.5 × 0.002
          usdt: ["0", "0"],
          eth: ["0", "0"],
        });
        assert.deepEqual(await server.balanceTable(seller), {
          btc: ["0.5", "0"],
          usdt: ["9990", "0"], // 10 000 − 10 000 × 0.001
          eth: ["0", "0"],
        });
        assert.deepEqual(await feeTable(), { btc: "0.001", usdt: "10", eth: "0" });

        const [bt] = expectOk(await buyer.client.userHistory()).items;
        const [st] = expectOk(await seller.client.userHistory()).items;
        assert.equal(bt.fee, 0.001);
        assert.equal(bt.feeCurrency, "btc");
        assert.equal(st.fee, 10);
        assert.equal(st.feeCurrency, "usdt");
        // The stream sends the same records as REST.
        assert.deepEqual((await buyerStream.next()).data, bt);
        assert.deepEqual((await sellerStream.next()).data, st);
      } finally {
        await sellerStream.close();
        await buyerStream.close();
      }
    });

    it("keeps fees exact where the rate has more decimals than the amount (ledger scale grows)", async () => {
      // eth_btc: the resting buyer is the maker (0.05%), the arriving seller the taker (no fee).
      expectOk(await ethBuyer.client.createOrder(limit("eth_btc", "buy", "0.054321", "1.2345")));
      expectOk(await ethSeller.client.createOrder(limit("eth_btc", "sell", "0.054321", "1.2345")));
      const cost = mul(dec("0.054321"), dec("1.2345")); // 0.0670592745 btc
      const ethFee = mul(dec("1.2345"), dec("0.0005")); // 0.00061725 eth: 8 decimals, eth_btc has 4
      assert.deepEqual(await server.balanceTable(ethBuyer), {
        btc: [fmt(dec("1") - cost), "0"],
        eth: [fmt(dec("1.2345") - ethFee), "0"],
        usdt: ["0", "0"],
      });
      assert.deepEqual(await server.balanceTable(ethSeller), {
        btc: [fmt(cost), "0"],
        eth: [fmt(dec("2") - dec("1.2345")), "0"],
        usdt: ["0", "0"],
      });
      assert.equal((await feeTable()).eth, fmt(ethFee));
      const [maker] = expectOk(await ethBuyer.client.userHistory()).items;
      assert.deepEqual([maker.fee, maker.feeCurrency], [0.00061725, "eth"]);
      const [taker] = expectOk(await ethSeller.client.userHistory()).items;
      assert.deepEqual([taker.fee, taker.feeCurrency], [0, "btc"], "a zero fee is present and 0");
    });

    it("shows fee 0 on pairs without fees", async () => {
      const a = await server.newUser({ eth: "1" });
      const b = await server.newUser({ usdt: "1000" });
      expectOk(await a.client.createOrder(limit("eth_usdt", "sell", "100", "1")));
      expectOk(await b.client.createOrder(limit("eth_usdt", "buy", "100", "1")));
      const [t] = expectOk(await b.client.userHistory()).items;
      assert.deepEqual([t.fee, t.feeCurrency], [0, "eth"]);
      assert.deepEqual(await server.balanceTable(b), {
        eth: ["1", "0"],
        usdt: ["900", "0"],
        btc: ["0", "0"],
      });
    });

    it("sums every user's balances plus the fee account to deposits − withdrawals", async () => {
      const fees = await feeTable();
      for (const [currency, total] of server.totals) {
        let held = dec(fees[currency]);
        for (const u of server.users) {
          const b = (await server.balances(u)).get(currency);
          if (b !== undefined) held += b.available + b.reserved;
        }
        assert.equal(fmt(held), fmt(total), currency);
      }
    });

    it("lets the operator take fees out, and gives the fee account no API key", async () => {
      const out = expectOk(await server.admin.withdraw(FEE_UID, "usdt", "4"));
      assert.deepEqual(out, { currency: "usdt", balance: "6" });
      server.totals.set("usdt", server.totals.get("usdt")! - dec("4"));
      const key = await server.admin.createApiKey(FEE_UID);
      expectError(key, 400, "uid");
      assert.deepEqual((key.body as ErrorBody).codes, { uid: ["UID_FEE_ACCOUNT"] });
      expectError(await server.admin.createUser(FEE_UID), 400, "uid");
      expectError(await server.public.fees(), 401, "auth");
    });

    it("keeps fees, fee fields and the book sequence across a restart (the start-up ledger check includes the fee account)", async () => {
      expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "30000", "0.1")));
      const book = expectOk(await server.public.orderBook("btc_usdt"));
      assert.ok(book.seq > 0);
      const fees = await feeTable();
      const history = expectOk(await buyer.client.userHistory()).items;
      const sellerHistory = expectOk(await seller.client.userHistory()).items;

      await server.restart(); // refuses to start if the ledger check fails
      assert.deepEqual(await feeTable(), fees);
      assert.deepEqual(expectOk(await buyer.client.userHistory()).items, history);
      assert.deepEqual(expectOk(await seller.client.userHistory()).items, sellerHistory);
      const again: OrderBook = expectOk(await server.public.orderBook("btc_usdt"));
      assert.deepEqual(again, book, "the same book with the same seq");

      // The next change continues the sequence, on the stream and in REST.
      const s = await server.stream(["orders:btc_usdt"]);
      try {
        const snap = await s.next();
        assert.equal((snap.data as OrderBook).seq, book.seq);
        expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "31000", "0.1")));
        const delta = await s.next();
        assert.equal((delta.data as OrderBook).seq, book.seq + 1);
        assert.equal(expectOk(await server.public.orderBook("btc_usdt")).seq, book.seq + 1);
        const page = expectOk(await server.public.pairPage("btc_usdt", { anonymous: true }));
        assert.equal(page.orders.seq, book.seq + 1);
      } finally {
        await s.close();
      }
      const items: UserTrade[] = expectOk(await seller.client.userHistory()).items;
      assert.ok(items.every((t) => typeof t.fee === "number" && typeof t.feeCurrency === "string"));
    });

    it("keeps the acknowledged book sequence and fees through kill -9", async () => {
      expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "32000", "0.05")));
      const bidder = await server.newUser({ usdt: "1000" });
      expectOk(await bidder.client.createOrder(limit("btc_usdt", "buy", "19000", "0.01")));
      const book = expectOk(await server.public.orderBook("btc_usdt"));
      const fees = await feeTable();
      await server.kill();
      await server.restart();
      assert.deepEqual(expectOk(await server.public.orderBook("btc_usdt")), book);
      assert.deepEqual(await feeTable(), fees);
    });
  });
});

describe("rate-limit headers (docs/API.md 3)", () => {
  const LIMIT = 20;
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ rateLimit: LIMIT });
  });
  after(async () => {
    await server?.close();
  });

  /** Waits until the wall clock is at least `ms` into a second (and not past 990): time is the condition. */
  async function atMsOfSecond(ms: number): Promise<void> {
    for (;;) {
      const now = Date.now();
      const into = now % 1000;
      if (into >= ms && into < 990) return;
      await sleepUntil(now - into + (into < ms ? ms : 1000 + ms));
    }
  }

  it("sends the limit and what is left on answers that counted, and not on those that did not", async () => {
    // No wait for a fresh window: this server is new, and /health (all the harness called) is not counted.
    const ok = await server.public.time();
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("x-ratelimit-limit"), String(LIMIT));
    const left = Number(ok.headers.get("x-ratelimit-remaining"));
    assert.ok(Number.isInteger(left) && left >= 0 && left < LIMIT, `remaining ${left}`);

    const u = await server.newUser({ usdt: "1" });
    const bad = await u.client.createOrder({ pairName: "btc_usdt" } as never);
    assert.equal(bad.status, 400, "a validation error counts against the token's limit");
    assert.equal(bad.headers.get("x-ratelimit-limit"), String(LIMIT));
    assert.equal(bad.headers.get("x-ratelimit-remaining"), String(LIMIT - 1));

    const unsigned = await server.public.raw("GET", "/1.0/trade/pairs/user-history", {
      headers: { authorization: u.apiToken, "x-signature": "00" },
    });
    assert.equal(unsigned.status, 401, "a 401 is answered before the limit step");
    assert.equal(unsigned.headers.get("x-ratelimit-limit"), null);
  });

  it("answers 429 with Retry-After and holds back a second burst right after the window edge", async () => {
    const u = await server.newUser();
    const burst = () => Promise.all(Array.from({ length: LIMIT }, () => u.client.balances("btc_usdt")));
    // A loaded machine may stretch a burst over a window edge; such an attempt proves nothing and
    // is repeated (a fixed window would let every attempt's second burst through).
    let lastSecond: number | null = null; // when the token was last counted (a new user: never)
    for (let attempt = 1; ; attempt++) {
      // Time is the condition: the token's earlier requests weigh on the second after the one they
      // were counted in, and on nothing later.
      if (lastSecond !== null) await sleepUntil((lastSecond + 2) * 1000);
      await atMsOfSecond(300);
      const second = Math.floor(Date.now() / 1000);
      const first = await burst();
      lastSecond = Math.floor(Date.now() / 1000);
      assert.deepEqual(
        first.map((r) => r.status),
        first.map(() => 200),
        "a full burst inside one second passes",
      );
      if (Math.floor(Date.now() / 1000) !== second && attempt < 5) continue;
      // Just after the next second begins, a fixed window would let a whole new burst through.
      await sleepUntil((second + 1) * 1000);
      const startedInto = Date.now() % 1000;
      const next = await burst();
      lastSecond = Math.floor(Date.now() / 1000);
      if (startedInto > 200 && attempt < 5) continue;
      const refused = next.filter((r) => r.status === 429);
      assert.ok(
        refused.length >= LIMIT / 2,
        `most of the second burst is refused (${refused.length} of ${LIMIT})`,
      );
      for (const r of refused) {
        assert.ok(Number(r.headers.get("retry-after")) >= 1);
        assert.equal(r.headers.get("x-ratelimit-limit"), String(LIMIT));
        assert.equal(r.headers.get("x-ratelimit-remaining"), "0");
        assert.deepEqual((r.body as ErrorBody).codes, { rate: ["RATE_LIMITED"] });
      }
      return;
    }
  });
});

describe("turning fees on for an existing database (docs/API.md 9)", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it("rescales the stored balances exactly to the grown ledger scale and charges fees from then on", async () => {
    const seller = await server.newUser({ btc: "1.234567" });
    const buyer = await server.newUser({ usdt: "12345.67" });
    expectOk(await seller.client.createOrder(limit("btc_usdt", "sell", "20000.01", "0.123457")));
    expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "20000.01", "0.1")));
    expectOk(await buyer.client.createOrder(limit("btc_usdt", "buy", "19000", "0.2")));
    const before = [await server.balanceTable(seller), await server.balanceTable(buyer)];
    const book = expectOk(await server.public.orderBook("btc_usdt"));

    // Same pairs, now with fees: btc and usdt need 4 more decimals.
    await writeFile(
      server.configPath,
      JSON.stringify({
        pairs: PAIRS.map(({ base: _b, quote: _q, ...rest }) =>
          rest.name === "btc_usdt" ? { ...rest, makerFee: "0.0001", takerFee: "0.0004" } : rest,
        ),
      }),
    );
    await server.restart(); // the start-up ledger check passes on the rescaled integers
    assert.deepEqual([await server.balanceTable(seller), await server.balanceTable(buyer)], before);
    assert.deepEqual(expectOk(await server.public.orderBook("btc_usdt")), book);
    assert.equal(expectOk(await server.public.info()).pairs[0].takerFee, "0.0004");

    // The seller's rest (0.023457 at 20000.01) is taken by a new buyer: taker 0.04%, maker 0.01%.
    const taker = await server.newUser({ usdt: "1000" });
    expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "20000.01", "0.023457")));
    const cost = mul(dec("20000.01"), dec("0.023457"));
    const btcFee = mul(dec("0.023457"), dec("0.0004"));
    const usdtFee = mul(cost, dec("0.0001"));
    assert.deepEqual((await server.balanceTable(taker)).btc, [fmt(dec("0.023457") - btcFee), "0"]);
    assert.deepEqual((await server.balanceTable(seller)).usdt, [
      fmt(dec(before[0].usdt[0]) + cost - usdtFee),
      "0",
    ]);
    const fees = Object.fromEntries(expectOk(await server.admin.fees()).map((f) => [f.currency, f.balance]));
    assert.deepEqual(fees, { btc: fmt(btcFee), usdt: fmt(usdtFee), eth: "0" });
  });
});

describe("exact fee text (docs/API.md 9)", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ pairFees: FEES });
  });
  after(async () => {
    await server?.close();
  });

  it("writes a fee with more significant digits than a double holds exactly, as a JSON number", async () => {
    const bigSeller = await server.newUser({ btc: "877" });
    const bigBuyer = await server.newUser({ usdt: "86600000" });
    expectOk(await bigSeller.client.createOrder(limit("btc_usdt", "sell", "98765.43", "876.543219")));
    expectOk(await bigBuyer.client.createOrder(limit("btc_usdt", "buy", "98765.43", "876.543219")));
    // The maker (seller) pays 0.1% of 86,572,167.93811917 usdt.
    const fee = fmt(mul(mul(dec("98765.43"), dec("876.543219")), dec("0.001")));
    assert.notEqual(String(Number(fee)), fee, `${fee} must not survive a double`);
    const res = await bigSeller.client.userHistory();
    expectOk(res);
    assert.ok(res.text.includes(`"fee":${fee},"feeCurrency":"usdt"`), `${fee} not in ${res.text}`);
    const page = await bigSeller.client.pairPage("btc_usdt");
    assert.ok(page.text.includes(`"fee":${fee},`), "the pair page's user history too");
  });
});
