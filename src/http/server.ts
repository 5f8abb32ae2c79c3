/**
 * The REST front end: routes under `/1.0`, admin under `/admin`, `/health` and `/metrics`.
 *
 * Every route is a short chain of guarded steps in the order CONTRACT 5 ranks the failures:
 * 404 (path, pair) → 413 (body size) → 415 (media type) → 401 (auth, nonce) → 429 (rate) → 400.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { authenticate, consumeNonce, type NonceResult, nonceFromBody, nonceFromQuery } from "../auth.ts";
import { type ExchangeConfig, FEE_DECIMALS, type PairConfig } from "../config.ts";
import type { DeadMansSwitch } from "../dead-man.ts";
import {
  amountParseError,
  Code,
  type ErrorEntry,
  errorBody,
  multiErrorBody,
  priceParseError,
} from "../errors.ts";
import {
  closedError,
  type Exchange,
  LIMIT,
  MARKET,
  type OrderView,
  type UserTradeView,
} from "../exchange.ts";
import { PERIODS, type Period } from "../market-data.ts";
import type { Metrics } from "../metrics.ts";
import { formatDecimal, parseDecimal } from "../numbers.ts";
import { CLIENT_ORDER_ID_RE, FLAG_POST_ONLY, TIF_GTC, TIF_MASK, timeInForceFlags } from "../orders.ts";
import { BUY, SELL } from "../protocol/engine.ts";
import type { OrderRow, UserTradeRow } from "../protocol/rows.ts";
import { nowMicro } from "../time.ts";
import type { ApiKey, Users } from "../users.ts";
import { orderView, userTradeView } from "../views.ts";
import type { Admin } from "./admin.ts";
import type { CorsPolicy } from "./cors.ts";
import { parseJsonBody, unknownFields } from "./json-body.ts";
import type { ListenKeys } from "./listen-keys.ts";
import { buildOpenApi } from "./openapi.ts";
import { RateLimiter } from "./rate-limit.ts";
import {
  isJsonMediaType,
  MAX_BODY,
  type RequestInfo,
  readBody,
  readRequest,
  send,
  sendError,
} from "./request.ts";
import { serialize } from "./schemas.ts";

/** The paged and by-id reads of src/db/reader.ts. */
export interface UserReads {
  userOrders(userId: number, page: number, pageSize: number): Promise<{ total: number; items: OrderRow[] }>;
  userTrades(
    userId: number,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; items: UserTradeRow[] }>;
  recentForUser(userId: number, n: number): Promise<{ orders: OrderRow[]; trades: UserTradeRow[] }>;
  order(orderId: number): Promise<OrderRow | undefined>;
  orderByClientId(userId: number, clientOrderId: string): Promise<OrderRow | undefined>;
  openOrders(ids: number[]): Promise<OrderRow[]>;
}

export interface FrontEndDeps {
  config: ExchangeConfig;
  exchange: Exchange;
  users: Users;
  reader: UserReads;
  admin: Admin | null;
  metrics: Metrics;
  rateLimit: number;
  /** True once books are recovered and workers are up (CONTRACT 1: readiness). */
  ready: () => boolean;
  /** False while shutting down: new requests get 503. */
  accepting: () => boolean;
  /** Persists the last nonce of a token. */
  nonceUsed: (token: string, nonce: bigint) => void;
  /** CONTRACT 8.7. */
  deadMan: DeadMansSwitch;
  /** Listen keys for browser streams (CONTRACT 10). */
  listenKeys: ListenKeys;
  /** Browser origins allowed on the REST base (CONTRACT 10). */
  cors: CorsPolicy;
}

const PREFIX = "/1.0";
const PAGE_RE = /^[0-9]{1,9}$/;

export function mountRoutes(app: TemplatedApp, deps: FrontEndDeps): void {
  const { config, exchange, users, reader, metrics } = deps;
  const limiter = new RateLimiter(deps.rateLimit);
  const pairs = config.pairs;

  const finish = (info: RequestInfo, status: number): void =>
    metrics.request(info.route, status, Number(process.hrtime.bigint() - info.startNs) / 1e9);

  // ---------------------------------------------------------------- shared steps

  /** 401 step (src/auth.ts, shared with the stream upgrade). */
  const signedBy = (info: RequestInfo, payload: Buffer | string): ApiKey | number =>
    authenticate(users, info.authorization, info.signature, payload);

  /** Nonce step (401 on replay); a malformed nonce is a 400 reported later. */
  const checkNonce = (key: ApiKey, nonce: NonceResult): number =>
    consumeNonce(users, key, nonce, deps.nonceUsed);

  /** 429 step. */
  const rateLimited = (res: HttpResponse, info: RequestInfo, key: string): boolean => {
    if (!limiter.enabled) return false;
    const now = Date.now();
    const remaining = limiter.take(key, now);
    // Every answer from here on counted against the limit: it says how much is left (CONTRACT 9).
    info.rateLimit = limiter.limit;
    info.rateRemaining = remaining < 0 ? 0 : remaining;
    if (remaining >= 0) return false;
    send(res, info, 429, errorBody(Code.RATE_LIMITED, info.lang), finish, limiter.retryAfter(key, now));
    return true;
  };

  const notReady = (res: HttpResponse, info: RequestInfo): boolean => {
    if (deps.accepting() && deps.ready()) return false;
    sendError(res, info, deps.accepting() ? Code.NOT_READY : Code.SHUTTING_DOWN, finish);
    return true;
  };

  const pairFromPath = (req: HttpRequest): PairConfig | undefined =>
    config.pairsByName.get(req.getParameter(0) ?? "");

  /**
   * A signed POST: 413 → 415 → 401 → nonce → 429 → JSON object, then `handle(key, body)`.
   */
  const signedPost = (
    route: string,
    handle: (res: HttpResponse, info: RequestInfo, key: ApiKey, body: Record<string, unknown>) => void,
  ) => {
    app.post(PREFIX + route, (res, req) => {
      const info = readRequest(res, req, route);
      if (deps.cors.enabled) info.cors = deps.cors.allowed(req);
      if (info.contentLength > MAX_BODY) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
      if (!isJsonMediaType(info.contentType)) {
        sendError(res, info, Code.UNSUPPORTED_MEDIA_TYPE, finish);
        return;
      }
      readBody(res, info, (raw) => {
        if (raw === null) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
        if (notReady(res, info)) return;
        const key = signedBy(info, raw);
        if (typeof key === "number") return sendError(res, info, key, finish);
        let body: unknown;
        try {
          body = parseJsonBody(raw.toString("utf8"));
        } catch {
          body = undefined;
        }
        const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
        const nonceErr = isObject ? checkNonce(key, nonceFromBody(body)) : 0;
        if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
        if (rateLimited(res, info, key.token)) return;
        if (body === undefined) return sendError(res, info, Code.BODY_NOT_JSON, finish);
        if (!isObject) return sendError(res, info, Code.BODY_NOT_OBJECT, finish);
        if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
        handle(res, info, key, body as Record<string, unknown>);
      });
    });
  };

  /** A GET: optional pair (404) → auth as required (401) → 429, then `handle`. */
  const get = (
    route: string,
    opts: { pair: boolean; auth: "none" | "required" | "optional" },
    handle: (
      res: HttpResponse,
      info: RequestInfo,
      pair: PairConfig | undefined,
      key: ApiKey | null,
      /**
       * The path parameter after the pair (the chart period), or the first one of a route without
       * a pair (an order id), read while the request lives.
       */
      param: string,
    ) => void,
  ) => {
    app.get(PREFIX + route, (res, req) => {
      const info = readRequest(res, req, route, limiter.enabled);
      if (deps.cors.enabled) info.cors = deps.cors.allowed(req);
      let pair: PairConfig | undefined;
      if (opts.pair) {
        pair = pairFromPath(req);
        if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
      }
      const param = req.getParameter(opts.pair ? 1 : 0) ?? "";
      let key: ApiKey | null = null;
      const hasAuth = info.authorization !== undefined || info.signature !== undefined;
      if (opts.auth === "required" || (opts.auth === "optional" && hasAuth)) {
        const k = signedBy(info, info.query);
        if (typeof k === "number") return sendError(res, info, k, finish);
        key = k;
        const nonceErr = checkNonce(key, nonceFromQuery(info.query));
        if (nonceErr === Code.AUTH_NONCE_REPLAY) return sendError(res, info, nonceErr, finish);
        if (rateLimited(res, info, key.token)) return;
        if (nonceErr !== 0) return sendError(res, info, nonceErr, finish);
      } else if (rateLimited(res, info, info.address ?? "")) return;
      handle(res, info, pair, key, param);
    });
  };

  const ok = (res: HttpResponse, info: RequestInfo, body: string) => send(res, info, 200, body, finish);

  // ---------------------------------------------------------------- 4.1 create-order

  /** Sends a valid order to the core; `reply` gets the error code or the serialised order. */
  const placeOrder = (userId: number, v: ValidOrder, reply: (err: number, body: string) => void): void => {
    const p = v.pair!;
    const accepted = exchange.createOrder(
      userId,
      p.index,
      v.type,
      v.side,
      v.price,
      v.amount,
      (err, order) => {
        if (err !== 0) return reply(err, "");
        metrics.order(p.index, v.type);
        reply(0, serialize.order(order));
      },
      v.flags,
      v.clientOrderId,
    );
    if (!accepted) reply(Code.BUSY, "");
  };

  signedPost("/trade/create-order", (res, info, key, body) => {
    const v = validateOrder(body, config, CREATE_FIELDS);
    if (v.errors.length > 0) {
      return send(res, info, 400, multiErrorBody(v.errors, info.lang), finish);
    }
    placeOrder(key.userId, v, (err, json) =>
      err === 0 ? ok(res, info, json) : sendError(res, info, err, finish),
    );
  });

  /**
   * A batch's answer (CONTRACT 8.5): element i's JSON goes in place i, in any order, and the array
   * leaves once all `n` are in.
   */
  const batchAnswer = (res: HttpResponse, info: RequestInfo, n: number) => {
    const out: string[] = new Array(n);
    let left = n;
    return (i: number, json: string): void => {
      out[i] = json;
      if (--left === 0) ok(res, info, `[${out.join(",")}]`);
    };
  };

  // ---------------------------------------------------------------- 8.5 create-orders

  signedPost("/trade/create-orders", (res, info, key, body) => {
    const bad = unknownFields(body, BATCH_CREATE_FIELDS);
    if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
    const list = body.orders;
    if (!Array.isArray(list) || list.length < 1 || list.length > MAX_BATCH_ORDERS) {
      return sendError(res, info, Code.ORDERS_INVALID, finish);
    }
    const put = batchAnswer(res, info, list.length);
    for (let i = 0; i < list.length; i++) {
      const item: unknown = list[i];
      if (typeof item !== "object" || item === null || Array.isArray(item)) {
        put(i, errorBody(Code.ORDER_NOT_OBJECT, info.lang));
        continue;
      }
      const v = validateOrder(item as Record<string, unknown>, config, ORDER_FIELDS);
      if (v.errors.length > 0) put(i, multiErrorBody(v.errors, info.lang));
      else placeOrder(key.userId, v, (err, json) => put(i, err === 0 ? json : errorBody(err, info.lang)));
    }
  });

  // ---------------------------------------------------------------- 4.2 cancel-order

  /**
   * Cancels one order of `userId`; `reply` gets 0 once the cancel committed, or the error code
   * (an order no longer in memory is judged by its committed row).
   */
  const cancelOne = (userId: number, orderId: number, reply: (err: number) => void): void => {
    const accepted = exchange.cancelOrder(userId, orderId, reply, (missing) =>
      readClosed(userId, missing, reply),
    );
    if (!accepted) reply(Code.BUSY);
  };

  /** The cancel error of an order the core no longer holds, from its committed row. */
  const readClosed = (userId: number, orderId: number, reply: (err: number) => void): void => {
    reader.order(orderId).then(
      (row) => {
        if (row === undefined || row.userId !== userId) reply(Code.ORDER_NOT_FOUND);
        else reply(closedError({ cancelled: !!row.isCancelled, used: row.amountUsed, amount: row.amount }));
      },
      () => reply(Code.INTERNAL),
    );
  };

  signedPost("/trade/cancel-order", (res, info, key, body) => {
    const bad = unknownFields(body, CANCEL_FIELDS);
    if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
    const orderId = orderIdOf(body.orderId);
    if (orderId < 0) return sendError(res, info, -orderId, finish);
    cancelOne(key.userId, orderId, (err) =>
      err === 0 ? ok(res, info, "[]") : sendError(res, info, err, finish),
    );
  });

  // ---------------------------------------------------------------- 8.3 amend-order

  signedPost("/trade/amend-order", (res, info, key, body) => {
    const errors = unknownFields(body, AMEND_FIELDS);
    const orderId = orderIdOf(body.orderId);
    if (orderId < 0) errors.unshift([-orderId]);
    const hasAmount = body.amount !== undefined && body.amount !== null;
    const hasPrice = body.price !== undefined && body.price !== null;
    if (!hasAmount && !hasPrice) errors.push([Code.AMEND_NOTHING]);
    if (errors.length > 0) return send(res, info, 400, multiErrorBody(errors, info.lang), finish);
    const reply = (err: number, order: OrderView | null) =>
      err === 0 ? ok(res, info, serialize.order(order)) : sendError(res, info, err, finish);
    const o = exchange.ownOpenOrder(key.userId, orderId);
    if (o === undefined) {
      const err = exchange.notOpenError(key.userId, orderId);
      if (err >= 0) return reply(err, null);
      return readClosed(key.userId, orderId, (e) => reply(e, null));
    }
    const pair = pairs[o.pair];
    const amount = hasAmount ? parseAmount(body.amount, pair, errors) : o.amount;
    const price = hasPrice ? parsePrice(body.price, pair, errors) : o.price;
    if (errors.length > 0) return send(res, info, 400, multiErrorBody(errors, info.lang), finish);
    if (!exchange.amendOrder(o, price, amount, reply)) sendError(res, info, Code.BUSY, finish);
  });

  // ---------------------------------------------------------------- 8.5 cancel-orders

  signedPost("/trade/cancel-orders", (res, info, key, body) => {
    const bad = unknownFields(body, BATCH_CANCEL_FIELDS);
    if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
    const list = body.orderIds;
    if (!Array.isArray(list) || list.length < 1 || list.length > MAX_BATCH_CANCELS) {
      return sendError(res, info, Code.ORDER_IDS_INVALID, finish);
    }
    const answer = batchAnswer(res, info, list.length);
    list.forEach((item, i) => {
      const orderId = orderIdOf(item);
      // The id as the client gave it, for an element that is not a valid id.
      const echo = orderId > 0 ? String(orderId) : (JSON.stringify(item) ?? "null");
      // `{"orderId":id}`, or the error body with the id put in front of `errors`.
      const put = (err: number): void =>
        answer(
          i,
          err === 0 ? `{"orderId":${echo}}` : `{"orderId":${echo},${errorBody(err, info.lang).slice(1)}`,
        );
      if (orderId < 0) put(-orderId);
      else cancelOne(key.userId, orderId, put);
    });
  });

  // ---------------------------------------------------------------- 8.4 cancel-all-orders

  /** Cancels the user's open orders on `pairIndex` (-1: all) and answers `{"cancelled": [...]}`. */
  const cancelAll = (res: HttpResponse, info: RequestInfo, userId: number, pairIndex: number): void => {
    const accepted = exchange.cancelAll(userId, pairIndex, (ids) =>
      ok(res, info, serialize.cancelled({ cancelled: ids })),
    );
    if (!accepted) sendError(res, info, Code.BUSY, finish);
  };

  signedPost("/trade/cancel-all-orders", (res, info, key, body) => {
    const bad = unknownFields(body, CANCEL_ALL_FIELDS);
    if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
    const pn = body.pairName;
    if (pn === undefined || pn === null) return cancelAll(res, info, key.userId, -1);
    if (typeof pn !== "string") return sendError(res, info, Code.PAIR_NOT_STRING, finish);
    const pair = config.pairsByName.get(pn);
    if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN, finish);
    cancelAll(res, info, key.userId, pair.index);
  });

  // ---------------------------------------------------------------- 8.7 cancel-all-after

  signedPost("/trade/cancel-all-after", (res, info, key, body) => {
    const bad = unknownFields(body, CANCEL_AFTER_FIELDS);
    if (bad.length > 0) return send(res, info, 400, multiErrorBody(bad, info.lang), finish);
    const t = body.timeout;
    const timeout = typeof t === "string" && /^[0-9]{1,3}$/.test(t) ? Number(t) : t;
    if (
      typeof timeout !== "number" ||
      !Number.isInteger(timeout) ||
      timeout < 0 ||
      timeout > MAX_DEAD_MAN_SECONDS
    ) {
      return sendError(res, info, Code.TIMEOUT_INVALID, finish);
    }
    ok(res, info, serialize.triggerTime({ triggerTime: deps.deadMan.arm(key.userId, timeout) }));
  });

  // ---------------------------------------------------------------- 10 listen keys

  const listenKeyAnswer = (res: HttpResponse, info: RequestInfo, a: { code: number; body?: string }) =>
    a.body !== undefined ? ok(res, info, a.body) : sendError(res, info, a.code, finish);
  signedPost("/trade/listen-key", (res, info, key, body) =>
    listenKeyAnswer(res, info, deps.listenKeys.handleCreateOrExtend(key.userId, body)),
  );
  signedPost("/trade/listen-key/close", (res, info, key, body) =>
    listenKeyAnswer(res, info, deps.listenKeys.handleClose(key.userId, body)),
  );

  // ---------------------------------------------------------------- public reads

  get("/trade/pairs", { pair: false, auth: "none" }, (res, info) => {
    const now = nowMicro();
    const out = pairs.map((p) => {
      const m = exchange.market(p.index);
      const rec = m.exchange(now) as ReturnType<typeof m.exchange> & {
        closeBidValue: number;
        closeAskValue: number;
      };
      rec.closeBidValue = m.bids.prices.length > 0 ? m.levels(0, 1)[0].price : 0;
      rec.closeAskValue = m.asks.prices.length > 0 ? m.levels(1, 1)[0].price : 0;
      return rec;
    });
    ok(res, info, serialize.pairs(out));
  });

  const bookCache = new Map<number, { version: number; body: string }>();
  const bookBody = (p: PairConfig, limit: number): string => {
    const m = exchange.market(p.index);
    if (limit >= 1_000_000) {
      const cached = bookCache.get(p.index);
      if (cached !== undefined && cached.version === m.bookVersion) return cached.body;
    }
    const body = serialize.book({ buy: m.levels(0, limit), sell: m.levels(1, limit), seq: m.seq });
    if (limit >= 1_000_000) bookCache.set(p.index, { version: m.bookVersion, body });
    return body;
  };

  get("/trade/pairs/:pairName/orders", { pair: true, auth: "none" }, (res, info, pair) => {
    let limit = 1_000_000;
    if (info.query !== "") {
      const l = new URLSearchParams(info.query).get("limit");
      if (l !== null) {
        if (!PAGE_RE.test(l)) return sendError(res, info, Code.LIMIT_INVALID, finish);
        limit = Number(l);
        if (limit < 1 || limit > 1000) return sendError(res, info, Code.LIMIT_OUT_OF_RANGE, finish);
      }
    }
    ok(res, info, bookBody(pair!, limit));
  });

  get("/trade/pairs/:pairName/history", { pair: true, auth: "none" }, (res, info, pair) => {
    ok(res, info, serialize.history(exchange.market(pair!.index).history));
  });

  get(
    "/trade/pairs/:pairName/chart/:period",
    { pair: true, auth: "none" },
    (res, info, pair, _key, period) => {
      if (!(PERIODS as readonly string[]).includes(period))
        return sendError(res, info, Code.PERIOD_UNKNOWN, finish);
      const q = new URLSearchParams(info.query);
      let limit = 500;
      let from = Number.NEGATIVE_INFINITY;
      let to = Number.POSITIVE_INFINITY;
      const l = q.get("limit");
      if (l !== null) {
        if (!PAGE_RE.test(l)) return sendError(res, info, Code.LIMIT_INVALID, finish);
        limit = Number(l);
        if (limit < 1 || limit > 1000) return sendError(res, info, Code.LIMIT_OUT_OF_RANGE, finish);
      }
      const f = q.get("from");
      if (f !== null) {
        if (!/^[0-9]{1,16}$/.test(f)) return sendError(res, info, Code.FROM_INVALID, finish);
        from = Number(f);
      }
      const t = q.get("to");
      if (t !== null) {
        if (!/^[0-9]{1,16}$/.test(t)) return sendError(res, info, Code.TO_INVALID, finish);
        to = Number(t);
      }
      if (from > to) return sendError(res, info, Code.FROM_AFTER_TO, finish);
      ok(res, info, serialize.chart(exchange.market(pair!.index).chart(period as Period, limit, from, to)));
    },
  );

  // ---------------------------------------------------------------- CONTRACT 9 venue data

  get("/time", { pair: false, auth: "none" }, (res, info) => {
    ok(res, info, serialize.time({ serverTime: Date.now() }));
  });

  // Everything but the clock is fixed at start: built once.
  const infoPairs = pairs.map((p) => ({
    name: p.name,
    base: p.base,
    quote: p.quote,
    priceDecimals: p.priceDecimals,
    amountDecimals: p.amountDecimals,
    tickSize: formatDecimal(1n, p.priceDecimals),
    stepSize: formatDecimal(1n, p.amountDecimals),
    minAmount: formatDecimal(p.minAmount, p.amountDecimals),
    maxAmount: formatDecimal(p.maxAmount, p.amountDecimals),
    maxPrice: formatDecimal(p.maxPrice, p.priceDecimals),
    makerFee: formatDecimal(p.makerFee, FEE_DECIMALS),
    takerFee: formatDecimal(p.takerFee, FEE_DECIMALS),
  }));
  get("/info", { pair: false, auth: "none" }, (res, info) => {
    ok(res, info, serialize.info({ serverTime: Date.now(), pairs: infoPairs }));
  });

  // ---------------------------------------------------------------- 4.4 pair page

  get("/trade/pairs/:pairName", { pair: true, auth: "optional" }, (res, info, pair, key) => {
    const m = exchange.market(pair!.index);
    const now = nowMicro();
    const page = {
      exchanges: pairs.map((p) => exchange.market(p.index).exchange(now)),
      orders: { buy: m.levels(0, 1_000_000), sell: m.levels(1, 1_000_000), seq: m.seq },
      history: m.history,
      userOrders: null as OrderView[] | null,
      userHistory: null as UserTradeView[] | null,
    };
    if (key === null) return ok(res, info, serialize.pairPage(page));
    reader.recentForUser(key.userId, 20).then(
      (r) => {
        page.userOrders = r.orders.map((o) => orderRowView(o, config));
        page.userHistory = r.trades.map((t) => tradeRowView(t, config));
        ok(res, info, serialize.pairPage(page));
      },
      () => sendError(res, info, Code.INTERNAL, finish),
    );
  });

  // ---------------------------------------------------------------- user reads

  get("/trade/pairs/:pairName/user-balances", { pair: true, auth: "required" }, (res, info, pair, key) => {
    const ledger = exchange.ledger;
    const out = [pair!.base, pair!.quote].map((currency) => {
      const c = ledger.currencyIndex(currency);
      const scale = config.currencies.get(currency)!.scale;
      const has = ledger.hasUser(key!.userId);
      return {
        currency,
        balance: formatDecimal(has ? ledger.available(key!.userId, c) : 0n, scale),
        reserved: formatDecimal(has ? ledger.reserved(key!.userId, c) : 0n, scale),
      };
    });
    ok(res, info, serialize.balances(out));
  });

  /** `page` (default 1) and `pageSize` (1..100, default 20) of a query, or the error code. */
  const pageParams = (query: string): [number, number] | number => {
    const q = new URLSearchParams(query);
    let page = 1;
    let size = 20;
    const p = q.get("page");
    if (p !== null) {
      if (!PAGE_RE.test(p)) return Code.PAGE_INVALID;
      page = Number(p);
      if (page < 1) return Code.PAGE_OUT_OF_RANGE;
    }
    const s = q.get("pageSize");
    if (s !== null) {
      if (!PAGE_RE.test(s)) return Code.PAGE_SIZE_INVALID;
      size = Number(s);
      if (size < 1 || size > 100) return Code.PAGE_SIZE_OUT_OF_RANGE;
    }
    return [page, size];
  };

  get("/trade/pairs/:pairName/user-orders", { pair: true, auth: "required" }, (res, info, _pair, key) => {
    const pp = pageParams(info.query);
    if (typeof pp === "number") return sendError(res, info, pp, finish);
    reader.userOrders(key!.userId, pp[0], pp[1]).then(
      (r) =>
        ok(
          res,
          info,
          serialize.ordersPage({ total: r.total, items: r.items.map((o) => orderRowView(o, config)) }),
        ),
      () => sendError(res, info, Code.INTERNAL, finish),
    );
  });

  get("/trade/pairs/user-history", { pair: false, auth: "required" }, (res, info, _pair, key) => {
    const pp = pageParams(info.query);
    if (typeof pp === "number") return sendError(res, info, pp, finish);
    reader.userTrades(key!.userId, pp[0], pp[1]).then(
      (r) =>
        ok(
          res,
          info,
          serialize.tradesPage({ total: r.total, items: r.items.map((t) => tradeRowView(t, config)) }),
        ),
      () => sendError(res, info, Code.INTERNAL, finish),
    );
  });

  // ---------------------------------------------------------------- 8.6 order reads

  /** Answers the caller's order from its committed row: 404 when it is none of the caller's. */
  const answerOrder = (
    res: HttpResponse,
    info: RequestInfo,
    userId: number,
    row: Promise<OrderRow | undefined>,
  ) =>
    row.then(
      (o) =>
        o === undefined || o.userId !== userId
          ? sendError(res, info, Code.ORDER_NOT_FOUND_PATH, finish)
          : ok(res, info, serialize.order(orderRowView(o, config, true))),
      () => sendError(res, info, Code.INTERNAL, finish),
    );

  get("/trade/orders/:orderId", { pair: false, auth: "required" }, (res, info, _pair, key, orderId) => {
    if (!/^[0-9]{1,15}$/.test(orderId) || Number(orderId) === 0)
      return sendError(res, info, Code.ORDER_ID_INVALID, finish);
    answerOrder(res, info, key!.userId, reader.order(Number(orderId)));
  });

  get("/trade/orders", { pair: false, auth: "required" }, (res, info, _pair, key) => {
    const id = new URLSearchParams(info.query).get("clientOrderId");
    if (id === null || id === "") return sendError(res, info, Code.CLIENT_ORDER_ID_REQUIRED, finish);
    if (!CLIENT_ORDER_ID_RE.test(id)) return sendError(res, info, Code.CLIENT_ORDER_ID_INVALID, finish);
    answerOrder(res, info, key!.userId, reader.orderByClientId(key!.userId, id));
  });

  get("/trade/pairs/:pairName/open-orders", { pair: true, auth: "required" }, (res, info, pair, key) => {
    reader.openOrders(exchange.openOrderIds(key!.userId, pair!.index)).then(
      (rows) => ok(res, info, serialize.orders(rows.map((o) => orderRowView(o, config)))),
      () => sendError(res, info, Code.INTERNAL, finish),
    );
  });

  // ---------------------------------------------------------------- service

  const openapi = JSON.stringify(buildOpenApi()); // built once (src/http/openapi.ts)
  get("/openapi.json", { pair: false, auth: "none" }, (res, info) => ok(res, info, openapi));

  app.get("/health", (res, req) => {
    const info = readRequest(res, req, "/health");
    if (deps.ready() && deps.accepting()) ok(res, info, '{"status":"ok"}');
    else send(res, info, 503, '{"status":"starting"}', finish);
  });

  app.get("/metrics", (res, req) => {
    const info = readRequest(res, req, "/metrics");
    metrics.render().then(
      (text) => {
        if (info.aborted) return;
        info.done = true;
        res.cork(() => {
          res.writeStatus("200 OK").writeHeader("content-type", metrics.contentType).end(text);
        });
      },
      () => sendError(res, info, Code.INTERNAL, finish),
    );
  });

  if (deps.admin !== null) deps.admin.mount(app, finish);
  else
    app.any("/admin/*", (res, req) =>
      sendError(res, readRequest(res, req, "/admin"), Code.UNKNOWN_PATH, finish),
    );

  // ---------------------------------------------------------------- 404 / 405

  // CORS preflights (CONTRACT 10), answered for any path under the REST base.
  app.options(`${PREFIX}/*`, (res, req) => deps.cors.preflight(res, req));

  const known = [
    "/time",
    "/info",
    "/trade/create-order",
    "/trade/cancel-order",
    "/trade/create-orders",
    "/trade/cancel-orders",
    "/trade/amend-order",
    "/trade/cancel-all-orders",
    "/trade/cancel-all-after",
    "/trade/orders",
    "/trade/orders/:orderId",
    "/trade/pairs/:pairName/open-orders",
    "/trade/listen-key",
    "/trade/listen-key/close",
    "/trade/pairs",
    "/trade/pairs/user-history",
    "/trade/pairs/:pairName",
    "/trade/pairs/:pairName/chart/:period",
    "/trade/pairs/:pairName/orders",
    "/trade/pairs/:pairName/history",
    "/trade/pairs/:pairName/user-balances",
    "/trade/pairs/:pairName/user-orders",
    "/openapi.json",
  ];
  for (const route of known) {
    app.any(PREFIX + route, (res, req) => {
      if (req.getMethod() === "options") return deps.cors.preflight(res, req);
      const info = readRequest(res, req, route);
      if (route.includes(":pairName") && pairFromPath(req) === undefined) {
        return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
      }
      sendError(res, info, Code.METHOD_NOT_ALLOWED, finish);
    });
  }
  app.any("/*", (res, req) => {
    const info = readRequest(res, req, "unknown");
    sendError(res, info, Code.UNKNOWN_PATH, finish, req.getUrl());
  });
}

// ---------------------------------------------------------------- validation

/** The fields each POST body may carry (CONTRACT 8.1); `nonce` with every authenticated call. */
const ORDER_FIELDS = new Set([
  "pairName",
  "tradeType",
  "directionType",
  "price",
  "amount",
  "clientOrderId",
  "timeInForce",
  "postOnly",
]);
const CREATE_FIELDS = new Set([...ORDER_FIELDS, "nonce"]);
const CANCEL_FIELDS = new Set(["orderId", "nonce"]);
const AMEND_FIELDS = new Set(["orderId", "amount", "price", "nonce"]);
const BATCH_CREATE_FIELDS = new Set(["orders", "nonce"]);
const BATCH_CANCEL_FIELDS = new Set(["orderIds", "nonce"]);
const CANCEL_ALL_FIELDS = new Set(["pairName", "nonce"]);
const CANCEL_AFTER_FIELDS = new Set(["timeout", "nonce"]);

const MAX_BATCH_ORDERS = 20;
const MAX_BATCH_CANCELS = 100;
const MAX_DEAD_MAN_SECONDS = 600;

/** An order id as a body gives it (a positive integer, or a string of digits), or -(error code). */
function orderIdOf(id: unknown): number {
  if (id === undefined || id === null) return -Code.ORDER_ID_REQUIRED;
  const n = typeof id === "string" && /^[0-9]{1,15}$/.test(id) ? Number(id) : id;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0) return -Code.ORDER_ID_INVALID;
  return n;
}

/** An order amount of pair `p` in lots (CONTRACT 2.1 bounds), or 0 with its error pushed. */
function parseAmount(value: unknown, p: PairConfig, errors: ErrorEntry[]): number {
  const a = parseDecimal(value, p.amountDecimals);
  if (typeof a !== "bigint") errors.push([amountParseError(a)]);
  else if (a < p.minAmount)
    errors.push([Code.AMOUNT_BELOW_MIN, formatDecimal(p.minAmount, p.amountDecimals)]);
  else if (a > p.maxAmount)
    errors.push([Code.AMOUNT_ABOVE_MAX, formatDecimal(p.maxAmount, p.amountDecimals)]);
  else return Number(a);
  return 0;
}

/** A limit price of pair `p` in ticks (CONTRACT 2.1 bounds), or 0 with its error pushed. */
function parsePrice(value: unknown, p: PairConfig, errors: ErrorEntry[]): number {
  const pr = parseDecimal(value, p.priceDecimals);
  if (typeof pr !== "bigint") errors.push([priceParseError(pr)]);
  else if (pr > p.maxPrice) errors.push([Code.PRICE_ABOVE_MAX, formatDecimal(p.maxPrice, p.priceDecimals)]);
  else return Number(pr);
  return 0;
}

interface ValidOrder {
  errors: ErrorEntry[];
  pair: PairConfig | undefined;
  type: 0 | 1;
  side: 0 | 1;
  price: number;
  amount: number;
  /** Options (src/orders.ts). */
  flags: number;
  clientOrderId: string | undefined;
}

/**
 * Validates a create-order body (CONTRACT 2.1, 3, 8.2) whose fields must be in `allowed`; every
 * failing field is reported, unknown fields last.
 */
export function validateOrder(
  body: Record<string, unknown>,
  config: ExchangeConfig,
  allowed: ReadonlySet<string> = CREATE_FIELDS,
): ValidOrder {
  const errors: ErrorEntry[] = [];
  const out: ValidOrder = {
    errors,
    pair: undefined,
    type: LIMIT,
    side: BUY,
    price: 0,
    amount: 0,
    flags: 0,
    clientOrderId: undefined,
  };
  const pn = body.pairName;
  if (pn === undefined || pn === null) errors.push([Code.PAIR_REQUIRED]);
  else if (typeof pn !== "string") errors.push([Code.PAIR_NOT_STRING]);
  else {
    out.pair = config.pairsByName.get(pn);
    if (out.pair === undefined) errors.push([Code.PAIR_UNKNOWN]);
  }
  const tt = body.tradeType;
  if (tt === undefined || tt === null) errors.push([Code.TRADE_TYPE_REQUIRED]);
  else if (tt === "limit") out.type = LIMIT;
  else if (tt === "market") out.type = MARKET;
  else errors.push([Code.TRADE_TYPE_INVALID]);
  const dt = body.directionType;
  if (dt === undefined || dt === null) errors.push([Code.DIRECTION_REQUIRED]);
  else if (dt === "buy") out.side = BUY;
  else if (dt === "sell") out.side = SELL;
  else errors.push([Code.DIRECTION_INVALID]);
  const p = out.pair;
  if (body.amount === undefined || body.amount === null) errors.push([Code.AMOUNT_REQUIRED]);
  else if (p !== undefined) out.amount = parseAmount(body.amount, p, errors);
  if (out.type === LIMIT && tt === "limit") {
    if (body.price === undefined || body.price === null) errors.push([Code.PRICE_REQUIRED]);
    else if (p !== undefined) out.price = parsePrice(body.price, p, errors);
  }
  // Options: null counts as not given.
  const tif = body.timeInForce;
  if (tif !== undefined && tif !== null) {
    const flags = timeInForceFlags(tif);
    if (flags < 0) errors.push([Code.TIME_IN_FORCE_INVALID]);
    else if (tt === "market") errors.push([Code.TIME_IN_FORCE_NOT_LIMIT]);
    else out.flags |= flags;
  }
  const po = body.postOnly;
  if (po !== undefined && po !== null) {
    if (typeof po !== "boolean") errors.push([Code.POST_ONLY_INVALID]);
    else if (po && (tt === "market" || (out.flags & TIF_MASK) !== TIF_GTC))
      errors.push([Code.POST_ONLY_NOT_GTC]);
    else if (po) out.flags |= FLAG_POST_ONLY;
  }
  const cid = body.clientOrderId;
  if (cid !== undefined && cid !== null) {
    if (typeof cid !== "string" || !CLIENT_ORDER_ID_RE.test(cid)) errors.push([Code.CLIENT_ORDER_ID_INVALID]);
    else out.clientOrderId = cid;
  }
  for (const e of unknownFields(body, allowed)) errors.push(e);
  return out;
}

// ---------------------------------------------------------------- row formatting

export function orderRowView(o: OrderRow, config: ExchangeConfig, withUpdate = false): OrderView {
  const facts = { ...o, used: o.amountUsed, cancelled: !!o.isCancelled };
  return orderView(config.pairsByName.get(o.pair)!, facts, withUpdate);
}

export function tradeRowView(t: UserTradeRow, config: ExchangeConfig): UserTradeView {
  return userTradeView(config.pairsByName.get(t.pair)!, t);
}
