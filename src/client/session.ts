/**
 * A trading session over `ws` (docs/API.md 13): one WebSocket to `/session`, logged on with the HMAC of
 * the server's hello challenge, then calls that answer promises and execution reports as events.
 *
 *   connect     open → hello → `session.logon` (signature of the challenge, signText of index.ts)
 *   calls       one id per call (an integer, counting up for the session's life), many in flight:
 *               at most `maxInFlight` (default the server's 1,000) are sent and unanswered; more
 *               wait here, in order, and leave as answers free their places
 *   answers     200 resolves with `result`; any other status rejects with SessionError, which
 *               carries the contract's error body (`errors`, `codes`, `retryAfterMs`)
 *   reports     `order` and `trade` events (11.3), `pairStatus` (a pair's status changed); other
 *               server events as `event`. A report that follows an answer reaches listeners only
 *               after that answer's promise has settled and the code awaiting it has run on (they
 *               wait for the next event-loop turn): user code sees the answer of a call before the
 *               reports of what it changed, as the wire has them
 *   heartbeat   `ws` answers the server's pings; the session calls `ping` after half the heartbeat
 *               of its own silence, and ends a link that brought nothing for a whole heartbeat (after
 *               reading what already arrived: a process that stalled has not heard a silent server)
 *   drop        every call in flight or waiting rejects with SessionDisconnected, never resent: a
 *               call that changes orders has an unknown outcome (the error says so)
 *   reconnect   opt-in, with exponential backoff: a fresh hello and a fresh logon (credentials read
 *               again, so a rotated key is picked up); a logon refused with 401 ends the session
 *   resume      docs/API.md 16: the session keeps the highest `execSeq` of the reports it received (and
 *               the epoch); a reconnect logs on with `resumeFrom` that number, so the server replays
 *               what the drop lost (as `order`/`trade` events) before `resumed` and the live reports.
 *               A logon without resume learns its number with the `executions` call. An epoch that
 *               moved on (RESUME_EPOCH, a server started on a backup's copy) or a number the server
 *               never gave (RESUME_AHEAD) is answered with `resumeRefused` and a logon without resume
 *   raw frames  `onFrame` sees each frame received (hello and logon answers included) before it is
 *               handled, `onSend` each call frame sent (the logon included), e.g. to log the wire or
 *               check it against the AsyncAPI document
 *
 * The calls are one table (SessionCalls): a new call of the server is one entry there and one
 * method here; `call(method, params)` reaches any call by name meanwhile.
 */

import { EventEmitter } from "node:events";
import WebSocket from "ws";
import { headerRecord, originOf, signText } from "./base.ts";
import type {
  AmendOrderRequest,
  Balance,
  BatchCancelResult,
  BatchOrderResult,
  CreatedOco,
  CreatedOrder,
  CreateOcoRequest,
  CreateOrderRequest,
  ErrorBody,
  Executions,
  Order,
  PairStatusUpdate,
  UserTrade,
} from "./types.ts";

/** docs/API.md 13: unanswered calls the server accepts per session. */
export const SESSION_MAX_IN_FLIGHT = 1000;
/** docs/API.md 13: the default `heartbeatSeconds`. */
export const SESSION_HEARTBEAT_SECONDS = 30;

/** docs/API.md 8.8: the deadline of a call that changes orders (Unix ms). */
export interface Deadline {
  expiresAt?: number;
}

/** `session.logon` params beyond the credentials (docs/API.md 13, 8.9). */
export interface LogonSettings {
  /** Cancel the orders this session created when it ends, however it ends (default false). */
  cancelOnDisconnect?: boolean;
  /** 1 to 120 (default 30): the server ends a session silent for that long with 4002. */
  heartbeatSeconds?: number;
  /** Execution reports (default true). */
  reports?: boolean;
  /**
   * docs/API.md 16: the first logon replays the executions numbered above this one (e.g. the
   * `execSeq` of an earlier session, or `lastExecSeq` of GET /trade/executions); reconnects resume
   * from the session's own number whatever this says.
   */
  resumeFrom?: number;
  /** The epoch `resumeFrom` belongs to (docs/API.md 16); another epoch than the server's is refused. */
  resumeEpoch?: number;
}

/** The answer of `session.logon`. */
export interface LogonResult {
  uid: string;
  cancelOnDisconnect: boolean;
  heartbeatSeconds: number;
  reports: boolean;
}

/**
 * The calls of docs/API.md 13: params and result of each. A new call of the server is one entry here
 * (and a method of TradingSession for convenience).
 */
export interface SessionCalls {
  "order.create": { params: CreateOrderRequest & Deadline; result: CreatedOrder };
  "order.cancel": { params: { orderId: number | string } & Deadline; result: [] };
  "oco.create": { params: CreateOcoRequest & Deadline; result: CreatedOco };
  "order.amend": { params: AmendOrderRequest & Deadline; result: CreatedOrder };
  "orders.create": { params: { orders: CreateOrderRequest[] } & Deadline; result: BatchOrderResult[] };
  "orders.cancel": { params: { orderIds: (number | string)[] } & Deadline; result: BatchCancelResult[] };
  "orders.cancelAll": { params: { pairName?: string } & Deadline; result: { cancelled: number[] } };
  "orders.cancelAllAfter": { params: { timeout: number }; result: { triggerTime: number } };
  "order.get": { params: { orderId: number | string } | { clientOrderId: string }; result: CreatedOrder };
  "orders.open": { params: { pairName: string }; result: Order[] };
  balances: { params: Record<string, never>; result: Balance[] };
  ping: { params: Record<string, never>; result: { serverTime: number } };
  executions: { params: { after?: number; limit?: number }; result: Executions };
}

export type SessionMethod = keyof SessionCalls;

/**
 * Calls whose effect on orders is unknown when the link drops before their answer. A method not
 * listed here and not known to only read (`order.get`, `orders.open`, `balances`, `ping`,
 * `executions`) counts as changing orders, so a call added later is on the safe side.
 */
const READ_ONLY: ReadonlySet<string> = new Set([
  "order.get",
  "orders.open",
  "balances",
  "ping",
  "executions",
]);

/** A call answered with a status other than 200: the contract's error body (docs/API.md 4, 13). */
export class SessionError extends Error {
  override name = "SessionError";
  readonly method: string;
  readonly status: number;
  readonly errors: Record<string, string[]>;
  readonly codes: Record<string, string[]>;
  /** A 429 of the rate limit: when to try again (docs/API.md 13). */
  readonly retryAfterMs: number | undefined;
  /** The answer frame as received. */
  readonly answer: Record<string, unknown>;
  constructor(method: string, answer: Record<string, unknown>) {
    const errors = nullProto(answer.errors);
    const codes = nullProto(answer.codes);
    const status = typeof answer.status === "number" ? answer.status : 0;
    super(`${method}: status ${status}: ${JSON.stringify({ errors, codes }).slice(0, 500)}`);
    this.method = method;
    this.status = status;
    this.errors = errors;
    this.codes = codes;
    this.retryAfterMs = typeof answer.retryAfterMs === "number" ? answer.retryAfterMs : undefined;
    this.answer = answer;
  }

  /** The error body as REST answers it. */
  get body(): ErrorBody {
    return { errors: this.errors, codes: this.codes };
  }
}

/**
 * A call that got no answer because the link dropped (or the session was closed). It is never
 * resent. `sent` tells whether it reached the socket; `outcomeUnknown` is true for a sent call that
 * may have changed orders: it may or may not have been executed, so read the orders (`order.get`
 * with a clientOrderId, `orders.open`) after the reconnect before acting again.
 */
export class SessionDisconnected extends Error {
  override name = "SessionDisconnected";
  readonly method: string;
  readonly sent: boolean;
  readonly outcomeUnknown: boolean;
  /** The WebSocket close code (1006 when the link broke without one). */
  readonly closeCode: number;
  readonly reason: string;
  constructor(method: string, sent: boolean, closeCode: number, reason: string) {
    const outcomeUnknown = sent && !READ_ONLY.has(method);
    const why = `disconnected (close ${closeCode}${reason === "" ? "" : `: ${reason}`})`;
    super(
      !sent
        ? `${method}: ${why} before it was sent; not sent`
        : outcomeUnknown
          ? `${method}: ${why} before its answer; the outcome is unknown (it may or may not have been executed) and it was not resent`
          : `${method}: ${why} before its answer; not resent`,
    );
    this.method = method;
    this.sent = sent;
    this.outcomeUnknown = outcomeUnknown;
    this.closeCode = closeCode;
    this.reason = reason;
  }
}

/** The logon was refused or the connection could not be made. */
export class SessionConnectError extends Error {
  override name = "SessionConnectError";
  /** The refusing answer's error (401 bad credentials, 400 bad settings), when there was one. */
  readonly error: SessionError | undefined;
  /** `cause`: the network error behind a failed connection (its `code`: ECONNREFUSED, a TLS fault). */
  constructor(message: string, error?: SessionError, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.error = error;
  }
}

export interface ReconnectOptions {
  /** First delay (default 250 ms); each failed attempt doubles it, up to `maxDelayMs`. */
  initialDelayMs?: number;
  /** Default 10 000 ms. */
  maxDelayMs?: number;
  /** Attempts in a row before giving up (default unlimited). */
  maxAttempts?: number;
}

export interface Credentials {
  apiToken: string;
  secretKey: string;
}

export interface TradingSessionOptions extends LogonSettings {
  /** Server origin or REST base (as for ExchangeClient); `http` → `ws`, `https` → `wss`. */
  baseUrl: string | (() => string);
  apiToken?: string;
  secretKey?: string;
  /** Read at every logon instead of apiToken/secretKey (a key rotated while reconnecting). */
  credentials?: () => Credentials;
  /** Accept-Language of the upgrade: the language of error messages. */
  lang?: string;
  headers?: Record<string, string>;
  /** Reconnect after a drop, with a fresh hello and logon (default off). */
  reconnect?: boolean | ReconnectOptions;
  /** Calls sent and not answered (default and most 1,000, the server's bound). */
  maxInFlight?: number;
  /** Open + hello + logon within this long (default 10 000 ms). */
  connectTimeoutMs?: number;
  /**
   * Called with each frame received, before it is handled: the parsed JSON, or the text itself when
   * it is not JSON. It must not throw.
   */
  onFrame?: (frame: unknown) => void;
  /** Called with each call frame before it is sent (`session.logon` included). It must not throw. */
  onSend?: (frame: { id: number; method: string; params?: Record<string, unknown> }) => void;
}

/** docs/API.md 16: the `resumed` event. */
export interface ResumedInfo {
  execSeq: number;
  execEpoch: number;
}

/** A resume the server refused; the session logged on without it. */
export interface ResumeRefusal {
  /** The number and epoch the logon asked to resume from. */
  resumeFrom: number;
  resumeEpoch: number | undefined;
  /** The refusing answer (`codes.resumeFrom`: RESUME_EPOCH or RESUME_AHEAD). */
  error: SessionError;
}

/** Why a link ended. */
export interface DisconnectInfo {
  code: number;
  reason: string;
  /** A reconnect follows. */
  reconnecting: boolean;
}

/** What a session emits. */
export interface SessionEvents {
  /**
   * 11.3: a change of one of the user's orders (as `user_orders` carries it), live or replayed by a
   * resume, with the report's execution number (docs/API.md 16).
   */
  order: [order: Order, execSeq: number];
  /** 11.3: a trade of the user (as `user_history` carries it), live or replayed, with its number. */
  trade: [trade: UserTrade, execSeq: number];
  /**
   * docs/API.md 16: a resume's replay ended: `execSeq` is the last number it covered, the reports
   * after this event are live.
   */
  resumed: [info: ResumedInfo];
  /**
   * docs/API.md 16: the server refused to resume (`RESUME_EPOCH`: its numbers are of another epoch, a
   * server started on a backup's copy; `RESUME_AHEAD`: it never gave that number). The session logged
   * on without resume: what changed meanwhile is not replayed, read the orders and trades again.
   */
  resumeRefused: [refusal: ResumeRefusal];
  /** A pair's status changed (docs/API.md 13), sent to every logged-on session. */
  pairStatus: [update: PairStatusUpdate];
  /** Any other server event, as received. */
  event: [frame: Record<string, unknown>];
  /** After each logon, the first one and each after a reconnect. */
  logon: [result: LogonResult, reconnected: boolean];
  /** A link ended; calls in flight were rejected with SessionDisconnected. */
  disconnect: [info: DisconnectInfo];
  /** A reconnect attempt is due after `delayMs`. */
  reconnecting: [attempt: number, delayMs: number];
  /** The session ended for good: by `close()`, a refused logon or a drop without reconnect. */
  close: [info: { code: number; reason: string; error?: Error }];
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Waiting extends Pending {
  params: Record<string, unknown> | undefined;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const CLOSE_WAIT_MS = 2000;
/** `ws` gives 1006 when the link broke without a close frame. */
const CLOSE_ABNORMAL = 1006;

export class TradingSession extends EventEmitter<SessionEvents> {
  readonly options: TradingSessionOptions;
  /** The last logon's answer. */
  logonResult: LogonResult | null = null;
  private ws: WebSocket | null = null;
  private loggedOn = false;
  private closing = false;
  private ended = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly waiting: Waiting[] = [];
  private waitingHead = 0;
  private readonly maxInFlight: number;
  private lastSentMs = 0;
  private lastHeardMs = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempts = 0;
  private closedPromise: Promise<void>;
  private markClosed: () => void = () => {};
  /** Reports held back behind an answer settled in this turn, in arrival order (see `deliver`). */
  private readonly held: (() => void)[] = [];
  private holding = false;
  /** docs/API.md 16: the highest execution number received (or given to resume from); undefined: unknown. */
  private seq: number | undefined;
  private epoch: number | undefined;

  private constructor(options: TradingSessionOptions) {
    super();
    this.options = options;
    this.seq = options.resumeFrom;
    this.epoch = options.resumeEpoch;
    const max = options.maxInFlight ?? SESSION_MAX_IN_FLIGHT;
    if (!(Number.isInteger(max) && max >= 1 && max <= SESSION_MAX_IN_FLIGHT))
      throw new RangeError(`maxInFlight must be an integer from 1 to ${SESSION_MAX_IN_FLIGHT}`);
    this.maxInFlight = max;
    this.closedPromise = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  /**
   * Opens a session and logs on. Rejects with SessionConnectError when the connection cannot be
   * made or the logon is refused (its `error` the refusing answer); no reconnect for the first one.
   */
  static async connect(options: TradingSessionOptions): Promise<TradingSession> {
    const session = new TradingSession(options);
    await session.open(false);
    return session;
  }

  /** Logged on now (false while reconnecting and after the end). */
  get connected(): boolean {
    return this.loggedOn;
  }

  /** Calls sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Calls waiting for a place among the in-flight ones. */
  get queued(): number {
    return this.waiting.length - this.waitingHead;
  }

  /**
   * docs/API.md 16: the highest execution number of the reports received (replayed or live), which
   * the next reconnect resumes from; undefined while not known.
   */
  get execSeq(): number | undefined {
    return this.seq;
  }

  /** docs/API.md 16: the epoch of `execSeq`, once a `resumed` event or an `executions` answer said it. */
  get execEpoch(): number | undefined {
    return this.epoch;
  }

  // ---- the calls of docs/API.md 13 ---------------------------------------------------------------

  /** Any call by name: typed for the calls of SessionCalls, `unknown` for others. */
  call<M extends SessionMethod>(
    method: M,
    params?: SessionCalls[M]["params"],
  ): Promise<SessionCalls[M]["result"]>;
  call(method: string, params?: Record<string, unknown>): Promise<unknown>;
  call(method: string, params?: object): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (!this.loggedOn) {
        const reason = this.ended ? "session closed" : "not logged on";
        reject(new SessionDisconnected(method, false, CLOSE_ABNORMAL, reason));
        return;
      }
      const w: Waiting = { method, params: params as Record<string, unknown> | undefined, resolve, reject };
      if (this.pending.size < this.maxInFlight && this.queued === 0) this.send(w);
      else this.waiting.push(w);
    });
  }

  /** `order.create` (POST /trade/create-order). */
  createOrder(order: CreateOrderRequest, deadline: Deadline = {}): Promise<CreatedOrder> {
    return this.call("order.create", { ...order, ...deadline });
  }

  /** `oco.create` (POST /trade/create-oco, docs/API.md 18): the OCO's id and its two legs. */
  createOco(oco: CreateOcoRequest, deadline: Deadline = {}): Promise<CreatedOco> {
    return this.call("oco.create", { ...oco, ...deadline });
  }

  /** `order.cancel` (POST /trade/cancel-order); resolves with `[]`. */
  cancelOrder(orderId: number | string, deadline: Deadline = {}): Promise<[]> {
    return this.call("order.cancel", { orderId, ...deadline });
  }

  /** `order.amend` (POST /trade/amend-order): the order after the amend and any matching. */
  amendOrder(amend: AmendOrderRequest, deadline: Deadline = {}): Promise<CreatedOrder> {
    return this.call("order.amend", { ...amend, ...deadline });
  }

  /** `orders.create` (POST /trade/create-orders): one result per order, in order. */
  createOrders(orders: CreateOrderRequest[], deadline: Deadline = {}): Promise<BatchOrderResult[]> {
    return this.call("orders.create", { orders, ...deadline });
  }

  /** `orders.cancel` (POST /trade/cancel-orders): one result per id, in order. */
  cancelOrders(orderIds: (number | string)[], deadline: Deadline = {}): Promise<BatchCancelResult[]> {
    return this.call("orders.cancel", { orderIds, ...deadline });
  }

  /** `orders.cancelAll` (POST /trade/cancel-all-orders), every pair or one. */
  cancelAllOrders(pairName?: string, deadline: Deadline = {}): Promise<{ cancelled: number[] }> {
    return this.call(
      "orders.cancelAll",
      pairName === undefined ? { ...deadline } : { pairName, ...deadline },
    );
  }

  /** `orders.cancelAllAfter` (POST /trade/cancel-all-after): arms (timeout > 0) or disarms (0). */
  cancelAllAfter(timeout: number): Promise<{ triggerTime: number }> {
    return this.call("orders.cancelAllAfter", { timeout });
  }

  /** `order.get` by id (GET /trade/orders/{orderId}). */
  order(orderId: number | string): Promise<CreatedOrder> {
    return this.call("order.get", { orderId });
  }

  /** `order.get` by client order id (GET /trade/orders?clientOrderId=). */
  orderByClientId(clientOrderId: string): Promise<CreatedOrder> {
    return this.call("order.get", { clientOrderId });
  }

  /** `orders.open` (GET /trade/pairs/{pairName}/open-orders), newest first. */
  openOrders(pairName: string): Promise<Order[]> {
    return this.call("orders.open", { pairName });
  }

  /** `balances`: every currency of the configured pairs, with `reserved`. */
  balances(): Promise<Balance[]> {
    return this.call("balances");
  }

  /** `ping`: the server's clock. */
  ping(): Promise<{ serverTime: number }> {
    return this.call("ping");
  }

  /** `executions` (GET /trade/executions, docs/API.md 16): the executions numbered above `after`. */
  executions(query: { after?: number; limit?: number } = {}): Promise<Executions> {
    return this.call("executions", query);
  }

  /**
   * Ends the session for good: calls waiting or in flight reject with SessionDisconnected (await
   * them first for their answers), no reconnect. Resolves once the connection closed (at most 2 s,
   * then it is cut).
   */
  async close(): Promise<void> {
    if (this.ended) return this.closedPromise;
    this.closing = true;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.ws;
    if (ws === null || ws.readyState === WebSocket.CLOSED) {
      this.finish(1000, "closed by the client");
      return this.closedPromise;
    }
    ws.close(1000, "closed by the client");
    const cut = setTimeout(() => ws.terminate(), CLOSE_WAIT_MS);
    cut.unref();
    await this.closedPromise;
    clearTimeout(cut);
  }

  // ---- the link ------------------------------------------------------------------------------------

  private url(): string {
    const base = typeof this.options.baseUrl === "function" ? this.options.baseUrl() : this.options.baseUrl;
    return `${originOf(base).replace(/^http/, "ws")}/session`;
  }

  private credentials(): Credentials {
    if (this.options.credentials !== undefined) return this.options.credentials();
    const { apiToken, secretKey } = this.options;
    if (apiToken === undefined || secretKey === undefined)
      throw new SessionConnectError("TradingSession needs apiToken and secretKey (or credentials)");
    return { apiToken, secretKey };
  }

  /**
   * One link: connect, hello, logon. Resolves when logged on; rejects (with the link closed) when
   * that fails, a SessionConnectError whose `error` is set when the server refused the logon.
   */
  private open(reconnected: boolean): Promise<void> {
    const headers = headerRecord();
    if (this.options.lang !== undefined) headers["Accept-Language"] = this.options.lang;
    Object.assign(headers, this.options.headers);
    const timeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let live = false;
      const ws = new WebSocket(this.url(), { headers, handshakeTimeout: timeoutMs });
      this.ws = ws;
      const fail = (error: SessionConnectError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.terminate();
        reject(error);
      };
      const timer = setTimeout(
        () => fail(new SessionConnectError(`session logon timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      let logonId = 0;
      let creds: Credentials | undefined;
      let challenge = "";
      /** The resume this link's logon asks for (docs/API.md 16); null: none. */
      let resume: { from: number; epoch: number | undefined } | null = null;
      let refusal: ResumeRefusal | undefined;
      const logOn = () => {
        const params: Record<string, unknown> = {
          apiToken: creds!.apiToken,
          signature: signText(creds!.secretKey, challenge),
        };
        for (const k of ["cancelOnDisconnect", "heartbeatSeconds", "reports"] as const) {
          if (this.options[k] !== undefined) params[k] = this.options[k];
        }
        if (resume !== null) {
          params.resumeFrom = resume.from;
          if (resume.epoch !== undefined) params.resumeEpoch = resume.epoch;
        }
        logonId = this.nextId++;
        const logon = { id: logonId, method: "session.logon", params };
        this.options.onSend?.(logon);
        ws.send(JSON.stringify(logon));
      };
      ws.on("message", (data) => {
        this.lastHeardMs = Date.now();
        const text = String(data);
        let frame: Record<string, unknown>;
        try {
          frame = JSON.parse(text) as Record<string, unknown>;
        } catch {
          this.options.onFrame?.(text);
          return;
        }
        this.options.onFrame?.(frame);
        if (settled) return this.onFrame(frame);
        if (frame.event === "hello") {
          try {
            creds = this.credentials();
          } catch (error) {
            return fail(error as SessionConnectError);
          }
          challenge = String(frame.challenge);
          // Resumable once a number is known, and only with reports (RESUME_WITHOUT_REPORTS).
          if (this.seq !== undefined && this.options.reports !== false)
            resume = { from: this.seq, epoch: this.epoch };
          logOn();
          return;
        }
        if (logonId === 0 || frame.id !== logonId) return;
        if (frame.status !== 200) {
          const error = new SessionError("session.logon", frame);
          const why = error.codes.resumeFrom ?? [];
          if (resume !== null && (why.includes("RESUME_EPOCH") || why.includes("RESUME_AHEAD"))) {
            // The server's numbers are not the ones this session holds (docs/API.md 16): log on
            // without resume, once, on the same connection (a refused resume leaves it open).
            refusal = { resumeFrom: resume.from, resumeEpoch: resume.epoch, error };
            resume = null;
            this.seq = undefined;
            this.epoch = undefined;
            logOn();
            return;
          }
          return fail(new SessionConnectError(`session logon refused: ${error.message}`, error));
        }
        settled = true;
        live = true;
        clearTimeout(timer);
        this.logonResult = frame.result as LogonResult;
        this.loggedOn = true;
        this.attempts = 0;
        this.lastSentMs = Date.now();
        this.startHeartbeat();
        resolve();
        // The replay and `resumed` that follow the answer reach listeners in the next turn, after
        // the code awaiting `connect` has added them.
        this.holdReports();
        this.emit("logon", this.logonResult, reconnected);
        const refused = refusal;
        if (refused !== undefined) this.deliver(() => this.emit("resumeRefused", refused));
        if (resume === null && this.options.reports !== false && this.reconnects()) this.learnSeq();
      });
      ws.on("ping", () => {
        this.lastHeardMs = Date.now();
      });
      ws.on("pong", () => {
        this.lastHeardMs = Date.now();
      });
      ws.on("close", (code, reasonBuffer) => {
        const reason = reasonBuffer.toString();
        if (!live) {
          fail(
            new SessionConnectError(
              `session closed before logon (close ${code}${reason ? `: ${reason}` : ""})`,
            ),
          );
          return;
        }
        this.dropped(code, reason);
      });
      ws.on("error", (error) => {
        // Before the logon it fails the connect; after it, the close that follows ends the link.
        fail(new SessionConnectError(`session connect failed: ${error.message}`, undefined, error));
      });
    });
  }

  private onFrame(frame: Record<string, unknown>): void {
    if ("id" in frame && "status" in frame) {
      const id = frame.id;
      const p = typeof id === "number" ? this.pending.get(id) : undefined;
      if (p === undefined) return; // An `"id": null` answer cannot be ours: every frame we send is valid JSON.
      this.pending.delete(id as number);
      if (frame.status === 200) p.resolve(frame.result);
      else p.reject(new SessionError(p.method, frame));
      this.holdReports();
      this.pump();
      return;
    }
    if (frame.event === "order" || frame.event === "trade") {
      const n = frame.execSeq as number;
      // Counted on arrival: a report held back for a turn is already received (docs/API.md 16).
      if (this.seq === undefined || n > this.seq) this.seq = n;
      if (frame.event === "order") this.deliver(() => this.emit("order", frame.data as Order, n));
      else this.deliver(() => this.emit("trade", frame.data as UserTrade, n));
    } else if (frame.event === "resumed") {
      const info = { execSeq: frame.execSeq as number, execEpoch: frame.execEpoch as number };
      // The replay covered every number up to the cut (docs/API.md 16), reported or superseded.
      if (this.seq === undefined || info.execSeq > this.seq) this.seq = info.execSeq;
      this.epoch = info.execEpoch;
      this.deliver(() => this.emit("resumed", info));
    } else if (frame.event === "pairStatus")
      this.deliver(() => this.emit("pairStatus", frame.data as PairStatusUpdate));
    else this.deliver(() => this.emit("event", frame));
  }

  private reconnects(): boolean {
    return this.options.reconnect !== undefined && this.options.reconnect !== false;
  }

  /**
   * After a logon without resume: the user's last committed number and epoch, from an `executions`
   * call (no item wanted but one is the least). Every report numbered up to that number and
   * committed after the logon was queued ahead of the answer (docs/API.md 16: a report per number,
   * in number order), so from the answer on the session's number is known. A drop before the answer
   * and before any report leaves it unknown: the reconnect logs on without resume.
   */
  private learnSeq(): void {
    this.call("executions", { after: 0, limit: 1 }).then(
      (r) => {
        if (this.seq === undefined || r.lastExecSeq > this.seq) this.seq = r.lastExecSeq;
        this.epoch = r.execEpoch;
      },
      () => {},
    );
  }

  /**
   * An answer settled: the code awaiting it runs in microtasks after this frame's handler, so the
   * reports that follow it on the wire wait for the next event-loop turn (docs/API.md 11.3: the
   * answer of a call before the reports of what it changed).
   */
  private holdReports(): void {
    if (this.holding) return;
    this.holding = true;
    setImmediate(this.release);
  }

  /** Emits a report now, or behind the ones held back, in arrival order. */
  private deliver(emit: () => void): void {
    if (this.holding) this.held.push(emit);
    else emit();
  }

  private readonly release = (): void => {
    this.holding = false;
    // A listener's own calls cannot settle an answer before this loop ends (answers arrive as
    // frames, in a later turn), so nothing new is held back meanwhile.
    const held = this.held.splice(0);
    for (const emit of held) emit();
  };

  private send(w: Waiting): void {
    const id = this.nextId++;
    const frame =
      w.params === undefined ? { id, method: w.method } : { id, method: w.method, params: w.params };
    this.pending.set(id, w);
    this.lastSentMs = Date.now();
    this.options.onSend?.(frame);
    this.ws!.send(JSON.stringify(frame));
  }

  /** Sends waiting calls while there is room. */
  private pump(): void {
    while (this.loggedOn && this.queued > 0 && this.pending.size < this.maxInFlight) {
      const w = this.waiting[this.waitingHead];
      this.waiting[this.waitingHead++] = undefined as unknown as Waiting;
      this.send(w);
    }
    if (this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
    } else if (this.waitingHead >= 1024 && this.waitingHead * 2 >= this.waiting.length) {
      // Under steady pressure the queue never empties: drop the sent half now and then.
      this.waiting.splice(0, this.waitingHead);
      this.waitingHead = 0;
    }
  }

  /** docs/API.md 13 from the client's side: keep the server hearing us, notice a silent server. */
  private startHeartbeat(): void {
    this.stopHeartbeat();
    const periodMs = (this.logonResult?.heartbeatSeconds ?? SESSION_HEARTBEAT_SECONDS) * 1000;
    this.lastHeardMs = Date.now();
    this.heartbeat = setInterval(
      () => {
        const now = Date.now();
        if (now - this.lastHeardMs >= periodMs) {
          // Nothing read for a whole heartbeat (not even the answer to our ping). When this process
          // was the one that stalled, frames may wait in the socket: the server's close (4002 for the
          // heartbeat we missed) and answers before it. Judge after the next read of the socket
          // (setImmediate runs after the poll for I/O): still silent and open, the link is dead.
          const ws = this.ws;
          setImmediate(() => {
            if (ws !== this.ws || ws?.readyState !== WebSocket.OPEN) return;
            if (Date.now() - this.lastHeardMs >= periodMs) ws.terminate();
          });
          return;
        }
        if (now - this.lastSentMs >= periodMs / 2) {
          this.call("ping").catch(() => {});
        }
      },
      Math.max(100, periodMs / 4),
    );
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** The logged-on link ended: reject what it carried, then reconnect or end. */
  private dropped(code: number, reason: string): void {
    this.loggedOn = false;
    this.stopHeartbeat();
    this.rejectAll(code, reason);
    const reconnecting = !this.closing && this.reconnects();
    // The reports that arrived before the drop come first.
    this.deliver(() => this.emit("disconnect", { code, reason, reconnecting }));
    if (reconnecting) this.scheduleReconnect(code, reason);
    else this.finish(code, reason);
  }

  private rejectAll(code: number, reason: string): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    const waiting = this.waiting.slice(this.waitingHead);
    this.waiting.length = 0;
    this.waitingHead = 0;
    for (const p of pending) p.reject(new SessionDisconnected(p.method, true, code, reason));
    for (const w of waiting) w.reject(new SessionDisconnected(w.method, false, code, reason));
  }

  private scheduleReconnect(code: number, reason: string): void {
    const opts: ReconnectOptions = typeof this.options.reconnect === "object" ? this.options.reconnect : {};
    const attempt = ++this.attempts;
    if (opts.maxAttempts !== undefined && attempt > opts.maxAttempts) {
      this.finish(code, reason, new Error(`gave up reconnecting after ${opts.maxAttempts} attempts`));
      return;
    }
    const initial = opts.initialDelayMs ?? 250;
    const max = opts.maxDelayMs ?? 10_000;
    const base = Math.min(max, initial * 2 ** (attempt - 1));
    // Half fixed, half random, so many clients of one server do not come back in step.
    const delayMs = Math.round(base / 2 + (Math.random() * base) / 2);
    this.deliver(() => this.emit("reconnecting", attempt, delayMs));
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closing) return;
      this.open(true).catch((error: SessionConnectError) => {
        if (this.closing) return this.finish(1000, "closed by the client");
        // Credentials refused (revoked or wrong): trying again cannot help.
        if (error.error?.status === 401) return this.finish(code, reason, error);
        this.scheduleReconnect(code, reason);
      });
    }, delayMs);
  }

  /** The end of the session (once). */
  private finish(code: number, reason: string, error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.loggedOn = false;
    this.stopHeartbeat();
    this.rejectAll(code, reason);
    this.markClosed();
    this.deliver(() => this.emit("close", error === undefined ? { code, reason } : { code, reason, error }));
  }
}

/** A copy of an error map without a prototype (client text never indexes a plain object). */
function nullProto(value: unknown): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) Object.assign(out, value);
  return out;
}
