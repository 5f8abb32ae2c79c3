/**
 * What the upgrade lets through (docs/API.md 12, 3): the stream list (400 on `streams`), credentials
 * on user channels (401), another user's channel (403), and that user channels carry only the
 * caller's own records.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type BookData,
  cancelOrder,
  createOrder,
  type Order,
  refused,
  StreamClient,
  type StreamMessage,
  sign,
  signedHeaders,
  startServer,
  type TestServer,
} from "./helpers.ts";

interface UserTrade {
  id: number;
  directionType: string;
  pairName: string;
}

describe("stream access", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(3);
  });
  after(async () => {
    await server.close();
  });

  test("refuses a bad stream list at the upgrade with 400 on streams", async () => {
    const cases: [string, RegExp][] = [
      ["streams=", /empty/],
      ["other=1", /empty/],
      ["streams=trades:btc_usdt", /Unknown channel \(trades:btc_usdt\)/],
      ["streams=orders", /Unknown channel \(orders\)/],
      ["streams=exchanges:btc_usdt", /Unknown channel/],
      ["streams=orders:doge_usdt", /Unknown pair in the stream list \(orders:doge_usdt\)/],
      ["streams=history:BTC_USDT", /Unknown pair/],
      [`streams=${Array(101).fill("exchanges").join(",")}`, /at most 100 per connection \(101\)/],
      ["streams=exchanges,,orders:btc_usdt", /malformed/],
      ["streams=%E0%A4%A", /malformed/],
    ];
    for (const [query, message] of cases) {
      const r = await refused(server, query);
      assert.equal(r.status, 400, query);
      assert.deepEqual(Object.keys(r.body.errors), ["streams"], query);
      assert.equal(r.body.errors.streams.length, 1, query);
      assert.match(r.body.errors.streams[0], message, query);
    }
    // Every bad entry is named; the language follows Accept-Language.
    const both = await refused(server, "streams=orders:nope,foo");
    assert.equal(both.body.errors.streams.length, 2);
    const ru = await refused(server, "streams=", { "accept-language": "ru-RU,ru;q=0.9" });
    assert.match(ru.body.errors.streams[0], /[А-Яа-я]/);
  });

  test("subscribes a channel listed twice once, up to 100 entries, URL-encoded or not", async () => {
    const hundred = await StreamClient.connect(server, `streams=${Array(100).fill("exchanges").join(",")}`);
    assert.equal((await hundred.next()).stream, "exchanges");
    await hundred.settled(); // every snapshot sent on connect is here
    assert.equal(hundred.messages.length, 1, "one snapshot for a channel listed 100 times");
    hundred.close();

    const encoded = encodeURIComponent("orders:btc_usdt, orders:btc_usdt,history:btc_usdt");
    const client = await StreamClient.connect(server, `streams=${encoded}`);
    assert.equal((await client.next()).stream, "orders:btc_usdt");
    await client.settled();
    assert.equal(client.messages.length, 1, "one book snapshot");
    const [maker] = server.users;
    const buy = (price: string) =>
      createOrder(server, maker, {
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price,
        amount: "0.01",
      });
    await buy("1");
    assert.equal((await client.next()).stream, "orders:btc_usdt");
    // A second change marks the end of the first one's messages: the next one must be its delta.
    const marker = await buy("2");
    const next = await client.next();
    assert.equal(next.stream, "orders:btc_usdt");
    assert.deepEqual(
      (next.data as BookData).buy.map((l) => l.price),
      [2],
      "one delta per change",
    );
    client.close();
    assert.equal((await cancelOrder(server, maker, marker.id)).status, 200);
  });

  test("answers 401 to a user channel without valid credentials", async () => {
    const [alice] = server.users;
    const query = `streams=user_orders:${alice.uid}`;
    const cases: [string, Record<string, string>][] = [
      ["no headers", {}],
      ["no signature", { authorization: alice.apiToken }],
      ["unknown token", { authorization: "f".repeat(32), "x-signature": sign(alice.secretKey, query) }],
      ["wrong signature", { authorization: alice.apiToken, "x-signature": sign("not-the-secret", query) }],
      ["signature of another query", signedHeaders(alice, `${query},user_history:${alice.uid}`)],
    ];
    for (const [what, headers] of cases) {
      const r = await refused(server, query, headers);
      assert.equal(r.status, 401, what);
      assert.deepEqual(Object.keys(r.body.errors), ["auth"], what);
    }
    // Credentials on a public list are checked too (like the pair page, docs/API.md 12.4).
    const pub = await refused(server, "streams=exchanges", {
      authorization: alice.apiToken,
      "x-signature": "0",
    });
    assert.equal(pub.status, 401);
    // The nonce replay guard applies to a signed upgrade as to a signed GET.
    const withNonce = `${query}&nonce=5`;
    const ok = await StreamClient.connect(server, withNonce, signedHeaders(alice, withNonce));
    ok.close();
    assert.equal((await refused(server, withNonce, signedHeaders(alice, withNonce))).status, 401);
  });

  test("answers 403 to another user's channel", async () => {
    const [alice, bob] = server.users;
    for (const query of [
      `streams=user_orders:${bob.uid}`,
      `streams=user_history:${bob.uid}`,
      `streams=user_orders:${alice.uid},user_history:${bob.uid}`,
      "streams=user_orders:00000000-0000-4000-8000-000000000000",
    ]) {
      const r = await refused(server, query, signedHeaders(alice, query));
      assert.equal(r.status, 403, query);
      assert.deepEqual(Object.keys(r.body.errors), ["auth"], query);
    }
  });

  test("gives each user only its own orders and trades", async () => {
    const [alice, bob, carol] = server.users;
    const subscribe = (u: typeof alice, uid = u.uid) => {
      const query = `streams=user_orders:${uid},user_history:${uid}`;
      return StreamClient.connect(server, query, signedHeaders(u, query));
    };
    const a = await subscribe(alice);
    // A uid in capitals is the same user; messages name the channel as subscribed.
    const b = await subscribe(bob, bob.uid.toUpperCase());
    const c = await subscribe(carol);

    const aliceOrders = new Set<number>();
    const bobOrders = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const sell = await createOrder(server, alice, {
        pairName: "eth_usdt",
        tradeType: "limit",
        directionType: "sell",
        price: String(1500 + i),
        amount: "0.5",
      });
      aliceOrders.add(sell.id);
    }
    const buy = await createOrder(server, bob, {
      pairName: "eth_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "1503",
      amount: "1.75",
    });
    bobOrders.add(buy.id);
    assert.equal(buy.amountUsed, 1.75);
    const rest = await createOrder(server, bob, {
      pairName: "eth_usdt",
      tradeType: "limit",
      directionType: "buy",
      price: "1000",
      amount: "1",
    });
    bobOrders.add(rest.id);
    assert.equal((await cancelOrder(server, bob, rest.id)).status, 200);

    // Each user then places a marker order: what its connection got before the marker is all it got.
    const markers = new Map<StreamClient, Order>();
    const before = async (client: StreamClient, user: typeof alice): Promise<StreamMessage[]> => {
      const marker = await createOrder(server, user, {
        pairName: "btc_usdt",
        tradeType: "limit",
        directionType: "buy",
        price: "1",
        amount: "0.01",
      });
      markers.set(client, marker);
      const isMarker = (m: StreamMessage) =>
        m.stream.startsWith("user_orders:") && (m.data as Order).id === marker.id;
      await client.until(() => client.messages.some(isMarker), 10_000, "the marker order");
      return client.messages.slice(0, client.messages.findIndex(isMarker));
    };
    const [aGot, bGot, cGot] = [await before(a, alice), await before(b, bob), await before(c, carol)];
    // alice: 5 created + 4 fills; bob: created (already filled) + created + cancelled; 4 trades each.
    assert.equal(aGot.length, 13, "alice's messages");
    assert.equal(bGot.length, 7, "bob's messages");
    assert.equal(cGot.length, 0, "carol traded nothing and sees nothing");

    const split = (messages: StreamMessage[], uid: string) => {
      const orders = messages.filter((m) => m.stream === `user_orders:${uid}`).map((m) => m.data as Order);
      const trades = messages
        .filter((m) => m.stream === `user_history:${uid}`)
        .map((m) => m.data as UserTrade);
      assert.equal(orders.length + trades.length, messages.length, "only the subscribed channels");
      return { orders, trades };
    };
    const av = split(aGot, alice.uid);
    const bv = split(bGot, bob.uid.toUpperCase());
    assert.equal(av.orders.length, 9);
    assert.equal(bv.orders.length, 3);
    for (const o of av.orders) assert.ok(aliceOrders.has(o.id), `alice got order ${o.id}`);
    for (const o of bv.orders) assert.ok(bobOrders.has(o.id), `bob got order ${o.id}`);
    assert.deepEqual(
      bv.orders.map((o) => [o.id, o.amountUsed, o.isCancelled]),
      [
        [buy.id, 1.75, false],
        [rest.id, 0, false],
        [rest.id, 0, true],
      ],
    );
    assert.equal(av.trades.length, 4);
    assert.ok(av.trades.every((t) => t.directionType === "sell"));
    assert.ok(bv.trades.every((t) => t.directionType === "buy"));
    assert.deepEqual(
      av.trades.map((t) => t.id),
      bv.trades.map((t) => t.id),
      "the same trades, each from its own side",
    );
    for (const client of [a, b, c]) client.close();
    for (const [client, user] of [
      [a, alice],
      [b, bob],
      [c, carol],
    ] as const)
      assert.equal((await cancelOrder(server, user, markers.get(client)!.id)).status, 200);
  });
});
