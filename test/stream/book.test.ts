/**
 * A snapshot and the deltas after it add up to the book (docs/API.md 12): random order flow from
 * several users (crossing limits, market orders, cancels) runs while clients connect at different
 * moments; at the end every client's book equals `GET /trade/pairs/{pair}/orders`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mulberry32 as random } from "../support/prng.ts";
import {
  applyLevels,
  type BookData,
  cancelOrder,
  entries,
  get,
  type Order,
  pool,
  post,
  StreamClient,
  signedHeaders,
  startServer,
  type TestServer,
  type TestUser,
  textBook,
} from "./helpers.ts";

interface PublicTrade {
  price: number;
  amount: number;
  tradeTime: number;
  eventTimeMicro: string;
  directionType: string;
  tradeType: string;
}

type Action =
  | { kind: "limit"; user: number; side: "buy" | "sell"; price: string; amount: string }
  | { kind: "market"; user: number; side: "buy" | "sell"; amount: string }
  | { kind: "cancel"; user: number };

function actions(n: number, users: number, seed: number): Action[] {
  const rnd = random(seed);
  const out: Action[] = [];
  for (let i = 0; i < n; i++) {
    const user = Math.floor(rnd() * users);
    const side = rnd() < 0.5 ? "buy" : "sell";
    const amount = ((1 + Math.floor(rnd() * 5000)) / 1e6).toFixed(6);
    const r = rnd();
    if (r < 0.2) out.push({ kind: "cancel", user });
    else if (r < 0.25) out.push({ kind: "market", user, side, amount });
    else {
      // Buys mostly under 100.00 and sells over it, overlapping by 0.30 so some cross.
      const cents = side === "buy" ? -150 + Math.floor(rnd() * 181) : -30 + Math.floor(rnd() * 181);
      out.push({ kind: "limit", user, side, price: (100 + cents / 100).toFixed(2), amount });
    }
  }
  return out;
}

describe("order book stream", () => {
  let server: TestServer;
  let idle: StreamClient;
  before(async () => {
    // A short idle timeout, so that the keep-alive test below sees a ping within seconds.
    server = await startServer(4, ["--idle-timeout", "8"]);
    idle = await StreamClient.connect(server, "streams=history:eth_btc");
  });
  after(async () => {
    await server.close();
  });

  test("snapshot plus deltas equals the REST book after random order flow", async () => {
    const pair = "btc_usdt";
    const users: TestUser[] = server.users;
    // Each user's open orders, as its own user_orders channel reports them (so cancels mostly hit
    // open orders; a cancel of a filled one takes the slow database path).
    const open = users.map(() => new Map<number, Order>());
    const own = await Promise.all(
      users.map(async (u, i) => {
        const query = `streams=user_orders:${u.uid}`;
        const c = await StreamClient.connect(server, query, signedHeaders(u, query));
        c.ws.on("message", (data: Buffer) => {
          const o = (JSON.parse(data.toString("utf8")) as { data: Order }).data;
          if (o.isCancelled || o.amountUsed === o.amount) open[i].delete(o.id);
          else open[i].set(o.id, o);
        });
        return c;
      }),
    );
    const flow = actions(3000, users.length, 20240601);
    const clients: StreamClient[] = [];
    const connectAt = new Set([0, 700, 1600, 2500]);
    let done = 0;
    let traded = 0;
    const rnd = random(7);

    const connect = async () => {
      clients.push(await StreamClient.connect(server, `streams=orders:${pair},history:${pair}`));
    };

    await pool(flow, 16, async (a, i) => {
      if (connectAt.has(i)) await connect();
      const user = users[a.user];
      if (a.kind === "cancel") {
        const mine = [...open[a.user].keys()];
        if (mine.length === 0) {
          done++;
          return;
        }
        const id = mine[Math.floor(rnd() * mine.length)];
        open[a.user].delete(id);
        const r = await cancelOrder(server, user, id);
        // The order may have been filled meanwhile.
        assert.ok(r.status === 200 || r.status === 400, `cancel ${id}: ${r.status}`);
      } else {
        const body =
          a.kind === "limit"
            ? { pairName: pair, tradeType: "limit", directionType: a.side, price: a.price, amount: a.amount }
            : { pairName: pair, tradeType: "market", directionType: a.side, amount: a.amount };
        const r = await post<Order>(server, user, "/trade/create-order", body);
        if (a.kind === "market") {
          // No liquidity (or funds held by a concurrent market buy) is a fine answer here.
          assert.ok(r.status === 200 || r.status === 400, `market: ${r.status} ${JSON.stringify(r.body)}`);
        } else {
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        if (r.status === 200 && r.body.amountUsed > 0) traded++;
      }
      done++;
    });
    assert.equal(done, flow.length);
    assert.ok(traded > 100, `the flow crossed (${traded} orders traded)`);

    const rest = await get<{
      buy: { price: number; amount: number }[];
      sell: { price: number; amount: number }[];
    }>(server, `/trade/pairs/${pair}/orders`);
    assert.equal(rest.status, 200);
    const expected = textBook(rest.body);
    assert.ok(expected.buy.size > 10 && expected.sell.size > 10, "a book with depth on both sides");
    const restHistory = (await get<PublicTrade[]>(server, `/trade/pairs/${pair}/history`)).body;

    for (const [n, client] of clients.entries()) {
      const book = { buy: new Map<string, string>(), sell: new Map<string, string>() };
      const rebuild = () => {
        book.buy.clear();
        book.sell.clear();
        for (const m of client.messages)
          if (m.stream === `orders:${pair}`) applyLevels(book, m.data as BookData);
      };
      const same = () =>
        JSON.stringify([entries(book.buy), entries(book.sell)]) ===
        JSON.stringify([entries(expected.buy), entries(expected.sell)]);
      // The last deltas may still be on their way when the last HTTP answer arrived.
      await client
        .until(
          () => {
            rebuild();
            return same();
          },
          5000,
          `client ${n} to converge`,
        )
        .catch(() => {});
      assert.deepEqual(entries(book.buy), entries(expected.buy), `client ${n}: bids`);
      assert.deepEqual(entries(book.sell), entries(expected.sell), `client ${n}: asks`);

      // One event time per message, strictly increasing over the channel (snapshot first).
      const levelTimes = client.messages
        .filter((m) => m.stream === `orders:${pair}`)
        .map((m) => {
          const d = m.data as BookData;
          const times = new Set([...d.buy, ...d.sell].map((l) => l.eventTimeMicro));
          assert.ok(times.size <= 1, "one event time per message");
          return [...times][0];
        })
        .filter((t) => t !== undefined)
        .map(BigInt);
      for (let i = 1; i < levelTimes.length; i++) assert.ok(levelTimes[i] > levelTimes[i - 1]);

      // History: execution order, strictly increasing event times, the tail equal to REST's.
      const trades = client.messages
        .filter((m) => m.stream === `history:${pair}`)
        .flatMap((m) => m.data as PublicTrade[]);
      for (let i = 1; i < trades.length; i++)
        assert.ok(BigInt(trades[i].eventTimeMicro) > BigInt(trades[i - 1].eventTimeMicro));
      const tail = Math.min(trades.length, restHistory.length);
      assert.deepEqual(trades.slice(trades.length - tail).reverse(), restHistory.slice(0, tail));
      client.close();
    }
    assert.equal(clients.length, connectAt.size);
    for (const c of own) c.close();
  });

  test("pings a connection that is silent, and keeps it open while the client answers", async () => {
    // The client answers each ping with a pong, which counts as traffic; a connection silent past
    // the idle timeout is closed (docs/API.md 12.2), so one still open at its second ping outlived
    // the idle timeout that followed the first. How soon the pings come is uWS's affair.
    await idle.until(() => idle.pings >= 2 || idle.closeCode !== null, 30_000, "a second ping or a close");
    assert.equal(idle.closeCode, null, "closed before its second ping");
    assert.equal(idle.pings >= 2, true);
    assert.equal(idle.messages.length, 0);
    idle.close();
  });
});
