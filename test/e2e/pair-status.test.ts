/**
 * docs/API.md 11 pair status on the real server: `trading`, `cancelOnly` and `halted`, decided at R1
 * for creates, amends and cancels (single and batch), cancel-all skipping a halted pair, the
 * dead-man's switch going through on a halted pair, `/info`, a restart, the admin call's errors,
 * every change published (the `status` stream channel, the sessions' `pairStatus` event) and the
 * `exchange pair-status` and `exchange tail status` commands.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { run } from "../../src/cli.ts";
import {
  type BatchCancelResult,
  type BatchOrderResult,
  errorsOf,
  type PairStatusUpdate,
} from "../../src/client/index.ts";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { expectError, expectOk, limit, placeLimit, TestServer, type TestUser } from "./harness.ts";

/** The codes of an error answer's field. */
function codes(res: { body: unknown }, field: string): string[] {
  return (res.body as { codes?: Record<string, string[]> }).codes?.[field] ?? [];
}

describe("pair status (docs/API.md 11)", () => {
  let server: TestServer;
  let maker: TestUser;

  before(async () => {
    server = await TestServer.start();
    maker = await server.newUser({ btc: "10", usdt: "100000", eth: "100" });
  });
  after(async () => {
    await server?.close();
  });

  const setStatus = async (pairName: string, status: string) =>
    expectOk(await server.admin.setPairStatus(pairName, status), `${pairName} ${status}`);
  const statusOf = async (pairName: string) =>
    expectOk(await server.public.info()).pairs.find((p) => p.name === pairName)!.status;

  it("starts trading, and /info shows each pair's status", async () => {
    const info = expectOk(await server.public.info());
    assert.deepEqual(
      info.pairs.map((p) => p.status),
      info.pairs.map(() => "trading"),
    );
    assert.deepEqual(await setStatus("eth_usdt", "cancelOnly"), {
      pairName: "eth_usdt",
      status: "cancelOnly",
    });
    assert.equal(await statusOf("eth_usdt"), "cancelOnly");
    assert.equal(await statusOf("btc_usdt"), "trading");
    await setStatus("eth_usdt", "trading");
  });

  it("publishes every change: the status channel sends every pair on connect, then each change; every logged-on session gets a pairStatus event, with or without reports", async () => {
    const [reporting, quiet] = await server.newUsers(2);
    const info = expectOk(await server.public.info());
    const stream = await server.stream(["status"]);
    const withReports = await SessionSocket.logon(server, reporting);
    const withoutReports = await SessionSocket.logon(server, quiet, { reports: false });
    // A session that has not logged on is told nothing.
    const loggedOff = await SessionSocket.open(server);
    try {
      const snapshot = await stream.next();
      assert.deepEqual(snapshot, {
        stream: "status",
        data: info.pairs.map((p) => ({ pairName: p.name, status: p.status })),
      });
      await setStatus("btc_usdt", "halted");
      // Setting the status a pair already has changes nothing and publishes nothing.
      await setStatus("btc_usdt", "halted");
      await setStatus("btc_usdt", "trading");
      await stream.next((m) => !Array.isArray(m.data) && (m.data as PairStatusUpdate).status === "trading");
      assert.deepEqual(stream.of("status").slice(1), [
        { stream: "status", data: { pairName: "btc_usdt", status: "halted" } },
        { stream: "status", data: { pairName: "btc_usdt", status: "trading" } },
      ]);
      const events = (s: SessionSocket) => s.frames.filter((f) => f.event === "pairStatus");
      for (const s of [withReports, withoutReports]) {
        await waitFor(() => events(s).length === 2, {
          what: "the session's pairStatus events",
          detail: () => JSON.stringify(s.frames),
        });
        assert.deepEqual(events(s), [
          { event: "pairStatus", data: { pairName: "btc_usdt", status: "halted" } },
          { event: "pairStatus", data: { pairName: "btc_usdt", status: "trading" } },
        ]);
      }
      // The logged-off session's next answer comes after both changes were published.
      assert.equal((await loggedOff.call("ping")).status, 401);
      assert.deepEqual(events(loggedOff), []);
      // A connection made after a change sees it in its snapshot.
      await setStatus("eth_usdt", "cancelOnly");
      const later = await server.stream(["status"]);
      try {
        const first = await later.next();
        assert.deepEqual(
          (first.data as PairStatusUpdate[]).map((p) => p.status),
          info.pairs.map((p) => (p.name === "eth_usdt" ? "cancelOnly" : p.status)),
        );
      } finally {
        await later.close();
      }
      await setStatus("eth_usdt", "trading");
      assert.deepEqual(server.asyncApiMismatches, []);
    } finally {
      await stream.close();
      for (const s of [withReports, withoutReports, loggedOff]) s.close();
    }
  });

  it("tails the status channel from the command line", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const tail = run(
      ["tail", "status", "--count", "2", "--url", server.origin],
      {},
      (l) => out.push(l),
      (l) => err.push(l),
    );
    await waitFor(() => out.length === 1, { what: "the tail's snapshot line", detail: () => err.join("\n") });
    await setStatus("eth_btc", "cancelOnly");
    assert.equal(await tail, 0, err.join("\n"));
    assert.deepEqual(JSON.parse(out[1]), {
      stream: "status",
      data: { pairName: "eth_btc", status: "cancelOnly" },
    });
    assert.equal((JSON.parse(out[0]) as { data: unknown[] }).data.length, 3);
    await setStatus("eth_btc", "trading");
  });

  it("cancelOnly: creates and amends refused (PAIR_CANCEL_ONLY), cancels, cancel-all and reads work", async () => {
    const a = await placeLimit(maker, "btc_usdt", "buy", "100", "1");
    const b = await placeLimit(maker, "btc_usdt", "buy", "101", "1");
    const c = await placeLimit(maker, "btc_usdt", "buy", "102", "1");
    const balances = await server.balances(maker);
    await setStatus("btc_usdt", "cancelOnly");

    const create = await maker.client.createOrder(limit("btc_usdt", "buy", "100", "1"));
    expectError(create, 400, "pairName");
    assert.deepEqual(codes(create, "pairName"), ["PAIR_CANCEL_ONLY"]);
    const ru = await server.client(maker, { lang: "ru" }).createOrder(limit("btc_usdt", "buy", "100", "1"));
    assert.equal(errorsOf(ru)?.pairName?.[0], "Пара сейчас принимает только отмены");
    const amend = await maker.client.amendOrder({ orderId: a.id, price: "99" });
    expectError(amend, 400, "pairName");
    assert.deepEqual(codes(amend, "pairName"), ["PAIR_CANCEL_ONLY"]);
    const batch = expectOk(await maker.client.createOrders([limit("btc_usdt", "buy", "100", "1")]));
    assert.deepEqual((batch[0] as { codes?: unknown }).codes, { pairName: ["PAIR_CANCEL_ONLY"] });
    assert.deepEqual(await server.balances(maker), balances, "nothing changed");
    // Another pair is not affected.
    const other = await placeLimit(maker, "eth_usdt", "buy", "10", "1");

    // Reads work and the book keeps its orders.
    const book = expectOk(await server.public.orderBook("btc_usdt"));
    assert.deepEqual(
      book.buy.map((l) => String(l.price)),
      ["102", "101", "100"],
    );
    expectOk(await maker.client.cancelOrder(a.id), "cancel on cancelOnly");
    const cancelled = expectOk(await maker.client.cancelOrders([b.id]));
    assert.deepEqual(cancelled, [{ orderId: b.id }] as BatchCancelResult[]);
    assert.deepEqual(expectOk(await maker.client.cancelAllOrders("btc_usdt")), { cancelled: [c.id] });
    expectOk(await maker.client.cancelOrder(other.id));
    await setStatus("btc_usdt", "trading");
    expectOk(await maker.client.createOrder(limit("btc_usdt", "buy", "100", "1")), "trading again");
    await maker.client.cancelAll();
  });

  it("halted: every order call refused (PAIR_HALTED); cancel-all without a pair skips it; reads work", async () => {
    const h = await placeLimit(maker, "eth_btc", "sell", "0.05", "1");
    const t = await placeLimit(maker, "btc_usdt", "sell", "30000", "0.1");
    const balances = await server.balances(maker);
    await setStatus("eth_btc", "halted");
    for (const [what, res] of [
      ["create", await maker.client.createOrder(limit("eth_btc", "sell", "0.05", "1"))],
      ["amend", await maker.client.amendOrder({ orderId: h.id, price: "0.06" })],
      ["cancel", await maker.client.cancelOrder(h.id)],
      ["cancel-all of the pair", await maker.client.cancelAllOrders("eth_btc")],
    ] as const) {
      expectError(res, 400, "pairName", what);
      assert.deepEqual(codes(res, "pairName"), ["PAIR_HALTED"], what);
    }
    const batch: BatchCancelResult[] = expectOk(await maker.client.cancelOrders([h.id]));
    assert.deepEqual(batch[0].codes, { pairName: ["PAIR_HALTED"] });
    const creates: BatchOrderResult[] = expectOk(
      await maker.client.createOrders([limit("eth_btc", "sell", "0.05", "1")]),
    );
    assert.deepEqual((creates[0] as { codes?: unknown }).codes, { pairName: ["PAIR_HALTED"] });
    assert.deepEqual(await server.balances(maker), balances, "nothing changed");
    expectOk(await server.public.orderBook("eth_btc"), "reads work");
    assert.deepEqual(
      expectOk(await maker.client.openOrders("eth_btc")).map((o) => o.id),
      [h.id],
    );
    // Without a pair: the other pairs' orders only.
    assert.deepEqual(expectOk(await maker.client.cancelAllOrders()), { cancelled: [t.id] });
    assert.deepEqual(
      expectOk(await maker.client.openOrders("eth_btc")).map((o) => o.id),
      [h.id],
    );
  });

  it("keeps the status across a restart; the dead-man's switch cancels on a halted pair", async () => {
    assert.equal(await statusOf("eth_btc"), "halted");
    await server.restart();
    assert.equal(await statusOf("eth_btc"), "halted");
    const stream = await server.stream(["status"]);
    try {
      const snapshot = (await stream.next()).data as PairStatusUpdate[];
      assert.equal(snapshot.find((p) => p.pairName === "eth_btc")?.status, "halted");
    } finally {
      await stream.close();
    }
    const create = await maker.client.createOrder(limit("eth_btc", "sell", "0.05", "1"));
    assert.deepEqual(codes(create, "pairName"), ["PAIR_HALTED"]);
    expectOk(await maker.client.cancelAllAfter(1));
    await waitFor(async () => expectOk(await maker.client.openOrders("eth_btc")).length === 0, {
      what: "the dead-man's switch to cancel the order on the halted pair",
      intervalMs: 50,
    });
    assert.equal((await server.balances(maker)).get("eth")!.reserved, 0n);
    await setStatus("eth_btc", "trading");
  });

  it("refuses a bad status, an unknown pair and unknown fields, changing nothing", async () => {
    const bad = await server.admin.setPairStatus("btc_usdt", "paused");
    expectError(bad, 400, "status");
    expectError(await server.admin.setPairStatus("btc_usdt", null as unknown as string), 400, "status");
    expectError(await server.admin.setPairStatus("nope_nope", "halted"), 400, "pairName");
    expectError(await server.admin.setPairStatus(7 as unknown as string, "halted"), 400, "pairName");
    const extra = await server.admin.raw("POST", "/admin/pairs/status", {
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ pairName: "btc_usdt", status: "halted", why: "x" }),
    });
    expectError(extra, 400, "why");
    expectError(
      await server.admin.with({ adminToken: "wrong" }).setPairStatus("btc_usdt", "halted"),
      401,
      "auth",
    );
    assert.equal(await statusOf("btc_usdt"), "trading");
  });

  it("sets it from the command line", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const argv = [
      "pair-status",
      "eth_usdt",
      "halted",
      "--url",
      server.origin,
      "--admin-token",
      server.adminToken!,
    ];
    const code = await run(
      argv,
      {},
      (l) => out.push(l),
      (l) => err.push(l),
    );
    assert.equal(code, 0, err.join("\n"));
    assert.deepEqual(JSON.parse(out.join("\n")), { pairName: "eth_usdt", status: "halted" });
    assert.equal(await statusOf("eth_usdt"), "halted");
    await setStatus("eth_usdt", "trading");
  });
});
