/**
 * Order-by-order book (docs/API.md 7.6.2): `GET .../orders/l3` and `orders_l3:{pair}`. A client that
 * applies the events with `seq` > S to a snapshot with `seq` S reaches the later L3 book, while
 * 1,500 orders from several users cross, cancel and amend at once; its levels' sums are the L2
 * book of the same seq; amends that keep the place are a `change`, those that lose it a `done`
 * then an `open`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { mulberry32 as random } from "../support/prng.ts";
import {
  cancelOrder,
  createOrder,
  get,
  OrderFlow,
  pool,
  post,
  StreamClient,
  startServer,
  type TestServer,
  untilSeq,
} from "./helpers.ts";

interface L3Order {
  id: number;
  price: number;
  amount: number;
}
interface L3Book {
  seq: number;
  buy: L3Order[];
  sell: L3Order[];
}
interface L3Event {
  type: "open" | "change" | "done";
  id: number;
  side: "buy" | "sell";
  price: number;
  amount: number;
}
interface L3Change {
  seq: number;
  events: L3Event[];
}
type RestBook = {
  buy: { price: number; amount: number }[];
  sell: { price: number; amount: number }[];
  seq: number;
};

/** A client's L3 book: per side, price text → the orders there in time priority (id → amount text). */
type Side = Map<string, Map<number, string>>;
interface ClientBook {
  buy: Side;
  sell: Side;
  /** id → [side, price] */
  where: Map<number, ["buy" | "sell", string]>;
}

function clientBook(snap: L3Book): ClientBook {
  const book: ClientBook = { buy: new Map(), sell: new Map(), where: new Map() };
  for (const side of ["buy", "sell"] as const)
    for (const o of snap[side]) open(book, { type: "open", side, ...o });
  return book;
}

function open(book: ClientBook, e: L3Event): void {
  assert.ok(!book.where.has(e.id), `open of order ${e.id}, which rests already`);
  const price = String(e.price);
  let level = book[e.side].get(price);
  if (level === undefined) {
    level = new Map();
    book[e.side].set(price, level);
  }
  level.set(e.id, String(e.amount));
  book.where.set(e.id, [e.side, price]);
}

function apply(book: ClientBook, e: L3Event): void {
  if (e.type === "open") {
    open(book, e);
    return;
  }
  const at = book.where.get(e.id);
  assert.ok(at !== undefined, `${e.type} of order ${e.id}, which does not rest`);
  assert.deepEqual(at, [e.side, String(e.price)], `${e.type} of order ${e.id}: side and price`);
  const level = book[at[0]].get(at[1])!;
  if (e.type === "change") {
    assert.ok(e.amount > 0);
    level.set(e.id, String(e.amount));
    return;
  }
  assert.equal(e.amount, 0);
  level.delete(e.id);
  if (level.size === 0) book[at[0]].delete(at[1]);
  book.where.delete(e.id);
}

/** The book as a snapshot lists it: best price first, each price in time priority. */
function listed(book: ClientBook): { buy: [number, number, string][]; sell: [number, number, string][] } {
  const side = (s: Side, desc: boolean) =>
    [...s.entries()]
      .sort((a, b) => (desc ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0])))
      .flatMap(([price, level]) => [...level.entries()].map(([id, amount]) => [id, Number(price), amount]));
  return {
    buy: side(book.buy, true) as [number, number, string][],
    sell: side(book.sell, false) as [number, number, string][],
  };
}

function listedSnapshot(snap: L3Book) {
  const side = (list: L3Order[]) => list.map((o) => [o.id, o.price, String(o.amount)]);
  return { buy: side(snap.buy), sell: side(snap.sell) };
}

/** Sums of the client's levels (exact, in units of 10^-6), as the L2 book's text. */
function levelSums(side: Side): [string, string][] {
  const out: [string, string][] = [];
  for (const [price, level] of side) {
    let units = 0n;
    for (const a of level.values()) units += BigInt(Math.round(Number(a) * 1e6));
    out.push([price, String(Number(units) / 1e6)]);
  }
  return out.sort((a, b) => Number(a[0]) - Number(b[0]));
}

function l2(side: { price: number; amount: number }[]): [string, string][] {
  return side
    .map((l) => [String(l.price), String(l.amount)] as [string, string])
    .sort((a, b) => Number(a[0]) - Number(b[0]));
}

describe("order-by-order book (docs/API.md 7.6.2)", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(6);
  });
  after(async () => {
    await server.close();
  });

  test("a snapshot plus the events after its seq reach the later L3 book, whose sums are the L2 book, under concurrent orders", async () => {
    const pair = "btc_usdt";
    const topic = `orders_l3:${pair}`;
    // The L2 book from the start; the L3 book is first wanted in the middle of the flow, while
    // commands are in the worker and batches wait for their commit.
    const stream = await StreamClient.connect(server, `streams=orders:${pair}`);
    let l3Stream: StreamClient | null = null;
    const flow = new OrderFlow(server, pair, random(31), {
      mid: 100,
      buyCents: [-120, 150],
      sellCents: [-30, 150],
      amount: { steps: 3000, scale: 1e6, digits: 6 },
    });
    const rnd = flow.rnd;
    const snapshots: L3Book[] = [];
    await pool(
      Array.from({ length: 1500 }, (_, i) => i),
      12,
      async (i) => {
        const u = flow.user();
        if (i === 100) l3Stream = await StreamClient.connect(server, `streams=${topic}`);
        if (i % 300 === 150) {
          const r = await get<L3Book>(server, `/trade/pairs/${pair}/orders/l3`);
          assert.equal(r.status, 200);
          snapshots.push(r.body);
        }
        const roll = rnd();
        if (roll < 0.2 && flow.open[u].length > 0) return flow.cancel(u);
        if (roll < 0.3 && flow.open[u].length > 0) {
          // An amend: a smaller amount at the same price keeps the place, anything else loses it.
          const body: Record<string, unknown> = {
            orderId: flow.anyOpen(u),
            amount: ((1 + Math.floor(rnd() * 4000)) / 1e6).toFixed(6),
          };
          if (rnd() < 0.5) body.price = (100 + (-60 + Math.floor(rnd() * 120)) / 100).toFixed(2);
          const r = await post(server, server.users[u], "/trade/amend-order", body);
          assert.ok(r.status === 200 || r.status === 400, JSON.stringify(r.body));
          return;
        }
        await flow.place(u);
      },
    );

    const live = await get<L3Book>(server, `/trade/pairs/${pair}/orders/l3`);
    const liveL2 = await get<RestBook>(server, `/trade/pairs/${pair}/orders`);
    assert.equal(liveL2.body.seq, live.body.seq, "nothing changed between the two reads");
    assert.ok(live.body.seq >= 750, `the flow changed the book (seq ${live.body.seq})`);
    const l3 = l3Stream as StreamClient | null;
    assert.ok(l3 !== null);
    const l3Messages = () => l3.messages.map((m) => m.data as L3Change);
    await untilSeq(l3, live.body.seq, "the L3 stream to reach the live seq");
    await untilSeq(stream, live.body.seq, "the L2 stream to reach the live seq");
    const snap0 = l3.messages[0].data as L3Book;
    const changes = l3Messages().slice(1);
    // One message per book change: consecutive seqs after the snapshot.
    assert.equal(changes[0].seq, snap0.seq + 1);
    for (let i = 1; i < changes.length; i++)
      assert.equal(changes[i].seq, changes[i - 1].seq + 1, `message ${i}`);
    for (const c of changes) assert.ok(c.events.length > 0, `seq ${c.seq} has events`);

    // The L2 messages of every seq: the client's level sums equal the L2 book of that seq.
    const l2Book = new Map<string, Map<string, string>>([
      ["buy", new Map()],
      ["sell", new Map()],
    ]);
    const l2BySeq = new Map<number, { buy: [string, string][]; sell: [string, string][] }>();
    for (const m of stream.messages) {
      const d = m.data as RestBook & { buy: { price: number; amount: number }[] };
      for (const s of ["buy", "sell"] as const)
        for (const l of d[s]) {
          if (l.amount === 0) l2Book.get(s)!.delete(String(l.price));
          else l2Book.get(s)!.set(String(l.price), String(l.amount));
        }
      const sorted = (s: string) => [...l2Book.get(s)!.entries()].sort((a, b) => Number(a[0]) - Number(b[0]));
      l2BySeq.set(d.seq, { buy: sorted("buy"), sell: sorted("sell") });
    }

    // Replays from the stream's snapshot and from every REST snapshot end at the live L3 book.
    assert.equal(snapshots.length, 5);
    const expected = listedSnapshot(live.body);
    for (const [n, snap] of [snap0, ...snapshots].entries()) {
      const book = clientBook(snap);
      assert.deepEqual(listed(book), listedSnapshot(snap), `snapshot ${n} is in priority order`);
      let seq = snap.seq;
      for (const c of changes) {
        if (c.seq <= seq) continue;
        assert.equal(c.seq, seq + 1, `snapshot ${n}: no gap`);
        for (const e of c.events) apply(book, e);
        seq = c.seq;
        if (n === 0) {
          const want = l2BySeq.get(seq)!;
          assert.deepEqual(levelSums(book.buy), want.buy, `bids' sums at seq ${seq}`);
          assert.deepEqual(levelSums(book.sell), want.sell, `asks' sums at seq ${seq}`);
        }
      }
      assert.equal(seq, live.body.seq);
      assert.deepEqual(listed(book), expected, `snapshot ${n} replayed`);
    }
    assert.deepEqual(levelSums(clientBook(live.body).buy), l2(liveL2.body.buy));
    assert.deepEqual(levelSums(clientBook(live.body).sell), l2(liveL2.body.sell));
    stream.close();
    l3.close();
  });

  test("an amend keeping the place is a change; losing it, a done then an open at the back", async () => {
    const pair = "eth_usdt";
    const [a, b, c] = server.users;
    const stream = await StreamClient.connect(server, `streams=orders_l3:${pair}`);
    const snap = (await stream.next()).data as L3Book;
    const spec = { pairName: pair, tradeType: "limit", directionType: "sell", price: "500" } as const;
    const first = await createOrder(server, a, { ...spec, amount: "2" });
    const second = await createOrder(server, b, { ...spec, amount: "3" });
    const reduce = await post(server, a, "/trade/amend-order", { orderId: first.id, amount: "1.5" });
    assert.equal(reduce.status, 200);
    const grow = await post(server, a, "/trade/amend-order", { orderId: first.id, amount: "2.5" });
    assert.equal(grow.status, 200);
    // A buy that takes 1 from the front of the level: now `second`, then cancel both.
    await createOrder(server, c, {
      pairName: pair,
      tradeType: "limit",
      directionType: "buy",
      price: "500",
      amount: "1",
    });
    assert.equal((await cancelOrder(server, a, first.id)).status, 200);
    const events: L3Change[] = [];
    while (events.length < 6) events.push((await stream.next()).data as L3Change);
    const ev = (type: string, id: number, amount: number) => ({ type, id, side: "sell", price: 500, amount });
    assert.deepEqual(
      events.map((c) => c.events),
      [
        [ev("open", first.id, 2)],
        [ev("open", second.id, 3)],
        [ev("change", first.id, 1.5)],
        [ev("done", first.id, 0), ev("open", first.id, 2.5)],
        [ev("change", second.id, 2)],
        [ev("done", first.id, 0)],
      ],
    );
    assert.deepEqual(
      events.map((c) => c.seq),
      [1, 2, 3, 4, 5, 6].map((d) => snap.seq + d),
    );
    const rest = await get<L3Book>(server, `/trade/pairs/${pair}/orders/l3`);
    assert.deepEqual(rest.body.sell, [{ id: second.id, price: 500, amount: 2 }]);
    assert.equal(rest.body.seq, snap.seq + 6);
    stream.close();
  });
});
