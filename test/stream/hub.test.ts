/**
 * StreamHub alone, with a recording stand-in for the uWS app and sockets: the batching of
 * publishes (order kept, at most a turn's budget handed over at once), a connection opened while
 * messages wait, and the slow-consumer sweep. These paths need ~1,000 subscribers to show up in
 * the end-to-end tests, so they are driven here directly. Also the `status` snapshot while a change
 * waits for its commit, a moment the end-to-end tests cannot hold still.
 */
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import type { TemplatedApp, WebSocket } from "@trufflesuite/uws-js-unofficial";
import type { ExchangeConfig } from "../../src/config/exchange-config.ts";
import type { Exchange } from "../../src/core/exchange.ts";
import { CANCEL_ONLY, HALTED, PairStatuses } from "../../src/core/pair-status.ts";
import { PairMarket } from "../../src/core/read-models/pair-market.ts";
import { Metrics } from "../../src/core/services/metrics.ts";
import { CH_ORDERS, CH_STATUS, type Channel } from "../../src/stream/channels.ts";
import { DELIVERIES_PER_TURN, StreamHub } from "../../src/stream/hub.ts";
import type { Conn } from "../../src/stream/stream-conn.ts";
import { waitFor } from "../wait.ts";

const TOPIC = "orders:btc_usdt";
const CHANNEL: Channel = { kind: CH_ORDERS, name: TOPIC, pair: 0, uid: "" };
const BOUND = 64 * 1024;

/** What the hub did, in order: publishes and subscriptions. */
type Event = { publish: string; message: string } | { subscribe: string; socket: number };

class FakeSocket {
  static next = 0;
  readonly id = FakeSocket.next++;
  readonly data: Conn;
  readonly sent: string[] = [];
  buffered = 0;
  closedWith: number | null = null;
  constructor(
    private readonly events: Event[],
    private readonly hub: () => StreamHub,
    channel: Channel = CHANNEL,
  ) {
    this.data = { channels: [channel], userId: -1, allowance: 0, checked: 0, heardMs: 0, pinged: false };
  }
  getUserData(): Conn {
    return this.data;
  }
  subscribe(topic: string): boolean {
    this.events.push({ subscribe: topic, socket: this.id });
    return true;
  }
  send(message: string): number {
    this.sent.push(message);
    return 1;
  }
  getBufferedAmount(): number {
    return this.buffered;
  }
  end(code: number): void {
    this.closedWith = code;
    this.hub().close(this as unknown as WebSocket<Conn>);
  }
}

/** Hubs of the tests: shut down after each test, passed or failed, so no timer outlives it. */
const hubs: StreamHub[] = [];
afterEach(() => {
  while (hubs.length > 0) hubs.pop()!.shutdown();
});

function setup(statuses?: PairStatuses) {
  const events: Event[] = [];
  const app = {
    publish(topic: string, message: string) {
      events.push({ publish: topic, message });
      return true;
    },
  } as unknown as TemplatedApp;
  const market = new PairMarket("btc_usdt", 2, 6);
  const pair = { name: "btc_usdt", index: 0, priceDecimals: 2, amountDecimals: 6 };
  const config = { pairs: [pair], pairsByName: new Map([["btc_usdt", pair]]) } as unknown as ExchangeConfig;
  const exchange = { market: () => market } as unknown as Exchange;
  const hub = new StreamHub(app, {
    config,
    exchange,
    metrics: new Metrics(),
    maxBackpressureBytes: BOUND,
    statuses,
  });
  hubs.push(hub);
  const connect = (n: number) =>
    Array.from({ length: n }, () => {
      const ws = new FakeSocket(events, () => hub);
      hub.open(ws as unknown as WebSocket<Conn>);
      return ws;
    });
  /** A committed book change: the read model first, then the listener (as the core does). */
  const change = (price: number, total: number) => {
    market.setLevel(0, price, total);
    market.seq++;
    hub.levelsChanged(0, [0, price, total], market.seq);
  };
  const published = () =>
    events.filter((e): e is { publish: string; message: string } => "publish" in e).map((e) => e.message);
  return { hub, events, market, connect, change, published };
}

const prices = (messages: string[]) =>
  messages.map((m) => (JSON.parse(m) as { data: { buy: { price: number }[] } }).data.buy[0].price);

test("hands uWS at most a turn's budget of deliveries and the rest in order on later turns", async () => {
  const { hub, connect, change, published } = setup();
  connect(1000);
  const perTurn = DELIVERIES_PER_TURN / 1000;
  for (let i = 1; i <= 100; i++) change(i, i);
  assert.equal(published().length, perTurn, "one batch in the first turn");
  assert.equal(hub.backlog, 100 - perTurn);
  await waitFor(() => hub.backlog === 0, {
    what: "the hub to hand over its backlog",
    intervalMs: 0,
    detail: () => `backlog ${hub.backlog}`,
  });
  assert.deepEqual(
    prices(published()),
    Array.from({ length: 100 }, (_, i) => (i + 1) / 100),
    "every message once, in publish order",
  );
});

test("sends a message after a quiet spell at once, whatever the subscriber count", async () => {
  const { connect, change, published } = setup();
  connect(1000);
  change(1, 1);
  assert.equal(published().length, 1);
  // Time is the condition: a gap longer than the longest flush gap (5 ms) is a quiet spell.
  await new Promise((r) => setTimeout(r, 20));
  change(2, 2);
  assert.equal(published().length, 2, "no wait after the gap has passed");
});

test("publishes what waits before a new connection subscribes, and its snapshot holds it", () => {
  const { hub, events, connect, change } = setup();
  connect(1000);
  for (let i = 1; i <= 80; i++) change(i, i);
  assert.ok(hub.backlog > 0, "messages wait for later turns");
  const [late] = connect(1);
  assert.equal(hub.backlog, 0);
  const subscribedAt = events.findIndex((e) => "subscribe" in e && e.socket === late.id);
  const lastPublish = events.map((e) => "publish" in e).lastIndexOf(true);
  assert.ok(lastPublish < subscribedAt, "every waiting delta went out before the subscription");
  const snapshot = JSON.parse(late.sent[0]) as { data: { buy: { price: number }[] } };
  assert.equal(snapshot.data.buy.length, 80, "the snapshot has every level the deltas made");
});

test("closes with 1008 only the connections over the bound, after the sweep delay", async () => {
  const { hub, connect, change } = setup();
  const [slow, fine, snapshotOnly] = connect(3);
  slow.buffered = 2 * BOUND;
  fine.buffered = BOUND;
  // A big snapshot is allowed on top of the bound until the buffer first falls under it.
  snapshotOnly.data.allowance = 10 * BOUND;
  snapshotOnly.buffered = 5 * BOUND;
  change(1, 1);
  assert.equal(slow.closedWith, null, "not before the sweep");
  // One sweep looks at every connection at once: when it has closed one, it has judged them all.
  await waitFor(() => slow.closedWith !== null, { what: "the sweep to close the slow connection" });
  assert.equal(slow.closedWith, 1008);
  assert.equal(fine.closedWith, null);
  assert.equal(snapshotOnly.closedWith, null);
  assert.equal(hub.slowClosed, 1);
  assert.equal(hub.connections, 2);
  // Once under the bound, the allowance is gone.
  snapshotOnly.buffered = 0;
  change(2, 2);
  await waitFor(() => snapshotOnly.data.allowance === 0, {
    what: "the sweep to see the buffer under the bound",
  });
  snapshotOnly.buffered = 2 * BOUND;
  change(3, 3);
  await waitFor(() => snapshotOnly.closedWith !== null, {
    what: "the sweep to close the connection now over the bound",
  });
  assert.equal(snapshotOnly.closedWith, 1008);
});

test("publishes nothing for a topic nobody holds", () => {
  const { change, published } = setup();
  change(1, 1);
  assert.equal(published().length, 0);
});

test("a status snapshot shows the statuses as last published, so a change not yet committed reaches a new connection only as its message", () => {
  // The admin call sets the core's status at once; the hub is told after the commit.
  const statuses = new PairStatuses();
  statuses.set(0, CANCEL_ONLY);
  const { hub, events } = setup(statuses);
  const open = () => {
    const ws = new FakeSocket(events, () => hub, { kind: CH_STATUS, name: "status", pair: -1, uid: "" });
    hub.open(ws as unknown as WebSocket<Conn>);
    return ws;
  };
  const first = open();
  assert.deepEqual(
    first.sent.map((m) => JSON.parse(m)),
    [{ stream: "status", data: [{ pairName: "btc_usdt", status: "cancelOnly" }] }],
  );
  statuses.set(0, HALTED);
  const second = open();
  assert.deepEqual(JSON.parse(second.sent[0]).data, [{ pairName: "btc_usdt", status: "cancelOnly" }]);
  hub.pairStatusChanged(0, "btc_usdt", "halted");
  assert.deepEqual(
    events.filter((e) => "publish" in e),
    [{ publish: "status", message: '{"stream":"status","data":{"pairName":"btc_usdt","status":"halted"}}' }],
  );
  assert.deepEqual(JSON.parse(open().sent[0]).data, [{ pairName: "btc_usdt", status: "halted" }]);
});
