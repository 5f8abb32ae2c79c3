/**
 * Execution numbers never go back (docs/API.md 16): across kill -9 and a graceful restart a user's
 * sequence goes on from its last committed number with the same reads; a server started on an
 * online backup's copy begins a new `execEpoch`, and a resume from the old epoch is refused there.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SessionSocket } from "../session/helpers.ts";
import { waitFor } from "../wait.ts";
import { expectOk, placeLimit, TestServer, type TestUser } from "./harness.ts";

/** A user's executions read in one page (the tests keep them well under 1000). */
async function executions(user: TestUser) {
  return expectOk(await user.client.executions({ limit: 1000 }));
}

describe("execution numbers across restarts and a backup", () => {
  let server: TestServer;
  let backupDir: string;
  before(async () => {
    backupDir = join(await mkdtemp(join(tmpdir(), "exchange-backups-")), "backups");
    server = await TestServer.start({ args: ["--backup-dir", backupDir] });
  });
  after(async () => {
    await server?.close();
    if (backupDir !== undefined) await rm(join(backupDir, ".."), { recursive: true, force: true });
  });

  it("goes on from the last committed number after kill -9 and after a graceful restart", async () => {
    const [maker, taker] = await server.newUsers(2, { usdt: "100000", btc: "10" });
    await placeLimit(maker, "btc_usdt", "sell", "20000", "0.5"); // maker 1
    await placeLimit(taker, "btc_usdt", "buy", "20000", "0.1"); // maker: trade 2, order 3
    const before = await executions(maker);
    assert.equal(before.lastExecSeq, 3);
    assert.equal(before.execEpoch, 1);

    await server.kill();
    await server.restart();
    assert.deepEqual(await executions(maker), before, "the same executions after kill -9");
    const next = await placeLimit(maker, "btc_usdt", "sell", "20001", "0.1");
    assert.equal(next.execSeq, 4, "the next number after kill -9");

    await server.restart();
    const again = await placeLimit(maker, "btc_usdt", "sell", "20002", "0.1");
    assert.equal(again.execSeq, 5, "the next number after a graceful restart");
    assert.equal((await executions(maker)).lastExecSeq, 5);
  });

  it("starts a new epoch on a backup's copy and refuses a resume from the old one there", async () => {
    const [u] = await server.newUsers(1, { usdt: "100000" });
    await placeLimit(u, "btc_usdt", "buy", "100", "0.1"); // 1
    const made = expectOk(await server.admin.backup());
    await placeLimit(u, "btc_usdt", "buy", "101", "0.1"); // 2: not in the copy
    await server.restartOn(join(backupDir, made.file));
    const read = await executions(u);
    assert.equal(read.execEpoch, 2);
    assert.equal(read.lastExecSeq, 1, "the copy holds the number taken before the backup only");
    const s = await SessionSocket.open(server);
    const old = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 1, resumeEpoch: 1 });
    assert.deepEqual(old.codes, { resumeFrom: ["RESUME_EPOCH"] });
    const fresh = await s.call("session.logon", { ...s.credentials(u), resumeFrom: 0, resumeEpoch: 2 });
    assert.equal(fresh.status, 200);
    await waitFor(() => s.frames.find((f) => f.event === "resumed"), { what: "resumed" });
    assert.deepEqual(
      s.frames.filter((f) => f.event === "resumed").map((f) => [f.execSeq, f.execEpoch]),
      [[1, 2]],
    );
    s.close();
    // A restart of the copy (now the server's own file) keeps its epoch.
    await server.restart();
    assert.equal((await executions(u)).execEpoch, 2);
  });
});
