/**
 * Trading sessions over WebSocket (docs/API.md 13): `ws://HOST:PORT/session`, on the same uWS app
 * as `/stream` (session-route.ts).
 *
 *   open      hello with a fresh challenge; the logon deadline starts
 *   message   one frame, judged in the order of docs/API.md 13: frame (body, id) → method → logon
 *             (401, logon.ts) → rate limit (429) → params (400); then the call of SESSION_CALLS
 *             (methods.ts) runs the order entry call
 *   answers   into the connection's outbox in arrival order (outbox.ts), reports behind them
 *             (reports.ts)
 *   timers    one sweep every SWEEP_MS: the logon deadline (4001), heartbeats (ping at half,
 *             4002 at the full time)
 *   end       every end (close by the client, 4001, 4002, 1008, 1009, shutdown, a drop) runs `ended`
 *             once, which cancels the session's orders when it logged on with cancelOnDisconnect
 */
import { randomBytes } from "node:crypto";
import { executionViews } from "../entry/calls.ts";
import { unknownFields } from "../entry/fields.ts";
import type { Reply } from "../entry/reply.ts";
import { replayRows, resumeCut } from "../entry/resume.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { errorBody, errorStatus, multiErrorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import type { Lang } from "../errors/language.ts";
import { log } from "../util/log.ts";
import { addToSet, removeFromSet } from "../util/set-map.ts";
import {
  CLOSE_AUTH,
  CLOSE_GOING_AWAY,
  CLOSE_INTERNAL,
  CLOSE_SILENT,
  CLOSE_TOO_BIG,
} from "../wire/close-codes.ts";
import { DuplicateKeyError, isJsonObject, parseJsonBody } from "../wire/json-body.ts";
import { reportFrame } from "../wire/render.ts";
import { readLogon } from "./logon.ts";
import { LOGON_METHOD, SESSION_CALLS, type SessionCall } from "./methods.ts";
import { Outbox } from "./outbox.ts";
import { SessionReports } from "./reports.ts";
import {
  HEARTBEAT_DEFAULT_S,
  LOGON_DEADLINE_MS,
  MAX_CALL_BYTES,
  MAX_IN_FLIGHT,
  MAX_MESSAGE,
  type SessionConn,
  type SessionDeps,
  type Slot,
  type Socket,
  STATE_ENDED,
  STATE_HELLO,
  STATE_ON,
  SWEEP_MS,
} from "./session-conn.ts";
import { answerText, SlotReply } from "./slot-reply.ts";

const ID_RE = /^[A-Za-z0-9_-]{1,36}$/;
const FRAME_FIELDS: ReadonlySet<string> = new Set(["id", "method", "params"]);
const CALLS = new Map<string, SessionCall>(SESSION_CALLS.map((c) => [c.method, c]));

/** A logon's answer (docs/API.md 13). */
interface LogonView {
  uid: string;
  cancelOnDisconnect: boolean;
  heartbeatSeconds: number;
  reports: boolean;
}

const renderLogon = (v: LogonView): string => JSON.stringify(v);

/** The sessions of one server: frames and calls, logon, timers, revocation, shutdown. */
export class SessionHub {
  private readonly deps: SessionDeps;
  private readonly conns = new Set<Socket>();
  private readonly outbox: Outbox;
  /** The core's listener for the sessions' reports (boot.ts joins it with the stream hub's). */
  readonly reports: SessionReports;
  /** Logged-on sessions per API token (revocation ends them). */
  private readonly byToken = new Map<string, Set<Socket>>();
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;

  constructor(deps: SessionDeps) {
    this.deps = deps;
    this.outbox = new Outbox(deps.maxBackpressureBytes, (ws, code, reason) => this.end(ws, code, reason));
    this.reports = new SessionReports(this.outbox, this.conns);
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
      resumeCut: 0,
      userId: -1,
    };
  }

  open(ws: Socket): void {
    const c = ws.getUserData();
    this.conns.add(ws);
    this.timer ??= setInterval(this.sweep, SWEEP_MS);
    this.outbox.push(ws, c, {
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
      this.reports.remove(c.userId, ws);
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
    this.reports.closed = true;
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
      this.outbox.flushOne(ws, c);
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
      // At once, ahead of the waiting answers, and not counted (docs/API.md 13).
      this.outbox.pushFront(ws, c, answerText(id, 429, errorBody(Code.TOO_MANY_IN_FLIGHT, c.lang)));
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
    this.outbox.pushSlot(c, slot);
    const p = params as Record<string, unknown>;
    if (logon) {
      const reply = new SlotReply(this.outbox, ws, c, id, slot, renderLogon);
      try {
        this.logon(ws, c, p, reply);
      } catch (err) {
        reply.error(Code.INTERNAL, undefined, err);
      }
      return;
    }
    const reply = new SlotReply(this.outbox, ws, c, id, slot, call!.render);
    try {
      call!.run(this.deps.ctx, c, p, reply);
    } catch (err) {
      reply.error(Code.INTERNAL, undefined, err);
    }
  }

  private logon(ws: Socket, c: SessionConn, p: Record<string, unknown>, reply: Reply<LogonView>) {
    const logon = readLogon(this.deps.users, c.challenge, p);
    if ("refused" in logon) {
      reply.error(logon.refused);
      // The answer leaves first, then the close (in the same write).
      this.outbox.flushOne(ws, c);
      return this.end(ws, CLOSE_AUTH, "logon refused");
    }
    if ("invalid" in logon) return reply.invalid(logon.invalid);
    const key = logon.key;
    const ctx = this.deps.ctx;
    // docs/API.md 16: a resume is judged before the session is on; a refusal leaves it as it was.
    let cut = -1;
    if (logon.resumeFrom >= 0) {
      cut = resumeCut(ctx, key.userId, logon.resumeFrom, logon.resumeEpoch);
      if (cut < 0) return reply.error(-cut);
    }
    c.state = STATE_ON;
    c.key = key;
    (c as { userId: number }).userId = key.userId;
    c.uid = this.deps.users.uids[key.userId] ?? "";
    c.cancelOnDisconnect = logon.cancelOnDisconnect;
    c.heartbeatMs = logon.heartbeatMs;
    c.reports = logon.reports;
    if (c.cancelOnDisconnect) {
      const orders = this.deps.orders;
      const session = c.id;
      c.tag = (v) => orders.tag(v, session);
    }
    addToSet(this.byToken, key.token, ws);
    if (c.reports) this.reports.add(key.userId, ws);
    reply.ok({
      uid: c.uid,
      cancelOnDisconnect: c.cancelOnDisconnect,
      heartbeatSeconds: c.heartbeatMs / 1000,
      reports: c.reports,
    });
    if (cut >= 0) this.replay(ws, c, logon.resumeFrom, cut);
  }

  /**
   * docs/API.md 16: the user's executions in (from, cut], then the `resumed` event, in one slot of
   * the outbox behind the logon's answer; `cut` is the last number given at the logon. The session
   * reports from the logon on: a number given later is above `cut` and its report (built for this
   * session, which now wants it) queues behind the slot; a report at or below `cut` whose commit
   * comes later is left out (`resumeCut`), as the replay holds it. The rows are read once the
   * records of every number up to `cut` have committed (the writer's current batch holds the last
   * of them). Nothing is lost or repeated at the seam. The frames go out as the socket drains.
   */
  private replay(ws: Socket, c: SessionConn, from: number, cut: number): void {
    const ctx = this.deps.ctx;
    const slot: Slot = { text: null, answer: false };
    this.outbox.pushSlot(c, slot);
    c.resumeCut = cut;
    const done = `{"event":"resumed","execSeq":${cut},"execEpoch":${ctx.execEpoch}}`;
    replayRows(ctx, c.userId, from, cut).then(
      (rows) => {
        const frames = executionViews(ctx, rows).map(reportFrame);
        frames.push(done);
        slot.more = frames;
        slot.sent = 0;
        // Ready: a slot with `more` writes its frames, not its text.
        slot.text = "";
        this.outbox.filled(ws, c);
      },
      (err) => {
        log().error({ err: String(err) }, "session resume: the executions could not be read");
        this.end(ws, CLOSE_INTERNAL, "resume failed");
      },
    );
  }

  /** The socket wrote what it held: a replay in progress goes on. */
  drained(ws: Socket): void {
    const c = ws.getUserData();
    if (c.state !== STATE_ENDED) this.outbox.flushOne(ws, c);
  }

  private answerNow(ws: Socket, c: SessionConn, id: string, code: number): void {
    this.pushAnswer(ws, c, answerText(id, errorStatus(code), errorBody(code, c.lang)));
  }

  private invalidNow(ws: Socket, c: SessionConn, id: string, errors: ErrorEntry[]): void {
    this.pushAnswer(ws, c, answerText(id, 400, multiErrorBody(errors, c.lang)));
  }

  private pushAnswer(ws: Socket, c: SessionConn, text: string): void {
    this.outbox.push(ws, c, { text, answer: true });
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
      if (silent >= c.heartbeatMs) this.end(ws, CLOSE_SILENT, "heartbeat missed");
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

/** The id as JSON text, or null when it is missing or malformed (docs/API.md 13). */
function idText(id: unknown): string | null {
  if (typeof id === "number") return Number.isSafeInteger(id) && id >= 0 ? String(id) : null;
  if (typeof id === "string") return ID_RE.test(id) ? `"${id}"` : null;
  return null;
}
