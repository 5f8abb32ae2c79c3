/**
 * The REST front end: routes under `/1.0`, admin under `/admin`, `/health` and `/metrics`.
 *
 * Every route is a short chain of guarded steps in the order CONTRACT 5 ranks the failures:
 * 404 (path, pair) → 413 (body size) → 415 (media type) → 401 (auth, nonce) → 429 (rate) → 400.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { BUY, SELL } from "../../workers/matching/types.ts";
import { nonceFromBody, nonceFromQuery, parseAuthorization, verifySignature } from "../auth.ts";
import type { ExchangeConfig, PairConfig } from "../config.ts";
import type { OrderRow, UserTradeRow } from "../db/rows.ts";
import { amountParseError, Code, errorBody, multiErrorBody, priceParseError } from "../errors.ts";
import {
  closedError,
  type Exchange,
  LIMIT,
  MARKET,
  type OrderView,
  type UserTradeView,
} from "../exchange.ts";
import { PERIODS, type Period, scaled } from "../market-data.ts";
import type { Metrics } from "../metrics.ts";
import { formatDecimal, parseDecimal } from "../numbers.ts";
import { formatDateTime, nowMicro } from "../time.ts";
import type { ApiKey, Users } from "../users.ts";
import type { Admin } from "./admin.ts";
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
}

const PREFIX = "/1.0";
const PAGE_RE = /^[0-9]{1,9}$/;

export function mountRoutes(app: TemplatedApp, deps: FrontEndDeps): void {
  const { config, exchange, users, reader, metrics } = deps;
  const limiter = new RateLimiter(deps.rateLimit);
  const pairs = config.pairs;

  // Labelled children are looked up once per (route, status), not per request.
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(v: number): void }>();
  const finish = (info: RequestInfo, status: number): void => {
    const key = `${info.route} ${status}`;
    let counter = counters.get(key);
    if (counter === undefined) {
      counter = metrics.requests.labels(info.route, String(status));
      counters.set(key, counter);
    }
    counter.inc();
    let timer = timers.get(info.route);
    if (timer === undefined) {
      timer = metrics.latency.labels(info.route);
      timers.set(info.route, timer);
    }
    timer.observe(Number(process.hrtime.bigint() - info.startNs) / 1e9);
  };

  // ---------------------------------------------------------------- shared steps

  /** 401 step: the API key whose secret signed `payload`, or an error code. */
  const authenticate = (info: RequestInfo, payload: Buffer | string): ApiKey | number => {
    const token = parseAuthorization(info.authorization);
    if (token === null) return Code.AUTH_TOKEN_MISSING;
    const key = users.key(token);
    if (key === undefined) return Code.AUTH_TOKEN_UNKNOWN;
    if (info.signature === undefined) return Code.AUTH_SIGNATURE_MISSING;
    if (!verifySignature(key.secret, payload, info.signature)) return Code.AUTH_SIGNATURE_INVALID;
    return key;
  };

  /** Nonce step (401 on replay); a malformed nonce is a 400 reported later. */
  const checkNonce = (key: ApiKey, nonce: bigint | undefined | number): number => {
    if (typeof nonce !== "bigint") return nonce === Code.NONCE_INVALID ? Code.NONCE_INVALID : 0;
    if (!users.nonces.check(key.token, nonce)) return Code.AUTH_NONCE_REPLAY;
    deps.nonceUsed(key.token, nonce);
    return 0;
  };

  /** 429 step. */
  const rateLimited = (res: HttpResponse, info: RequestInfo, key: string): boolean => {
    if (!limiter.enabled) return false;
    const now = Date.now();
    if (limiter.allow(key, now)) return false;
    send(res, info, 429, errorBody(Code.RATE_LIMITED, info.lang), finish, limiter.retryAfter());
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
      if (info.contentLength > MAX_BODY) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
      if (!isJsonMediaType(info.contentType)) {
        sendError(res, info, Code.UNSUPPORTED_MEDIA_TYPE, finish);
        return;
      }
      readBody(res, info, (raw) => {
        if (raw === null) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
        if (notReady(res, info)) return;
        const key = authenticate(info, raw);
        if (typeof key === "number") return sendError(res, info, key, finish);
        let body: unknown;
        try {
          body = JSON.parse(raw.toString("utf8"));
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
      /** The path parameter after the pair (the chart period), read while the request lives. */
      param: string,
    ) => void,
  ) => {
    app.get(PREFIX + route, (res, req) => {
      const info = readRequest(res, req, route, limiter.enabled);
      let pair: PairConfig | undefined;
      if (opts.pair) {
        pair = pairFromPath(req);
        if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
      }
      const param = opts.pair ? (req.getParameter(1) ?? "") : "";
      let key: ApiKey | null = null;
      const hasAuth = info.authorization !== undefined || info.signature !== undefined;
      if (opts.auth === "required" || (opts.auth === "optional" && hasAuth)) {
        const k = authenticate(info, info.query);
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

  signedPost("/trade/create-order", (res, info, key, body) => {
    const v = validateOrder(body, config);
    if (v.errors.length > 0) {
      return send(res, info, 400, multiErrorBody(v.errors, info.lang), finish);
    }
    const p = v.pair!;
    const accepted = exchange.createOrder(
      key.userId,
      p.index,
      v.type,
      v.side,
      v.price,
      v.amount,
      (err, order) => {
        if (err !== 0) return sendError(res, info, err, finish);
        metrics.orders.inc({ pair: p.name, type: v.type === LIMIT ? "limit" : "market" });
        ok(res, info, serialize.order(order));
      },
    );
    if (!accepted) sendError(res, info, Code.BUSY, finish);
  });

  // ---------------------------------------------------------------- 4.2 cancel-order

  signedPost("/trade/cancel-order", (res, info, key, body) => {
    const id = body.orderId;
    if (id === undefined || id === null) return sendError(res, info, Code.ORDER_ID_REQUIRED, finish);
    const orderId = typeof id === "string" && /^[0-9]{1,15}$/.test(id) ? Number(id) : id;
    if (typeof orderId !== "number" || !Number.isSafeInteger(orderId) || orderId <= 0) {
      return sendError(res, info, Code.ORDER_ID_INVALID, finish);
    }
    const reply = (err: number) => (err === 0 ? ok(res, info, "[]") : sendError(res, info, err, finish));
    const accepted = exchange.cancelOrder(key.userId, orderId, reply, (missing) => {
      reader.order(missing).then(
        (row) => {
          if (row === undefined || row.userId !== key.userId) reply(Code.ORDER_NOT_FOUND);
          else reply(closedError({ cancelled: !!row.isCancelled, used: row.amountUsed, amount: row.amount }));
        },
        () => sendError(res, info, Code.INTERNAL, finish),
      );
    });
    if (!accepted) sendError(res, info, Code.BUSY, finish);
  });

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
    const body = serialize.book({ buy: m.levels(0, limit), sell: m.levels(1, limit) });
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

  // ---------------------------------------------------------------- 4.4 pair page

  get("/trade/pairs/:pairName", { pair: true, auth: "optional" }, (res, info, pair, key) => {
    const m = exchange.market(pair!.index);
    const now = nowMicro();
    const page = {
      exchanges: pairs.map((p) => exchange.market(p.index).exchange(now)),
      orders: { buy: m.levels(0, 1_000_000), sell: m.levels(1, 1_000_000) },
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
    metrics.registry.metrics().then(
      (text) => {
        if (info.aborted) return;
        info.done = true;
        res.cork(() => {
          res.writeStatus("200 OK").writeHeader("content-type", metrics.registry.contentType).end(text);
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

  const known = [
    "/trade/create-order",
    "/trade/cancel-order",
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

interface ValidOrder {
  errors: [number, string?][];
  pair: PairConfig | undefined;
  type: 0 | 1;
  side: 0 | 1;
  price: number;
  amount: number;
}

/** Validates a create-order body (CONTRACT 2.1, 3); every failing field is reported. */
export function validateOrder(body: Record<string, unknown>, config: ExchangeConfig): ValidOrder {
  const errors: [number, string?][] = [];
  const out: ValidOrder = { errors, pair: undefined, type: LIMIT, side: BUY, price: 0, amount: 0 };
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
  else if (p !== undefined) {
    const a = parseDecimal(body.amount, p.amountDecimals);
    if (typeof a !== "bigint") errors.push([amountParseError(a)]);
    else if (a < p.minAmount)
      errors.push([Code.AMOUNT_BELOW_MIN, formatDecimal(p.minAmount, p.amountDecimals)]);
    else if (a > p.maxAmount)
      errors.push([Code.AMOUNT_ABOVE_MAX, formatDecimal(p.maxAmount, p.amountDecimals)]);
    else out.amount = Number(a);
  }
  if (out.type === LIMIT && tt === "limit") {
    if (body.price === undefined || body.price === null) errors.push([Code.PRICE_REQUIRED]);
    else if (p !== undefined) {
      const pr = parseDecimal(body.price, p.priceDecimals);
      if (typeof pr !== "bigint") errors.push([priceParseError(pr)]);
      else if (pr > p.maxPrice)
        errors.push([Code.PRICE_ABOVE_MAX, formatDecimal(p.maxPrice, p.priceDecimals)]);
      else out.price = Number(pr);
    }
  }
  return out;
}

// ---------------------------------------------------------------- row formatting

export function orderRowView(o: OrderRow, config: ExchangeConfig): OrderView {
  const p = config.pairsByName.get(o.pair)!;
  return {
    id: o.id,
    pairName: o.pair,
    tradeType: o.type === LIMIT ? "limit" : "market",
    directionType: o.side === BUY ? "buy" : "sell",
    price: scaled(o.price, p.priceDecimals),
    amount: scaled(o.amount, p.amountDecimals),
    amountUsed: scaled(o.amountUsed, p.amountDecimals),
    isCancelled: !!o.isCancelled,
    createTime: formatDateTime(o.createMicro),
  };
}

export function tradeRowView(t: UserTradeRow, config: ExchangeConfig): UserTradeView {
  const p = config.pairsByName.get(t.pair)!;
  return {
    id: t.id,
    pairName: t.pair,
    tradeType: t.type === LIMIT ? "limit" : "market",
    directionType: t.side === BUY ? "buy" : "sell",
    price: scaled(t.price, p.priceDecimals),
    amount: scaled(t.amount, p.amountDecimals),
    tradeTime: formatDateTime(t.timeMicro),
  };
}
