/**
 * Listen keys (docs/API.md 10): created, extended and closed by signed calls; `listenKey=K` on the
 * stream upgrade authenticates as K's user, and an unknown, closed or expired key answers 401.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KEY_TTL_MS, ListenKeys, listenKeyFromQuery, MAX_KEYS_PER_USER } from "../../src/http/listen-keys.ts";
import {
  createOrder,
  type Order,
  post,
  refused,
  StreamClient,
  startServer,
  type TestServer,
} from "../stream/helpers.ts";
import { sleepUntil, waitFor } from "../wait.ts";

interface KeyAnswer {
  listenKey: string;
  expiresAt: number;
}
interface Errors {
  errors: Record<string, string[]>;
}

describe("ListenKeys", () => {
  test("a key lives for its lifetime from creation or the last extension, then is gone", () => {
    let now = 1_000_000;
    const keys = new ListenKeys(KEY_TTL_MS, () => now);
    const { listenKey, expiresAt } = keys.create(7);
    assert.match(listenKey, /^[0-9a-f]{64}$/);
    assert.equal(expiresAt, now + KEY_TTL_MS);
    now += KEY_TTL_MS - 1;
    assert.equal(keys.userOf(listenKey), 7);
    assert.equal(keys.extend(7, listenKey), now + KEY_TTL_MS);
    now += KEY_TTL_MS - 1;
    assert.equal(keys.userOf(listenKey), 7);
    now += 1;
    assert.equal(keys.userOf(listenKey), undefined);
    assert.equal(keys.extend(7, listenKey), null, "an expired key cannot be brought back");
  });

  test("only the owner extends or closes a key", () => {
    const keys = new ListenKeys();
    const { listenKey } = keys.create(1);
    assert.equal(keys.extend(2, listenKey), null);
    assert.equal(keys.close(2, listenKey), false);
    assert.equal(keys.userOf(listenKey), 1);
    assert.equal(keys.close(1, listenKey), true);
    assert.equal(keys.userOf(listenKey), undefined);
    assert.equal(keys.close(1, listenKey), false);
  });

  test("a user holds at most MAX_KEYS_PER_USER keys; a new one ends the oldest", () => {
    const keys = new ListenKeys();
    const made = Array.from({ length: MAX_KEYS_PER_USER + 1 }, () => keys.create(3).listenKey);
    const other = keys.create(4).listenKey;
    assert.equal(keys.userOf(made[0]), undefined);
    for (const k of made.slice(1)) assert.equal(keys.userOf(k), 3);
    assert.equal(keys.userOf(other), 4);
    assert.equal(keys.size, MAX_KEYS_PER_USER + 1);
  });

  test(
    "reports every key that ends: closed, found expired, swept, or pushed out",
    { timeout: 10_000 },
    async () => {
      let now = 0;
      const keys = new ListenKeys(1000, () => now);
      const ended: string[] = [];
      keys.onEnd = (k) => ended.push(k);
      const a = keys.create(1).listenKey;
      const b = keys.create(1).listenKey;
      keys.close(1, a);
      assert.deepEqual(ended, [a]);
      now = 1000;
      assert.equal(keys.userOf(b), undefined);
      assert.deepEqual(ended, [a, b]);
      const c = keys.create(2).listenKey;
      now = 2000;
      keys.watch(5);
      try {
        await waitFor(() => ended.includes(c), {
          what: "the watch to report the expired key",
          intervalMs: 5,
        });
      } finally {
        keys.stop();
      }
      assert.equal(keys.size, 0);
      const many = Array.from({ length: MAX_KEYS_PER_USER + 1 }, () => keys.create(3).listenKey);
      assert.equal(ended.at(-1), many[0]);
    },
  );

  test("reads listenKey from a raw query string", () => {
    assert.equal(listenKeyFromQuery("streams=exchanges"), undefined);
    assert.equal(listenKeyFromQuery("streams=exchanges&listenKey=ab12"), "ab12");
    assert.equal(listenKeyFromQuery("listenKey=ab12&streams=x"), "ab12");
    assert.equal(listenKeyFromQuery("streams=x&listenKey="), "");
    assert.equal(listenKeyFromQuery("listenKey=a&listenKey=b"), "", "given twice: refused");
    assert.equal(listenKeyFromQuery("streams=x&mylistenKey=a"), undefined);
  });
});

describe("listen keys over HTTP and the stream", () => {
  let server: TestServer;
  // Long enough for the steps of one test on a busy machine, short enough to wait out once.
  const TTL_MS = 1500;
  before(async () => {
    server = await startServer(3, [], { listenKeyTtlMs: TTL_MS });
  });
  after(async () => {
    await server.close();
  });

  const create = async (user = server.users[0]) => {
    const a = await post<KeyAnswer>(server, user, "/trade/listen-key", {});
    assert.equal(a.status, 200, JSON.stringify(a.body));
    return a.body;
  };

  test("creates, extends and closes a key; the closed key is refused at the upgrade", async () => {
    const before = Date.now();
    const k = await create();
    assert.deepEqual(Object.keys(k).sort(), ["expiresAt", "listenKey"]);
    assert.match(k.listenKey, /^[0-9a-f]{64}$/);
    assert.ok(k.expiresAt >= before + TTL_MS && k.expiresAt <= Date.now() + TTL_MS);

    const ext = await post<KeyAnswer>(server, server.users[0], "/trade/listen-key", {
      listenKey: k.listenKey,
    });
    assert.equal(ext.status, 200);
    assert.equal(ext.body.listenKey, k.listenKey);
    assert.ok(ext.body.expiresAt >= k.expiresAt);

    const c = await StreamClient.connect(server, `streams=exchanges&listenKey=${k.listenKey}`);
    assert.equal((await c.next()).stream, "exchanges");
    c.close();

    // A connection the key opened ends when the key is closed.
    const open = await StreamClient.connect(
      server,
      `streams=user_orders:${server.users[0].uid}&listenKey=${k.listenKey}`,
    );
    const closed = await post(server, server.users[0], "/trade/listen-key/close", { listenKey: k.listenKey });
    assert.deepEqual(closed, { status: 200, body: [] });
    assert.equal(await open.closed, 4001);
    const r = await refused(server, `streams=exchanges&listenKey=${k.listenKey}`);
    assert.equal(r.status, 401);
    assert.match(r.body.errors.auth[0], /listen key/);
    const again = await post<Errors>(server, server.users[0], "/trade/listen-key/close", {
      listenKey: k.listenKey,
    });
    assert.equal(again.status, 400);
    assert.match(again.body.errors.listenKey[0], /Unknown or expired/);
  });

  test("an unknown, malformed or expired key is refused at the upgrade with 401", async () => {
    for (const key of ["0".repeat(64), "nothex", ""]) {
      const r = await refused(server, `streams=exchanges&listenKey=${key}`);
      assert.equal(r.status, 401, key);
      assert.deepEqual(Object.keys(r.body.errors), ["auth"]);
    }
    const k = await create();
    // Time is the condition: a key has ended once the server's clock (this machine's) reaches expiresAt.
    await sleepUntil(k.expiresAt);
    const r = await refused(server, `streams=exchanges&listenKey=${k.listenKey}`);
    assert.equal(r.status, 401);
    const ext = await post<Errors>(server, server.users[0], "/trade/listen-key", { listenKey: k.listenKey });
    assert.equal(ext.status, 400, "an expired key cannot be extended");
  });

  test("the calls are signed and validate listenKey", async () => {
    const [a, b] = server.users;
    const unsigned = await fetch(`${server.url}/1.0/trade/listen-key`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body: "{}",
    });
    assert.equal(unsigned.status, 401);
    await unsigned.body?.cancel();

    const missing = await post<Errors>(server, a, "/trade/listen-key/close", {});
    assert.equal(missing.status, 400);
    assert.deepEqual(Object.keys(missing.body.errors), ["listenKey"]);
    const notString = await post<Errors>(server, a, "/trade/listen-key", { listenKey: 5 });
    assert.equal(notString.status, 400);
    assert.deepEqual(Object.keys(notString.body.errors), ["listenKey"]);
    // Strict bodies (docs/API.md 8.1) on both calls: an unknown field is refused under its own name.
    for (const path of ["/trade/listen-key", "/trade/listen-key/close"]) {
      const extra = await post<Errors>(server, a, path, { listenKey: "0".repeat(64), ttl: 5 });
      assert.equal(extra.status, 400, path);
      assert.deepEqual(Object.keys(extra.body.errors), ["ttl"], path);
    }

    // Another user's key: the same answer as an unknown one, and it stays alive for its owner.
    const k = await create(a);
    const foreign = await post<Errors>(server, b, "/trade/listen-key/close", { listenKey: k.listenKey });
    assert.equal(foreign.status, 400);
    const c = await StreamClient.connect(server, `streams=user_orders:${a.uid}&listenKey=${k.listenKey}`);
    c.close();
  });

  test("user channels through a listen key carry only that user's records; another uid is 403", async () => {
    const [a, b] = server.users;
    const ka = await create(a);
    const forbidden = await refused(server, `streams=user_orders:${b.uid}&listenKey=${ka.listenKey}`);
    assert.equal(forbidden.status, 403);

    const q = (uid: string, key: string) =>
      `streams=${encodeURIComponent(`user_orders:${uid},user_history:${uid}`)}&listenKey=${key}`;
    const ca = await StreamClient.connect(server, q(a.uid, ka.listenKey));
    const cb = await StreamClient.connect(server, q(b.uid, (await create(b)).listenKey));
    try {
      const sell = await createOrder(server, a, {
        pairName: "eth_btc",
        tradeType: "limit",
        directionType: "sell",
        price: "0.05",
        amount: "1",
      });
      const buy = await createOrder(server, b, {
        pairName: "eth_btc",
        tradeType: "limit",
        directionType: "buy",
        price: "0.05",
        amount: "0.4",
      });
      // a: its order created, then filled by b; one trade, its side (sell).
      await ca.until(() => ca.messages.length >= 3, 10_000, "a's three messages");
      await cb.until(() => cb.messages.length >= 2, 10_000, "b's two messages");
      const aOrders = ca.messages
        .filter((m) => m.stream.startsWith("user_orders:"))
        .map((m) => m.data as Order);
      const bOrders = cb.messages
        .filter((m) => m.stream.startsWith("user_orders:"))
        .map((m) => m.data as Order);
      assert.ok(aOrders.every((o) => o.id === sell.id));
      assert.ok(bOrders.every((o) => o.id === buy.id));
      assert.equal(aOrders.at(-1)!.amountUsed, 0.4);
      const aTrades = ca.messages.filter((m) => m.stream.startsWith("user_history:"));
      const bTrades = cb.messages.filter((m) => m.stream.startsWith("user_history:"));
      assert.equal(aTrades.length, 1);
      assert.equal(bTrades.length, 1);
      assert.equal((aTrades[0].data as { directionType: string }).directionType, "sell");
      assert.equal((bTrades[0].data as { directionType: string }).directionType, "buy");
      assert.equal(ca.messages.length, 3);
    } finally {
      ca.close();
      cb.close();
    }
  });
});
