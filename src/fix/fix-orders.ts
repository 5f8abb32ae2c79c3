/**
 * The order messages of a FIX session (docs/API.md 17.2), each mapped onto the REST body of its call
 * and run through the same order entry call (src/entry/calls.ts), so that validation, errors and
 * results are REST's:
 *
 *   D  NewOrderSingle            create-order
 *   F  OrderCancelRequest        cancel-order
 *   G  OrderCancelReplaceRequest amend-order
 *   q  OrderMassCancelRequest    cancel-all-orders
 *   H  OrderStatusRequest        the order read by id or client order id
 *
 * A refusal is answered here (ExecutionReport ExecType=8, OrderCancelReject, a refused
 * OrderMassCancelReport, a not-found status); what a message changed is reported by fix-reports.ts
 * after its commit, behind the answer's place in the queue.
 */
import type { OrderView } from "../core/exchange.ts";
import {
  AMEND_ORDER_FIELDS,
  amendOrderCall,
  CANCEL_ALL_ORDERS_FIELDS,
  CANCEL_ORDER_FIELDS,
  type Caller,
  cancelAllOrdersCall,
  cancelOrderCall,
  createOrderCall,
  orderByClientIdCall,
  orderByIdCall,
  withoutNonce,
} from "../entry/calls.ts";
import type { Reply } from "../entry/reply.ts";
import { openOrderFacts } from "../entry/trade.ts";
import { CREATE_FIELDS } from "../entry/validate.ts";
import type { ErrorEntry } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { type FixMessage, field, fixTime, parseFixTime } from "./codec.ts";
import { execReport, fixOrderOf, nextExecId, ordStatus, quoteOf } from "./exec-report.ts";
import {
  type FixConn,
  type FixDeps,
  type FixOut,
  type FixSlot,
  MAX_FIX_IN_FLIGHT,
  type OutMsg,
  REJECT_FORMAT,
  REJECT_REQUIRED_MISSING,
  REJECT_VALUE_INCORRECT,
} from "./fix-conn.ts";
import type { FixReports } from "./fix-reports.ts";
import { codeText } from "./logon.ts";

const CREATE = withoutNonce(CREATE_FIELDS);
const CANCEL = withoutNonce(CANCEL_ORDER_FIELDS);
const AMEND = withoutNonce(AMEND_ORDER_FIELDS);
const CANCEL_ALL = withoutNonce(CANCEL_ALL_ORDERS_FIELDS);

/** FIX 4.4 required tags of the messages (docs/API.md 17.2): missing, Reject(3) 373=1. */
const REQUIRED = new Map<string, readonly number[]>([
  ["D", [11, 54, 55, 40, 60, 38]],
  ["F", [11, 54, 55, 60]],
  ["G", [11, 54, 55, 40, 60]],
  ["q", [11, 530, 60]],
  ["H", [54, 55]],
]);

const QTY_RE = /^-?(?:\d+\.?\d*|\.\d+)$/;
const INT_RE = /^-?\d+$/;
/** Tags of the FIX type Qty or Price: a value that is no decimal is Reject(3) 373=6. */
const DECIMAL_TAGS: readonly number[] = [38, 44, 99, 20007];

const SIDES = new Map([
  ["1", "buy"],
  ["2", "sell"],
]);
/** OrdType(40): 3 (stop) and 4 (stop-limit) are market and limit orders with a stop (docs/API.md 18). */
const ORD_TYPES = new Map([
  ["1", "market"],
  ["2", "limit"],
  ["3", "market"],
  ["4", "limit"],
]);
/** StopDirection(20006) (docs/API.md 17.2). */
const STOP_DIRECTIONS = new Map([
  ["U", "up"],
  ["D", "down"],
]);
const TIFS = new Map([
  ["1", "GTC"],
  ["3", "IOC"],
  ["4", "FOK"],
]);

/** OrdRejReason(103) of a refused create (docs/API.md 17.2). */
function ordRejReason(code: number): number {
  if (code === Code.PAIR_UNKNOWN) return 1;
  if (code === Code.INSUFFICIENT_FUNDS) return 3;
  if (code === Code.CLIENT_ORDER_ID_DUPLICATE) return 6;
  return 99;
}

/** CxlRejReason(102) of a refused cancel or replace. */
function cxlRejReason(code: number): number {
  if (code === Code.ORDER_ALREADY_EXECUTED) return 0;
  if (
    code === Code.ORDER_NOT_FOUND ||
    code === Code.ORDER_ALREADY_CANCELLED ||
    code === Code.ORDER_NOT_FOUND_PATH ||
    code === Code.ORDER_ID_INVALID
  )
    return 1;
  return 99;
}

/**
 * OrdStatus(39) of a refused cancel or replace when the order is known to the caller
 * (docs/FIX.md 6): done by the refusal's code, else open (`open`: the caller's open order, if any).
 */
function knownStatus(code: number, open: OpenFacts | undefined): string | undefined {
  if (code === Code.ORDER_ALREADY_EXECUTED) return "2";
  if (code === Code.ORDER_ALREADY_CANCELLED) return "4";
  if (open === undefined) return undefined;
  return open.traded ? "1" : "0";
}

/**
 * Symbol(55), Side(54) and, for a replace, OrdType(40) of a request are those of the open order it
 * names (DECISIONS.md "FIX gateway: readings of the contract").
 */
function sameOrder(m: FixMessage, o: OpenFacts, replace: boolean): boolean {
  if (m.get(55) !== o.pairName || m.get(54) !== (o.side === "buy" ? "1" : "2")) return false;
  return !replace || m.get(40) === (o.type === "limit" ? (o.stop ? "4" : "2") : o.stop ? "3" : "1");
}

type OpenFacts = NonNullable<ReturnType<typeof openOrderFacts>>;

/** An order entry Reply whose outcomes go to three functions (an error as its first entry). */
class FixReply<T> implements Reply<T> {
  constructor(
    private readonly onOk: (result: T) => void,
    private readonly onError: (code: number, extra: string | undefined) => void,
  ) {}
  ok(result: T): void {
    this.onOk(result);
  }
  error(code: number, extra?: string): void {
    this.onError(code, extra);
  }
  invalid(errors: readonly ErrorEntry[]): void {
    const first = errors[0];
    this.onError(first?.[0] ?? Code.INTERNAL, first?.[1]);
  }
}

export class FixOrders {
  constructor(
    private readonly deps: FixDeps,
    private readonly out: FixOut,
    private readonly reports: FixReports,
  ) {}

  /** One order message of a logged-on order-entry session. */
  message(c: FixConn, m: FixMessage, type: string) {
    for (const tag of REQUIRED.get(type)!)
      if (!m.has(tag)) return this.reject(c, m, tag, REJECT_REQUIRED_MISSING, "required tag missing");
    for (const tag of DECIMAL_TAGS) {
      const v = m.get(tag);
      if (v !== undefined && !QTY_RE.test(v))
        return this.reject(c, m, tag, REJECT_FORMAT, "incorrect data format");
    }
    const transact = m.get(60);
    if (transact !== undefined && Number.isNaN(parseFixTime(transact)))
      return this.reject(c, m, 60, REJECT_FORMAT, "incorrect data format");
    const expires = m.get(20005);
    if (expires !== undefined && !INT_RE.test(expires))
      return this.reject(c, m, 20005, REJECT_FORMAT, "incorrect data format");
    // Judged as a session call is (docs/API.md 13): messages in flight, then the rate limit.
    let refusal = 0;
    if (c.inFlight >= MAX_FIX_IN_FLIGHT) refusal = Code.TOO_MANY_IN_FLIGHT;
    else {
      const limiter = this.deps.ctx.limiter;
      if (limiter.enabled && limiter.take(c.key!.token, Date.now()) < 0) refusal = Code.RATE_LIMITED;
    }
    if (refusal !== 0) return this.out.push(c, [this.refusal(m, type, refusal, undefined)]);
    const caller: Caller = { userId: c.userId, tag: c.tag };
    if (type === "D") {
      this.out.taken(c);
      try {
        return this.newOrder(c, m, caller);
      } catch (err) {
        this.out.answered(c, [this.refusal(m, type, Code.INTERNAL, undefined)]);
        throw err;
      }
    }
    const slot = this.out.slot(c);
    try {
      switch (type) {
        case "F":
        case "G":
          return this.cancelOrReplace(c, m, slot, caller, type === "G");
        case "q":
          return this.massCancel(c, m, slot, caller);
        case "H":
          return this.status(c, m, slot);
      }
    } catch (err) {
      this.out.fill(c, slot, [this.refusal(m, type, Code.INTERNAL, undefined)]);
      throw err;
    }
  }

  private reject(c: FixConn, m: FixMessage, tag: number, reason: number, text: string): void {
    let body = field(45, m.get(34) ?? "0") + field(371, tag) + field(372, m.msgType);
    body += field(373, reason) + field(58, text);
    this.out.push(c, [{ type: "3", body }]);
  }

  /** The refusal of a message of `type` for `code`, as that message is refused. */
  private refusal(m: FixMessage, type: string, code: number, extra: string | undefined): OutMsg {
    const text = codeText(code, extra);
    switch (type) {
      case "D":
        return rejectedOrder(m, text, ordRejReason(code));
      case "F":
      case "G":
        return cancelReject(m, type === "G", text, code, m.get(37) ?? "NONE", undefined);
      case "q":
        return massCancelReport(m, 0, 0, text, code === Code.PAIR_UNKNOWN ? 1 : 99);
      default:
        return notFoundStatus(m, text);
    }
  }

  // ------------------------------------------------------------------ D

  /** docs/FIX.md 5: answered by its New report after the commit, or by its refusal (`answered`). */
  private newOrder(c: FixConn, m: FixMessage, caller: Caller) {
    const refuse = (code: number, extra?: string) =>
      this.out.answered(c, [rejectedOrder(m, codeText(code, extra), ordRejReason(code))]);
    const body: Record<string, unknown> = {
      pairName: m.get(55),
      tradeType: mapped(ORD_TYPES, m.get(40)),
      directionType: mapped(SIDES, m.get(54)),
      amount: m.get(38),
      clientOrderId: m.get(11),
    };
    const ordType = m.get(40);
    const price = m.get(44);
    if (price !== undefined && ordType !== "1" && ordType !== "3") body.price = price;
    if (ordType === "3" || ordType === "4") {
      // docs/API.md 17.2: StopPx(99) with StopDirection(20006), or TrailingDelta(20007) in its place.
      const stopPx = m.get(99);
      const trailing = m.get(20007);
      if (stopPx === undefined && trailing === undefined) return refuse(Code.STOP_PRICE_REQUIRED);
      if (stopPx !== undefined) body.stopPrice = stopPx;
      if (trailing !== undefined) body.trailingDelta = trailing;
      body.stopDirection = mapped(STOP_DIRECTIONS, m.get(20006)) ?? null;
    }
    const tif = m.get(59);
    if (tif !== undefined) body.timeInForce = mapped(TIFS, tif);
    const inst = m.get(18);
    if (inst?.split(" ").includes("6")) body.postOnly = true;
    const stp = m.get(20003);
    if (stp !== undefined) body.selfTradePrevention = stp;
    const mmp = m.get(20004);
    if (mmp !== undefined) body.mmp = mmp === "Y" ? true : mmp === "N" ? false : mmp;
    const expires = m.get(20005);
    if (expires !== undefined) body.expiresAt = expires;
    const reply = new FixReply<OrderView>(
      // The order's reports (New, its fills, a cancelled remainder) follow from its commit.
      () => this.out.answered(c, []),
      (code, extra) => refuse(code, extra),
    );
    createOrderCall(this.deps.ctx, caller, body, CREATE, reply);
  }

  // ------------------------------------------------------------------ F, G

  /**
   * The order an F, G or H names: OrderID(37), else OrigClOrdID(41) (a G's ClOrdID accepted on it,
   * else its clientOrderId) or, for H, ClOrdID(11). Calls `then` with the id, or answers the refusal.
   */
  private resolve(
    c: FixConn,
    m: FixMessage,
    clientTag: number,
    refuse: (code: number) => void,
    then: (orderId: unknown) => void,
  ) {
    const id = m.get(37);
    if (id !== undefined) return then(id);
    const cid = m.get(clientTag);
    if (cid === undefined) return refuse(Code.ORDER_ID_REQUIRED);
    const chained = this.reports.replacedOrder(c.userId, cid);
    if (chained !== undefined) return then(chained);
    orderByClientIdCall(
      this.deps.ctx,
      c.userId,
      cid,
      new FixReply<OrderView>(
        (view) => then(view.id),
        () => refuse(Code.ORDER_NOT_FOUND),
      ),
    );
  }

  private cancelOrReplace(c: FixConn, m: FixMessage, slot: FixSlot, caller: Caller, replace: boolean) {
    const ctx = this.deps.ctx;
    const clOrdId = m.get(11)!;
    // `orderId` when the request named an order of the caller: its OrdStatus goes on the refusal.
    const refuse = (code: number, extra?: string, orderId?: unknown) => {
      const open = orderId === undefined ? undefined : openOrderFacts(ctx, c.userId, Number(orderId));
      const status = knownStatus(code, open);
      const id = String(orderId ?? m.get(37) ?? "NONE");
      this.out.fill(c, slot, [cancelReject(m, replace, codeText(code, extra), code, id, status)]);
    };
    this.resolve(c, m, 41, refuse, (orderId) => {
      const open = openOrderFacts(ctx, c.userId, Number(orderId));
      // A request whose Symbol, Side or OrdType are not its order's names none of the caller's.
      if (open !== undefined && !sameOrder(m, open, replace)) return refuse(Code.ORDER_NOT_FOUND);
      const claim = () => {
        const book = this.reports.book(c.userId);
        const id = Number(orderId);
        if (book !== undefined) book.claims.set(id, { conn: c, replace, clOrdId });
      };
      const body: Record<string, unknown> = { orderId };
      const expires = m.get(20005);
      if (expires !== undefined) body.expiresAt = expires;
      if (!replace) {
        const reply = new FixReply<null>(
          () => {
            // The cancel's report (ExecType=4) follows from its commit, naming this request.
            claim();
            this.out.fill(c, slot, []);
          },
          (code, extra) => refuse(code, extra, orderId),
        );
        return cancelOrderCall(ctx, caller, body, CANCEL, reply);
      }
      const qty = m.get(38);
      if (qty !== undefined) body.amount = qty;
      const price = m.get(44);
      if (price !== undefined) body.price = price;
      // docs/API.md 18: a new StopPx(99) for a stop that has not triggered.
      const stopPx = m.get(99);
      if (stopPx !== undefined) body.stopPrice = stopPx;
      const trailingDelta = m.get(20007);
      if (trailingDelta !== undefined) body.trailingDelta = trailingDelta;
      const reply = new FixReply<OrderView>(
        (view) => {
          this.reports.replacedWith(c.userId, clOrdId, view.id);
          claim();
          this.out.fill(c, slot, []);
        },
        (code, extra) => refuse(code, extra, orderId),
      );
      amendOrderCall(ctx, caller, body, AMEND, reply);
    });
  }

  // ------------------------------------------------------------------ q

  private massCancel(c: FixConn, m: FixMessage, slot: FixSlot, caller: Caller) {
    const kind = m.get(530);
    const body: Record<string, unknown> = {};
    if (kind === "1") {
      const symbol = m.get(55);
      if (symbol === undefined) {
        this.out.fill(c, slot, []);
        return this.reject(c, m, 55, REJECT_REQUIRED_MISSING, "required tag missing");
      }
      body.pairName = symbol;
    } else if (kind !== "7") {
      this.out.fill(c, slot, []);
      return this.reject(c, m, 530, REJECT_VALUE_INCORRECT, "MassCancelRequestType must be 1 or 7");
    }
    const reply = new FixReply<number[]>(
      // The ExecType=4 report of each order follows from its commit, behind this answer.
      (ids) => this.out.fill(c, slot, [massCancelReport(m, Number(kind), ids.length)]),
      (code, extra) =>
        this.out.fill(c, slot, [
          massCancelReport(m, 0, 0, codeText(code, extra), code === Code.PAIR_UNKNOWN ? 1 : 99),
        ]),
    );
    cancelAllOrdersCall(this.deps.ctx, caller, body, CANCEL_ALL, reply);
  }

  // ------------------------------------------------------------------ H

  private status(c: FixConn, m: FixMessage, slot: FixSlot): void {
    const ctx = this.deps.ctx;
    const notFound = (code: number, extra?: string) =>
      this.out.fill(c, slot, [
        notFoundStatus(
          m,
          codeText(
            code === Code.ORDER_NOT_FOUND_PATH || code === Code.ORDER_ID_REQUIRED
              ? Code.ORDER_NOT_FOUND
              : code,
            extra,
          ),
        ),
      ]);
    const answer = new FixReply<OrderView>((view) => {
      // A request whose Symbol or Side are not its order's names none of the caller's.
      if (view.pairName !== m.get(55) || (view.directionType === "buy" ? "1" : "2") !== m.get(54))
        return notFound(Code.ORDER_NOT_FOUND);
      const o = fixOrderOf(view, ctx.config);
      this.out.fill(c, slot, [
        execReport(o, {
          execType: "I",
          ordStatus: ordStatus(o, o.used, o.cancelled),
          cum: o.used,
          quote: quoteOf(o),
          execSeq: 0,
        }),
      ]);
    }, notFound);
    this.resolve(c, m, 11, notFound, (orderId) => orderByIdCall(ctx, c.userId, orderId, answer));
  }
}

/** The REST value of a FIX code, or the FIX text itself (refused by REST's validation). */
function mapped(map: ReadonlyMap<string, string>, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return map.get(value) ?? value;
}

/** Fields of a report on what a message named, for its refusals: the value as sent, when sent. */
function echo(m: FixMessage, tags: readonly number[]): string {
  let out = "";
  for (const tag of tags) {
    const v = m.get(tag);
    if (v !== undefined) out += field(tag, v);
  }
  return out;
}

/** ExecutionReport ExecType=8 of a refused NewOrderSingle: OrderID NONE, nothing changed. */
function rejectedOrder(m: FixMessage, text: string, reason: number): OutMsg {
  const body =
    field(37, "NONE") +
    field(11, m.get(11) ?? "NONE") +
    field(17, nextExecId()) +
    field(150, 8) +
    field(39, 8) +
    echo(m, [55, 54, 40, 38, 44, 99]) +
    field(14, 0) +
    field(151, 0) +
    field(6, 0) +
    field(60, fixTime(Date.now())) +
    field(103, reason) +
    field(58, text);
  return { type: "8", body };
}

/** OrderCancelReject(9): CxlRejResponseTo(434) 1 (F) or 2 (G). */
function cancelReject(
  m: FixMessage,
  replace: boolean,
  text: string,
  code: number,
  orderId: string,
  status: string | undefined,
): OutMsg {
  let body = field(37, orderId) + field(11, m.get(11) ?? "NONE");
  const orig = m.get(41);
  if (orig !== undefined) body += field(41, orig);
  if (status !== undefined) body += field(39, status);
  body += field(434, replace ? 2 : 1) + field(102, cxlRejReason(code)) + field(58, text);
  return { type: "9", body };
}

/** OrderMassCancelReport(r): 531 = the request type, or 0 with MassCancelRejectReason(532) and Text. */
function massCancelReport(
  m: FixMessage,
  response: number,
  affected: number,
  text?: string,
  why = 99,
): OutMsg {
  let body = field(11, m.get(11) ?? "NONE") + field(37, "NONE") + field(530, m.get(530) ?? "0");
  body += field(531, response);
  if (response === 0) body += field(532, why);
  body += field(533, affected);
  if (text !== undefined) body += field(58, text);
  return { type: "r", body };
}

/** ExecType=I of an order the caller has not: OrdStatus 8, OrdRejReason 5. */
function notFoundStatus(m: FixMessage, text: string): OutMsg {
  const body =
    field(37, m.get(37) ?? "NONE") +
    field(11, m.get(11) ?? "NONE") +
    field(17, nextExecId()) +
    field(150, "I") +
    field(39, 8) +
    echo(m, [55, 54]) +
    field(14, 0) +
    field(151, 0) +
    field(6, 0) +
    field(60, fixTime(Date.now())) +
    field(103, 5) +
    field(58, text);
  return { type: "8", body };
}
