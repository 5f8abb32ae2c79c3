/**
 * Trading sessions over WebSocket (CONTRACT 11): `ws://HOST:PORT/session`, on the same uWS app as
 * `/stream`.
 *
 *   open      hello with a fresh challenge; the logon deadline starts
 *   message   one frame, judged in the order of 11.2: frame (body, id) → method → logon (401) →
 *             rate limit (429) → params (400); then the call of SESSION_CALLS runs the REST code
 *   answers   each call takes a slot in the connection's outbox when it arrives; its answer fills
 *             the slot, and slots leave in arrival order (so two calls on one pair are answered in
 *             their order). An execution report (11.3) goes in behind every call received before
 *             it, so the answer to a call precedes the reports of what it changed.
 *   write     once per event-loop turn per connection, in one uWS cork; above the slow-consumer
 *             bound of section 7 the connection is closed with 1008
 *   timers    one sweep every SWEEP_MS: the logon deadline (4001), heartbeats (ping at half,
 *             4002 at the full time)
 *   end       every end (close by the client, 4001, 4002, 1008, 1009, shutdown, a drop) runs `ended`
 *             once, which cancels the session's orders when it logged on with cancelOnDisconnect
 */
import { randomBytes } from "node:crypto";
import type { TemplatedApp, WebSocket } from "@trufflesuite/uws-js-unofficial";
import { verifySignature } from "../accounts/hmac.ts";
import type { ApiKey, Users } from "../accounts/users.ts";
import type { CommitListener, OrderView, UserTradeView } from "../core/exchange.ts";
import { type ErrorEntry, errorBody, errorStatus, multiErrorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { type Lang, pickLanguage } from "../errors/language.ts";
import type { Reply } from "../entry/calls.ts";
import { DuplicateKeyError, isJsonObject, parseJsonBody, unknownFields } from "../json/json-body.ts";
import {
  internalErrorBody,
  MAX_BODY,
  readRequest,
  STATUS_LINE,
  sendMethodNotAllowed,
} from "../http/request.ts";
import type { RouteContext } from "../http/route.ts";
import { serialize } from "../json/schemas.ts";
import type { ValidOrder } from "../entry/validate.ts";
import { addToSet, removeFromSet } from "../util/set-map.ts";
import { LOGON_FIELDS, LOGON_METHOD, SESSION_CALLS, type SessionCall } from "./methods.ts";

/** Close codes (CONTRACT 11.1, 11.4, 7). */
export const CLOSE_AUTH = 4001;
export const CLOSE_HEARTBEAT = 4002;
export const CLOSE_SLOW_CONSUMER = 1008;
export const CLOSE_GOING_AWAY = 1001;
/** Unanswered calls per session (CONTRACT 11.2). */
export const MAX_IN_FLIGHT = 1000;
export const HEARTBEAT_DEFAULT_S = 30;
export const HEARTBEAT_MAX_S = 120;
/** No logon within this long of open: 4001 (CONTRACT 11.1). */
export const LOGON_DEADLINE_MS = 10_000;
/** The timer sweep: closes come at most this late (CONTRACT 11.4 allows 1 s). */
const SWEEP_MS = 200;
/** A message closed with this code is over MAX_MESSAGE (docs/API.md 11.2). */
export const CLOSE_TOO_BIG = 1009;
/**
 * Messages up to this size are read and judged; a larger text message answers 413 `body` and the
 * connection stays (docs/API.md 11.2).
 */
const MAX_CALL_BYTES = MAX_BODY;
/** A message over this size ends the session with close code 1009 (docs/API.md 11.2). */
export const MAX_MESSAGE = 1024 * 1024;
/**
 * What uWS buffers of one message. uWS drops the TCP connection, with no close frame, on a message
 * over its maxPayloadLength (and on a text message that is not valid UTF-8), so it is set above
 * MAX_MESSAGE: a message up to this size reaches `message` and is closed with a 1009 close frame;
 * only a larger one is dropped bare (DECISIONS.md, "Session frame limits").
 */
export const UWS_MESSAGE_CEILING = 16 * 1024 * 1024;
const ID_RE = /^[A-Za-z0-9_-]{1,36}$/;
const FRAME_FIELDS: ReadonlySet<string> = new Set(["id", "method", "params"]);
const CALLS = new Map<string, SessionCall>(SESSION_CALLS.map((c) => [c.method, c]));

/**
 * The core's side of cancel-on-disconnect (CONTRACT 11.4), built by the core's session orders:
 * `ValidOrder.session` (the tag a created order carries; 0 = none) and
 * `exchange.cancelSessionOrders(session)` (cancels that session's open orders through the normal
 * cancel path). boot.ts wires them to the exchange.
 */
export interface SessionOrders {
  tag(v: ValidOrder, session: number): void;
  cancelSessionOrders(session: number): void;
}

const STATE_HELLO = 0;
const STATE_ON = 1;
const STATE_ENDED = 2;

/** An outgoing frame: an answer slot (filled when answered) or a report. */
interface Slot {
  text: string | null;
  answer: boolean;
}

/** Per-connection state (uWS user data). */
export interface SessionConn {
  /** The session number, from 1, unique per server run. */
  readonly id: number;
  readonly lang: Lang;
  readonly challenge: string;
  readonly openedMs: number;
  state: number;
  key: ApiKey | null;
  uid: string;
  cancelOnDisconnect: boolean;
  heartbeatMs: number;
  reports: boolean;
  lastFrameMs: number;
  pinged: boolean;
  /** Outgoing frames, oldest first from `head`. */
  out: Slot[];
  head: number;
  /** Answer slots in `out` (received, not yet sent). */
  inFlight: number;
  /** Queued for the next write of this turn. */
  dirty: boolean;
  /** Tags a created order with this session (set at a logon with cancelOnDisconnect). */
  tag?: (v: ValidOrder) => void;
  readonly userId: number;
}

type Socket = WebSocket<SessionConn>;

export interface SessionDeps {
  ctx: RouteContext;
  users: Users;
  orders: SessionOrders;
  ready: () => boolean;
  accepting: () => boolean;
  /** Unsent bytes above which a session is closed with 1008 (CONTRACT 7). */
  maxBackpressureBytes: number;
  /** The logon deadline (tests shorten it). */
  logonDeadlineMs?: number;
}

/** The sessions of one server: reports from the core, timers, revocation, shutdown. */
export class SessionHub implements CommitListener {
  private readonly deps: SessionDeps;
  private readonly conns = new Set<Socket>();
  /** Logged-on sessions that receive reports, per user id. */
  private readonly reporting = new Map<number, Set<Socket>>();
  /** Logged-on sessions per API token (revocation ends them). */
  private readonly byToken = new Map<string, Set<Socket>>();
  private readonly dirty: Socket[] = [];
  private flushScheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private closed = false;

  constructor(deps: SessionDeps) {
    this.deps = deps;
    deps.users.revokeListeners.push((token) => {
      const set = this.byToken.get(token);
      if (set === undefined) return;
      for (const ws of [...set]) this.end(ws, CLOSE_AUTH, "API key revoked");
    });
  }

  get connections(): number {
    return this.conns.size;
  }

  newConn(lang: Lang): SessionConn {
    return {
      id: this.nextId++,
      lang,
      challenge: randomBytes(32).toString("hex"),
      openedMs: Date.now(),
      state: STATE_HELLO,
      key: null,
      uid: "",
      cancelOnDisconnect: false,
      heartbeatMs: HEARTBEAT_DEFAULT_S * 1000,
      reports: true,
      lastFrameMs: Date.now(),
      pinged: false,
      out: [],
      head: 0,
      inFlight: 0,
      dirty: false,
      userId: -1,
    };
  }

  open(ws: Socket): void {
    const c = ws.getUserData();
    this.conns.add(ws);
    this.timer ??= setInterval(this.sweep, SWEEP_MS);
    this.push(ws, c, {
      text: `{"event":"hello","challenge":"${c.challenge}","serverTime":${Date.now()}}`,
      answer: false,
    });
  }

  /** The one function every end of a session goes through (idempotent). */
  ended(ws: Socket): void {
    const c = ws.getUserData();
    if (c.state === STATE_ENDED) return;
    const wasOn = c.state === STATE_ON;
    c.state = STATE_ENDED;
    this.conns.delete(ws);
    if (wasOn) {
      removeFromSet(this.reporting, c.userId, ws);
      removeFromSet(this.byToken, c.key!.token, ws);
      if (c.cancelOnDisconnect) this.deps.orders.cancelSessionOrders(c.id);
    }
    if (this.conns.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Ends a session with `code` (its orders are cancelled first when it asked for that). */
  end(ws: Socket, code: number, reason: string): void {
    if (ws.getUserData().state === STATE_ENDED) return;
    this.ended(ws);
    try {
      ws.end(code, reason);
    } catch {
      // Already closed by the other side.
    }
  }

  /** Server shutdown: every session ends (its orders cancelled while the core still runs), 1001. */
  shutdown(): void {
    this.closed = true;
    for (const ws of [...this.conns]) this.end(ws, CLOSE_GOING_AWAY, "server shutting down");
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A pong (or any frame) keeps the session alive. */
  heard(ws: Socket): void {
    const c = ws.getUserData();
    c.lastFrameMs = Date.now();
    c.pinged = false;
  }

  // ------------------------------------------------------------------ calls

  message(ws: Socket, data: ArrayBuffer, isBinary: boolean) {
    const c = ws.getUserData();
    if (c.state === STATE_ENDED) return;
    this.heard(ws);
    if (data.byteLength > MAX_MESSAGE) {
      // The answers already made leave first, then the close frame.
      this.flushOne(ws, c);
      return this.end(ws, CLOSE_TOO_BIG, "message over 1 MiB");
    }
    if (isBinary) return this.answerNow(ws, c, "null", Code.SESSION_FRAME_INVALID);
    if (data.byteLength > MAX_CALL_BYTES) return this.answerNow(ws, c, "null", Code.BODY_TOO_LARGE);
    let frame: unknown;
    try {
      frame = parseJsonBody(Buffer.from(data).toString("utf8"));
    } catch (err) {
      // Judged with the frame, before its id is read, as a frame that is no object (docs/API.md 13).
      if (err instanceof DuplicateKeyError) return this.answerNow(ws, c, "null", Code.BODY_DUPLICATE_KEY);
      frame = undefined;
    }
    if (!isJsonObject(frame)) {
      return this.answerNow(ws, c, "null", Code.SESSION_FRAME_INVALID);
    }
    const f = frame as Record<string, unknown>;
    const id = idText(f.id);
    if (id === null) return this.answerNow(ws, c, "null", Code.SESSION_ID_INVALID);
    if (c.inFlight >= MAX_IN_FLIGHT) {
      // At once, ahead of the waiting answers, and not counted (CONTRACT 11.2).
      this.pushFront(ws, c, answerText(id, 429, errorBody(Code.TOO_MANY_IN_FLIGHT, c.lang)));
      return;
    }
    const method = f.method;
    const logon = method === LOGON_METHOD;
    const call = typeof method === "string" ? CALLS.get(method) : undefined;
    if (!logon && call === undefined) return this.answerNow(ws, c, id, Code.SESSION_METHOD_UNKNOWN);
    if (logon && c.state === STATE_ON) return this.answerNow(ws, c, id, Code.SESSION_ALREADY_LOGGED_ON);
    if (!logon && c.state !== STATE_ON) return this.answerNow(ws, c, id, Code.SESSION_NOT_LOGGED_ON);
    const limiter = this.deps.ctx.limiter;
    if (!logon && limiter.enabled) {
      const now = Date.now();
      if (limiter.take(c.key!.token, now) < 0) {
        const retryAfterMs = limiter.retryAfter(c.key!.token, now) * 1000;
        const body = errorBody(Code.RATE_LIMITED, c.lang);
        return this.pushAnswer(
          ws,
          c,
          answerText(id, 429, `${body.slice(0, -1)},"retryAfterMs":${retryAfterMs}}`),
        );
      }
    }
    const params = f.params === undefined ? {} : f.params;
    const frameBad = unknownFields(f, FRAME_FIELDS);
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      return this.invalidNow(ws, c, id, [[Code.SESSION_PARAMS_NOT_OBJECT], ...frameBad]);
    }
    if (frameBad.length > 0) return this.invalidNow(ws, c, id, frameBad);
    const slot: Slot = { text: null, answer: true };
    this.pushSlot(c, slot);
    const reply = this.reply(ws, c, id, slot);
    try {
      if (logon) this.logon(ws, c, params as Record<string, unknown>, reply);
      else call!.run(this.deps.ctx, c, params as Record<string, unknown>, reply);
    } catch (err) {
      reply.error(Code.INTERNAL, undefined, err);
    }
  }

  private logon(ws: Socket, c: SessionConn, p: Record<string, unknown>, reply: Reply) {
    const fail = (code: number) => {
      reply.error(code);
      // The answer leaves first, then the close (in the same write).
      this.flushOne(ws, c);
      this.end(ws, CLOSE_AUTH, "logon refused");
    };
    const token = p.apiToken;
    if (typeof token !== "string" || token === "") return fail(Code.AUTH_TOKEN_MISSING);
    const key = this.deps.users.key(token);
    if (key === undefined) return fail(Code.AUTH_TOKEN_UNKNOWN);
    const sig = p.signature;
    if (typeof sig !== "string" || sig === "") return fail(Code.AUTH_SIGNATURE_MISSING);
    if (!verifySignature(key.hmac, c.challenge, sig)) return fail(Code.AUTH_SIGNATURE_INVALID);
    const errors: ErrorEntry[] = [];
    const hb = p.heartbeatSeconds;
    if (
      hb !== undefined &&
      !(typeof hb === "number" && Number.isInteger(hb) && hb >= 1 && hb <= HEARTBEAT_MAX_S)
    )
      errors.push([Code.SESSION_HEARTBEAT_INVALID]);
    const cod = p.cancelOnDisconnect;
    if (cod !== undefined && typeof cod !== "boolean")
      errors.push([Code.SESSION_CANCEL_ON_DISCONNECT_INVALID]);
    const rep = p.reports;
    if (rep !== undefined && typeof rep !== "boolean") errors.push([Code.SESSION_REPORTS_INVALID]);
    errors.push(...unknownFields(p, LOGON_FIELDS));
    if (errors.length > 0) return reply.invalid(errors);
    c.state = STATE_ON;
    c.key = key;
    (c as { userId: number }).userId = key.userId;
    c.uid = this.deps.users.uids[key.userId] ?? "";
    c.cancelOnDisconnect = cod === true;
    c.heartbeatMs = (hb === undefined ? HEARTBEAT_DEFAULT_S : (hb as number)) * 1000;
    c.reports = rep !== false;
    if (c.cancelOnDisconnect) {
      const orders = this.deps.orders;
      const session = c.id;
      c.tag = (v) => orders.tag(v, session);
    }
    addToSet(this.byToken, token, ws);
    if (c.reports) addToSet(this.reporting, key.userId, ws);
    reply.ok(
      JSON.stringify({
        uid: c.uid,
        cancelOnDisconnect: c.cancelOnDisconnect,
        heartbeatSeconds: c.heartbeatMs / 1000,
        reports: c.reports,
      }),
    );
  }

  /** The Reply of one call: fills its slot once. */
  private reply(ws: Socket, c: SessionConn, id: string, slot: Slot): Reply {
    return new SlotReply(this, ws, c, id, slot);
  }

  /** A call's answer text is in its slot: the connection has something to write this turn. */
  filled(ws: Socket, c: SessionConn): void {
    if (c.state !== STATE_ENDED) this.markDirty(ws, c);
  }

  private answerNow(ws: Socket, c: SessionConn, id: string, code: number): void {
    this.pushAnswer(ws, c, answerText(id, errorStatus(code), errorBody(code, c.lang)));
  }

  private invalidNow(ws: Socket, c: SessionConn, id: string, errors: ErrorEntry[]): void {
    this.pushAnswer(ws, c, answerText(id, 400, multiErrorBody(errors, c.lang)));
  }

  private pushAnswer(ws: Socket, c: SessionConn, text: string): void {
    this.push(ws, c, { text, answer: true });
  }

  private pushSlot(c: SessionConn, slot: Slot): void {
    c.out.push(slot);
    c.inFlight++;
  }

  private push(ws: Socket, c: SessionConn, slot: Slot): void {
    c.out.push(slot);
    if (slot.answer) c.inFlight++;
    this.markDirty(ws, c);
  }

  /** A frame that goes out in this turn's write ahead of the waiting ones. */
  private pushFront(ws: Socket, c: SessionConn, text: string): void {
    c.out.splice(c.head, 0, { text, answer: false });
    this.markDirty(ws, c);
  }

  // ------------------------------------------------------------------ writing

  private markDirty(ws: Socket, c: SessionConn): void {
    if (c.dirty) return;
    c.dirty = true;
    this.dirty.push(ws);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const list = this.dirty.splice(0);
    for (const ws of list) {
      const c = ws.getUserData();
      c.dirty = false;
      if (c.state === STATE_ENDED) continue;
      this.flushOne(ws, c);
    }
  };

  /** Writes every ready frame at the head of the outbox in one cork, then checks the bound. */
  private flushOne(ws: Socket, c: SessionConn): void {
    const out = c.out;
    let i = c.head;
    if (i >= out.length || out[i].text === null) return;
    try {
      ws.cork(() => {
        while (i < out.length && out[i].text !== null) {
          const s = out[i];
          ws.send(s.text!, false, false);
          if (s.answer) c.inFlight--;
          i++;
        }
      });
    } catch {
      // The socket closed under us; `close` ends the session.
      return;
    }
    if (i === out.length) {
      out.length = 0;
      c.head = 0;
    } else if (i > 1024 && i * 2 > out.length) {
      out.splice(0, i);
      c.head = 0;
    } else c.head = i;
    if (ws.getBufferedAmount() > this.deps.maxBackpressureBytes) {
      this.end(ws, CLOSE_SLOW_CONSUMER, "slow consumer: unsent buffer over the limit");
    }
  }

  // ------------------------------------------------------------------ reports (CONTRACT 11.3)

  wantsOrders(user: number): boolean {
    return this.reporting.has(user);
  }

  wantsUserTrades(user: number): boolean {
    return this.reporting.has(user);
  }

  wantsTrades(): boolean {
    return false;
  }

  publicTrades(): void {}

  levelsChanged(): void {}
  bboChanged(): void {}
  l3Changed(): void {}

  orderChanged(user: number, view: OrderView): void {
    const set = this.reporting.get(user);
    if (set === undefined || this.closed) return;
    // The data as user_orders carries it: the stream message with `"stream":""` in place of the event.
    const text = `{"event":"order",${serialize.streamOrder({ stream: "", data: view }).slice(STREAM_HEAD.length)}`;
    for (const ws of set) this.push(ws, ws.getUserData(), { text, answer: false });
  }

  userTrade(user: number, view: UserTradeView): void {
    const set = this.reporting.get(user);
    if (set === undefined || this.closed) return;
    const text = `{"event":"trade",${serialize.streamUserTrade({ stream: "", data: view }).slice(STREAM_HEAD.length)}`;
    for (const ws of set) this.push(ws, ws.getUserData(), { text, answer: false });
  }

  /**
   * CONTRACT 12.2: the user's MMP state on a pair changed (a trigger, a reset), after the commit of
   * the command that changed it. Sent with the reports (a logon with `reports: false` gets none).
   */
  mmpChanged(user: number, pairName: string, frozen: boolean, frozenUntil: number): void {
    const set = this.reporting.get(user);
    if (set === undefined || this.closed) return;
    const text = `{"event":"mmp","data":${serialize.mmpEvent({ pairName, frozen, frozenUntil })}}`;
    for (const ws of set) this.push(ws, ws.getUserData(), { text, answer: false });
  }

  /**
   * A pair's status changed (docs/API.md 13), after its commit: every logged-on session is told,
   * with or without reports, since it is the venue's state and not a report of the user's orders
   * (DECISIONS.md "Pair status published").
   */
  pairStatusChanged(_pair: number, pairName: string, status: string): void {
    if (this.closed) return;
    const text = `{"event":"pairStatus","data":${serialize.pairStatus({ pairName, status })}}`;
    for (const ws of this.conns) {
      const c = ws.getUserData();
      if (c.state === STATE_ON) this.push(ws, c, { text, answer: false });
    }
  }

  // ------------------------------------------------------------------ timers

  private readonly sweep = (): void => {
    const now = Date.now();
    const deadline = this.deps.logonDeadlineMs ?? LOGON_DEADLINE_MS;
    for (const ws of [...this.conns]) {
      const c = ws.getUserData();
      if (c.state === STATE_HELLO) {
        if (now - c.openedMs >= deadline) this.end(ws, CLOSE_AUTH, "no logon in time");
        continue;
      }
      const silent = now - c.lastFrameMs;
      if (silent >= c.heartbeatMs) this.end(ws, CLOSE_HEARTBEAT, "heartbeat missed");
      else if (silent * 2 >= c.heartbeatMs && !c.pinged) {
        c.pinged = true;
        try {
          ws.ping();
        } catch {
          // closed meanwhile
        }
      }
    }
  };
}

/** What `serialize.streamOrder` / `streamUserTrade` put before the data with `stream: ""`. */
const STREAM_HEAD = '{"stream":"",';

/** `{"id":..,"status":..,"errors":..,"codes":..}` from an error body. */
function answerText(id: string, status: number, body: string): string {
  return `{"id":${id},"status":${status},${body.slice(1)}`;
}

/** The id as JSON text, or null when it is missing or malformed (CONTRACT 11.2). */
function idText(id: unknown): string | null {
  if (typeof id === "number") return Number.isSafeInteger(id) && id >= 0 ? String(id) : null;
  if (typeof id === "string") return ID_RE.test(id) ? `"${id}"` : null;
  return null;
}

/** Two commit listeners as one: the stream hub and the sessions. */
export function bothListeners(a: CommitListener, b: CommitListener): CommitListener {
  return {
    wantsOrders: (u) => a.wantsOrders(u) || b.wantsOrders(u),
    wantsUserTrades: (u) => a.wantsUserTrades(u) || b.wantsUserTrades(u),
    wantsTrades: (p) => a.wantsTrades(p) || b.wantsTrades(p),
    orderChanged: (u, v) => {
      if (a.wantsOrders(u)) a.orderChanged(u, v);
      if (b.wantsOrders(u)) b.orderChanged(u, v);
    },
    userTrade: (u, v) => {
      if (a.wantsUserTrades(u)) a.userTrade(u, v);
      if (b.wantsUserTrades(u)) b.userTrade(u, v);
    },
    publicTrades: (p, t) => a.publicTrades(p, t),
    levelsChanged: (p, l, s) => a.levelsChanged(p, l, s),
    mmpChanged: (u, p, f, until) => {
      a.mmpChanged?.(u, p, f, until);
      b.mmpChanged?.(u, p, f, until);
    },
    pairStatusChanged: (p, name, status) => {
      a.pairStatusChanged?.(p, name, status);
      b.pairStatusChanged?.(p, name, status);
    },
    bboChanged: (p) => a.bboChanged(p),
    l3Changed: (p, s, e) => a.l3Changed(p, s, e),
  };
}

/** Registers `/session`: the WebSocket route, and 426 for anything that is not an upgrade. */
export function mountSession(app: TemplatedApp, hub: SessionHub, deps: SessionDeps): void {
  const metrics = deps.ctx.metrics;
  app.ws<SessionConn>("/session", {
    // Heartbeats are the session's own (CONTRACT 11.4), not uWS's idle timeout.
    idleTimeout: 0,
    sendPingsAutomatically: false,
    // Never let uWS skip a message: the session closes a slow consumer (1008) instead.
    maxBackpressure: 0,
    maxPayloadLength: UWS_MESSAGE_CEILING,
    upgrade: (res, req, context) => {
      const lang = pickLanguage(req.getHeader("accept-language") || undefined);
      const wsKey = req.getHeader("sec-websocket-key");
      const wsProtocol = req.getHeader("sec-websocket-protocol");
      const wsExtensions = req.getHeader("sec-websocket-extensions");
      const refused = !deps.accepting() ? Code.SHUTTING_DOWN : !deps.ready() ? Code.NOT_READY : 0;
      if (refused !== 0) {
        const status = errorStatus(refused);
        metrics.request("/session", status);
        res.cork(() => {
          res
            .writeStatus(STATUS_LINE[status] ?? `${status} Error`)
            .writeHeader("content-type", "application/json")
            .end(errorBody(refused, lang));
        });
        return;
      }
      metrics.request("/session", 101);
      res.upgrade(hub.newConn(lang), wsKey, wsProtocol, wsExtensions, context);
    },
    open: (ws) => hub.open(ws),
    message: (ws, data, isBinary) => hub.message(ws, data, isBinary),
    pong: (ws) => hub.heard(ws),
    close: (ws) => hub.ended(ws),
  });
  app.any("/session", (res, req) => {
    if (req.getMethod() !== "get") {
      return sendMethodNotAllowed(res, readRequest(res, req, "/session"), "GET", (_, status) =>
        metrics.request("/session", status),
      );
    }
    const lang = pickLanguage(req.getHeader("accept-language") || undefined);
    metrics.request("/session", 426);
    res.cork(() => {
      res
        .writeStatus(STATUS_LINE[426])
        .writeHeader("upgrade", "websocket")
        .writeHeader("content-type", "application/json")
        .end(errorBody(Code.UPGRADE_REQUIRED, lang));
    });
  });
}

/**
 * The Reply of one session call (src/http/reply.ts): its answer text into the call's slot, once. A
 * class, not an object of closures, as the REST one: one is made per call on the hot path.
 */
class SlotReply implements Reply {
  readonly lang: Lang;
  constructor(
    private readonly hub: SessionHub,
    private readonly ws: Socket,
    private readonly c: SessionConn,
    private readonly id: string,
    private readonly slot: Slot,
  ) {
    this.lang = c.lang;
  }
  private fill(text: string): void {
    if (this.slot.text !== null) return;
    this.slot.text = text;
    this.hub.filled(this.ws, this.c);
  }
  ok(json: string): void {
    this.fill(`{"id":${this.id},"status":200,"result":${json}}`);
  }
  error(code: number, extra?: string, cause?: unknown): void {
    const status = errorStatus(code);
    const body =
      status === 500
        ? internalErrorBody(code, this.lang, "/session", extra, cause)
        : errorBody(code, this.lang, extra);
    this.fill(answerText(this.id, status, body));
  }
  invalid(errors: readonly ErrorEntry[]): void {
    this.fill(answerText(this.id, 400, multiErrorBody(errors, this.lang)));
  }
}
