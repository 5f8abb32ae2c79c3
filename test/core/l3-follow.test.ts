/**
 * Following a pair's order-by-order book (src/core/l3-follow.ts, docs/API.md 7.6.2 and 12.5) on a
 * core of real parts (test/core/core-fixture.ts): the first want takes a snapshot of the open orders
 * in time priority (now, or at the END of the command in the worker), later commits change it, and
 * a book nobody wants any more is dropped.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { L3Follow } from "../../src/core/l3-follow.ts";
import { L3_IDLE_MS, type L3Book } from "../../src/core/read-models/l3-view.ts";
import { BUY, SELL } from "../../src/protocol/pair/engine.ts";
import { tempDir } from "../db/helpers.ts";
import {
  BTC,
  placeResting,
  sendAmend,
  sendCancel,
  sendCreate,
  startCore,
  type TestCore,
  USDT,
} from "./core-fixture.ts";

/** The book in ticks and lots as [id, price, amount] per side, best first. */
function rows(book: L3Book) {
  const s = book.snapshot(0, 0, 0);
  return {
    buy: s.buy.map((e) => [e.id, e.price, e.amount]),
    sell: s.sell.map((e) => [e.id, e.price, e.amount]),
  };
}

describe("L3Follow", () => {
  const tmp = tempDir("l3-follow");
  let core: TestCore;
  /** The core's own L3Follow: its sweep runs on a 10 s timer, which a test does not wait for. */
  let follow: L3Follow;
  before(async () => {
    core = await startCore(tmp.dbPath);
    follow = (core.exchange as unknown as { l3: L3Follow }).l3;
    core.ledger.deposit(1, USDT, 10_000_000n);
    core.ledger.deposit(2, BTC, 1_000n);
  });
  after(async () => {
    await core?.close();
    tmp.cleanup();
  });

  /** Ids of the orders placed by the first test, by name. */
  const id: Record<string, number> = {};

  it("takes the snapshot at once between two commands: bids descending, asks ascending, each price in time priority, open amounts", async () => {
    id.a = (await placeResting(core, 1, BUY, 9_000, 5)).id;
    id.b = (await placeResting(core, 1, BUY, 9_100, 3)).id;
    id.c = (await placeResting(core, 1, BUY, 9_000, 2)).id;
    id.d = (await placeResting(core, 2, SELL, 11_000, 4)).id;
    id.e = (await placeResting(core, 2, SELL, 10_500, 6)).id;
    // A buy of 2 at 105.00 takes 2 of e's 6 lots.
    const take = sendCreate(core, 1, BUY, 10_500, 2);
    assert.equal((await take.answer).err, 0);
    // A lower amount at the same price keeps a's place (docs/API.md 8.3); b's new price puts it at
    // the back of 90.00.
    assert.equal((await sendAmend(core, 1, id.a, 9_000, 4).answer).err, 0);
    assert.equal((await sendAmend(core, 1, id.b, 9_000, 3).answer).err, 0);
    const market = core.exchange.market(0);
    assert.equal(market.l3, null, "nobody wanted it yet");
    const book = core.exchange.wantL3(0);
    assert.equal(market.l3, book);
    assert.equal(book.from, market.seq, "the book of the last committed seq");
    assert.equal(book.readyAt(market.seq), true);
    assert.deepEqual(rows(book), {
      buy: [
        [id.a, 9_000, 4],
        [id.c, 9_000, 2],
        [id.b, 9_000, 3],
      ],
      sell: [
        [id.e, 10_500, 4],
        [id.d, 11_000, 4],
      ],
    });
  });

  it("answers every later want with the same book, which each commit then changes", async () => {
    const book = core.exchange.wantL3(0);
    assert.equal(core.exchange.wantL3(0), book);
    const seqBefore = core.exchange.market(0).seq;
    id.f = (await placeResting(core, 1, BUY, 9_200, 1)).id;
    assert.equal(await sendCancel(core, 1, id.c).answer, 0);
    assert.ok(core.exchange.market(0).seq > seqBefore);
    assert.deepEqual(rows(book), {
      buy: [
        [id.f, 9_200, 1],
        [id.a, 9_000, 4],
        [id.b, 9_000, 3],
      ],
      sell: [
        [id.e, 10_500, 4],
        [id.d, 11_000, 4],
      ],
    });
  });

  it("keeps a book that has a subscriber, a waiter or a REST read within L3_IDLE_MS, and drops one that has none", () => {
    const market = core.exchange.market(0);
    const book = core.exchange.wantL3(0);
    const now = Date.now();
    book.subscribers = 1;
    follow.sweep(now + L3_IDLE_MS);
    assert.equal(market.l3, book, "a subscriber holds it");
    book.subscribers = 0;
    book.lastRead = now;
    follow.sweep(now + L3_IDLE_MS - 1);
    assert.equal(market.l3, book, "read less than L3_IDLE_MS ago");
    let ran = false;
    book.whenReady(() => {
      ran = true;
    });
    follow.sweep(now + L3_IDLE_MS);
    assert.equal(market.l3, book, "someone waits for it");
    book.fireReady();
    assert.equal(ran, true);
    follow.sweep(now + L3_IDLE_MS);
    assert.equal(market.l3, null, "L3_IDLE_MS after its last read, with nobody holding it");
    // The next want starts a new book.
    const again = core.exchange.wantL3(0);
    assert.notEqual(again, book);
    assert.equal(again.readyAt(market.seq), true);
    follow.sweep(Date.now() + L3_IDLE_MS);
    assert.equal(market.l3, null);
  });

  it("takes the snapshot at the END of the command in the worker when wanted meanwhile, ready once that command commits", async () => {
    const market = core.exchange.market(0);
    assert.equal(market.l3, null);
    // A sell of 1 at 92.00 fills f; the book is wanted while it is in the worker.
    const sell = sendCreate(core, 2, SELL, 9_200, 1);
    assert.equal(sell.code, 0);
    const book = core.exchange.wantL3(0);
    assert.equal(book.from, -1, "no snapshot before the command's END");
    let readyAt = -1;
    book.whenReady(() => {
      readyAt = market.seq;
    });
    assert.equal((await sell.answer).err, 0);
    assert.ok(book.from >= 0, "taken at its END");
    assert.equal(readyAt, book.from, "ready when the commits reached the snapshot's seq");
    assert.deepEqual(rows(book), {
      buy: [
        [id.a, 9_000, 4],
        [id.b, 9_000, 3],
      ],
      sell: [
        [id.e, 10_500, 4],
        [id.d, 11_000, 4],
      ],
    });
    assert.equal(core.exchange.ownOpenOrder(1, id.f), undefined, "f was filled");
  });
});
