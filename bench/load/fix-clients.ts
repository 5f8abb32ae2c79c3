/**
 * The FIX client of bench:load (docs/API.md 17): N FIX 4.4 sessions over TCP, each logged on as one
 * user with its signed Logon, each keeping up to `depth` NewOrderSingle messages in flight; orders
 * beyond that wait in the session's FIFO (open loop: that wait counts, as for trading sessions).
 *
 * It has the interface of http-clients.ts's `Pool`, so the load generator's loops, checks and
 * accounting are the same as for HTTP and sessions: a request's `user` picks its session, its REST
 * create-order body becomes a NewOrderSingle (ClOrdID unique per run), and the first
 * ExecutionReport of that ClOrdID is the answer: ExecType(150)=0 is handed back as the REST body
 * `{"id":<OrderID>}` with status 200, ExecType=8 as status 400 with the report's Text. Later reports
 * of the same order (fills) are read and dropped. The encoder and framer are this file's own, small
 * and fast: the load generator must not be what limits the rows.
 */
import { createHmac, randomBytes } from "node:crypto";
import net from "node:net";
import type { BenchUser } from "./common.ts";
import { Pipelined, PipelinedPool, type Waiting } from "./pipelined.ts";

const SOH = "\x01";
const EMPTY = Buffer.alloc(0);
/** CheckSum's trailer `10=NNN<SOH>` is 7 bytes. */
const TRAILER = 7;
const SIDES = new Map([
  ["buy", "1"],
  ["sell", "2"],
]);

/** UTC `YYYYMMDD-HH:MM:SS.sss` (docs/API.md 17). */
function fixTime(ms: number): string {
  if (ms === lastMs) return lastTime;
  const d = new Date(ms).toISOString(); // 2026-11-28T18:00:00.000Z
  lastMs = ms;
  lastTime = `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 23)}`;
  return lastTime;
}
/** fixTime's last answer: the messages of one millisecond share it. */
let lastMs = Number.NaN;
let lastTime = "";

/** A create-order body of the workload (workload.ts), as the NewOrderSingle needs it. */
interface OrderBody {
  pairName: string;
  tradeType: string;
  directionType: string;
  price?: string;
  amount: string;
}

/**
 * The string value of `"key":"` in `body`, or undefined: workload.ts writes its create-order bodies
 * in one shape, so their values are read without a JSON parse (the session client passes them on
 * unparsed).
 */
function stringField(body: string, key: string): string | undefined {
  const at = body.indexOf(key);
  if (at < 0) return undefined;
  const start = at + key.length;
  return body.slice(start, body.indexOf('"', start));
}

function orderBody(body: string): OrderBody {
  const pairName = stringField(body, '"pairName":"');
  const tradeType = stringField(body, '"tradeType":"');
  const directionType = stringField(body, '"directionType":"');
  const amount = stringField(body, '"amount":"');
  if (
    pairName === undefined ||
    tradeType === undefined ||
    directionType === undefined ||
    amount === undefined
  )
    return JSON.parse(body) as OrderBody;
  return { pairName, tradeType, directionType, amount, price: stringField(body, '"price":"') };
}

/** A whole message: header fields 8, 9, 35, 49, 56, 34, 52, then `body` (tag=value SOH ...), then 10. */
function encode(
  msgType: string,
  sender: string,
  target: string,
  seq: number,
  sentAt: string,
  body: string,
): Buffer {
  const inner = `35=${msgType}${SOH}49=${sender}${SOH}56=${target}${SOH}34=${seq}${SOH}52=${sentAt}${SOH}${body}`;
  const head = `8=FIX.4.4${SOH}9=${Buffer.byteLength(inner, "latin1")}${SOH}`;
  const msg = Buffer.from(`${head}${inner}10=000${SOH}`, "latin1");
  let sum = 0;
  for (let i = 0; i < msg.length - TRAILER; i++) sum += msg[i];
  const cs = String(sum % 256).padStart(3, "0");
  msg.write(cs, msg.length - 4, "latin1");
  return msg;
}

/** `<SOH>tag=` of each tag read, as bytes made once. */
const NEEDLES = new Map<string, Buffer>();

/** The value of `tag` in the message `m` (tag=value SOH ...), or "" when absent. */
function field(m: Buffer, tag: string): string {
  let key = NEEDLES.get(tag);
  if (key === undefined) {
    key = Buffer.from(`${SOH}${tag}=`, "latin1");
    NEEDLES.set(tag, key);
  }
  const at = m.indexOf(key);
  if (at === -1) return "";
  const start = at + key.length;
  const end = m.indexOf(1, start);
  return m.toString("latin1", start, end === -1 ? m.length : end);
}

/** `<SOH>11=`: where a report's ClOrdID starts. */
const CL_ORD_ID = Buffer.from(`${SOH}11=`, "latin1");
/** `8=FIX.4.4<SOH>9=`: every message's start, then BodyLength's digits. */
const HEAD = "8=FIX.4.4\x019=".length;
const CH_0 = 48;

/**
 * A FIX session of the load generator. Its ClOrdIDs are the session's prefix and a number, the key
 * of the call; a report is read as the session client reads a frame: by its bytes, the ClOrdID's
 * number taken without a string, the rest only for the report that answers a call.
 */
class FixSession extends Pipelined<number> {
  private seq = 1;
  private nextOrder = 1;
  private buf: Buffer = EMPTY;
  /** ClOrdIDs of this run: unique per user over every order it ever sent (docs/API.md 8.2). */
  private readonly prefix = randomBytes(6).toString("hex");
  private readonly prefixBytes = Buffer.from(this.prefix, "latin1");

  private constructor(
    private readonly socket: net.Socket,
    depth: number,
    private readonly sender: string,
    private readonly target: string,
  ) {
    super(depth);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("close", () => this.fail());
    socket.on("error", () => this.fail());
  }

  static async open(
    user: BenchUser,
    index: number,
    host: string,
    port: number,
    depth: number,
    target: string,
  ): Promise<FixSession> {
    const socket = net.connect({ host, port, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const sender = `BENCH${index}`;
    const s = new FixSession(socket, depth, sender, target);
    await s.logon(user);
    return s;
  }

  private logonDone: ((ok: boolean, text: string) => void) | null = null;

  private logon(user: BenchUser): Promise<void> {
    const sentAt = fixTime(Date.now());
    const seq = this.seq++;
    const signature = createHmac("sha256", user.secretKey)
      .update([sentAt, "A", String(seq), this.sender, this.target].join(SOH))
      .digest("hex");
    const body = `98=0${SOH}108=30${SOH}141=Y${SOH}553=${user.apiToken}${SOH}95=${signature.length}${SOH}96=${signature}${SOH}`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("fix: no logon answer within 5 s")), 5000);
      this.logonDone = (ok, text) => {
        clearTimeout(timer);
        if (ok) resolve();
        else reject(new Error(`fix logon refused: ${text}`));
      };
      this.socket.write(encode("A", this.sender, this.target, seq, sentAt, body));
    });
  }

  protected nextKey(): number {
    return this.nextOrder++;
  }

  protected write(w: Waiting, n: number): void {
    this.socket.write(this.order(`${this.prefix}${n}`, w.req.body));
  }

  /** The NewOrderSingle of a REST create-order body of the workload (workload.ts). */
  private order(clOrdId: string, body: string): Buffer {
    const o = orderBody(body);
    const now = fixTime(Date.now());
    const limit = o.tradeType === "limit";
    const fields =
      `11=${clOrdId}${SOH}55=${o.pairName}${SOH}54=${SIDES.get(o.directionType)}${SOH}` +
      `40=${limit ? "2" : "1"}${SOH}38=${o.amount}${SOH}${limit ? `44=${o.price}${SOH}` : ""}60=${now}${SOH}`;
    return encode("D", this.sender, this.target, this.seq++, now, fields);
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const buf = this.buf;
    let at = 0;
    for (;;) {
      // 8=FIX.4.4<SOH>9=N<SOH>: N bytes of body, then the 7-byte trailer (the server's own framing).
      let i = at + HEAD;
      let bodyLength = 0;
      while (i < buf.length && buf[i] !== 1) bodyLength = bodyLength * 10 + (buf[i++] - CH_0);
      if (i >= buf.length) break;
      const end = i + 1 + bodyLength + TRAILER;
      if (buf.length < end) break;
      this.onMessage(buf, at, i + 1, end);
      at = end;
    }
    this.buf = at === buf.length ? EMPTY : buf.subarray(at);
  }

  /** The message of `buf` from `start` to `end`, whose body starts at `body` with `35=`. */
  private onMessage(buf: Buffer, start: number, body: number, end: number): void {
    const type =
      buf[body + 4] === 1 ? String.fromCharCode(buf[body + 3]) : field(buf.subarray(start, end), "35");
    if (type === "8") {
      // The number after the session's prefix: the call's key.
      const at = buf.indexOf(CL_ORD_ID, body);
      if (at < 0 || at >= end) return;
      const from = at + CL_ORD_ID.length;
      if (
        buf.compare(this.prefixBytes, 0, this.prefixBytes.length, from, from + this.prefixBytes.length) !== 0
      )
        return;
      let i = from + this.prefixBytes.length;
      let n = 0;
      for (let c = buf[i]; c >= CH_0 && c <= CH_0 + 9; c = buf[++i]) n = n * 10 + (c - CH_0);
      const done = this.answered(n);
      if (done === undefined) return; // a later report of an order already answered
      const m = buf.subarray(start, end);
      if (field(m, "150") === "0") done(200, Buffer.from(`{"id":${field(m, "37")}}`, "latin1"));
      else done(400, Buffer.from(JSON.stringify({ fix: field(m, "58") }), "utf8"));
      return;
    }
    const m = buf.subarray(start, end);
    if (type === "A") {
      this.logonDone?.(true, "");
      this.logonDone = null;
    } else if (type === "5") {
      this.logonDone?.(false, field(m, "58"));
      this.logonDone = null;
    } else if (type === "1") {
      // TestRequest: a Heartbeat with its TestReqID.
      const now = fixTime(Date.now());
      this.socket.write(
        encode("0", this.sender, this.target, this.seq++, now, `112=${field(m, "112")}${SOH}`),
      );
    }
  }

  protected override fail(): void {
    this.logonDone?.(false, "connection closed");
    super.fail();
  }

  protected terminate(): void {
    this.socket.destroy();
  }
}

/** FIX sessions of one load generator process; `Pool`'s interface (http-clients.ts). */
export async function openFixPool(
  users: readonly BenchUser[],
  host: string,
  port: number,
  depth: number,
  target: string,
  firstIndex: number,
): Promise<PipelinedPool> {
  return new PipelinedPool(
    await Promise.all(users.map((u, i) => FixSession.open(u, firstIndex + i, host, port, depth, target))),
  );
}
