/**
 * Market-maker protection on the main thread (src/core/mmp-settings.ts, docs/API.md 8.10): the
 * settings per user and pair (all 0 when never set), the frozen state the worker reports, what
 * GET /trade/mmp answers from them, and, on a real core, settings that are stored and answered
 * once committed.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { MmpBook, type MmpRequest, type MmpSettings } from "../../src/core/mmp-settings.ts";
import { Code } from "../../src/errors/catalogue.ts";
import { openDatabase } from "../../src/protocol/db/db-open.ts";
import { tempDir } from "../db/helpers.ts";
import { startCore } from "./core-fixture.ts";

const BUSY = Code.BUSY;
const S: MmpSettings = { intervalSeconds: 10, qtyLimit: 50_000, frozenSeconds: 30 };

/**
 * A book whose FIFO and writer are lists: `room` says whether the pair's FIFO takes the next
 * command (the core's sequencer answers false when it is full).
 */
function book() {
  const submitted: [number, number, MmpRequest][] = [];
  const stored: [number, number, MmpSettings][] = [];
  const state = { room: true };
  const b = new MmpBook(
    (user, pair, request) => {
      if (!state.room) return false;
      submitted.push([user, pair, request]);
      return true;
    },
    (user, pair, s) => stored.push([user, pair, { ...s }]),
  );
  return { b, submitted, stored, state };
}

describe("MmpBook settings", () => {
  it("answers a pair never set with everything 0 and not frozen (docs/API.md 8.10)", () => {
    const { b } = book();
    assert.deepEqual(b.status(1, 0, 1_000), {
      intervalSeconds: 0,
      qtyLimit: 0,
      frozenSeconds: 0,
      frozen: false,
      frozenUntil: 0,
    });
  });

  it("stores new settings, sends them into the pair's FIFO with their done, and answers them", () => {
    const { b, submitted, stored } = book();
    const done = () => {};
    assert.equal(b.set(3, 1, S, done, BUSY), 0);
    assert.deepEqual(stored, [[3, 1, S]]);
    assert.equal(submitted.length, 1);
    const [user, pair, request] = submitted[0];
    assert.deepEqual([user, pair], [3, 1]);
    assert.deepEqual(request.settings, S);
    assert.equal(request.done, done);
    assert.deepEqual(b.settingsOf(3, 1), S);
    assert.deepEqual(b.settingsOf(3, 0), { intervalSeconds: 0, qtyLimit: 0, frozenSeconds: 0 }, "per pair");
    assert.deepEqual(b.settingsOf(4, 1), { intervalSeconds: 0, qtyLimit: 0, frozenSeconds: 0 }, "per user");
  });

  it("keeps its own copy: a later change of the caller's object changes nothing", () => {
    const { b, submitted } = book();
    const s = { ...S };
    b.set(1, 0, s, () => {}, BUSY);
    s.qtyLimit = 1;
    assert.equal(b.settingsOf(1, 0).qtyLimit, S.qtyLimit);
    assert.equal(submitted[0][2].settings!.qtyLimit, S.qtyLimit);
  });

  it("changes and stores nothing when the pair's FIFO is full, and answers the busy code", () => {
    const { b, submitted, stored, state } = book();
    b.set(1, 0, S, () => {}, BUSY);
    state.room = false;
    assert.equal(
      b.set(1, 0, { intervalSeconds: 1, qtyLimit: 1, frozenSeconds: 0 }, () => {}, BUSY),
      BUSY,
    );
    assert.equal(
      b.reset(1, 0, () => {}, BUSY),
      BUSY,
    );
    assert.deepEqual(b.settingsOf(1, 0), S);
    assert.equal(stored.length, 1);
    assert.equal(submitted.length, 1);
  });

  it("sends a reset as a request without settings, leaving the settings as they are", () => {
    const { b, submitted, stored } = book();
    b.set(1, 0, S, () => {}, BUSY);
    const done = () => {};
    assert.equal(b.reset(1, 0, done, BUSY), 0);
    assert.deepEqual(submitted[1][2], { settings: null, done });
    assert.equal(stored.length, 1, "a reset stores nothing");
    assert.deepEqual(b.settingsOf(1, 0), S);
  });

  it("forgets settings set back to all 0 (disabled), so they are not resent at start", () => {
    const { b } = book();
    b.set(1, 0, S, () => {}, BUSY);
    b.set(2, 5, S, () => {}, BUSY);
    b.set(1, 0, { intervalSeconds: 0, qtyLimit: 0, frozenSeconds: 0 }, () => {}, BUSY);
    assert.deepEqual([...b.all()], [[2, 5, S]]);
  });

  it("restores stored settings into memory and into the worker, with nobody to answer", () => {
    const { b, submitted, stored, state } = book();
    assert.equal(b.restore(9, 2, S), true);
    assert.deepEqual(submitted, [[9, 2, { settings: S, done: null }]]);
    assert.deepEqual(stored, [], "they are stored already");
    assert.deepEqual(b.settingsOf(9, 2), S);
    state.room = false;
    assert.equal(b.restore(9, 3, S), false, "a full FIFO says so");
  });

  it("lists every setting with its user and pair, the pair's index up to 65535 kept apart from the user", () => {
    const { b } = book();
    const other = { intervalSeconds: 1, qtyLimit: 1, frozenSeconds: 0 };
    b.put(0, 65_535, S);
    b.put(1, 0, other);
    b.put(123_456, 7, S);
    const all = [...b.all()].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    assert.deepEqual(all, [
      [0, 65_535, S],
      [1, 0, other],
      [123_456, 7, S],
    ]);
  });
});

describe("MmpBook frozen state", () => {
  it("is frozen until the freeze's end, and not from that instant on (docs/API.md 8.10)", () => {
    const { b } = book();
    b.put(1, 0, S);
    b.changed(1, 0, true, 5_000);
    assert.deepEqual(b.status(1, 0, 4_999), { ...S, frozen: true, frozenUntil: 5_000 });
    assert.deepEqual(b.status(1, 0, 5_000), { ...S, frozen: false, frozenUntil: 0 });
    assert.equal(b.frozenUntil(1, 0, 4_000), -1, "a freeze that ran out stays over");
  });

  it("keeps a freeze until a reset when its end is 0, whatever the time", () => {
    const { b } = book();
    b.changed(1, 0, true, 0);
    assert.equal(b.frozenUntil(1, 0, Number.MAX_SAFE_INTEGER), 0);
    assert.deepEqual(b.status(1, 0, 10 ** 13), {
      intervalSeconds: 0,
      qtyLimit: 0,
      frozenSeconds: 0,
      frozen: true,
      frozenUntil: 0,
    });
    b.changed(1, 0, false, 0);
    assert.equal(b.frozenUntil(1, 0, 0), -1);
  });

  it("freezes one user on one pair only", () => {
    const { b } = book();
    b.changed(1, 0, true, 0);
    assert.equal(b.frozenUntil(1, 1, 0), -1);
    assert.equal(b.frozenUntil(2, 0, 0), -1);
  });

  it("hands each change to be told once, oldest first", () => {
    const { b } = book();
    assert.equal(b.hasPending, false);
    b.changed(1, 0, true, 9_000);
    b.changed(2, 3, true, 0);
    b.changed(1, 0, false, 0);
    assert.equal(b.hasPending, true);
    assert.deepEqual(b.takePending(), [
      [1, 0, true, 9_000],
      [2, 3, true, 0],
      [1, 0, false, 0],
    ]);
    assert.equal(b.hasPending, false);
    assert.deepEqual(b.takePending(), []);
  });
});

describe("MmpBook on a real core", () => {
  const tmp = tempDir("mmp-settings");
  after(() => tmp.cleanup());

  it("answers a change once its row is committed, and the row holds the settings (migration 010)", async () => {
    const file = `${tmp.dbPath}-1`;
    const core = await startCore(file);
    try {
      const { exchange, writer } = core;
      await new Promise<void>((resolve) => assert.equal(exchange.mmp.set(5, 0, S, resolve, BUSY), 0));
      const committed = writer.stats.batches;
      assert.ok(committed >= 1, "answered after a commit");
      await writer.applied();
      const db = openDatabase(file, { readonly: true });
      try {
        const rows = db
          .prepare("SELECT user_id, pair, interval_seconds, qty_limit, frozen_seconds FROM mmp_settings")
          .all();
        assert.deepEqual(rows, [
          { user_id: 5, pair: "btc_usdt", interval_seconds: 10, qty_limit: 50_000, frozen_seconds: 30 },
        ]);
      } finally {
        db.close();
      }
      assert.deepEqual(exchange.mmp.status(5, 0, Date.now()), { ...S, frozen: false, frozenUntil: 0 });
      // A reset goes through the pair's FIFO and the worker and is answered too.
      await new Promise<void>((resolve) => assert.equal(exchange.mmp.reset(5, 0, resolve, BUSY), 0));
    } finally {
      await core.close();
    }
  });
});
