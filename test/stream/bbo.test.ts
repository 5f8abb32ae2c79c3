/**
 * Best bid and offer (docs/API.md 7.6.1): `GET .../bbo` and `bbo:{pair}`. A message only for a book
 * change that moves the best bid or ask (price or aggregate amount), both sides in one message when
 * one change moves both, 0 for an empty side, never coalesced (one per change under a burst), with
 * the book seq of that change.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mulberry32 as random } from "../support/prng.ts";
import {
  applyLevels,
  type BookData,
  cancelOrder,
  createOrder,
  get,
  MICRO,
  OrderFlow,
  pool,
  StreamClient,
  startServer,
  type TestServer,
  type TextSide,
  untilSeq,
} from "./helpers.ts";

interface Bbo {
  bid: number;
  bidAmount: number;
  ask: number;
  askAmount: number;
  seq: number;
  eventTimeMicro: string;
}

/** The BBO of a book kept as text, as numbers (0 for an empty side). */
function top(book: { buy: TextSide; sell: TextSide }): [number, number, number, number] {
  const best = (s: TextSide, desc: boolean): [number, number] => {
    let price = 0;
    for (const p of s.keys()) {
      const n = Number(p);
      if (price === 0 || (desc ? n > price : n < price)) price = n;
    }
    return price === 0 ? [0, 0] : [price, Number(s.get(String(price)))];
  };
  return [...best(book.buy, true), ...best(book.sell, false)];
}

const values = (b: Bbo) => [b.bid, b.bidAmount, b.ask, b.askAmount];

describe("best bid and offer (docs/API.md 7.6.1)", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(6);
  });
  after(async () => {
    await server.close();
  });

  test("an empty book that never changed: zeros, eventTimeMicro 0, on REST and on connect", async () => {
    const rest = await get<Bbo>(server, "/trade/pairs/eth_btc/bbo");
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.body, { bid: 0, bidAmount: 0, ask: 0, askAmount: 0, seq: 0, eventTimeMicro: "0" });
    const stream = await StreamClient.connect(server, "streams=bbo:eth_btc");
    assert.deepEqual(await stream.next(), { stream: "bbo:eth_btc", data: rest.body });
    stream.close();
  });

  test("only changes of the best bid or ask are sent; one message when one change moves both", async () => {
    const pair = "btc_usdt";
    const [a, b] = server.users;
    const stream = await StreamClient.connect(server, `streams=bbo:${pair},orders:${pair}`);
    const snap = (await stream.next()).data as Bbo;
    assert.deepEqual(values(snap), [0, 0, 0, 0]);
    const order = (user: typeof a, side: "buy" | "sell", price: string, amount: string) =>
      createOrder(server, user, { pairName: pair, tradeType: "limit", directionType: side, price, amount });
    await order(a, "sell", "101", "1"); // ask appears
    await order(a, "sell", "102", "1"); // below the best: nothing
    await order(b, "buy", "99", "2"); // bid appears
    await order(b, "buy", "98", "1"); // nothing
    const more = await order(a, "sell", "101", "0.5"); // best ask amount 1.5
    await order(b, "buy", "101", "2"); // takes 1.5 at 101, rests 0.5: bid 101 and ask 102 at once
    assert.equal((await cancelOrder(server, a, more.id)).status, 400, "filled already");
    const last = await order(b, "buy", "97", "1"); // nothing
    assert.equal(last.isCancelled, false);
    const rest = await get<Bbo>(server, `/trade/pairs/${pair}/bbo`);
    await stream.until(
      () =>
        stream.messages.some(
          (m) => m.stream === `orders:${pair}` && (m.data as BookData).seq === rest.body.seq,
        ),
      10_000,
      "the last book change",
    );
    const bbos = stream.messages.filter((m) => m.stream === `bbo:${pair}`).map((m) => m.data as Bbo);
    assert.deepEqual(bbos.slice(1).map(values), [
      [0, 0, 101, 1],
      [99, 2, 101, 1],
      [99, 2, 101, 1.5],
      [101, 0.5, 102, 1],
    ]);
    const books = stream.messages.filter((m) => m.stream === `orders:${pair}`).map((m) => m.data as BookData);
    const s0 = books[0].seq;
    assert.deepEqual(
      bbos.slice(1).map((x) => x.seq),
      [s0 + 1, s0 + 3, s0 + 5, s0 + 6],
      "the seq of the change that moved it",
    );
    for (const x of bbos.slice(1)) assert.match(x.eventTimeMicro, MICRO);
    // REST: the same object as the stream's last message while the top stays; seq moves on.
    assert.deepEqual(values(rest.body), values(bbos.at(-1)!));
    assert.equal(rest.body.seq, s0 + 7);
    assert.ok(BigInt(rest.body.eventTimeMicro) >= BigInt(bbos.at(-1)!.eventTimeMicro));
    stream.close();
  });

  test("under a burst: exactly one message per change of the top, none coalesced", async () => {
    const pair = "eth_usdt";
    const stream = await StreamClient.connect(server, `streams=orders:${pair},bbo:${pair}`);
    const flow = new OrderFlow(server, pair, random(5), {
      mid: 1000,
      buyCents: [-40, 45],
      sellCents: [-5, 45],
      amount: { steps: 300, scale: 1e3, digits: 5 },
    });
    await pool(
      Array.from({ length: 600 }, (_, i) => i),
      12,
      async () => {
        const u = flow.user();
        if (flow.rnd() < 0.2 && flow.open[u].length > 0) await flow.cancel(u);
        else await flow.place(u);
      },
    );
    const rest = await get<Bbo>(server, `/trade/pairs/${pair}/bbo`);
    await untilSeq(stream, rest.body.seq, "the last book change", `orders:${pair}`);
    // The expected messages: replaying the L2 messages, every seq at which the top moved.
    const book = { buy: new Map<string, string>(), sell: new Map<string, string>() };
    const expected: number[][] = [];
    let prev: number[] | null = null;
    for (const m of stream.messages) {
      if (m.stream !== `orders:${pair}`) continue;
      const d = m.data as BookData;
      applyLevels(book, d);
      const t = top(book);
      if (prev === null || t.some((v, i) => v !== prev![i])) expected.push([d.seq, ...t]);
      prev = t;
    }
    const bbos = stream.messages.filter((m) => m.stream === `bbo:${pair}`).map((m) => m.data as Bbo);
    assert.ok(expected.length > 50, `the burst moved the top often (${expected.length})`);
    // The first message is the snapshot at connect, then one per move.
    assert.deepEqual(
      bbos.map((x) => [x.seq, ...values(x)]),
      expected,
    );
    const micros = bbos.slice(1).map((x) => BigInt(x.eventTimeMicro));
    for (let i = 1; i < micros.length; i++)
      assert.ok(micros[i] > micros[i - 1], "later changes, later times");
    assert.deepEqual(values(rest.body), values(bbos.at(-1)!));
    stream.close();
  });
});
