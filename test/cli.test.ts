/**
 * The `exchange` command's signing (src/cli.ts): the bound form of docs/API.md 3 by default, with
 * `--recv-window`, and the old form with `--signature legacy`. What it sends is read by a plain
 * node:http listener that records the request; that it is accepted, by the real server. The
 * `session` commands (docs/API.md 13: place, cancel, tail of the execution reports) against a real
 * server, the tail also as a process stopped with Ctrl-C and from `--resume N` (docs/API.md 16: the
 * executions above N as GET /trade/executions lists them, then live ones; a bad N a usage error). The admin commands `api-key create` and
 * `withdraw`, and the public reads `book` and `history`, against a real server: what they print and
 * what they changed, read back over REST. Stop orders (docs/API.md 18) placed with `--stop` or
 * `--trailing-delta`, a trailing one moved by trades and amended with `order amend`, against a real
 * server; `--stop` with `--trailing-delta` a usage error.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { run } from "../src/cli.ts";
import {
  boundSigningText,
  type Order,
  type OrderBook,
  type PublicTrade,
  signText,
} from "../src/client/index.ts";
import { expectOk, limit, placeLimit, REPO_ROOT, TestServer, type TestUser } from "./e2e/harness.ts";
import { read as readOrder, tradeAt } from "./e2e/stop-helpers.ts";
import { cli } from "./support/cli-run.ts";
import { waitFor } from "./wait.ts";

const TOKEN = "c".repeat(32);
const SECRET = "d".repeat(32);

describe("exchange command signing", () => {
  let recorder: Server;
  let recorded: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  let recorderUrl = "";
  let server: TestServer;
  let user: TestUser;

  before(async () => {
    recorder = createServer((req, res) => {
      recorded.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      res.setHeader("content-type", "application/json");
      res.end("[]");
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    server = await TestServer.start();
    user = await server.newUser({ usdt: "10" });
  });
  after(async () => {
    await new Promise((resolve) => recorder.close(resolve));
    await server?.close();
  });

  const sent = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    recorded = [];
    const r = await cli([...argv, "--url", recorderUrl, "--token", TOKEN, "--secret", SECRET], env);
    assert.equal(r.code, 0, r.err);
    assert.equal(recorded.length, 1);
    return recorded[0];
  };

  it("signs in the bound form by default: X-Timestamp, and the time, method and path signed", async () => {
    const before = Date.now();
    const req = await sent(["balances", "btc_usdt"]);
    const ts = String(req.headers["x-timestamp"]);
    assert.ok(Number(ts) >= before && Number(ts) <= Date.now(), `X-Timestamp ${ts}`);
    assert.equal(req.headers["x-recv-window"], undefined);
    assert.equal(req.url, "/1.0/trade/pairs/btc_usdt/user-balances");
    assert.equal(
      req.headers["x-signature"],
      signText(SECRET, boundSigningText(ts, "GET", "/1.0/trade/pairs/btc_usdt/user-balances", "")),
    );
  });

  it("sends X-Recv-Window from --recv-window or EXCHANGE_RECV_WINDOW, and refuses a bad one", async () => {
    assert.equal(
      (await sent(["balances", "btc_usdt", "--recv-window", "60000"])).headers["x-recv-window"],
      "60000",
    );
    assert.equal(
      (await sent(["balances", "btc_usdt"], { EXCHANGE_RECV_WINDOW: "1" })).headers["x-recv-window"],
      "1",
    );
    for (const w of ["0", "60001", "1.5", "x"]) {
      const r = await cli(["balances", "btc_usdt", "--recv-window", w, "--url", recorderUrl]);
      assert.equal(r.code, 2, `--recv-window ${w}`);
      assert.match(r.err, /recv-window/);
    }
  });

  it("sends the old form with --signature legacy or EXCHANGE_SIGNATURE=legacy", async () => {
    for (const [argv, env] of [
      [["--signature", "legacy"], {}],
      [[], { EXCHANGE_SIGNATURE: "legacy" }],
    ] as const) {
      const req = await sent(["balances", "btc_usdt", ...argv], env);
      assert.equal(req.headers["x-timestamp"], undefined);
      assert.equal(req.headers["x-signature"], signText(SECRET, ""));
    }
    const bad = await cli(["balances", "btc_usdt", "--signature", "other"]);
    assert.equal(bad.code, 2);
  });

  it("is accepted by the server in both forms", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    for (const form of ["bound", "legacy"]) {
      const r = await cli(["balances", "btc_usdt", ...key, "--signature", form, "--recv-window", "10000"]);
      assert.equal(r.code, 0, `${form}: ${r.err}`);
      assert.deepEqual(JSON.parse(r.out)[1], { currency: "usdt", balance: "10", reserved: "0" });
    }
  });

  it("sets, reads and resets market-maker protection, and places protected orders with an STP mode", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    const set = await cli(["mmp", "set", "btc_usdt", "30", "0.5", "10", ...key]);
    assert.equal(set.code, 0, set.err);
    assert.deepEqual(JSON.parse(set.out), {
      pairName: "btc_usdt",
      intervalSeconds: 30,
      qtyLimit: "0.5",
      frozenSeconds: 10,
      frozen: false,
      frozenUntil: 0,
    });
    const got = await cli(["mmp", "get", "btc_usdt", ...key]);
    assert.deepEqual(JSON.parse(got.out), JSON.parse(set.out));
    const reset = await cli(["mmp", "reset", "btc_usdt", ...key]);
    assert.equal(reset.code, 0, reset.err);
    const placed = await cli([
      ...["order", "place", "btc_usdt", "buy", "0.01", "1", "--mmp", "--stp", "cancelBoth"],
      ...key,
    ]);
    assert.equal(placed.code, 0, placed.err);
    const o = JSON.parse(placed.out) as { id: number; mmp: boolean; selfTradePrevention: string };
    assert.equal(o.mmp, true);
    assert.equal(o.selfTradePrevention, "cancelBoth");
    assert.equal((await cli(["order", "cancel", String(o.id), ...key])).code, 0);
    const bad = await cli(["mmp", "set", "btc_usdt", "3601", "1", "0", ...key]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /intervalSeconds/);
    assert.equal((await cli(["mmp", "other", "btc_usdt", ...key])).code, 2);
  });

  it("places a stop order with --stop and --stop-direction, which waits until a trade meets it", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    const placed = await cli([
      ...["order", "place", "btc_usdt", "buy", "0.01", "1", "--stop", "900000", "--stop-direction", "up"],
      ...key,
    ]);
    assert.equal(placed.code, 0, placed.err);
    const o = JSON.parse(placed.out) as {
      id: number;
      stopPrice: number;
      stopDirection: string;
      triggered: boolean;
    };
    assert.deepEqual([o.stopPrice, o.stopDirection, o.triggered], [900000, "up", false]);
    const read = expectOk(await user.client.order(o.id));
    assert.deepEqual([read.stopPrice, read.stopDirection, read.triggered], [900000, "up", false]);
    assert.equal((await cli(["order", "cancel", String(o.id), ...key])).code, 0);
    // One without the other: the server names the missing field; another direction: a usage error.
    const half = await cli(["order", "place", "btc_usdt", "buy", "0.01", "1", "--stop", "900000", ...key]);
    assert.equal(half.code, 1);
    assert.match(half.err, /stopDirection/);
    const bad = await cli([
      ...[
        "order",
        "place",
        "btc_usdt",
        "buy",
        "0.01",
        "1",
        "--stop",
        "900000",
        "--stop-direction",
        "sideways",
      ],
      ...key,
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--stop-direction must be up or down/);
  });

  it("places a trailing stop with --trailing-delta, whose stop price follows the trades, and amends its delta", async () => {
    const [maker, taker, me] = [
      await server.newUser({ btc: "1" }),
      await server.newUser({ usdt: "100000" }),
      await server.newUser({ btc: "1" }),
    ];
    await tradeAt(maker, taker, "btc_usdt", "25000", "0.01");
    const key = ["--url", server.origin, "--token", me.apiToken, "--secret", me.secretKey];
    const placed = await cli([
      ...[
        "order",
        "place",
        "btc_usdt",
        "sell",
        "0.01",
        "--trailing-delta",
        "500",
        "--stop-direction",
        "down",
      ],
      ...key,
    ]);
    assert.equal(placed.code, 0, placed.err);
    const o = JSON.parse(placed.out) as Order;
    // A stop-market sell, 500 under the last trade price.
    assert.deepEqual(
      [o.tradeType, o.trailingDelta, o.stopPrice, o.stopDirection, o.triggered],
      ["market", 500, 24500, "down", false],
    );
    // A trade higher up moves it up; one lower down leaves it where it is.
    await tradeAt(maker, taker, "btc_usdt", "25300", "0.01");
    await tradeAt(maker, taker, "btc_usdt", "25100", "0.01");
    const listed = await cli(["orders", "--pair", "btc_usdt", ...key]);
    assert.equal(listed.code, 0, listed.err);
    const moved = (JSON.parse(listed.out) as { items: Order[] }).items.find((x) => x.id === o.id);
    assert.deepEqual([moved?.stopPrice, moved?.trailingDelta, moved?.triggered], [24800, 500, false]);
    // A new delta counts from the same highest price (25300); the last trade (25100) is above it.
    const amended = await cli(["order", "amend", String(o.id), "--trailing-delta", "250", ...key]);
    assert.equal(amended.code, 0, amended.err);
    assert.deepEqual(
      [(JSON.parse(amended.out) as Order).stopPrice, (JSON.parse(amended.out) as Order).trailingDelta],
      [25050, 250],
    );
    const read = await readOrder(me, o.id);
    assert.deepEqual([read.stopPrice, read.trailingDelta, read.triggered], [25050, 250, false]);
    // A fixed stop price on a trailing stop: the server refuses it, and says why.
    const fixed = await cli(["order", "amend", String(o.id), "--stop", "25000", ...key]);
    assert.equal(fixed.code, 1);
    assert.match(fixed.err, /STOP_AMEND_NOT_WAITING/);
    assert.equal((await cli(["order", "cancel", String(o.id), ...key])).code, 0);
    // Without a direction: the server names it.
    const half = await cli(["order", "place", "btc_usdt", "sell", "0.01", "--trailing-delta", "500", ...key]);
    assert.equal(half.code, 1);
    assert.match(half.err, /stopDirection/);
  });

  it("refuses --stop with --trailing-delta, and an amend with nothing to change, as usage errors", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    const stops = ["--stop", "24000", "--trailing-delta", "500", "--stop-direction", "down"];
    for (const argv of [
      ["order", "place", "btc_usdt", "sell", "0.01", ...stops],
      ["session", "place", "btc_usdt", "sell", "0.01", ...stops],
      ["order", "amend", "1", "--stop", "24000", "--trailing-delta", "500"],
    ]) {
      const r = await cli([...argv, ...key]);
      assert.equal(r.code, 2, argv.join(" "));
      assert.match(r.err, /--stop and --trailing-delta cannot go together/);
    }
    const empty = await cli(["order", "amend", "1", ...key]);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /amend needs --amount, --price, --stop or --trailing-delta/);
    const direction = await cli([
      "order",
      "amend",
      "1",
      "--trailing-delta",
      "5",
      "--stop-direction",
      "up",
      ...key,
    ]);
    assert.equal(direction.code, 2);
    assert.match(direction.err, /keeps its --stop-direction/);
    // Nothing was placed.
    const orders = expectOk(await user.client.userOrders("btc_usdt", { page: 1, pageSize: 50 }));
    assert.equal(
      orders.items.some((x) => x.trailingDelta !== undefined),
      false,
    );
  });

  it("places an OCO with exchange oco PAIR buy AMOUNT --price --stop --stop-limit, both legs sharing one id", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    const placed = await cli([
      ...["oco", "btc_usdt", "buy", "0.01", "--price", "1", "--stop", "900000", "--stop-limit", "900001"],
      ...["--client-order-id", "cli-oco", ...key],
    ]);
    // Not enough for the stop leg's hold (9000.01 usdt): refused whole, the field named.
    assert.equal(placed.code, 1);
    assert.match(placed.err, /amount/);
    const ok = await cli([
      ...[
        "oco",
        "btc_usdt",
        "buy",
        "0.01",
        "--price",
        "1",
        "--stop",
        "900000",
        "--client-order-id",
        "cli-oco",
      ],
      ...key,
    ]);
    assert.equal(ok.code, 0, ok.err);
    const oco = JSON.parse(ok.out) as {
      ocoId: number;
      orders: { id: number; ocoId: number; clientOrderId?: string; stopPrice?: number; tradeType: string }[];
    };
    const [limitLeg, stopLeg] = oco.orders;
    assert.deepEqual(
      [limitLeg.id, limitLeg.ocoId, limitLeg.clientOrderId],
      [oco.ocoId, oco.ocoId, "cli-oco"],
    );
    assert.deepEqual([stopLeg.ocoId, stopLeg.stopPrice, stopLeg.tradeType], [oco.ocoId, 900000, "market"]);
    assert.equal((await cli(["order", "cancel", String(oco.ocoId), ...key])).code, 0);
    assert.equal(expectOk(await user.client.order(stopLeg.id)).cancelReason, "OCO");
    const missing = await cli(["oco", "btc_usdt", "buy", "0.01", "--price", "1", ...key]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /--stop/);
  });

  it("quotes with exchange quote PAIR --bid P:A --ask P:A, pulls with no levels, refuses a bad level", async () => {
    const key = ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];
    const r = await cli(["quote", "btc_usdt", "--bid", "2:1", "--bid", "1.5:2", ...key]);
    assert.equal(r.code, 0, r.err);
    const placed = JSON.parse(r.out) as { cancelled: number[]; placed: { id: number; quote: boolean }[] };
    assert.deepEqual(placed.cancelled, []);
    assert.deepEqual(
      placed.placed.map((o) => o.quote),
      [true, true],
    );
    const pull = await cli(["quote", "btc_usdt", ...key]);
    assert.equal(pull.code, 0, pull.err);
    assert.deepEqual(JSON.parse(pull.out), { cancelled: placed.placed.map((o) => o.id), placed: [] });
    const bad = await cli(["quote", "btc_usdt", "--ask", "3", ...key]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--ask must be PRICE:AMOUNT/);
    const refused = await cli(["quote", "btc_usdt", "--bid", "1:1", "--bid", "2:1", ...key]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /QUOTE_BIDS_INVALID/);
  });
});

describe("exchange session", () => {
  let server: TestServer;
  let user: TestUser;

  before(async () => {
    server = await TestServer.start();
    user = await server.newUser({ usdt: "1000" });
  });
  after(async () => {
    await server?.close();
  });

  const key = () => ["--url", server.origin, "--token", user.apiToken, "--secret", user.secretKey];

  it("places and cancels an order over a trading session, printing the answers", async () => {
    const placed = await cli([
      "session",
      "place",
      "btc_usdt",
      "buy",
      "1",
      "100",
      "--client-order-id",
      "cli-1",
      ...key(),
    ]);
    assert.equal(placed.code, 0, placed.err);
    const order = JSON.parse(placed.out) as { id: number; clientOrderId: string; price: number };
    assert.deepEqual([order.clientOrderId, order.price], ["cli-1", 100]);
    const rest = await user.client.order(order.id);
    assert.equal((rest.body as { isCancelled: boolean }).isCancelled, false);

    const cancelled = await cli(["session", "cancel", String(order.id), ...key()]);
    assert.deepEqual([cancelled.code, cancelled.out], [0, "[]"]);
    const again = await cli(["session", "cancel", String(order.id), ...key()]);
    assert.equal(again.code, 1);
    assert.match(again.err, /^status 400: .*ORDER_ALREADY_CANCELLED/);

    const noKey = await cli(["session", "cancel", "1", "--url", server.origin]);
    assert.equal(noKey.code, 2);
    const badKey = await cli([
      "session",
      "cancel",
      "1",
      "--url",
      server.origin,
      "--token",
      user.apiToken,
      "--secret",
      "00",
    ]);
    assert.equal(badKey.code, 1);
    assert.match(badKey.err, /logon refused.*401/);
  });

  it("tails the execution reports as JSON lines", async () => {
    const err: string[] = [];
    const out: string[] = [];
    const tail = run(
      ["session", "tail", "--count", "2", ...key()],
      {},
      (l) => out.push(l),
      (l) => err.push(l),
    );
    await waitFor(() => err.some((l) => l.startsWith(`logged on as ${user.uid}`)), {
      what: "the tail's logon",
      detail: () => err.join("\n"),
    });
    const o = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "90", "1")));
    expectOk(await user.client.cancelOrder(o.id));
    assert.equal(await tail, 0);
    const lines = out.map(
      (l) => JSON.parse(l) as { event: string; data: { id: number; isCancelled: boolean } },
    );
    assert.deepEqual(
      lines.map((l) => [l.event, l.data.id, l.data.isCancelled]),
      [
        ["order", o.id, false],
        ["order", o.id, true],
      ],
    );
  });

  it("tails from --resume N: the executions above N as GET /trade/executions has them, then live ones", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    const sells = [];
    for (let i = 0; i < 3; i++) sells.push(await placeLimit(maker, "btc_usdt", "sell", "20000", "0.1"));
    await placeLimit(taker, "btc_usdt", "buy", "20000", "0.25");
    expectOk(await maker.client.cancelOrder(sells[2].id));
    const from = 2;
    const above = expectOk(await maker.client.executions({ after: from }));
    // 3 orders, 3 trades, 3 fills and a cancel; the replay leaves out the states superseded later.
    assert.equal(above.lastExecSeq, 10);
    assert.ok(above.items.length >= 5, JSON.stringify(above.items));

    const err: string[] = [];
    const out: string[] = [];
    const makerKey = ["--url", server.origin, "--token", maker.apiToken, "--secret", maker.secretKey];
    const tail = run(
      ["session", "tail", "--resume", String(from), "--count", String(above.items.length + 2), ...makerKey],
      {},
      (l) => out.push(l),
      (l) => err.push(l),
    );
    await waitFor(() => err.some((l) => l.startsWith("resumed: replayed up to execSeq 10")), {
      what: "the tail's resume",
      detail: () => err.join("\n"),
    });
    const o = await placeLimit(maker, "btc_usdt", "buy", "100", "0.1");
    expectOk(await maker.client.cancelOrder(o.id));
    assert.equal(await tail, 0, err.join("\n"));
    const lines = out.map((l) => JSON.parse(l) as { event: string; data: { id: number }; execSeq: number });
    assert.deepEqual(
      lines.slice(0, above.items.length),
      above.items.map((x) => ({ event: x.event, data: x.data, execSeq: x.execSeq })),
      "the replay: exactly the executions above N",
    );
    assert.deepEqual(
      lines.slice(above.items.length).map((l) => [l.event, l.data.id, l.execSeq]),
      [
        ["order", o.id, 11],
        ["order", o.id, 12],
      ],
      "then the live reports",
    );

    for (const bad of ["-1", "1.5", "x", "", "9007199254740993"]) {
      const refused = await cli(["session", "tail", `--resume=${bad}`, ...makerKey]);
      assert.equal(refused.code, 2, `--resume=${bad}: ${refused.err}`);
      assert.match(refused.err, /^--resume must be an integer >= 0/);
      assert.equal(refused.out, "");
    }
  });

  it("runs the tail until Ctrl-C as a process, exiting 0 without saying it reconnects", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "session", "tail", ...key()], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    child.stdout.on("data", (d) => {
      stdout += String(d);
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      await waitFor(() => stderr.includes("logged on as"), {
        what: "the logon",
        detail: () => stderr,
        timeoutMs: 30_000,
      });
      const o = expectOk(await user.client.createOrder(limit("btc_usdt", "buy", "80", "1")));
      await waitFor(() => stdout.includes(`"id":${o.id}`), { what: "the report line", detail: () => stdout });
      expectOk(await user.client.cancelOrder(o.id));
      child.kill("SIGINT");
      assert.equal(await exited, 0, stderr);
      // Ending the session on Ctrl-C is no drop: nothing says it reconnects.
      assert.doesNotMatch(stderr, /dropped|reconnecting/, stderr);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("exchange admin and market commands", () => {
  let server: TestServer;

  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server?.close();
  });

  const admin = () => ["--url", server.origin, "--admin-token", server.adminToken!];

  it("creates another API key with api-key create, which then signs for the same user", async () => {
    const u = await server.newUser({ usdt: "25" });
    const created = await cli(["api-key", "create", u.uid, ...admin()]);
    assert.equal(created.code, 0, created.err);
    const key = JSON.parse(created.out) as { apiToken: string; secretKey: string };
    assert.deepEqual(Object.keys(key).sort(), ["apiToken", "secretKey"]);
    assert.match(key.apiToken, /^[0-9a-f]{32,}$/);
    assert.match(key.secretKey, /^[0-9a-f]{32,}$/);
    assert.notEqual(key.apiToken, u.apiToken);
    // The new key signs for the same user: its balances, through the command too.
    const signed = ["--url", server.origin, "--token", key.apiToken, "--secret", key.secretKey];
    const balances = await cli(["balances", "btc_usdt", ...signed]);
    assert.equal(balances.code, 0, balances.err);
    assert.deepEqual(JSON.parse(balances.out)[1], { currency: "usdt", balance: "25", reserved: "0" });
    const view = await cli(["user", u.uid, ...admin()]);
    assert.equal(view.code, 0, view.err);
    const prefixes = (
      JSON.parse(view.out) as { apiKeys: { apiTokenPrefix: string; revoked: boolean }[] }
    ).apiKeys
      .map((k) => `${k.apiTokenPrefix} ${k.revoked}`)
      .sort();
    assert.deepEqual(
      prefixes,
      [`${u.apiToken.slice(0, 8)} false`, `${key.apiToken.slice(0, 8)} false`].sort(),
    );

    const unknown = await cli(["api-key", "create", randomUUID(), ...admin()]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^HTTP 400: .*UID_UNKNOWN/);
    const noAdmin = await cli(["api-key", "create", u.uid, "--url", server.origin]);
    assert.equal(noAdmin.code, 2);
    assert.match(noAdmin.err, /needs --admin-token/);
    assert.equal((await cli(["api-key", "create", ...admin()])).code, 2, "no UID");
    assert.equal((await cli(["api-key", "revoke", u.uid, ...admin()])).code, 2, "no such subcommand");
  });

  it("withdraws with withdraw UID CURRENCY AMOUNT, and refuses more than the available balance", async () => {
    const u = await server.newUser({ usdt: "100" });
    const held = expectOk(await u.client.createOrder(limit("btc_usdt", "buy", "10", "1")));
    const r = await cli(["withdraw", u.uid, "usdt", "40.5", ...admin()]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), { currency: "usdt", balance: "49.5" });
    assert.deepEqual((await server.balanceTable(u)).usdt, ["49.5", "10"]);
    const transfers = expectOk(await u.client.transfers());
    assert.deepEqual(
      transfers.items.map((t) => [t.type, t.currency, t.amount]),
      [
        ["withdraw", "usdt", "40.5"],
        ["deposit", "usdt", "100"],
      ],
    );

    // The 10 held by the open order cannot be withdrawn: nothing changes.
    const tooMuch = await cli(["withdraw", u.uid, "usdt", "49.51", ...admin()]);
    assert.equal(tooMuch.code, 1);
    assert.match(tooMuch.err, /^HTTP 400: .*"amount"/);
    assert.deepEqual((await server.balanceTable(u)).usdt, ["49.5", "10"]);
    assert.equal(expectOk(await u.client.transfers()).total, 2);
    assert.equal((await cli(["withdraw", u.uid, "usdt", "1", "--url", server.origin])).code, 2);
    assert.equal((await cli(["withdraw", u.uid, "usdt", ...admin()])).code, 2, "no AMOUNT");
    expectOk(await u.client.cancelOrder(held.id));
  });

  it("refuses promote on a server that follows no leader, and needs the admin token", async () => {
    const r = await cli(["promote", ...admin()]);
    assert.equal(r.code, 1);
    assert.match(r.err, /HTTP 400: .*"codes":\{"role":\["NOT_A_FOLLOWER"\]\}/);
    const forced = await cli(["promote", "--force", ...admin()]);
    assert.equal(forced.code, 1);
    assert.match(forced.err, /NOT_A_FOLLOWER/);
    const noAdmin = await cli(["promote", "--url", server.origin]);
    assert.equal(noAdmin.code, 2);
    assert.match(noAdmin.err, /needs --admin-token/);
  });

  it("prints a pair's book with book PAIR and its trades with history PAIR, as the REST reads do", async () => {
    const [maker, taker] = await server.newUsers(2, { btc: "1", usdt: "10000" });
    expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "100", "0.5")));
    expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "101", "0.25")));
    expectOk(await maker.client.createOrder(limit("btc_usdt", "buy", "90", "0.1")));
    expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "100", "0.2")));
    const url = ["--url", server.origin];

    const book = await cli(["book", "btc_usdt", ...url]);
    assert.equal(book.code, 0, book.err);
    const printed = JSON.parse(book.out) as OrderBook;
    assert.deepEqual(
      [printed.sell, printed.buy],
      [
        [
          { price: 100, amount: 0.3 },
          { price: 101, amount: 0.25 },
        ],
        [{ price: 90, amount: 0.1 }],
      ],
    );
    assert.deepEqual(printed, expectOk(await server.public.orderBook("btc_usdt")));

    const history = await cli(["history", "btc_usdt", ...url]);
    assert.equal(history.code, 0, history.err);
    const trades = JSON.parse(history.out) as PublicTrade[];
    assert.deepEqual(
      trades.map((t) => [t.price, t.amount, t.directionType, t.tradeType]),
      [[100, 0.2, "buy", "limit"]],
    );
    assert.deepEqual(trades, expectOk(await server.public.history("btc_usdt")));

    for (const cmd of ["book", "history"]) {
      const unknown = await cli([cmd, "nope_nope", ...url]);
      assert.equal(unknown.code, 1, cmd);
      assert.match(unknown.err, /^HTTP 404: .*pairName/);
      assert.equal((await cli([cmd, ...url])).code, 2, `${cmd} without PAIR`);
    }
  });
  it("reads from a point with --since, --from-id and --limit, a user's trades with my-trades and its account (docs/API.md 20.3, 20.4)", async () => {
    const [maker, taker] = await server.newUsers(2, { btc: "1", eth: "10", usdt: "10000" });
    const since = Date.now();
    expectOk(await maker.client.createOrder(limit("eth_usdt", "sell", "50", "1")));
    expectOk(await taker.client.createOrder(limit("eth_usdt", "buy", "50", "0.25")));
    expectOk(await taker.client.createOrder(limit("eth_usdt", "buy", "50", "0.5")));
    expectOk(await taker.client.createOrder(limit("btc_usdt", "buy", "1", "0.1")));
    const url = ["--url", server.origin];
    const key = [...url, "--token", taker.apiToken, "--secret", taker.secretKey];
    const json = async <T>(args: string[]): Promise<T> => {
      const r = await cli(args);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.err}`);
      return JSON.parse(r.out) as T;
    };

    const all = await json<PublicTrade[]>(["history", "eth_usdt", "--since", String(since), ...url]);
    assert.deepEqual(
      all.map((t) => t.amount),
      [0.25, 0.5],
      "oldest first from the point",
    );
    assert.deepEqual(all, expectOk(await server.public.history("eth_usdt", { since })));
    const one = await json<PublicTrade[]>(["history", "eth_usdt", "--from-id", String(all[1].id), ...url]);
    assert.deepEqual(one, [all[1]]);
    assert.deepEqual(
      await json<PublicTrade[]>(["history", "eth_usdt", "--since", String(since), "--limit", "1", ...url]),
      [all[0]],
    );

    const mine = await json<{ items: { orderId: number; pairName: string; amount: number }[] }>([
      "my-trades",
      "--pair",
      "eth_usdt",
      "--since",
      String(since),
      ...key,
    ]);
    assert.deepEqual(
      mine.items.map((t) => [t.pairName, t.amount]),
      [
        ["eth_usdt", 0.25],
        ["eth_usdt", 0.5],
      ],
    );
    assert.deepEqual(mine, expectOk(await taker.client.userHistory({ pairName: "eth_usdt", since })));
    const orders = await json<{ items: { pairName: string }[] }>(["orders", "--pair", "btc_usdt", ...key]);
    assert.deepEqual(
      orders.items.map((o) => o.pairName),
      ["btc_usdt"],
      "--pair filters",
    );
    const account = await json<{ uid: string }>(["account", ...key]);
    assert.deepEqual(account, expectOk(await taker.client.account()));
    assert.equal(account.uid, taker.uid);
    const bad = await cli(["history", "eth_usdt", "--since", "yesterday", ...url]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /since/);
    assert.equal((await cli(["account", ...url])).code, 2, "account is signed");
  });
});
