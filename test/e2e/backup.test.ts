/**
 * Online backup end to end (docs/API.md 11, docs/OPERATIONS.md "Backup and restore"): `POST /admin/backup` taken while
 * several clients place, cancel and trade, then a fresh server process started with `--db` on the
 * backup file. Everything acknowledged before the call is there: the quiet part of the exchange
 * (users and pairs the flow did not touch) is equal field for field, every order and cancel the
 * busy clients saw acknowledged is there, and the whole exchange passes the audits (audit.ts:
 * balances and reservations rebuilt from trades and open orders, books from open orders,
 * conservation of every currency). Also: `exchange backup`, two backups at once, bad input, and a
 * backup folder that cannot be written.
 */

import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { run } from "../../src/cli.ts";
import type { BackupAnswer, CreatedOrder, Order } from "../../src/client/index.ts";
import { waitFor } from "../wait.ts";
import { auditExchange, readBooks, readUserState, type TextBook, type UserState } from "./audit.ts";
import { dec } from "./decimal.ts";
import { expectError, expectOk, limit, TestServer, type TestUser } from "./harness.ts";
import { type Acknowledged, type Flow, newAcknowledged, runBurst } from "./workload.ts";

const JSON_TYPE = { "Content-Type": "application/json" };
/** The quiet users trade here before the backup, and nobody during it. */
const QUIET_FLOW: Flow = {
  pairs: [
    { pair: "btc_usdt", midTicks: 3_000_000, spreadTicks: 3_000, minLots: 1_000, maxLots: 50_000 },
    { pair: "eth_usdt", midTicks: 200_000, spreadTicks: 200, minLots: 1_000, maxLots: 50_000 },
  ],
  marketShare: 0.1,
};
/** The busy users trade here before, during and after the backup. */
const BUSY_FLOW: Flow = {
  pairs: [{ pair: "eth_btc", midTicks: 66_000, spreadTicks: 60, minLots: 100, maxLots: 5_000 }],
  marketShare: 0.1,
};
const FUNDS = { usdt: "1000000", btc: "100", eth: "1000" };
/** Answers of the busy flow before the backup is called, and after it answered. */
const CALL_AFTER = 120;
const GO_ON_FOR = 60;
/** The copies' names (the server started on one adds its -wal, .journal... beside it). */
const BACKUP_NAME = /^exchange-\d{8}T\d{6}-\d{3}Z(-\d+)?\.db$/;

async function copies(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => BACKUP_NAME.test(f));
}

function withoutUpdateTime(o: CreatedOrder): Order {
  const { updateTime: _u, ...rest } = o;
  return rest;
}

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    argv,
    {},
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("online backup", () => {
  let server: TestServer;
  let backupDir: string;
  let quiet: TestUser[] = [];
  let busy: TestUser[] = [];

  before(async () => {
    backupDir = join(await mkdtemp(join(tmpdir(), "exchange-backups-")), "backups");
    server = await TestServer.start({ args: ["--backup-dir", backupDir] });
    quiet = await server.newUsers(4, FUNDS);
    busy = await server.newUsers(6, FUNDS);
  });
  after(async () => {
    await server?.close();
    if (backupDir !== undefined) await rm(join(backupDir, ".."), { recursive: true, force: true });
  });

  it("answers 500 errors.server (BACKUP_FAILED) when the backup folder cannot be made, and writes nothing", async () => {
    // A regular file where the folder should be.
    await writeFile(backupDir, "not a folder\n");
    try {
      const res = await server.admin.backup();
      expectError(res, 500, "server", "backup into a file");
      assert.deepEqual((res.body as { codes?: Record<string, string[]> }).codes?.server, ["BACKUP_FAILED"]);
    } finally {
      await rm(backupDir);
    }
  });

  it("copies, under a flow of orders, everything acknowledged before the call; a server on the copy serves it", async () => {
    // The quiet part: trades on btc_usdt and eth_usdt, then nothing more there.
    const quietAcked = newAcknowledged();
    await runBurst(
      { users: quiet, flow: QUIET_FLOW, seed: 11, loopsPerUser: 1, stepsPerLoop: 30, cancelShare: 0.15 },
      quietAcked,
    );
    assert.equal(quietAcked.unanswered, 0);
    const quietStates = await Promise.all(quiet.map((u) => readUserState(server, u)));
    assert.ok(
      quietStates.some((s) => s.trades.length > 0),
      "the quiet flow must have traded",
    );
    const quietBooks = await readBooks(server);
    const quietHistory = new Map<string, unknown>();
    for (const f of QUIET_FLOW.pairs) quietHistory.set(f.pair, expectOk(await server.public.history(f.pair)));

    // The busy part: orders flow on eth_btc before, during and after the backup.
    const acked = newAcknowledged();
    let call = null as Promise<BackupAnswer> | null;
    let before = null as { orders: Acknowledged["orders"]; cancels: Set<number> } | null;
    let answersAtCall = 0;
    let answersAtReply = -1;
    let answers = 0;
    const burst = runBurst(
      {
        users: busy,
        flow: BUSY_FLOW,
        seed: 12,
        loopsPerUser: 2,
        stepsPerLoop: 1000,
        cancelShare: 0.2,
        shouldStop: () => answersAtReply >= 0 && answers >= answersAtReply + GO_ON_FOR,
        onAnswer: (n) => {
          answers = n;
          if (n < CALL_AFTER || call !== null) return;
          // What the clients have seen acknowledged when the call leaves.
          before = { orders: new Map(acked.orders), cancels: new Set(acked.cancels) };
          answersAtCall = n;
          call = server.admin.backup().then((res) => {
            answersAtReply = answers;
            return expectOk(res, "backup");
          });
        },
      },
      acked,
    );
    await waitFor(() => call !== null, { what: `${CALL_AFTER} answers of the busy flow` });
    const made = await call!;
    await burst;
    assert.equal(acked.unanswered, 0, "every order got an answer during the backup");
    assert.ok(
      answersAtReply > answersAtCall,
      `orders were answered while the backup ran (${answersAtCall} at the call, ${answersAtReply} at its answer)`,
    );
    assert.ok(before !== null);
    const { orders: ackedBefore, cancels: cancelsBefore } = before;

    // The answer names a whole file in the folder, and nothing half-written is left.
    assert.match(made.file, BACKUP_NAME);
    assert.deepEqual(await readdir(backupDir), [made.file]);
    assert.equal((await stat(join(backupDir, made.file))).size, made.bytes);
    const maxAcked = Math.max(...ackedBefore.keys());
    assert.ok(made.lastOrderId >= maxAcked, `lastOrderId ${made.lastOrderId} below acknowledged ${maxAcked}`);

    // A fresh process on the backup file.
    await server.restartOn(join(backupDir, made.file));
    const { states } = await auditExchange(server);

    // The quiet part: equal.
    const byUid = new Map<string, UserState>(states.map((s) => [s.user.uid, s]));
    for (const was of quietStates) {
      const now = byUid.get(was.user.uid)!;
      assert.deepEqual(now.balances, was.balances, `balances of ${was.user.uid}`);
      assert.deepEqual(now.orders, was.orders, `orders of ${was.user.uid}`);
      assert.deepEqual(now.trades, was.trades, `trades of ${was.user.uid}`);
    }
    const books = await readBooks(server);
    for (const f of QUIET_FLOW.pairs) {
      assert.deepEqual(books.get(f.pair), quietBooks.get(f.pair) as TextBook, `book of ${f.pair}`);
      assert.deepEqual(
        expectOk(await server.public.history(f.pair)),
        quietHistory.get(f.pair),
        `history of ${f.pair}`,
      );
    }

    // The busy part: every order and cancel acknowledged before the call.
    const byId = new Map<number, { order: Order; uid: string }>();
    for (const s of states) for (const order of s.orders) byId.set(order.id, { order, uid: s.user.uid });
    assert.ok(ackedBefore.size >= 50, `${ackedBefore.size} orders acknowledged before the call`);
    for (const [id, { order, user }] of ackedBefore) {
      const found = byId.get(id);
      assert.ok(found !== undefined, `order ${id}, acknowledged before the backup, is not in it`);
      assert.equal(found.uid, user.uid, `order ${id} changed owner`);
      const now = found.order;
      const was = withoutUpdateTime(order);
      assert.deepEqual(
        [now.pairName, now.tradeType, now.directionType, now.price, now.amount, now.createTime],
        [was.pairName, was.tradeType, was.directionType, was.price, was.amount, was.createTime],
        `order ${id} fields`,
      );
      assert.ok(dec(now.amountUsed) >= dec(was.amountUsed), `order ${id} lost executed amount`);
      const final = was.tradeType === "market" || was.isCancelled || dec(was.amountUsed) === dec(was.amount);
      if (final) assert.deepEqual(now, was, `order ${id} was final when acknowledged`);
    }
    for (const id of cancelsBefore) {
      assert.equal(
        byId.get(id)?.order.isCancelled,
        true,
        `cancel of ${id}, acknowledged before the backup, is lost`,
      );
    }
    assert.ok(
      states.some((s) => busy.some((u) => u.uid === s.user.uid) && s.trades.length > 0),
      "the busy flow must have traded before the backup",
    );

    // The last ids are those of the copy, and the server on it goes on after them.
    assert.equal(made.lastOrderId, Math.max(...byId.keys()));
    const lastTrade = Math.max(0, ...states.flatMap((s) => s.trades.map((t) => t.id)));
    assert.equal(made.lastTradeId, lastTrade);
    const resting = expectOk(await busy[0].client.createOrder(limit("btc_usdt", "buy", "1", "0.001")));
    assert.ok(
      resting.id > made.lastOrderId,
      `order id ${resting.id} reused (copy's last ${made.lastOrderId})`,
    );
    expectOk(await busy[0].client.cancelOrder(resting.id));
    await auditExchange(server);
  });

  it("prints the answer of exchange backup, and two backups at once make two files", async () => {
    const r = await cli(["backup", "--url", server.origin, "--admin-token", server.adminToken!]);
    assert.equal(r.code, 0, r.err);
    const printed = JSON.parse(r.out) as BackupAnswer;
    assert.deepEqual(Object.keys(printed).sort(), ["bytes", "dir", "file", "lastOrderId", "lastTradeId"]);
    // The folder is in the answer: the copy is found without knowing the server's settings.
    assert.equal(printed.dir, backupDir);
    assert.equal((await stat(join(printed.dir, printed.file))).size, printed.bytes);

    const [a, b] = await Promise.all([server.admin.backup(), server.admin.backup()]);
    const files = [expectOk(a).file, expectOk(b).file];
    assert.notEqual(files[0], files[1]);
    assert.equal(expectOk(a).lastOrderId, printed.lastOrderId);
    const listed = await copies(backupDir);
    for (const f of [printed.file, ...files]) assert.ok(listed.includes(f), `${f} in ${listed.join(", ")}`);
    assert.equal(listed.length, 4, listed.join(", "));
    assert.ok(!(await readdir(backupDir)).some((f) => f.endsWith(".partial")));
  });

  it("refuses a body with fields (400 keyed by the field) and a wrong admin token (401), making no file", async () => {
    const count = (await copies(backupDir)).length;
    const withField = await server.admin.raw("POST", "/admin/backup", {
      body: JSON.stringify({ dir: "/tmp" }),
      headers: { ...JSON_TYPE, Authorization: `Bearer ${server.adminToken}` },
    });
    expectError(withField, 400, "dir", "a body with a field");
    const wrongToken = await server.admin.raw("POST", "/admin/backup", {
      body: "{}",
      headers: { ...JSON_TYPE, Authorization: "Bearer not-the-admin-token" },
    });
    expectError(wrongToken, 401, "auth", "a wrong admin token", false);
    const cliWrong = await cli(["backup", "--url", server.origin, "--admin-token", "not-the-admin-token"]);
    assert.equal(cliWrong.code, 1);
    const cliNone = await cli(["backup", "--url", server.origin]);
    assert.equal(cliNone.code, 2, "no admin token: a usage error");
    assert.equal((await copies(backupDir)).length, count);
  });
});
