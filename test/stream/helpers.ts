/**
 * A real exchange in this process (`startExchange`) and real clients: `fetch` with HMAC-signed
 * requests for orders, `ws` for the stream. Nothing here reaches into the server except through
 * its interfaces, apart from `hub()` (the server's StreamHub) for counters.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { type RunningExchange, startExchange } from "../../src/boot.ts";
import { type Order as ClientOrder, signText } from "../../src/client/index.ts";
import { parseSettings, type Settings } from "../../src/config/settings.ts";
import type { StreamHub } from "../../src/stream/hub.ts";
import { silentLog } from "../../src/util/log.ts";
import { asyncApi } from "../e2e/asyncapi-check.ts";
import { PAIRS as E2E_PAIRS } from "../e2e/harness.ts";
import { assertOpenApi } from "../e2e/openapi-check.ts";
import { requestHead } from "../support/raw-http.ts";

/** The e2e harness's three pairs, as config entries (the config file has no base/quote keys). */
export const PAIRS = E2E_PAIRS.map(({ base: _base, quote: _quote, ...entry }) => entry);
export const PAIR_NAMES = PAIRS.map((p) => p.name);

export interface TestUser {
  uid: string;
  apiToken: string;
  secretKey: string;
}

function newUser(): TestUser {
  return {
    uid: randomUUID(),
    apiToken: randomUUID().replace(/-/g, ""),
    secretKey: randomUUID().replace(/-/g, ""),
  };
}

export interface TestServer extends RunningExchange {
  readonly wsUrl: string;
  readonly users: TestUser[];
  hub(): StreamHub;
}

/**
 * Starts an exchange with the three pairs and `userCount` funded users; extra flags override, and
 * `overrides` sets what has no flag (e.g. a short listen-key lifetime).
 */
export async function startServer(
  userCount = 4,
  flags: string[] = [],
  overrides: Partial<Settings> = {},
): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), "exchange-stream-"));
  const users = Array.from({ length: userCount }, newUser);
  const config = {
    pairs: PAIRS,
    users: users.map((u) => ({
      ...u,
      balances: { btc: "100000", usdt: "1000000000", eth: "1000000" },
    })),
  };
  const configPath = join(dir, "config.json");
  await writeFile(configPath, JSON.stringify(config));
  const settings = parseSettings(
    [
      "--port",
      "0",
      "--db",
      join(dir, "exchange.db"),
      "--config",
      configPath,
      "--rate-limit",
      "0",
      "--synchronous",
      "NORMAL",
      ...flags,
    ],
    {},
  );
  const running = await startExchange({ ...settings, ...overrides }, silentLog);
  return {
    port: running.port,
    fixPort: running.fixPort,
    replicationPort: running.replicationPort,
    url: running.url,
    exchange: running.exchange,
    answers: running.answers,
    waitStrategy: running.waitStrategy,
    streamHub: running.streamHub,
    accounts: running.accounts,
    wsUrl: `ws://127.0.0.1:${running.port}/stream`,
    users,
    hub: () => running.streamHub,
    close: async () => {
      await running.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The X-Signature of `payload` (the client's signer). */
export const sign = signText;

/**
 * One connection per request: a kept-alive connection would hold the closed server's event loop
 * (and this test process) open until the client's idle timeout.
 */
const CLOSE = { connection: "close" };

export interface Answer<T = unknown> {
  status: number;
  body: T;
}

/** A signed POST under /1.0 (the body text as sent is what is signed). */
export async function post<T = unknown>(
  server: TestServer,
  user: TestUser,
  path: string,
  body: object,
): Promise<Answer<T>> {
  const text = JSON.stringify(body);
  const res = await fetch(`${server.url}/1.0${path}`, {
    method: "POST",
    headers: {
      ...CLOSE,
      "content-type": "application/json",
      authorization: user.apiToken,
      "x-signature": sign(user.secretKey, text),
    },
    body: text,
  });
  return checked(res, "POST", path);
}

/** A GET under /1.0, signed when `user` is given (over the raw query string). */
export async function get<T = unknown>(
  server: TestServer,
  path: string,
  user?: TestUser,
): Promise<Answer<T>> {
  const q = path.indexOf("?");
  const headers: Record<string, string> = { ...CLOSE };
  if (user !== undefined) {
    headers.authorization = user.apiToken;
    headers["x-signature"] = sign(user.secretKey, q === -1 ? "" : path.slice(q + 1));
  }
  const res = await fetch(`${server.url}/1.0${path}`, { headers });
  return checked(res, "GET", path);
}

/** The answer, checked against the OpenAPI document like every e2e answer (openapi-check.ts). */
async function checked<T>(res: Response, method: string, path: string): Promise<Answer<T>> {
  const text = await res.text();
  const body = JSON.parse(text) as T;
  assertOpenApi({
    method,
    pathAndQuery: `/1.0${path}`,
    status: res.status,
    headers: res.headers,
    text,
    body,
  });
  return { status: res.status, body };
}

/** An order on the wire: the client's type, with `updateTime` where create-order answers it. */
export type Order = ClientOrder & { updateTime?: string };

export interface OrderSpec {
  pairName: string;
  tradeType: "limit" | "market";
  directionType: "buy" | "sell";
  price?: string;
  amount: string;
}

export async function createOrder(server: TestServer, user: TestUser, spec: OrderSpec): Promise<Order> {
  const a = await post<Order>(server, user, "/trade/create-order", spec);
  assert.equal(a.status, 200, `create-order ${JSON.stringify(spec)}: ${JSON.stringify(a.body)}`);
  return a.body;
}

export async function cancelOrder(server: TestServer, user: TestUser, orderId: number): Promise<Answer> {
  return post(server, user, "/trade/cancel-order", { orderId });
}

// ---------------------------------------------------------------------- stream clients

export interface StreamMessage {
  stream: string;
  data: unknown;
  /** docs/API.md 16: on `user_orders` and `user_history`, the execution's number. */
  execSeq?: number;
}

export interface Level {
  price: number;
  amount: number;
  eventTimeMicro: string;
}

export interface BookData {
  buy: Level[];
  sell: Level[];
  /** docs/API.md 12.3: the book sequence (snapshot: current; delta: previous + 1). */
  seq: number;
}

/** Headers of a signed upgrade for `query` (the raw query string after `?`). */
export function signedHeaders(user: TestUser, query: string): Record<string, string> {
  return { authorization: user.apiToken, "x-signature": sign(user.secretKey, query) };
}

/** A `ws` client that keeps every message in arrival order and lets a test wait for the next ones. */
export class StreamClient {
  readonly ws: WebSocket;
  readonly messages: StreamMessage[] = [];
  /** Raw text of every message, in order. */
  readonly raw: string[] = [];
  closeCode: number | null = null;
  pings = 0;
  private read = 0;
  private waiters: (() => void)[] = [];
  private mismatch: string | null = null;
  readonly closed: Promise<number>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data: Buffer) => {
      const text = data.toString("utf8");
      this.raw.push(text);
      const message = JSON.parse(text) as StreamMessage;
      // Checked against the AsyncAPI document's messages; a mismatch fails the next wait.
      this.mismatch ??= asyncApi.streamMismatch(message);
      this.messages.push(message);
      this.wake();
    });
    ws.on("ping", () => {
      this.pings++;
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on("close", (code) => {
        this.closeCode = code;
        this.wake();
        resolve(code);
      });
    });
  }

  /** Connects to `/stream?<query>`; rejects with the HTTP status and body of a refused upgrade. */
  static connect(
    server: TestServer,
    query: string,
    headers: Record<string, string> = {},
  ): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${server.wsUrl}?${query}`, { headers });
      const client = new StreamClient(ws);
      ws.once("open", () => resolve(client));
      ws.once("unexpected-response", (req, res) => {
        const socket = req.socket!;
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString("utf8");
        });
        res.on("end", () => {
          // With this listener `ws` leaves the connection to us: drop it (no keep-alive).
          socket.destroy();
          reject(new Rejected(res.statusCode ?? 0, body));
        });
      });
      ws.once("error", (err) => reject(err));
    });
  }

  /** Resolves when `test()` holds (checked after every message), or rejects after `ms`. */
  async until(test: () => boolean, ms = 10_000, what = "condition"): Promise<void> {
    const deadline = performance.now() + ms;
    while (!test()) {
      if (this.mismatch !== null) throw new Error(`AsyncAPI check failed: ${this.mismatch}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${this.messages.length} messages`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (this.mismatch !== null) throw new Error(`AsyncAPI check failed: ${this.mismatch}`);
  }

  /** The next unread message (waiting up to `ms`). */
  async next(ms = 10_000): Promise<StreamMessage> {
    await this.until(() => this.messages.length > this.read, ms, "the next message");
    return this.messages[this.read++];
  }

  /** Unread messages so far. */
  unread(): StreamMessage[] {
    const out = this.messages.slice(this.read);
    this.read = this.messages.length;
    return out;
  }

  /**
   * Resolves once the server has answered a ping sent now. Frames arrive in the order they were
   * written, so every message the server wrote to this connection before it read the ping is here:
   * the marker for what is sent on connect (the snapshots). Published messages may still wait in
   * the hub's queue; for those the marker is a later change on the same channel.
   */
  async settled(ms = 10_000): Promise<void> {
    let answered = false;
    this.ws.once("pong", () => {
      answered = true;
      this.wake();
    });
    this.ws.ping();
    await this.until(() => answered, ms, "the answer to a ping");
  }

  /**
   * True when no message arrives within `ms`. A bounded guess: prefer `settled()` or a later marker
   * message, which show that nothing came before them.
   */
  async quiet(ms = 200): Promise<boolean> {
    const n = this.messages.length;
    await new Promise((r) => setTimeout(r, ms));
    return this.messages.length === n;
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

export class Rejected extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`upgrade refused: ${status} ${body}`);
    this.status = status;
    this.body = body;
  }
}

/** The status and parsed body of a refused upgrade (fails when the upgrade succeeds). */
export async function refused(
  server: TestServer,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { errors: Record<string, string[]> } }> {
  try {
    const c = await StreamClient.connect(server, query, headers);
    c.close();
  } catch (err) {
    if (err instanceof Rejected) return { status: err.status, body: JSON.parse(err.body) };
    throw err;
  }
  throw new Error(`upgrade with ${query} was accepted`);
}

// ---------------------------------------------------------------------- books

/** A book as text: price -> amount, both as exact decimal strings. */
export type TextSide = Map<string, string>;

/** Applies an `orders:{pair}` message (snapshot or delta) to a book kept as text. */
export function applyLevels(book: { buy: TextSide; sell: TextSide }, data: BookData): void {
  for (const [side, levels] of [
    [book.buy, data.buy],
    [book.sell, data.sell],
  ] as const) {
    for (const l of levels) {
      if (l.amount === 0) side.delete(String(l.price));
      else side.set(String(l.price), String(l.amount));
    }
  }
}

/** A REST book `{buy, sell}` as text sides. */
export function textBook(book: {
  buy: { price: number; amount: number }[];
  sell: { price: number; amount: number }[];
}) {
  const side = (levels: { price: number; amount: number }[]) =>
    new Map(levels.map((l) => [String(l.price), String(l.amount)] as const));
  return { buy: side(book.buy), sell: side(book.sell) };
}

/** Sorted entries of a text side, for deep comparisons. */
export function entries(side: TextSide): [string, string][] {
  return [...side.entries()].sort((a, b) => Number(a[0]) - Number(b[0]));
}

export const MICRO = /^[1-9][0-9]{15}$/;
export const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// ---------------------------------------------------------------------- a raw client

/**
 * A WebSocket client on a bare TCP socket that reads only when told to: `ws` resumes a paused
 * socket by itself when its parser drains, so it cannot play a consumer that stops reading.
 */
export class RawStreamClient {
  readonly socket: import("node:net").Socket;
  /** Text messages received, in order. */
  readonly messages: string[] = [];
  closeCode: number | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  ended = false;

  private constructor(socket: import("node:net").Socket, rest: Buffer) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => this.feed(chunk));
    socket.on("close", () => {
      this.ended = true;
      this.wake();
    });
    socket.on("error", () => {});
    this.feed(rest);
  }

  /** Upgrades `/stream?<query>` and pauses the socket right after the 101 answer. */
  static async connect(
    server: TestServer,
    query: string,
    headers: Record<string, string> = {},
  ): Promise<RawStreamClient> {
    const net = await import("node:net");
    const socket = net.connect(server.port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.write(
      requestHead("GET", `/stream?${query}`, "127.0.0.1", {
        Upgrade: "websocket",
        Connection: "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
        ...headers,
      }),
    );
    const rest = await new Promise<Buffer>((resolve, reject) => {
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return;
        socket.off("data", onData);
        socket.pause();
        const status = head.subarray(0, head.indexOf("\r\n")).toString();
        if (!status.includes(" 101 ")) reject(new Error(`upgrade refused: ${status}`));
        else resolve(head.subarray(end + 4));
      };
      socket.on("data", onData);
    });
    return new RawStreamClient(socket, rest);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Resolves when the server's close frame arrived (its code) or the socket ended. */
  async closed(ms: number): Promise<number | null> {
    const deadline = performance.now() + ms;
    while (this.closeCode === null && !this.ended) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no close after ${ms} ms (${this.messages.length} messages)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.closeCode;
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Parses the server's (unmasked, unfragmented) frames. */
  private feed(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let b = this.buffer;
    for (;;) {
      if (b.length < 2) break;
      const opcode = b[0] & 0x0f;
      let len = b[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (b.length < 4) break;
        len = b.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (b.length < 10) break;
        len = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      if (b.length < at + len) break;
      const payload = b.subarray(at, at + len);
      if (opcode === 1) this.messages.push(payload.toString("utf8"));
      else if (opcode === 8) this.closeCode = len >= 2 ? payload.readUInt16BE(0) : 1005;
      b = b.subarray(at + len);
    }
    this.buffer = b.length === 0 ? Buffer.alloc(0) : Buffer.from(b);
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

// ---------------------------------------------------------------------- random order flow

/** Where a random flow puts its limit orders. */
export interface OrderRanges {
  /** Limit prices are `mid + cents / 100` (2 decimals). */
  mid: number;
  /** Cents from `mid` as [first, count]: `first + floor(rnd() * count)`, per side. */
  buyCents: readonly [number, number];
  sellCents: readonly [number, number];
  /** Amounts are `(1 + floor(rnd() * steps)) / scale` with `digits` decimals. */
  amount: { steps: number; scale: number; digits: number };
}

/**
 * Random limit orders and cancels of the server's users on one pair, drawn from a seeded `rnd`;
 * it tracks each user's orders that may still rest (`open`), for cancels and amends.
 */
export class OrderFlow {
  readonly open: number[][];

  constructor(
    readonly server: TestServer,
    readonly pair: string,
    readonly rnd: () => number,
    readonly ranges: OrderRanges,
  ) {
    this.open = server.users.map(() => []);
  }

  /** A random user's index. */
  user(): number {
    return Math.floor(this.rnd() * this.server.users.length);
  }

  /** One of user `u`'s open orders, at random (it stays in `open`). */
  anyOpen(u: number): number {
    return this.open[u][Math.floor(this.rnd() * this.open[u].length)];
  }

  /** A random amount in the flow's range. */
  amount(): string {
    const a = this.ranges.amount;
    return ((1 + Math.floor(this.rnd() * a.steps)) / a.scale).toFixed(a.digits);
  }

  /** Cancels one of user `u`'s open orders at random (it may have been filled meanwhile: 400). */
  async cancel(u: number): Promise<void> {
    const id = this.open[u].splice(Math.floor(this.rnd() * this.open[u].length), 1)[0];
    const r = await cancelOrder(this.server, this.server.users[u], id);
    assert.ok(r.status === 200 || r.status === 400);
  }

  /** Places a random limit order for user `u`; one that rests joins `open`. */
  async place(u: number): Promise<void> {
    const side = this.rnd() < 0.5 ? "buy" : "sell";
    const [first, count] = side === "buy" ? this.ranges.buyCents : this.ranges.sellCents;
    const cents = first + Math.floor(this.rnd() * count);
    const r = await post<Order>(this.server, this.server.users[u], "/trade/create-order", {
      pairName: this.pair,
      tradeType: "limit",
      directionType: side,
      price: (this.ranges.mid + cents / 100).toFixed(2),
      amount: this.amount(),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    if (!r.body.isCancelled && r.body.amountUsed < r.body.amount) this.open[u].push(r.body.id);
  }
}

/**
 * Waits until the last message on `topic` (on any topic when not given) carries `seq`, e.g. the
 * REST book's seq after a flow: then the stream has every change the REST answer saw.
 */
export async function untilSeq(
  stream: StreamClient,
  seq: number,
  what: string,
  topic?: string,
  ms = 20_000,
): Promise<void> {
  const last = () => {
    for (let i = stream.messages.length - 1; i >= 0; i--) {
      const m = stream.messages[i];
      if (topic === undefined || m.stream === topic) return (m.data as { seq?: number }).seq;
    }
    return undefined;
  };
  await stream.until(() => last() === seq, ms, what);
}
