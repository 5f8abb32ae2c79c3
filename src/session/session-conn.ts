/**
 * One trading session's state (uWS user data) and the limits every session keeps (docs/API.md 13):
 * close codes, calls in flight, heartbeats, the logon deadline, message sizes.
 */
import type { WebSocket } from "@trufflesuite/uws-js-unofficial";
import type { ApiKey, Users } from "../accounts/users.ts";
import type { EntryContext } from "../entry/context.ts";
import type { ValidOrder } from "../entry/validate.ts";
import type { Lang } from "../errors/language.ts";
import { MAX_BODY } from "../wire/request.ts";

/** Unanswered calls per session (docs/API.md 13). */
export const MAX_IN_FLIGHT = 1000;
export const HEARTBEAT_DEFAULT_S = 30;
export const HEARTBEAT_MAX_S = 120;
/** No logon within this long of open: 4001 (docs/API.md 13). */
export const LOGON_DEADLINE_MS = 10_000;
/** The timer sweep: closes come at most this late (docs/API.md 13 allows 1 s). */
export const SWEEP_MS = 200;
/**
 * Messages up to this size are read and judged; a larger text message answers 413 `body` and the
 * connection stays (docs/API.md 13).
 */
export const MAX_CALL_BYTES = MAX_BODY;
/** A message over this size ends the session with close code 1009 (docs/API.md 13). */
export const MAX_MESSAGE = 1024 * 1024;
/**
 * What uWS buffers of one message. uWS drops the TCP connection, with no close frame, on a message
 * over its maxPayloadLength (and on a text message that is not valid UTF-8), so it is set above
 * MAX_MESSAGE: a message up to this size reaches `message` and is closed with a 1009 close frame;
 * only a larger one is dropped bare (DECISIONS.md, "Session frame limits").
 */
export const UWS_MESSAGE_CEILING = 16 * 1024 * 1024;
/**
 * The core's side of cancel-on-disconnect (docs/API.md 8.9), built by the core's session orders:
 * `ValidOrder.session` (the tag a created order carries; 0 = none) and
 * `exchange.cancelSessionOrders(session)` (cancels that session's open orders through the normal
 * cancel path). boot.ts wires them to the exchange.
 */
export interface SessionOrders {
  tag(v: ValidOrder, session: number): void;
  cancelSessionOrders(session: number): void;
}

export const STATE_HELLO = 0;
export const STATE_ON = 1;
export const STATE_ENDED = 2;

/** An outgoing frame: an answer slot (filled when answered) or a report. */
export interface Slot {
  text: string | null;
  answer: boolean;
  /**
   * A slot of several frames (a resume's replay, docs/API.md 16), written in place of `text` (set
   * to "" once they are ready) as the socket drains, `sent` of them so far; the frames behind the
   * slot wait until all are out.
   */
  more?: string[];
  sent?: number;
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
  /**
   * docs/API.md 16: the last number a resume's replay holds (0: no resume); a live report at or
   * below it is already in the replay and is not sent again.
   */
  resumeCut: number;
  readonly userId: number;
}

export type Socket = WebSocket<SessionConn>;

export interface SessionDeps {
  /** The order entry layer the calls run through (src/entry/). */
  ctx: EntryContext;
  users: Users;
  orders: SessionOrders;
  ready: () => boolean;
  accepting: () => boolean;
  /** Unsent bytes above which a session is closed with 1008 (docs/API.md 12.1). */
  maxBackpressureBytes: number;
  /** The logon deadline (tests shorten it). */
  logonDeadlineMs?: number;
}
