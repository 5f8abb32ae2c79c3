/**
 * One FIX connection's state and the limits every FIX session keeps (docs/API.md 17): message size,
 * ignored messages, the logon deadline, heartbeats, messages in flight.
 */
import type { Socket } from "node:net";
import type { ApiKey, Users } from "../accounts/users.ts";
import type { EntryContext } from "../entry/context.ts";
import type { ValidOrder } from "../entry/validate.ts";
import type { SessionOrders } from "../session/session-conn.ts";
import type { FixFramer } from "./codec.ts";

/** A message longer than this (bytes, header and trailer included) ends the connection. */
export const MAX_FIX_MESSAGE = 16 * 1024;
/** This many ignored (unframeable, wrong length or checksum) messages end the connection. */
export const MAX_IGNORED = 100;
/** No Logon within this long of connect: closed. */
export const FIX_LOGON_DEADLINE_MS = 10_000;
/** SendingTime(52) of the Logon: at most this far from the server's clock. */
export const LOGON_CLOCK_SKEW_MS = 5_000;
export const HEARTBEAT_MIN_S = 1;
export const HEARTBEAT_MAX_S = 120;
/** Unanswered order messages per session. */
export const MAX_FIX_IN_FLIGHT = 1000;
/** The timer sweep: heartbeats, test requests and timeouts come at most this late. */
export const FIX_SWEEP_MS = 100;
/** TargetSubID(57) of a drop-copy Logon. */
export const DROP_COPY = "DROPCOPY";

/** SessionRejectReason(373) values the gateway answers (docs/API.md 17). */
export const REJECT_REQUIRED_MISSING = 1;
export const REJECT_NO_VALUE = 4;
export const REJECT_VALUE_INCORRECT = 5;
export const REJECT_FORMAT = 6;
export const REJECT_COMP_ID = 9;
/** FIX 4.4's "tag appears more than once" (docs/FIX.md 3). */
export const REJECT_REPEATED = 13;

export const FIX_HELLO = 0;
export const FIX_ON = 1;
export const FIX_ENDED = 2;

/** One message to send: its MsgType, body fields, header fields after 52, and a fixed MsgSeqNum. */
export interface OutMsg {
  readonly type: string;
  readonly body: string;
  readonly extra?: string;
  /** A SequenceReset-GapFill keeps the number it is given and takes none of the sequence. */
  readonly seq?: number;
}

/**
 * A place in the outgoing queue: an order message's answer (null until it is answered, then its
 * messages, maybe none), or messages ready at once (a report, a session message).
 */
export interface FixSlot {
  msgs: OutMsg[] | null;
  /** An order message's answer: counted in flight until it is written. */
  readonly answer: boolean;
}

export interface FixConn {
  /** The session tag of its cancel-on-disconnect orders: -2, -3, ... (never a WebSocket session's). */
  readonly id: number;
  readonly socket: Socket;
  framer: FixFramer | null;
  state: number;
  readonly openedMs: number;
  key: ApiKey | null;
  userId: number;
  /** The client's CompID (SenderCompID of its Logon), our TargetCompID. */
  peerCompId: string;
  heartbeatMs: number;
  cancelOnDisconnect: boolean;
  dropCopy: boolean;
  /** The MsgSeqNum expected next from the client. */
  inSeq: number;
  /** Our next MsgSeqNum. */
  outSeq: number;
  lastInMs: number;
  lastOutMs: number;
  /** When our TestRequest went (0: none outstanding). */
  testRequestMs: number;
  ignored: number;
  out: FixSlot[];
  head: number;
  inFlight: number;
  dirty: boolean;
  /** docs/API.md 16: reports numbered at or below this are in the resume's replay (0: none). */
  resumeCut: number;
  /** Tags a created order with this session (a logon with CancelOnDisconnect=Y). */
  tag?: (v: ValidOrder) => void;
}

export interface FixDeps {
  /** The order entry layer the messages run through (src/entry/). */
  readonly ctx: EntryContext;
  readonly users: Users;
  readonly orders: SessionOrders;
  /** The server's CompID: SenderCompID of what it sends, TargetCompID of what it takes. */
  readonly compId: string;
  ready(): boolean;
  accepting(): boolean;
  /** Unsent bytes above which a session is ended as a slow consumer. */
  readonly maxBackpressureBytes: number;
  /** The logon deadline (tests shorten it). */
  readonly logonDeadlineMs?: number;
}

/** The queue, as the order messages and the reports write to it. */
export interface FixOut {
  /** An order message's place in the queue, answered later (`fill`). */
  slot(c: FixConn): FixSlot;
  fill(c: FixConn, slot: FixSlot, msgs: OutMsg[]): void;
  /** Messages ready now, behind everything queued. */
  push(c: FixConn, msgs: OutMsg[]): void;
  /**
   * A NewOrderSingle taken: counted in flight until `answered`, without a place in the queue. Its
   * acceptance is its New report, which comes with the reports of every change in commit order
   * (docs/FIX.md 6); so nothing of it waits behind messages received earlier and still unanswered.
   */
  taken(c: FixConn): void;
  /** The NewOrderSingle is answered: `msgs` (its refusal, or none) go behind everything queued. */
  answered(c: FixConn, msgs: OutMsg[]): void;
  /**
   * Ends the session at `slot`: what is queued before it is written, then a Logout with `text`;
   * the slot and everything behind it are dropped.
   */
  abort(c: FixConn, slot: FixSlot, text: string): void;
}
