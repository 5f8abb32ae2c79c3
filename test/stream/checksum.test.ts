/**
 * Book checksum (docs/API.md 12.5) on the REST book (also with ?limit), the pair page and every
 * `orders:{pair}` message: the contract's two examples exactly, and after trades, cancels and
 * amends a client's book rebuilt from the messages has the checksum each message carries.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { crc32 } from "../../src/util/crc32.ts";
import { expandExponent } from "../../src/util/numbers.ts";
import { mulberry32 as random } from "../support/prng.ts";
import {
  applyLevels,
  type BookData,
  createOrder,
  get,
  OrderFlow,
  pool,
  post,
  StreamClient,
  startServer,
  type TestServer,
  type TextSide,
  textBook,
  untilSeq,
} from "./helpers.ts";

type Book = BookData & { checksum: number };
type RestBook = {
  buy: { price: number; amount: number }[];
  sell: { price: number; amount: number }[];
  seq: number;
  checksum: number;
};

/** A client's checksum of a book kept as text: the best 25 asks ascending, `|`, the best 25 bids. */
function clientChecksum(book: { buy: TextSide; sell: TextSide }): number {
  const side = (s: TextSide, desc: boolean) =>
    [...s.entries()]
      .sort((a, b) => (desc ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0])))
      .slice(0, 25)
      .map(([p, a]) => `${expandExponent(p)}:${expandExponent(a)}`)
      .join(",");
  return crc32(`${side(book.sell, false)}|${side(book.buy, true)}`);
}

describe("book checksum (docs/API.md 12.5)", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(4);
  });
  after(async () => {
    await server.close();
  });

  test("the contract's examples: an empty book, then its four levels, on REST, the pair page and the stream", async () => {
    const pair = "btc_usdt";
    const empty = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
    assert.equal(empty.body.checksum, 2343686810);
    const stream = await StreamClient.connect(server, `streams=orders:${pair}`);
    assert.equal(((await stream.next()).data as Book).checksum, 2343686810);
    const [a, b] = server.users;
    const order = (user: typeof a, side: "buy" | "sell", price: string, amount: string) =>
      createOrder(server, user, { pairName: pair, tradeType: "limit", directionType: side, price, amount });
    await order(a, "sell", "25011", "1.25");
    await order(a, "sell", "25010.01", "0.5");
    await order(b, "buy", "24999.5", "0.001");
    await order(b, "buy", "25000", "2");
    const book = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
    assert.equal(book.body.checksum, 3621080957);
    const messages: Book[] = [];
    while (messages.length < 4) messages.push((await stream.next()).data as Book);
    assert.equal(messages[3].checksum, 3621080957);
    assert.equal(messages[3].seq, book.body.seq);
    // ?limit keeps the best N levels of each side, the checksum still covers 25.
    const limited = await get<RestBook>(server, `/trade/pairs/${pair}/orders?limit=1`);
    assert.equal(limited.body.sell.length, 1);
    assert.equal(limited.body.checksum, 3621080957);
    const page = await get<{ orders: RestBook }>(server, `/trade/pairs/${pair}`);
    assert.equal(page.body.orders.checksum, 3621080957);
    stream.close();
  });

  test("every orders message's checksum is the client's book's after it, through trades, cancels and amends; ?limit covers 25", async () => {
    const pair = "eth_usdt";
    const stream = await StreamClient.connect(server, `streams=orders:${pair}`);
    // 60 prices a side: more than the 25 levels the checksum covers.
    const flow = new OrderFlow(server, pair, random(7), {
      mid: 2000,
      buyCents: [-60, 70],
      sellCents: [-10, 70],
      amount: { steps: 90000, scale: 1e5, digits: 5 },
    });
    await pool(
      Array.from({ length: 400 }, (_, i) => i),
      8,
      async () => {
        const u = flow.user();
        const roll = flow.rnd();
        if (roll < 0.15 && flow.open[u].length > 0) return flow.cancel(u);
        if (roll < 0.25 && flow.open[u].length > 0) {
          const r = await post(server, server.users[u], "/trade/amend-order", {
            orderId: flow.anyOpen(u),
            amount: flow.amount(),
            price: (2000 + (-40 + Math.floor(flow.rnd() * 80)) / 100).toFixed(2),
          });
          assert.ok(r.status === 200 || r.status === 400, JSON.stringify(r.body));
          return;
        }
        await flow.place(u);
      },
    );
    const live = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
    await untilSeq(stream, live.body.seq, "the live seq");
    const book = { buy: new Map<string, string>(), sell: new Map<string, string>() };
    for (const m of stream.messages) {
      const data = m.data as Book;
      applyLevels(book, data);
      assert.equal(data.checksum, clientChecksum(book), `seq ${data.seq}`);
    }
    assert.ok(live.body.buy.length > 25 || live.body.sell.length > 25, "a side deeper than 25 levels");
    assert.equal(live.body.checksum, clientChecksum(textBook(live.body)));
    assert.equal(live.body.checksum, (stream.messages.at(-1)!.data as Book).checksum);
    const limited = await get<RestBook>(server, `/trade/pairs/${pair}/orders?limit=3`);
    assert.equal(limited.body.seq, live.body.seq);
    assert.equal(limited.body.checksum, live.body.checksum);
    assert.notEqual(clientChecksum(textBook(limited.body)), live.body.checksum, "3 levels would differ");
    stream.close();
  });
});
