/**
 * The FIX 4.4 gateway (docs/API.md 17): a TCP (or TLS) listener of its own beside the uWS app, one
 * more front end over order entry (src/entry/), as the trading sessions (src/session/) are.
 *
 *   connect   a framer per connection (codec.ts); the logon deadline starts
 *   message   framed, then judged: Logon first (logon.ts checks), then CompIDs, MsgSeqNum, the
 *             session messages here, the order messages in fix-orders.ts
 *   answers   into the connection's queue in arrival order; reports (fix-reports.ts) queue behind
 *             the answers not yet given, so an answer precedes the reports of what it changed;
 *             MsgSeqNum is given when a message is written
 *   timers    one sweep: the logon deadline, Heartbeat after HeartBtInt of our silence, TestRequest
 *             after 1.2 x HeartBtInt of the client's, Logout `heartbeat timeout` 1.2 x later
 *   end       every end (Logout, close, timeout, revocation, shutdown, a drop) runs `ended` once,
 *             which cancels the session's orders when it logged on with CancelOnDisconnect=Y
 *             (docs/API.md 8.9)
 */
import net from "node:net";
import tls from "node:tls";
import { log } from "../util/log.ts";
import { addToSet, removeFromSet } from "../util/set-map.ts";
import { TurnFlush, written } from "../wire/out-queue.ts";
import { FixBatch, FixFramer, type FixMessage, field, fixTime } from "./codec.ts";
import {
  FIX_ENDED,
  FIX_HELLO,
  FIX_LOGON_DEADLINE_MS,
  FIX_ON,
  FIX_SWEEP_MS,
  type FixConn,
  type FixDeps,
  type FixOut,
  type FixSlot,
  MAX_FIX_MESSAGE,
  MAX_IGNORED,
  type OutMsg,
  REJECT_COMP_ID,
  REJECT_FORMAT,
  REJECT_NO_VALUE,
  REJECT_REPEATED,
  REJECT_REQUIRED_MISSING,
  REJECT_VALUE_INCORRECT,
} from "./fix-conn.ts";
import { FixOrders } from "./fix-orders.ts";
import { FixReports } from "./fix-reports.ts";
import { readFixLogon } from "./logon.ts";

/** Application messages the gateway handles (fix-orders.ts). */
const ORDER_TYPES: ReadonlySet<string> = new Set(["D", "F", "G", "q", "H"]);
/** Session messages (FIX 4.4 admin messages): never answered with a BusinessMessageReject. */
const SESSION_TYPES: ReadonlySet<string> = new Set(["0", "1", "2", "3", "4", "5", "A", "j"]);

export class FixGateway implements FixOut {
  readonly reports: FixReports;
  private readonly orders: FixOrders;
  private readonly conns = new Set<FixConn>();
  /** Logged-on sessions per API token (revocation ends them). */
  private readonly byToken = new Map<string, Set<FixConn>>();
  private server: net.Server | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly turn = new TurnFlush<FixConn>((c) => this.flushOne(c));
  /** The messages of the write being built (one connection at a time). */
  private readonly batch = new FixBatch();
  private nextTag = -2;
  private testRequests = 0;

  constructor(private readonly deps: FixDeps) {
    this.reports = new FixReports(this, deps);
    this.orders = new FixOrders(deps, this, this.reports);
    deps.users.revokeListeners.push((token) => {
      const set = this.byToken.get(token);
      if (set === undefined) return;
      for (const c of [...set]) this.end(c, "API key revoked");
    });
  }

  get connections(): number {
    return this.conns.size;
  }

  /** Listens on `host:port` (0: any free port), TLS only when `tlsFiles` is given; the port. */
  listen(host: string, port: number, tlsFiles?: { cert: Buffer; key: Buffer }): Promise<number> {
    const onSocket = (socket: net.Socket) => this.connected(socket);
    const server =
      tlsFiles === undefined
        ? net.createServer({ noDelay: true }, onSocket)
        : tls.createServer({ cert: tlsFiles.cert, key: tlsFiles.key }, onSocket);
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off("error", reject);
        server.on("error", (err) => log().error({ err: String(err) }, "FIX listener error"));
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Server shutdown: every session ends with a Logout (its orders cancelled while the core runs). */
  shutdown(): Promise<void> {
    this.reports.closed = true;
    for (const c of [...this.conns]) this.end(c, "server shutting down");
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const server = this.server;
    this.server = null;
    if (server === null) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  // ------------------------------------------------------------------ connections

  private connected(socket: net.Socket): void {
    if (!this.deps.accepting() || !this.deps.ready()) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const now = Date.now();
    const c: FixConn = {
      id: this.nextTag--,
      socket,
      framer: null,
      state: FIX_HELLO,
      openedMs: now,
      key: null,
      userId: -1,
      peerCompId: "",
      heartbeatMs: 30_000,
      cancelOnDisconnect: false,
      dropCopy: false,
      inSeq: 1,
      outSeq: 1,
      lastInMs: now,
      lastOutMs: now,
      testRequestMs: 0,
      ignored: 0,
      out: [],
      head: 0,
      inFlight: 0,
      dirty: false,
      resumeCut: 0,
    };
    c.framer = new FixFramer(MAX_FIX_MESSAGE, {
      message: (m) => this.message(c, m),
      garbled: (reason) => this.garbled(c, reason),
      tooBig: () => this.end(c, `message over ${MAX_FIX_MESSAGE} bytes`),
    });
    this.conns.add(c);
    this.timer ??= setInterval(this.sweep, FIX_SWEEP_MS);
    socket.on("data", (chunk: Buffer) => {
      try {
        c.framer?.push(chunk);
      } catch (err) {
        // A fault of ours ends this session, not the server.
        log().error({ fixSession: c.id, err: String(err) }, "FIX message failed");
        this.end(c, "internal error");
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => this.ended(c));
    socket.on("drain", () => this.flushOne(c));
  }

  /** The one function every end of a session goes through (idempotent). */
  private ended(c: FixConn): void {
    if (c.state === FIX_ENDED) return;
    const wasOn = c.state === FIX_ON;
    c.state = FIX_ENDED;
    c.framer?.stop();
    this.conns.delete(c);
    if (wasOn) {
      this.reports.remove(c);
      removeFromSet(this.byToken, c.key!.token, c);
      if (c.cancelOnDisconnect) this.deps.orders.cancelSessionOrders(c.id);
    }
    if (this.conns.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /**
   * Ends a session: what is ready in its queue, then a Logout with `text` (none when null), then the
   * close. Its orders are cancelled first when it asked for that.
   */
  end(c: FixConn, text: string | null): void {
    if (c.state === FIX_ENDED) return;
    this.ended(c);
    if (text !== null) {
      c.out.push({ msgs: [{ type: "5", body: field(58, text) }], answer: false });
      this.write(c, true);
    }
    c.socket.end();
    // A peer that never reads its side would hold the socket: it goes after a grace period.
    setTimeout(() => c.socket.destroy(), 2000).unref();
  }

  private garbled(c: FixConn, reason: string): void {
    log().warn({ fixSession: c.id, reason }, `FIX message ignored: ${reason}`);
    if (++c.ignored >= MAX_IGNORED) this.end(c, `${MAX_IGNORED} messages ignored`);
  }

  // ------------------------------------------------------------------ messages

  private message(c: FixConn, m: FixMessage) {
    if (c.state === FIX_ENDED) return;
    if (m.malformed) return this.garbled(c, "a field that is not tag=value");
    c.lastInMs = Date.now();
    c.testRequestMs = 0;
    const type = m.msgType;
    if (c.state === FIX_HELLO) return this.logon(c, m, type);
    // Every message after the Logon names both sides as the Logon did (docs/API.md 17).
    const senderOk = m.is(49, c.peerCompId);
    if (!senderOk || !m.is(56, this.deps.compId)) {
      const tag = senderOk ? 56 : 49;
      this.reject(c, m, tag, REJECT_COMP_ID, "CompID problem");
      return this.end(c, "CompID problem");
    }
    const seq = m.positiveInt(34);
    if (seq < 0) return this.end(c, "MsgSeqNum missing or not a number");
    // A SequenceReset in reset mode moves the number without a sequence check.
    if (type === "4" && m.get(123) !== "Y") return this.sequenceReset(c, m);
    if (seq < c.inSeq) {
      if (m.get(43) === "Y") return;
      return this.end(c, `MsgSeqNum too low, expected ${c.inSeq}`);
    }
    if (seq > c.inSeq) return this.end(c, `MsgSeqNum too high, expected ${c.inSeq}; resend is not supported`);
    c.inSeq++;
    if (m.empty !== 0) return this.reject(c, m, m.empty, REJECT_NO_VALUE, "tag specified without a value");
    if (m.repeated !== 0) return this.reject(c, m, m.repeated, REJECT_REPEATED, "tag appears more than once");
    switch (type) {
      case "0":
      case "3":
      case "j":
        return;
      case "1": {
        const id = m.get(112);
        if (id === undefined) return this.reject(c, m, 112, REJECT_REQUIRED_MISSING, "required tag missing");
        return this.push(c, [{ type: "0", body: field(112, id) }]);
      }
      case "2":
        return this.resendRequest(c, m);
      case "4":
        return this.sequenceReset(c, m);
      case "5":
        return this.end(c, "logout acknowledged");
      case "A":
        return this.reject(c, m, 35, REJECT_VALUE_INCORRECT, "already logged on");
    }
    if (ORDER_TYPES.has(type)) {
      if (c.dropCopy) return this.businessReject(c, m, "drop copy session");
      return this.orders.message(c, m, type);
    }
    if (!SESSION_TYPES.has(type)) this.businessReject(c, m, "unsupported message type");
  }

  private logon(c: FixConn, m: FixMessage, type: string) {
    const deps = this.deps;
    const logon = readFixLogon(deps.users, deps.compId, deps.ctx, m, type, Date.now());
    c.peerCompId = logon.peerCompId;
    if ("refused" in logon) return this.end(c, logon.refused);
    const key = logon.key;
    c.state = FIX_ON;
    c.key = key;
    c.userId = key.userId;
    c.inSeq = 2;
    c.heartbeatMs = logon.heartBtInt * 1000;
    c.cancelOnDisconnect = logon.cancelOnDisconnect;
    c.dropCopy = logon.dropCopy;
    if (c.cancelOnDisconnect) {
      const orders = deps.orders;
      const session = c.id;
      c.tag = (v) => orders.tag(v, session);
    }
    addToSet(this.byToken, key.token, c);
    this.reports.add(c);
    this.push(c, [{ type: "A", body: `${field(98, 0)}${field(108, logon.heartBtInt)}${field(141, "Y")}` }]);
    if (logon.resumeFrom >= 0) this.reports.replay(c, logon.resumeFrom, logon.cut);
  }

  /** docs/API.md 17: nothing is resent; one GapFill from BeginSeqNo to our next number. */
  private resendRequest(c: FixConn, m: FixMessage) {
    const begin = m.get(7);
    if (begin === undefined) return this.reject(c, m, 7, REJECT_REQUIRED_MISSING, "required tag missing");
    if (!/^\d{1,16}$/.test(begin)) return this.reject(c, m, 7, REJECT_FORMAT, "incorrect data format");
    const from = Math.max(1, Number(begin));
    this.push(c, [
      {
        type: "4",
        seq: from,
        extra: `${field(43, "Y")}${field(122, fixTime(Date.now()))}`,
        body: `${field(123, "Y")}${field(36, c.outSeq)}`,
      },
    ]);
  }

  private sequenceReset(c: FixConn, m: FixMessage) {
    const text = m.get(36);
    if (text === undefined) return this.reject(c, m, 36, REJECT_REQUIRED_MISSING, "required tag missing");
    if (!/^\d{1,16}$/.test(text)) return this.reject(c, m, 36, REJECT_FORMAT, "incorrect data format");
    const next = Number(text);
    if (next > c.inSeq) c.inSeq = next;
  }

  /** Reject(3) of message `m`: RefSeqNum(45), RefTagID(371), SessionRejectReason(373), Text. */
  reject(c: FixConn, m: FixMessage, tag: number, reason: number, text: string): void {
    const ref = m.get(34);
    const type = m.get(35);
    let body = ref === undefined ? "" : field(45, ref);
    if (tag > 0) body += field(371, tag);
    if (type !== undefined && type !== "") body += field(372, type);
    body += `${field(373, reason)}${field(58, text)}`;
    this.push(c, [{ type: "3", body }]);
  }

  /** BusinessMessageReject(j): RefSeqNum(45), RefMsgType(372), BusinessRejectReason(380)=3, Text. */
  private businessReject(c: FixConn, m: FixMessage, text: string): void {
    const ref = m.get(34) ?? "0";
    this.push(c, [
      { type: "j", body: `${field(45, ref)}${field(372, m.msgType)}${field(380, 3)}${field(58, text)}` },
    ]);
  }

  // ------------------------------------------------------------------ the outgoing queue

  slot(c: FixConn): FixSlot {
    const s: FixSlot = { msgs: null, answer: true };
    c.out.push(s);
    c.inFlight++;
    return s;
  }

  fill(c: FixConn, slot: FixSlot, msgs: OutMsg[]): void {
    if (slot.msgs !== null) return;
    slot.msgs = msgs;
    this.markDirty(c);
  }

  push(c: FixConn, msgs: OutMsg[]): void {
    if (c.state === FIX_ENDED) return;
    c.out.push({ msgs, answer: false });
    this.markDirty(c);
  }

  taken(c: FixConn): void {
    c.inFlight++;
  }

  answered(c: FixConn, msgs: OutMsg[]): void {
    c.inFlight--;
    if (msgs.length > 0) this.push(c, msgs);
  }

  abort(c: FixConn, slot: FixSlot, text: string): void {
    const at = c.out.indexOf(slot, c.head);
    if (at >= 0) c.out.length = at;
    this.end(c, text);
  }

  private markDirty(c: FixConn): void {
    if (c.state !== FIX_ENDED) this.turn.mark(c, c);
  }

  private flushOne(c: FixConn): void {
    if (c.state === FIX_ENDED) return;
    this.write(c, false);
    if (c.socket.writableLength > this.deps.maxBackpressureBytes)
      this.end(c, "slow consumer: unsent data over the limit");
  }

  /**
   * Writes every ready message at the head of the queue as one chunk, numbering them in order; with
   * `ended`, the session is over and only what is ready goes (answers still waiting are dropped).
   */
  private write(c: FixConn, ended: boolean): void {
    const out = c.out;
    let i = c.head;
    if (i >= out.length) return;
    const batch = this.batch;
    const now = Date.now();
    const time = fixTime(now);
    // Before a Logon named the client, a Logout is addressed to UNKNOWN.
    const header = {
      senderCompId: this.deps.compId,
      targetCompId: c.peerCompId === "" ? "UNKNOWN" : c.peerCompId,
      seqNum: 0,
      sendingTime: time,
    };
    while (i < out.length) {
      const s = out[i];
      if (s.msgs === null) {
        if (!ended) break;
        i++;
        continue;
      }
      for (const msg of s.msgs) {
        header.seqNum = msg.seq ?? c.outSeq++;
        batch.add(msg.type, msg.extra === undefined ? header : { ...header, extra: msg.extra }, msg.body);
      }
      if (s.answer) c.inFlight--;
      i++;
    }
    written(c, i);
    if (batch.size === 0) return;
    const bytes = batch.take();
    c.lastOutMs = now;
    if (c.socket.destroyed || !c.socket.writable) return;
    c.socket.write(bytes);
  }

  // ------------------------------------------------------------------ timers

  private readonly sweep = (): void => {
    const now = Date.now();
    const deadline = this.deps.logonDeadlineMs ?? FIX_LOGON_DEADLINE_MS;
    for (const c of [...this.conns]) {
      if (c.state === FIX_HELLO) {
        if (now - c.openedMs >= deadline) {
          this.ended(c);
          c.socket.destroy();
        }
        continue;
      }
      const hb = c.heartbeatMs;
      // QuickFIX's timings: a TestRequest after 1.2 x HeartBtInt of silence, the end 1.2 x later.
      if (c.testRequestMs !== 0) {
        if ((now - c.testRequestMs) * 10 >= hb * 12) {
          this.end(c, "heartbeat timeout");
          continue;
        }
      } else if ((now - c.lastInMs) * 10 >= hb * 12) {
        c.testRequestMs = now;
        this.push(c, [{ type: "1", body: field(112, `TEST-${++this.testRequests}`) }]);
        continue;
      }
      if (now - c.lastOutMs >= hb && c.head >= c.out.length) this.push(c, [{ type: "0", body: "" }]);
    }
  };
}
