/**
 * Book sequence numbers (docs/API.md 12.3): a client that applies to a REST book with `seq` S every
 * `orders:{pair}` message with `seq` > S, in order, reaches the live book, while orders keep
 * arriving from several users at once; the numbers are consecutive on every connection and name
 * the same change on each, so a missing message shows as a jump.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mulberry32 as random } from "../support/prng.ts";
import {
  applyLevels,
  type BookData,
  entries,
  get,
  OrderFlow,
  pool,
  StreamClient,
  startServer,
  type TestServer,
  textBook,
  untilSeq,
} from "./helpers.ts";

type RestBook = {
  buy: { price: number; amount: number }[];
  sell: { price: number; amount: number }[];
  seq: number;
};

/**
 * A client's book kept in step with the stream from a REST snapshot (the way a bot resyncs):
 * messages with seq ≤ the snapshot's are already in it; the next must be exactly seq + 1.
 * Returns the book, or the seq where a message is missing.
 */
function replay(
  snapshot: RestBook,
  messages: readonly BookData[],
): { book: ReturnType<typeof textBook>; seq: number } | { gapAfter: number } {
  const book = textBook(snapshot);
  let seq = snapshot.seq;
  for (const m of messages) {
    if (m.seq <= seq) continue;
    if (m.seq !== seq + 1) return { gapAfter: seq };
    applyLevels(book, m);
    seq = m.seq;
  }
  return { book, seq };
}

describe("book sequence", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(6);
  });
  after(async () => {
    await server.close();
  });

  test("a REST snapshot plus the stream messages after its seq reach the live book under concurrent orders", async () => {
    const pair = "btc_usdt";
    const topic = `orders:${pair}`;
    const stream = await StreamClient.connect(server, `streams=${topic}`);
    const flow = new OrderFlow(server, pair, random(99), {
      mid: 100,
      buyCents: [-120, 150],
      sellCents: [-30, 150],
      amount: { steps: 3000, scale: 1e6, digits: 6 },
    });
    const snapshots: RestBook[] = [];
    let late: StreamClient | undefined;

    await pool(
      Array.from({ length: 1500 }, (_, i) => i),
      12,
      async (i) => {
        const u = flow.user();
        // REST snapshots taken in the middle of the flow, as a bot resyncing would.
        if (i === 700) late = await StreamClient.connect(server, `streams=${topic}`);
        if (i % 300 === 150) {
          const r = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
          assert.equal(r.status, 200);
          snapshots.push(r.body);
        }
        if (flow.rnd() < 0.2 && flow.open[u].length > 0) await flow.cancel(u);
        else await flow.place(u);
      },
    );

    const live = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
    assert.ok(live.body.seq >= 1500 * 0.5, `the flow changed the book (seq ${live.body.seq})`);
    await untilSeq(stream, live.body.seq, "the stream to reach the live seq");
    const messages = stream.messages.filter((m) => m.stream === topic).map((m) => m.data as BookData);

    // On connect: the snapshot with the current seq; then every message the previous + 1.
    for (let i = 1; i < messages.length; i++)
      assert.equal(messages[i].seq, messages[i - 1].seq + 1, `message ${i}`);

    // Every REST snapshot, replayed forward with the messages after its seq, ends at the live book.
    const expected = textBook(live.body);
    assert.equal(snapshots.length, 5);
    for (const [n, snap] of snapshots.entries()) {
      assert.ok(snap.seq >= messages[0].seq && snap.seq <= live.body.seq, `snapshot ${n} seq ${snap.seq}`);
      const r = replay(snap, messages);
      assert.ok("book" in r, `snapshot ${n}: no gap`);
      assert.equal(r.seq, live.body.seq);
      assert.deepEqual(entries(r.book.buy), entries(expected.buy), `snapshot ${n}: bids`);
      assert.deepEqual(entries(r.book.sell), entries(expected.sell), `snapshot ${n}: asks`);
    }

    // A seq names one change on every connection: a connection opened in the middle of the flow
    // gets as its snapshot the book the first connection's messages build at that seq, then the
    // first connection's messages with the same seqs, so a message lost on one shows as a jump.
    await untilSeq(late!, live.body.seq, "the late connection to reach the live seq");
    const lateMessages = late!.messages.filter((m) => m.stream === topic).map((m) => m.data as BookData);
    const [lateSnapshot, ...lateDeltas] = lateMessages;
    assert.ok(lateSnapshot.seq > messages[0].seq, "the late connection opened after changes");
    assert.ok(lateDeltas.length > 10, `${lateDeltas.length} messages after the late snapshot`);
    const upToLate = replay(
      messages[0],
      messages.filter((m) => m.seq <= lateSnapshot.seq),
    );
    assert.ok("book" in upToLate && upToLate.seq === lateSnapshot.seq, "the first connection has that seq");
    const lateBook = textBook(lateSnapshot);
    assert.deepEqual(entries(lateBook.buy), entries(upToLate.book.buy), "late snapshot: bids");
    assert.deepEqual(entries(lateBook.sell), entries(upToLate.book.sell), "late snapshot: asks");
    const bySeq = new Map(messages.map((m) => [m.seq, m]));
    for (const m of lateDeltas) assert.deepEqual(m, bySeq.get(m.seq), `seq ${m.seq} on both connections`);
    stream.close();
    late!.close();
  });
});
