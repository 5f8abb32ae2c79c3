/**
 * A small typed client of the exchange (docs/API.md 7, admin calls of docs/API.md 11),
 * used by the end-to-end tests and the benchmarks.
 *
 * It never throws on an HTTP status: every call answers `{status, headers, text, body}` so a test
 * can assert on a 400 as easily as on a 200 (`ok()` turns a non-200 into an exception when the
 * caller only wants the body). It does throw when no answer arrives: network errors and timeouts.
 *
 * Signing follows docs/API.md 3 by default: with `X-Timestamp` (the local clock, Unix ms) the signed
 * text is `<X-Timestamp>\n<METHOD>\n<path>\n<body or query>`, so a signature opens only that call,
 * for a few seconds. `signatureForm: "legacy"` sends the old form of docs/API.md 3: POST signs the body
 * text that is sent, byte for byte; GET signs the raw query string after `?` ("" when there is
 * none). The query is built here in the order given and sent unchanged, so the signed text is the
 * sent text.
 */

import { headerRecord, originOf, REST_PREFIX, signText } from "./base.ts";

// ---- wire types (docs/API.md 5): src/client/types.ts, which the web page imports too -------------

import type {
  Account,
  AdminUser,
  AmendOrderRequest,
  BackupAnswer,
  Balance,
  BalanceAnswer,
  BatchCancelResult,
  BatchOrderResult,
  Bbo,
  Candle,
  CreatedOco,
  CreatedOrder,
  CreateOcoRequest,
  CreateOrderRequest,
  DecimalInput,
  ErrorBody,
  Executions,
  L3Snapshot,
  MmpSettingsRequest,
  MmpState,
  NewApiKey,
  NewUser,
  Order,
  OrderBook,
  Page,
  PairInfo,
  PairPage,
  PairRecord,
  PairStatus,
  PromoteAnswer,
  PublicTrade,
  QuoteLevelInput,
  QuoteResult,
  Transfer,
  UserTrade,
} from "./types.ts";

export const CHART_PERIODS = ["1m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w"] as const;
export type ChartPeriod = (typeof CHART_PERIODS)[number];

// ---- requests and answers ---------------------------------------------------------------------------

/** docs/API.md 10 listen key. */
export interface ListenKey {
  listenKey: string;
  expiresAt: number;
}

/** Nonce as a JSON number or a string of digits (docs/API.md 1). */
export type Nonce = number | bigint | string;

/**
 * How requests are signed: `bound` (docs/API.md 3, the default) binds the signature to the time, the
 * method and the path; `legacy` signs the body or the query alone (docs/API.md 3).
 */
export type SignatureForm = "bound" | "legacy";

/** docs/API.md 1: `GET /health`. */
export interface Health {
  status: string;
  role?: "leader" | "follower";
  epoch?: number;
  /** The replication mode (a follower: its leader's). */
  replication?: "async" | "sync";
  /** `sync`: answers wait for a follower (a leader), or for this follower (a follower). */
  synchronous?: boolean;
  /** A leader. */
  followers?: number;
  /** A `sync` leader: since when it goes on alone (Unix ms), null while a follower counts. */
  aloneSince?: number | null;
  /** A follower. */
  leader?: string;
  connected?: boolean;
  lagMs?: number;
  lastCommit?: number;
  /** Since when it may lack a change its leader acknowledged (Unix ms; promote then needs force). */
  behindSince?: number | null;
}

export interface CallOptions {
  /** Adds `nonce` to the JSON body (POST) or the query (GET); signed with the rest. */
  nonce?: Nonce;
  /** This call's signature form (default: the client's). */
  signatureForm?: SignatureForm;
  /** This call's X-Recv-Window in ms (default: the client's; the server's default is 5000). */
  recvWindow?: number;
  /** Extra headers, sent after (and overriding) the client's own. */
  headers?: Record<string, string>;
  /** Accept-Language for this call. */
  lang?: string;
  /**
   * docs/API.md 8.8: the call's deadline (Unix ms), sent as `expiresAt` in the body of the calls that
   * change orders. Strings and other values are sent as they are, for tests of invalid values.
   */
  expiresAt?: unknown;
  /** Send no Authorization / X-Signature even if the client has credentials. */
  anonymous?: boolean;
  timeoutMs?: number;
}

export interface PageQuery {
  /** Strings are sent as they are, for tests of invalid values. */
  page?: number | string;
  pageSize?: number | string;
}

/**
 * docs/API.md 20.3: a user page from a point. `pairName`: only that pair's records; `since` (Unix
 * ms) or `fromId`: the records at or after it, oldest first.
 */
export interface PointQuery extends PageQuery {
  pairName?: string;
  since?: number | string;
  fromId?: number | string;
}

/** docs/API.md 20.3: the pair history from a point (`since`, `fromId`: oldest first), at most `limit`. */
export interface HistoryQuery {
  since?: number | string;
  fromId?: number | string;
  limit?: number | string;
}

export interface ChartQuery {
  limit?: number | string;
  from?: number | string;
  to?: number | string;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  /** The body text exactly as received (to check number formatting, e.g. `0.3`). */
  text: string;
  /** The parsed JSON body, `undefined` when the text is not JSON. T on 200, usually ErrorBody otherwise. */
  body: T | ErrorBody | undefined;
}

export interface RawOptions {
  /** Sent byte for byte; no Content-Type is added unless given in `headers`. */
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** The raw query string without `?`, sent unchanged. */
  query?: string;
  /**
   * `true`: sign like the client does (the body, or the query for a bodiless request; in the bound
   * form with this method and path) and add Authorization + X-Signature (and X-Timestamp). A string:
   * sign exactly that text instead, in the legacy form (to test mismatches).
   */
  sign?: boolean | string;
  /** With `sign: true`: this request's signature form and X-Recv-Window (default: the client's). */
  signatureForm?: SignatureForm;
  recvWindow?: number;
  timeoutMs?: number;
}

export interface ClientOptions {
  /**
   * The server origin (`http://127.0.0.1:8080`) or the REST base (`.../1.0`); both work. A function
   * is read on every call, so a client follows a server that restarted on another port.
   */
  baseUrl: string | (() => string);
  apiToken?: string;
  secretKey?: string;
  /** ADMIN_TOKEN for the calls of docs/API.md 11, sent as `Bearer <token>`. */
  adminToken?: string;
  /** Send the token as `Bearer <token>` rather than alone. */
  bearer?: boolean;
  /** Default Accept-Language. */
  lang?: string;
  /** When set, every signed request carries `nonce` from here (must increase per token). */
  nonceSource?: () => Nonce;
  /** Default "bound" (docs/API.md 3); "legacy" signs the body or the query alone. */
  signatureForm?: SignatureForm;
  /**
   * X-Recv-Window sent with bound requests (ms, 1 to 60000): how far the timestamp may be from the
   * server's clock. Unset: no header, the server's default of 5000.
   */
  recvWindow?: number;
  /**
   * The clock of X-Timestamp (Unix ms); default `Date.now`. A client whose clock is off can pass
   * `() => Date.now() + offset`, the offset measured with `GET /time`.
   */
  clock?: () => number;
  /** Default per-request timeout (ms). */
  timeoutMs?: number;
  /** Path prefix of the admin calls; default "" (`/admin/...` at the server root). */
  adminPrefix?: string;
  /**
   * Called with every answer before the call resolves; if it throws, the call rejects with that
   * error (the end-to-end tests check each answer against the OpenAPI document this way).
   */
  onResponse?: (res: ResponseInfo) => void;
}

/** What `ClientOptions.onResponse` sees of one exchange. */
export interface ResponseInfo {
  method: string;
  /** From the server root, with the query as sent: `/1.0/trade/pairs?x=1`. */
  pathAndQuery: string;
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, `undefined` when the body is not JSON. */
  body: unknown;
}

/** Thrown by `ok()` when a call did not answer 200. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly text: string;
  constructor(status: number, text: string, what: string) {
    super(`${what}: HTTP ${status}: ${text.slice(0, 500)}`);
    this.status = status;
    this.text = text;
  }
}

/** The body of a 200 answer; throws ApiError otherwise. */
export function ok<T>(res: ApiResponse<T>, what = "request"): T {
  if (res.status !== 200) throw new ApiError(res.status, res.text, what);
  return res.body as T;
}

/** The `errors` map of an error answer, or undefined when the body is not an error body. */
export function errorsOf(res: ApiResponse<unknown>): Record<string, string[]> | undefined {
  const body = res.body as Partial<ErrorBody> | undefined;
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body))
    return undefined;
  const errors = body.errors;
  // A copy without a prototype: `errorsOf(res).constructor` is a field the server named, or nothing.
  return errors !== null && typeof errors === "object" && !Array.isArray(errors)
    ? Object.assign(Object.create(null) as Record<string, string[]>, errors)
    : undefined;
}

/**
 * The text the bound form signs (docs/API.md 3): `<timestamp>\n<METHOD>\n<path>\n<payload>`, with
 * `path` as sent from `/1.0/...` (or `/stream`) without the query, and `payload` the raw body of a
 * POST or the raw query string of a GET ("" when none).
 */
export function boundSigningText(
  timestamp: string | number,
  method: string,
  path: string,
  payload: string | Uint8Array,
): Uint8Array {
  const head = Buffer.from(`${timestamp}\n${method}\n${path}\n`, "utf8");
  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  return Buffer.concat([head, body]);
}

/**
 * The path a request to `pathAndQuery` goes out with (what the bound form signs): fetch sends the
 * URL as the WHATWG parser leaves it (a space becomes `%20`, `/a/../b` becomes `/b`), so the path is
 * signed as that parser gives it, not as written.
 */
export function sentPath(pathAndQuery: string): string {
  return new URL(pathAndQuery, "http://host").pathname;
}

/** What signs one request, for `signedHeaders`. */
export interface Signer {
  apiToken: string;
  secretKey: string;
  bearer?: boolean;
  signatureForm?: SignatureForm;
  recvWindow?: number;
  clock?: () => number;
}

/**
 * Authorization, X-Signature and, in the bound form, X-Timestamp (and X-Recv-Window when given)
 * for one request: `method` upper case, `path` from the server root without the query, `payload`
 * the body or the raw query. Used by the REST client and the stream client alike.
 */
export function signedHeaders(
  signer: Signer,
  method: string,
  path: string,
  payload: string | Uint8Array,
): Record<string, string> {
  const headers: Record<string, string> = {
    Authorization: signer.bearer === true ? `Bearer ${signer.apiToken}` : signer.apiToken,
  };
  if (signer.signatureForm === "legacy") {
    headers["X-Signature"] = signText(signer.secretKey, payload);
    return headers;
  }
  const timestamp = String(Math.floor((signer.clock ?? Date.now)()));
  headers["X-Timestamp"] = timestamp;
  if (signer.recvWindow !== undefined) headers["X-Recv-Window"] = String(signer.recvWindow);
  headers["X-Signature"] = signText(signer.secretKey, boundSigningText(timestamp, method, path, payload));
  return headers;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Default timeout of `backup()`. */
const BACKUP_TIMEOUT_MS = 600_000;
/** Default timeout of `promote()`. */
const PROMOTE_TIMEOUT_MS = 120_000;

/** `a=1&b=2` from pairs in the given order; undefined values are left out; values are URI-encoded. */
export function buildQuery(params: ReadonlyArray<readonly [string, unknown]>): string {
  const parts: string[] = [];
  for (const [key, value] of params) {
    if (value === undefined) continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.join("&");
}

type Method = "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS";

export class ExchangeClient {
  readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = options;
  }

  /** The server origin, e.g. `http://127.0.0.1:8080`. */
  get origin(): string {
    const base = this.options.baseUrl;
    return originOf(typeof base === "function" ? base() : base);
  }

  /** A client with the same server and other options changed (e.g. other credentials). */
  with(changes: Partial<ClientOptions>): ExchangeClient {
    return new ExchangeClient({ ...this.options, ...changes });
  }

  get hasCredentials(): boolean {
    return this.options.apiToken !== undefined && this.options.secretKey !== undefined;
  }

  // ---- 4.1, 4.2 orders --------------------------------------------------------------------------

  /** 4.1 POST /trade/create-order. */
  createOrder(order: CreateOrderRequest, opts: CallOptions = {}): Promise<ApiResponse<CreatedOrder>> {
    return this.post<CreatedOrder>("/trade/create-order", { ...order }, opts);
  }

  /** docs/API.md 18 POST /trade/create-oco: the OCO's id and its legs (limit leg, stop leg). */
  createOco(oco: CreateOcoRequest, opts: CallOptions = {}): Promise<ApiResponse<CreatedOco>> {
    return this.post<CreatedOco>("/trade/create-oco", { ...oco }, opts);
  }

  /** 4.2 POST /trade/cancel-order; answers `[]`. */
  cancelOrder(orderId: number | string, opts: CallOptions = {}): Promise<ApiResponse<[]>> {
    return this.post<[]>("/trade/cancel-order", { orderId }, opts);
  }

  // ---- docs/API.md 8: market-maker controls ------------------------------------------------------

  /** 8.3 POST /trade/amend-order: the order after the amend (and any matching). */
  amendOrder(amend: AmendOrderRequest, opts: CallOptions = {}): Promise<ApiResponse<CreatedOrder>> {
    return this.post<CreatedOrder>("/trade/amend-order", { ...amend }, opts);
  }

  /** 8.4 POST /trade/cancel-all-orders, every pair or one. */
  cancelAllOrders(pairName?: string, opts: CallOptions = {}): Promise<ApiResponse<{ cancelled: number[] }>> {
    return this.post("/trade/cancel-all-orders", pairName === undefined ? {} : { pairName }, opts);
  }

  /**
   * 12.1 POST /trade/quote: replaces the caller's quote on `pairName` (bids strictly decreasing, asks
   * strictly increasing, 0 to 20 each; both empty pulls it).
   */
  quote(
    pairName: string,
    bids: QuoteLevelInput[],
    asks: QuoteLevelInput[],
    opts: CallOptions = {},
  ): Promise<ApiResponse<QuoteResult>> {
    return this.post<QuoteResult>("/trade/quote", { pairName, bids, asks }, opts);
  }

  /** 8.5 POST /trade/create-orders: one answer per order, in order. */
  createOrders(
    orders: CreateOrderRequest[],
    opts: CallOptions = {},
  ): Promise<ApiResponse<BatchOrderResult[]>> {
    return this.post<BatchOrderResult[]>("/trade/create-orders", { orders }, opts);
  }

  /** 8.5 POST /trade/cancel-orders: one answer per id, in order. */
  cancelOrders(
    orderIds: (number | string)[],
    opts: CallOptions = {},
  ): Promise<ApiResponse<BatchCancelResult[]>> {
    return this.post<BatchCancelResult[]>("/trade/cancel-orders", { orderIds }, opts);
  }

  /** 8.6 GET /trade/orders/{orderId}. */
  order(orderId: number | string, opts: CallOptions = {}): Promise<ApiResponse<CreatedOrder>> {
    return this.get<CreatedOrder>(`/trade/orders/${orderId}`, [], opts);
  }

  /** 8.6 GET /trade/orders?clientOrderId=X. */
  orderByClientId(clientOrderId: string, opts: CallOptions = {}): Promise<ApiResponse<CreatedOrder>> {
    return this.get<CreatedOrder>("/trade/orders", [["clientOrderId", clientOrderId]], opts);
  }

  /** 8.6 GET /trade/pairs/{pairName}/open-orders, newest first. */
  openOrders(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<Order[]>> {
    return this.get<Order[]>(`/trade/pairs/${pairName}/open-orders`, [], opts);
  }

  /** 8.7 POST /trade/cancel-all-after: arms (timeout > 0) or disarms (0) the dead-man's switch. */
  cancelAllAfter(timeout: number, opts: CallOptions = {}): Promise<ApiResponse<{ triggerTime: number }>> {
    return this.post("/trade/cancel-all-after", { timeout }, opts);
  }

  /**
   * Cancels every open order of the caller (of one pair when given): through 8.4 cancel-all-orders,
   * or, on a server that does not have it yet (404), by reading the caller's orders page by page
   * and cancelling the open ones one at a time. Answers the ids cancelled, ascending.
   */
  async cancelAll(pairName?: string, opts: CallOptions = {}): Promise<number[]> {
    const res = await this.cancelAllOrders(pairName, opts);
    if (res.status === 200) return (res.body as { cancelled: number[] }).cancelled;
    if (res.status !== 404 || errorsOf(res)?.path === undefined) ok(res, "cancel-all-orders");
    const listPair = pairName ?? ok(await this.pairs(), "pairs")[0]?.pairName;
    if (listPair === undefined) return [];
    const open: number[] = [];
    for (let page = 1; ; page++) {
      const body = ok(await this.userOrders(listPair, { page, pageSize: 100 }), "user-orders");
      for (const o of body.items) {
        if (!o.isCancelled && o.amountUsed < o.amount && (pairName === undefined || o.pairName === pairName))
          open.push(o.id);
      }
      if (body.items.length === 0 || page * 100 >= body.total) break;
    }
    const cancelled: number[] = [];
    for (const id of open.sort((a, b) => a - b)) {
      // 400: filled or cancelled in between, so not open any more.
      if ((await this.cancelOrder(id)).status === 200) cancelled.push(id);
    }
    return cancelled;
  }

  // ---- docs/API.md 8.10: market-maker protection -----------------------------------------------

  /** GET /trade/mmp?pairName=X: the caller's settings and frozen state on the pair. */
  getMmp(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<MmpState>> {
    return this.get<MmpState>("/trade/mmp", [["pairName", pairName]], opts);
  }

  /** POST /trade/mmp: new settings (answered once stored). */
  setMmp(settings: MmpSettingsRequest, opts: CallOptions = {}): Promise<ApiResponse<MmpState>> {
    return this.post<MmpState>("/trade/mmp", { ...settings }, opts);
  }

  /** POST /trade/mmp/reset: unfreezes and empties the window. */
  resetMmp(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<MmpState>> {
    return this.post<MmpState>("/trade/mmp/reset", { pairName }, opts);
  }

  // ---- docs/API.md 10 and the OpenAPI document -------------------------------------------------

  /** 10 POST /trade/listen-key: a new key, or `listenKey` extended. */
  listenKey(listenKey?: string, opts: CallOptions = {}): Promise<ApiResponse<ListenKey>> {
    return this.post("/trade/listen-key", listenKey === undefined ? {} : { listenKey }, opts);
  }

  /** 10 POST /trade/listen-key/close. */
  closeListenKey(listenKey: string, opts: CallOptions = {}): Promise<ApiResponse<unknown>> {
    return this.post("/trade/listen-key/close", { listenKey }, opts);
  }

  /** GET /1.0/openapi.json: the OpenAPI 3.1 document of the server. */
  openapi(opts: CallOptions = {}): Promise<ApiResponse<Record<string, unknown>>> {
    return this.get("/openapi.json", [], { anonymous: true, ...opts });
  }

  // ---- 4.3-4.7 market data ----------------------------------------------------------------------

  /** 4.3 GET /trade/pairs. */
  pairs(opts: CallOptions = {}): Promise<ApiResponse<PairRecord[]>> {
    return this.get<PairRecord[]>("/trade/pairs", [], { anonymous: true, ...opts });
  }

  /** 4.4 GET /trade/pairs/{pairName}: signed when the client has credentials (unless `anonymous`). */
  pairPage(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<PairPage>> {
    return this.get<PairPage>(`/trade/pairs/${pairName}`, [], opts);
  }

  /** 4.5 GET /trade/pairs/{pairName}/chart/{period}. */
  chart(
    pairName: string,
    period: ChartPeriod | string,
    query: ChartQuery = {},
    opts: CallOptions = {},
  ): Promise<ApiResponse<Candle[]>> {
    return this.get<Candle[]>(
      `/trade/pairs/${pairName}/chart/${period}`,
      [
        ["limit", query.limit],
        ["from", query.from],
        ["to", query.to],
      ],
      { anonymous: true, ...opts },
    );
  }

  /** 4.6 GET /trade/pairs/{pairName}/orders, optional `?limit=N`. */
  orderBook(
    pairName: string,
    query: { limit?: number | string } = {},
    opts: CallOptions = {},
  ): Promise<ApiResponse<OrderBook>> {
    return this.get<OrderBook>(`/trade/pairs/${pairName}/orders`, [["limit", query.limit]], {
      anonymous: true,
      ...opts,
    });
  }

  /** docs/API.md 7.6.1 GET /trade/pairs/{pairName}/bbo: best bid and offer, with the book seq. */
  bbo(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<Bbo>> {
    return this.get<Bbo>(`/trade/pairs/${pairName}/bbo`, [], { anonymous: true, ...opts });
  }

  /** docs/API.md 7.6.2 GET /trade/pairs/{pairName}/orders/l3: every resting order, in priority order. */
  orderBookL3(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<L3Snapshot>> {
    return this.get<L3Snapshot>(`/trade/pairs/${pairName}/orders/l3`, [], { anonymous: true, ...opts });
  }

  /** 4.7 GET /trade/pairs/{pairName}/history. */
  history(
    pairName: string,
    query: HistoryQuery = {},
    opts: CallOptions = {},
  ): Promise<ApiResponse<PublicTrade[]>> {
    return this.get<PublicTrade[]>(
      `/trade/pairs/${pairName}/history`,
      [
        ["since", query.since],
        ["fromId", query.fromId],
        ["limit", query.limit],
      ],
      { anonymous: true, ...opts },
    );
  }

  // ---- 4.8-4.10 user data -----------------------------------------------------------------------

  /** 4.8 GET /trade/pairs/{pairName}/user-balances. */
  balances(pairName: string, opts: CallOptions = {}): Promise<ApiResponse<Balance[]>> {
    return this.get<Balance[]>(`/trade/pairs/${pairName}/user-balances`, [], opts);
  }

  /** docs/API.md 20.4 GET /trade/account: the caller's uid and balances of every configured currency. */
  account(opts: CallOptions = {}): Promise<ApiResponse<Account>> {
    return this.get<Account>("/trade/account", [], opts);
  }

  /**
   * 4.9 GET /trade/pairs/{pairName}/user-orders (all pairs, the path pair does not filter; the
   * query's `pairName` does, docs/API.md 20.3).
   */
  userOrders(
    pairName: string,
    query: PointQuery = {},
    opts: CallOptions = {},
  ): Promise<ApiResponse<Page<Order>>> {
    return this.get<Page<Order>>(`/trade/pairs/${pairName}/user-orders`, pointParams(query), opts);
  }

  /** 4.10 GET /trade/pairs/user-history (docs/API.md 20.3: from a point with PointQuery). */
  userHistory(query: PointQuery = {}, opts: CallOptions = {}): Promise<ApiResponse<Page<UserTrade>>> {
    return this.get<Page<UserTrade>>("/trade/pairs/user-history", pointParams(query), opts);
  }

  /** docs/API.md 7.11: GET /trade/transfers, the caller's deposits and withdrawals, newest first. */
  transfers(query: PageQuery = {}, opts: CallOptions = {}): Promise<ApiResponse<Page<Transfer>>> {
    return this.get<Page<Transfer>>(
      "/trade/transfers",
      [
        ["page", query.page],
        ["pageSize", query.pageSize],
      ],
      opts,
    );
  }

  /**
   * docs/API.md 16: GET /trade/executions, the caller's executions numbered above `after` (default
   * 0), at most `limit` (1..1000, default 100), and the last committed number.
   */
  executions(
    query: { after?: number; limit?: number } = {},
    opts: CallOptions = {},
  ): Promise<ApiResponse<Executions>> {
    return this.get<Executions>(
      "/trade/executions",
      [
        ["after", query.after],
        ["limit", query.limit],
      ],
      opts,
    );
  }

  // ---- process endpoints --------------------------------------------------------------------------

  /** GET /health (server root); the replication fields only where replication is configured (docs/API.md 1). */
  health(opts: CallOptions = {}): Promise<ApiResponse<Health>> {
    return this.request<Health>("GET", "/health", {
      headers: opts.headers,
      timeoutMs: opts.timeoutMs,
    });
  }

  /** GET /metrics (server root), Prometheus text in `text`. */
  metrics(opts: CallOptions = {}): Promise<ApiResponse<never>> {
    return this.request<never>("GET", "/metrics", { headers: opts.headers, timeoutMs: opts.timeoutMs });
  }

  /** docs/API.md 9: GET /time. */
  time(opts: CallOptions = {}): Promise<ApiResponse<{ serverTime: number }>> {
    return this.get<{ serverTime: number }>("/time", [], { anonymous: true, ...opts });
  }

  /** docs/API.md 9: GET /info, the venue's rules per pair. */
  info(opts: CallOptions = {}): Promise<ApiResponse<{ serverTime: number; pairs: PairInfo[] }>> {
    return this.get<{ serverTime: number; pairs: PairInfo[] }>("/info", [], { anonymous: true, ...opts });
  }

  // ---- admin (docs/API.md 11) -----------------------------------------------------------------------

  /** docs/API.md 9: GET /admin/fees, the fee account's balance per currency. */
  fees(opts: CallOptions = {}): Promise<ApiResponse<BalanceAnswer[]>> {
    return this.adminGet<BalanceAnswer[]>("/admin/fees", opts);
  }

  /** docs/API.md 11: POST /admin/pairs/status, `trading`, `cancelOnly` or `halted`. */
  setPairStatus(
    pairName: string,
    status: PairStatus | string,
    opts: CallOptions = {},
  ): Promise<ApiResponse<{ pairName: string; status: PairStatus }>> {
    return this.admin<{ pairName: string; status: PairStatus }>(
      "/admin/pairs/status",
      { pairName, status },
      opts,
    );
  }

  /** docs/API.md 11: GET /admin/users/{uid}, a user's balances and API keys (first 8 characters). */
  user(uid: string, opts: CallOptions = {}): Promise<ApiResponse<AdminUser>> {
    return this.adminGet<AdminUser>(`/admin/users/${encodeURIComponent(uid)}`, opts);
  }

  private adminGet<T>(path: string, opts: CallOptions): Promise<ApiResponse<T>> {
    const headers = headerRecord();
    if (this.options.adminToken !== undefined) headers.Authorization = `Bearer ${this.options.adminToken}`;
    this.addCommonHeaders(headers, opts);
    return this.request<T>("GET", `${this.options.adminPrefix ?? ""}${path}`, {
      headers,
      timeoutMs: opts.timeoutMs,
    });
  }

  /** POST /admin/users: a new user (optionally with a given uid) and its first API key. */
  createUser(uid?: string, opts: CallOptions = {}): Promise<ApiResponse<NewUser>> {
    return this.admin<NewUser>("/admin/users", uid === undefined ? {} : { uid }, opts);
  }

  /** POST /admin/api-keys: another key for a user. */
  createApiKey(uid: string, opts: CallOptions = {}): Promise<ApiResponse<NewApiKey>> {
    return this.admin<NewApiKey>("/admin/api-keys", { uid }, opts);
  }

  /** POST /admin/api-keys/revoke: answers `[]`. */
  revokeApiKey(apiToken: string, opts: CallOptions = {}): Promise<ApiResponse<[]>> {
    return this.admin<[]>("/admin/api-keys/revoke", { apiToken }, opts);
  }

  /** POST /admin/deposit: answers the new available balance. */
  deposit(
    uid: string,
    currency: string,
    amount: DecimalInput,
    opts: CallOptions = {},
  ): Promise<ApiResponse<BalanceAnswer>> {
    return this.admin<BalanceAnswer>("/admin/deposit", { uid, currency, amount }, opts);
  }

  /** POST /admin/withdraw: more than available answers 400 `errors.amount`. */
  withdraw(
    uid: string,
    currency: string,
    amount: DecimalInput,
    opts: CallOptions = {},
  ): Promise<ApiResponse<BalanceAnswer>> {
    return this.admin<BalanceAnswer>("/admin/withdraw", { uid, currency, amount }, opts);
  }

  /**
   * docs/API.md 11: POST /admin/backup, a consistent copy of the database in the server's backup
   * folder, answered once it is whole. A big database takes a while: the default timeout here is
   * 10 minutes, not the client's.
   */
  backup(opts: CallOptions = {}): Promise<ApiResponse<BackupAnswer>> {
    return this.admin<BackupAnswer>(
      "/admin/backup",
      {},
      { ...opts, timeoutMs: opts.timeoutMs ?? BACKUP_TIMEOUT_MS },
    );
  }

  /**
   * docs/API.md 11: POST /admin/promote, on a follower: it becomes the leader and the answer comes
   * once it accepts orders. `force`: even when it cannot vouch for holding every change its leader
   * acknowledged. The restart on its database takes a while: the default timeout here is 2 minutes.
   */
  promote(force = false, opts: CallOptions = {}): Promise<ApiResponse<PromoteAnswer>> {
    return this.admin<PromoteAnswer>("/admin/promote", force ? { force: true } : {}, {
      ...opts,
      timeoutMs: opts.timeoutMs ?? PROMOTE_TIMEOUT_MS,
    });
  }

  // ---- escape hatch -------------------------------------------------------------------------------

  /**
   * Any request, for malformed-input tests. `path` is from the server root (`/1.0/trade/pairs`,
   * `/health`). Only the headers given are sent (plus what fetch always adds); the body is sent
   * as bytes so fetch adds no Content-Type of its own.
   */
  raw<T = unknown>(method: Method, path: string, opts: RawOptions = {}): Promise<ApiResponse<T>> {
    const headers = headerRecord();
    if (typeof opts.sign === "string") Object.assign(headers, this.authHeaders(opts.sign));
    else if (opts.sign === true) {
      const payload = opts.body !== undefined ? opts.body : (opts.query ?? "");
      Object.assign(headers, this.signFor(method, sentPath(path), payload, opts));
    }
    Object.assign(headers, opts.headers);
    const query = opts.query === undefined ? "" : `?${opts.query}`;
    return this.request<T>(method, `${path}${query}`, {
      body: opts.body,
      headers,
      timeoutMs: opts.timeoutMs,
    });
  }

  // ---- internals ----------------------------------------------------------------------------------

  /**
   * Authorization + X-Signature of exactly `signed`, in the legacy form (throws when the client has
   * no credentials). `signFor` signs a request in the client's form.
   */
  authHeaders(signed: string | Uint8Array): Record<string, string> {
    const { apiToken, secretKey } = this.options;
    if (apiToken === undefined || secretKey === undefined) {
      throw new Error("ExchangeClient: this call needs apiToken and secretKey");
    }
    return {
      Authorization: this.options.bearer === true ? `Bearer ${apiToken}` : apiToken,
      "X-Signature": signText(secretKey, signed),
    };
  }

  /**
   * The auth headers of one request in the client's form (or the one `opts` asks for): `path` from
   * the server root without the query, `payload` the body or the raw query.
   */
  signFor(
    method: string,
    path: string,
    payload: string | Uint8Array,
    opts: { signatureForm?: SignatureForm; recvWindow?: number } = {},
  ): Record<string, string> {
    const { apiToken, secretKey } = this.options;
    if (apiToken === undefined || secretKey === undefined) {
      throw new Error("ExchangeClient: this call needs apiToken and secretKey");
    }
    return signedHeaders(
      {
        apiToken,
        secretKey,
        bearer: this.options.bearer,
        signatureForm: opts.signatureForm ?? this.options.signatureForm,
        recvWindow: opts.recvWindow ?? this.options.recvWindow,
        clock: this.options.clock,
      },
      method,
      path,
      payload,
    );
  }

  private nonceFor(opts: CallOptions): Nonce | undefined {
    if (opts.nonce !== undefined) return opts.nonce;
    if (opts.anonymous !== true && this.hasCredentials && this.options.nonceSource !== undefined) {
      return this.options.nonceSource();
    }
    return undefined;
  }

  private post<T>(
    path: string,
    payload: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<ApiResponse<T>> {
    const nonce = this.nonceFor(opts);
    if (nonce !== undefined) payload.nonce = typeof nonce === "bigint" ? nonce.toString() : nonce;
    if (opts.expiresAt !== undefined) payload.expiresAt = opts.expiresAt;
    const body = JSON.stringify(payload);
    const headers = headerRecord({ "Content-Type": "application/json" });
    const target = `${REST_PREFIX}${path}`;
    if (opts.anonymous !== true && this.hasCredentials)
      Object.assign(headers, this.signFor("POST", sentPath(target), body, opts));
    this.addCommonHeaders(headers, opts);
    return this.request<T>("POST", target, { body, headers, timeoutMs: opts.timeoutMs });
  }

  private get<T>(
    path: string,
    params: ReadonlyArray<readonly [string, unknown]>,
    opts: CallOptions,
  ): Promise<ApiResponse<T>> {
    const nonce = this.nonceFor(opts);
    const all = nonce === undefined ? params : [...params, ["nonce", String(nonce)] as const];
    const query = buildQuery(all);
    const headers = headerRecord();
    if (opts.anonymous !== true && this.hasCredentials)
      Object.assign(headers, this.signFor("GET", sentPath(`${REST_PREFIX}${path}`), query, opts));
    this.addCommonHeaders(headers, opts);
    const target = query === "" ? `${REST_PREFIX}${path}` : `${REST_PREFIX}${path}?${query}`;
    return this.request<T>("GET", target, { headers, timeoutMs: opts.timeoutMs });
  }

  private admin<T>(
    path: string,
    payload: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<ApiResponse<T>> {
    const headers = headerRecord({ "Content-Type": "application/json" });
    if (this.options.adminToken !== undefined) headers.Authorization = `Bearer ${this.options.adminToken}`;
    this.addCommonHeaders(headers, opts);
    return this.request<T>("POST", `${this.options.adminPrefix ?? ""}${path}`, {
      body: JSON.stringify(payload),
      headers,
      timeoutMs: opts.timeoutMs,
    });
  }

  private addCommonHeaders(headers: Record<string, string>, opts: CallOptions): void {
    const lang = opts.lang ?? this.options.lang;
    if (lang !== undefined) headers["Accept-Language"] = lang;
    if (opts.headers !== undefined) Object.assign(headers, opts.headers);
  }

  private async request<T>(
    method: string,
    pathAndQuery: string,
    init: { body?: string | Uint8Array; headers?: Record<string, string>; timeoutMs?: number },
  ): Promise<ApiResponse<T>> {
    const timeoutMs = init.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const body = typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body;
    const res = await fetch(`${this.origin}${pathAndQuery}`, {
      method,
      headers: init.headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: T | ErrorBody | undefined;
    try {
      parsed = text === "" ? undefined : (JSON.parse(text) as T | ErrorBody);
    } catch {
      parsed = undefined;
    }
    const answer = { status: res.status, headers: res.headers, text, body: parsed };
    this.options.onResponse?.({ method, pathAndQuery, ...answer });
    return answer;
  }
}

/** The query of a user page from a point (docs/API.md 20.3), absent values left out. */
function pointParams(query: PointQuery): ReadonlyArray<readonly [string, unknown]> {
  return [
    ["page", query.page],
    ["pageSize", query.pageSize],
    ["pairName", query.pairName],
    ["since", query.since],
    ["fromId", query.fromId],
  ];
}
