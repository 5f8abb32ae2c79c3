/**
 * A follower's hand-over of its leader's batches to its own writer (src/replication/follower.ts,
 * `drain`): batches of one connection that arrive while a commit is in flight share the next
 * commit; `durable` goes once per commit, for its last key, only after that commit; the read
 * models take every batch in key order; batches of another connection never share a commit with
 * those before them. Real writers on temporary databases; the leader's socket is a recorder.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { DbWriter } from "../../src/db/writer.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { decode, type JournalRow, journalPath } from "../../src/protocol/db/journal.ts";
import { KINDS, USER } from "../../src/protocol/db/writer-batch.ts";
import { FollowerLink } from "../../src/replication/follower.ts";
import { batchFrame, FRAME_BATCH, FrameReader, parseMessage } from "../../src/replication/protocol.ts";
import { tempDir } from "../db/helpers.ts";
import { waitFor } from "../wait.ts";

const tmp = tempDir("follower-drain");
after(tmp.cleanup);

/** Users in the journal rows of `file` (each leader batch below holds one). */
function journaledUsers(file: string): number {
  const j = openDatabase(journalPath(file), { readonly: true });
  try {
    const at = KINDS.indexOf(USER);
    let n = 0;
    for (const r of j.prepare<[], JournalRow>("SELECT * FROM journal ORDER BY seq").all())
      n += decode(r).counts[at];
    return n;
  } finally {
    j.close();
  }
}

describe("a follower's drain", () => {
  it("commits the batches queued together in one commit and acknowledges each commit only after it", async () => {
    // The leader: ten batches of one user each (a pair too, so the rows name symbols).
    const leaderFile = `${tmp.dir}/leader.db`;
    const leader = await DbWriter.start(leaderFile);
    leader.pair("btc_usdt", 2, 6);
    for (let i = 1; i <= 10; i++) {
      leader.user(i, `uid-${i}`, i);
      await leader.flush();
    }
    // Read while it runs: its close applies and trims the journal.
    const j = openDatabase(journalPath(leaderFile), { readonly: true });
    const rows = j.prepare<[], JournalRow>("SELECT * FROM journal ORDER BY seq").all();
    const syms = j.prepare<[], string>("SELECT name FROM journal_syms ORDER BY id").pluck().all();
    j.close();
    await leader.close();
    assert.equal(rows.length, 10);
    const keys = rows.map((r) => r.seq);

    const followerFile = `${tmp.dir}/follower.db`;
    // No apply before the end's `applied()`: an apply lets the writer delete the journal rows it
    // covers, and the acks' user counts below read the journal (10 ms of quiet between two sends
    // of a loaded machine applied and deleted the first six, and the last ack counted 4).
    const writer = await DbWriter.start(followerFile, { applyQuietMs: 1e9 });
    try {
      const link = new FollowerLink({
        host: "127.0.0.1",
        port: 1,
        token: "t",
        tls: false,
        dbPath: followerFile,
      });
      // What the leader hears: each `durable`, with the follower's commits and journaled users then.
      const acks: { key: number; commits: number; users: number }[] = [];
      const reader = new FrameReader((_type, payload) => {
        const m = parseMessage(payload);
        assert.equal(m.t, "durable");
        acks.push({
          key: m.key as number,
          commits: writer.stats.batches,
          users: journaledUsers(followerFile),
        });
      });
      const shown: number[] = [];
      const fatal: string[] = [];
      const inner = link as unknown as {
        socket: { write(b: Buffer): boolean };
        syms: string[];
        mode: "async" | "sync";
        onFrame(type: number, payload: Buffer): void;
      };
      inner.socket = {
        write: (b) => {
          reader.push(b);
          return true;
        },
      };
      inner.syms = [...syms];
      // A `sync` leader's follower: a `durable` after every commit (an `async` one's ride on heads).
      inner.mode = "sync";
      link.attach(
        writer,
        (b) => shown.push(b.seq),
        (reason) => fatal.push(reason),
        () => fatal.push("a new copy"),
      );
      const send = (from: number, to: number) => {
        for (const r of rows.slice(from, to)) inner.onFrame(FRAME_BATCH, batchFrame(r).subarray(5));
      };

      // Three in one turn, and three more while their commit is in flight: two commits.
      send(0, 3);
      await new Promise((r) => setImmediate(r));
      send(3, 6);
      await waitFor(() => acks.length === 2, {
        what: "two acks",
        detail: () => JSON.stringify(acks),
      });
      // Each `durable` comes after its commit: the journal holds at least its batches' users then
      // (the writer thread may already have committed the next ones).
      assert.deepEqual(
        acks.map((a) => [a.key, a.commits]),
        [
          [keys[2], 1],
          [keys[5], 2],
        ],
      );
      assert.ok(acks[0].users >= 3 && acks[1].users >= 6, JSON.stringify(acks));

      // Another connection's batches (another symbol table) wait for the commit before them.
      send(6, 8);
      inner.syms = [...syms];
      send(8, 10);
      await waitFor(() => acks.length === 4, {
        what: "four acks",
        detail: () => JSON.stringify(acks),
      });
      assert.deepEqual(
        acks.slice(2).map((a) => [a.key, a.commits]),
        [
          [keys[7], 3],
          [keys[9], 4],
        ],
      );
      assert.ok(acks[2].users >= 8 && acks[3].users >= 10, JSON.stringify(acks));
      assert.deepEqual(shown, keys);
      assert.equal(link.committed, keys[9]);
      assert.deepEqual(fatal, []);

      await writer.applied();
      const db = openDatabase(followerFile, { readonly: true });
      try {
        const through = db.prepare("SELECT value FROM meta WHERE key = 'replication_through'").pluck().get();
        assert.equal(Number(through), keys[9]);
        assert.equal(db.prepare("SELECT COUNT(*) FROM users").pluck().get(), 10);
      } finally {
        db.close();
      }
    } finally {
      await writer.close();
    }
  });
});
