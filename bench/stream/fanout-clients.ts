/**
 * The subscriber side of bench/stream/fanout.bench.ts, run as its own process: N WebSocket
 * clients on bare TCP sockets (no per-message library work), each counting its text frames and
 * payload bytes, and every frame is counted per channel kind (`orders`, `bbo`, `orders_l3`, ...).
 * A few of them also sample publish-to-receive latency: the eventTimeMicro in an `orders:` message
 * is the publisher's clock when it published, in a `bbo:` message the time of the book change it
 * follows (same machine, same epoch clock: performance.timeOrigin + performance.now()).
 *
 * Driven over IPC:
 *   {type:"connect", port, path, count, sampled, snapshots}
 *                                                 → {type:"connected"} once every client has its
 *                                                   `snapshots` first messages
 *   {type:"reset"}                                → {type:"reset"}        counters to zero
 *   {type:"report"}                               → {type:"report", ...}  counts, bytes, samples,
 *                                                   deliveries and latency samples per kind
 *   {type:"disconnect"}                           → {type:"disconnected"}
 *   every PROGRESS_MS while frames arrive         → {type:"progress", min, total}
 */
import net from "node:net";
import { requestHead } from "../../test/support/raw-http.ts";

const PROGRESS_MS = 2;
const KEY = "dGhlIHNhbXBsZSBub25jZQ==";
const MARK = Buffer.from('"eventTimeMicro":"');
const ORDERS_PREFIX = Buffer.from('{"stream":"orders:');
const STREAM_PREFIX = Buffer.from('{"stream":"');
const COLON = 0x3a;

interface Client {
  socket: net.Socket;
  rest: Buffer | null;
  upgraded: boolean;
  count: number;
  bytes: number;
  lastMs: number;
  sampled: boolean;
  closeCode: number;
}

let clients: Client[] = [];
let samples: number[] = [];
/** Deliveries per channel kind (the text before `:` in `stream`), all clients. */
let kinds = new Map<string, number>();
/** Latency samples (µs) per channel kind, from the sampled clients' messages that carry a time. */
let kindSamples = new Map<string, number[]>();
let total = 0;

/** The channel kind of the frame at `start` (`orders`, `bbo`, `orders_l3`, `history`, ...). */
function kindOf(b: Buffer, start: number, len: number): string {
  if (b.compare(STREAM_PREFIX, 0, STREAM_PREFIX.length, start, start + STREAM_PREFIX.length) !== 0)
    return "?";
  const from = start + STREAM_PREFIX.length;
  const end = Math.min(start + len, from + 24);
  let k = from;
  while (k < end && b[k] !== COLON && b[k] !== 0x22) k++;
  return b.toString("latin1", from, k);
}
let lastSentTotal = -1;

function nowMicro(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

function send(msg: object): void {
  process.send?.(msg);
}

/** Parses every complete frame of `chunk` (server frames: unmasked, never fragmented here). */
function onData(c: Client, chunk: Buffer): void {
  let b = c.rest === null ? chunk : Buffer.concat([c.rest, chunk]);
  let i = 0;
  if (!c.upgraded) {
    const end = b.indexOf("\r\n\r\n");
    if (end === -1) {
      c.rest = Buffer.from(b);
      return;
    }
    if (!b.subarray(0, 16).toString().includes("101")) throw new Error(`upgrade refused: ${b.toString()}`);
    c.upgraded = true;
    i = end + 4;
  }
  const n = b.length;
  const receivedMicro = c.sampled ? nowMicro() : 0;
  let frames = 0;
  while (i + 2 <= n) {
    const op = b[i] & 0x0f;
    let len = b[i + 1] & 0x7f;
    let h = 2;
    if (len === 126) {
      if (i + 4 > n) break;
      len = b.readUInt16BE(i + 2);
      h = 4;
    } else if (len === 127) {
      if (i + 10 > n) break;
      len = Number(b.readBigUInt64BE(i + 2));
      h = 10;
    }
    if (i + h + len > n) break;
    const start = i + h;
    if (op === 1) {
      frames++;
      c.bytes += len;
      const kind = kindOf(b, start, len);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      if (c.sampled) {
        const at = b.indexOf(MARK, start);
        if (at !== -1 && at < start + len) {
          let t = 0;
          for (let k = at + MARK.length; b[k] !== 0x22; k++) t = t * 10 + (b[k] - 48);
          // eventTimeMicro "0": a book that never changed (a BBO snapshot), no latency to take.
          if (t > 0) {
            const isOrders =
              b.compare(ORDERS_PREFIX, 0, ORDERS_PREFIX.length, start, start + ORDERS_PREFIX.length) === 0;
            if (isOrders) samples.push(receivedMicro - t);
            const list = kindSamples.get(kind);
            if (list === undefined) kindSamples.set(kind, [receivedMicro - t]);
            else list.push(receivedMicro - t);
          }
        }
      }
    } else if (op === 8) {
      c.closeCode = len >= 2 ? b.readUInt16BE(start) : 1005;
    } else if (op === 9) {
      // Pong (masked, as a client must), echoing the ping's payload.
      const payload = b.subarray(start, start + len);
      const frame = Buffer.alloc(6 + len);
      frame[0] = 0x8a;
      frame[1] = 0x80 | len;
      for (let k = 0; k < len; k++) frame[6 + k] = payload[k];
      c.socket.write(frame);
    }
    i = start + len;
  }
  c.count += frames;
  total += frames;
  c.lastMs = performance.timeOrigin + performance.now();
  b = b.subarray(i);
  c.rest = b.length === 0 ? null : Buffer.from(b);
}

function connectOne(port: number, path: string, sampled: boolean): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    const c: Client = {
      socket,
      rest: null,
      upgraded: false,
      count: 0,
      bytes: 0,
      lastMs: 0,
      sampled,
      closeCode: 0,
    };
    socket.once("connect", () => {
      socket.write(
        requestHead("GET", path, "127.0.0.1", {
          Upgrade: "websocket",
          Connection: "Upgrade",
          "Sec-WebSocket-Key": KEY,
          "Sec-WebSocket-Version": "13",
        }),
      );
      resolve(c);
    });
    socket.on("data", (chunk: Buffer) => onData(c, chunk));
    socket.once("error", reject);
  });
}

function minCount(): number {
  let min = Number.POSITIVE_INFINITY;
  for (const c of clients) if (c.count < min) min = c.count;
  return clients.length === 0 ? 0 : min;
}

setInterval(() => {
  if (total === lastSentTotal) return;
  lastSentTotal = total;
  send({ type: "progress", min: minCount(), total });
}, PROGRESS_MS);

interface Command {
  type: string;
  port?: number;
  path?: string;
  count?: number;
  sampled?: number;
  snapshots?: number;
}

process.on("message", async (msg: Command) => {
  switch (msg.type) {
    case "connect": {
      clients = [];
      for (let i = 0; i < msg.count!; i += 100) {
        const batch = Array.from({ length: Math.min(100, msg.count! - i) }, (_, k) =>
          connectOne(msg.port!, msg.path!, i + k < msg.sampled!),
        );
        clients.push(...(await Promise.all(batch)));
      }
      // Wait for every upgrade and the snapshots the channels send on connect.
      const deadline = Date.now() + 60_000;
      const ready = () => clients.every((c) => c.upgraded) && minCount() >= msg.snapshots!;
      while (!ready() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (!ready()) throw new Error("clients did not connect");
      send({ type: "connected" });
      break;
    }
    case "reset":
      for (const c of clients) {
        c.count = 0;
        c.bytes = 0;
      }
      samples = [];
      kinds = new Map();
      kindSamples = new Map();
      total = 0;
      lastSentTotal = -1;
      send({ type: "reset" });
      break;
    case "report": {
      const counts = clients.map((c) => c.count);
      const bytes = clients.map((c) => c.bytes);
      send({
        type: "report",
        counts,
        bytes,
        lastMs: Math.max(...clients.map((c) => c.lastMs)),
        closed: clients.filter((c) => c.closeCode !== 0).length,
        samples,
        kinds: Object.fromEntries(kinds),
        kindSamples: Object.fromEntries(kindSamples),
        cpu: process.cpuUsage(),
      });
      break;
    }
    case "disconnect":
      for (const c of clients) c.socket.destroy();
      clients = [];
      send({ type: "disconnected" });
      break;
    case "exit":
      process.exit(0);
  }
});
send({ type: "ready" });
