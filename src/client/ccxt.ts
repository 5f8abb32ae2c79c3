/**
 * A ccxt exchange class for this server (docs/API.md 20.7): REST through ccxt's request pipeline
 * (`describe()`, `sign()`, `handleErrors()`, the parse* methods) and ccxt.pro's watch* methods over
 * the server's stream (docs/API.md 12).
 *
 *   import Exchange from "exchange-client/ccxt";
 *   const ex = new Exchange({ apiKey, secret, urls: { api: { rest: "http://127.0.0.1:8080" } } });
 *
 * Symbols are ccxt's (`BTC/USDT` for the pair `btc_usdt`), precision is the pair's tick and step
 * size (ccxt's TICK_SIZE mode) and errors are ccxt's classes, chosen by the answer's `codes`
 * (docs/API.md 4). ccxt is a peer dependency of the client package: only this module imports it.
 *
 * Money: ccxt hands out numbers, but every answer is read with its numbers kept as their decimal
 * text (ccxt's own number quoting, for the stream too), so an order's `cost` is `executedQuote`
 * and its `average` is `executedQuote / amountUsed` computed on those texts with ccxt's Precise,
 * never on doubles; `info` keeps the exact texts (DECISIONS.md "ccxt exchange class").
 */

import type {
  Balances,
  Dict,
  Int,
  Market,
  Num,
  OHLCV,
  Order,
  OrderBook,
  OrderSide,
  OrderType,
  Str,
  Strings,
  Ticker,
  Tickers,
  Trade,
} from "ccxt";
import ccxt from "ccxt";
import { headerRecord, REST_PREFIX, signText } from "./base.ts";
import { bookChecksum, CHECKSUM_LEVELS } from "./checksum.ts";
import { boundSigningText, sentPath } from "./rest.ts";

const { Precise } = ccxt;

type ErrorClass = new (message: string) => Error;

/**
 * The server's error codes (docs/API.md 4, docs/API-errors.md) that have a ccxt class of their own;
 * any other code falls back on the HTTP status (handleErrors).
 */
const EXACT: ReadonlyMap<string, ErrorClass> = new Map<string, ErrorClass>([
  ["INSUFFICIENT_FUNDS", ccxt.InsufficientFunds],
  ["ORDER_NOT_FOUND", ccxt.OrderNotFound],
  ["ORDER_NOT_FOUND_PATH", ccxt.OrderNotFound],
  // ccxt's rule: cancelling an order that is already closed is OrderNotFound.
  ["ORDER_ALREADY_CANCELLED", ccxt.OrderNotFound],
  ["ORDER_ALREADY_EXECUTED", ccxt.OrderNotFound],
  ["NO_LIQUIDITY", ccxt.OrderNotFillable],
  ["WOULD_TAKE_LIQUIDITY", ccxt.OrderImmediatelyFillable],
  ["CLIENT_ORDER_ID_DUPLICATE", ccxt.DuplicateOrderId],
  ...[
    "NOTIONAL_BELOW_MIN",
    "AMOUNT_ABOVE_MAX",
    "AMOUNT_BELOW_MIN",
    "AMOUNT_MALFORMED",
    "AMOUNT_NEGATIVE",
    "AMOUNT_NOTIONAL_TOO_LARGE",
    "AMOUNT_NOT_NUMBER",
    "AMOUNT_REQUIRED",
    "AMOUNT_TOO_LARGE",
    "AMOUNT_TOO_MANY_DECIMALS",
    "AMOUNT_ZERO",
    "PRICE_ABOVE_MAX",
    "PRICE_MALFORMED",
    "PRICE_NEGATIVE",
    "PRICE_NOT_NUMBER",
    "PRICE_REQUIRED",
    "PRICE_TOO_LARGE",
    "PRICE_TOO_MANY_DECIMALS",
    "PRICE_ZERO",
    "TIME_IN_FORCE_INVALID",
    "TIME_IN_FORCE_NOT_LIMIT",
    "POST_ONLY_INVALID",
    "POST_ONLY_NOT_GTC",
    "TRADE_TYPE_INVALID",
    "TRADE_TYPE_REQUIRED",
    "DIRECTION_INVALID",
    "DIRECTION_REQUIRED",
    "CLIENT_ORDER_ID_INVALID",
    "SELF_TRADE_PREVENTION_INVALID",
    "MMP_FROZEN",
    "MMP_NOT_GTC",
  ].map((code): [string, ErrorClass] => [code, ccxt.InvalidOrder]),
  ["PAIR_UNKNOWN", ccxt.BadSymbol],
  ["PAIR_UNKNOWN_IN_PATH", ccxt.BadSymbol],
  ["PAIR_CANCEL_ONLY", ccxt.MarketClosed],
  ["PAIR_HALTED", ccxt.MarketClosed],
  ["RATE_LIMITED", ccxt.RateLimitExceeded],
  ["TOO_MANY_IN_FLIGHT", ccxt.RateLimitExceeded],
  ["AUTH_TOKEN_MISSING", ccxt.AuthenticationError],
  ["AUTH_TOKEN_UNKNOWN", ccxt.AuthenticationError],
  ["API_TOKEN_REQUIRED", ccxt.AuthenticationError],
  ["API_TOKEN_UNKNOWN", ccxt.AuthenticationError],
  ["AUTH_SIGNATURE_MISSING", ccxt.AuthenticationError],
  ["AUTH_SIGNATURE_INVALID", ccxt.AuthenticationError],
  ["AUTH_LISTEN_KEY_INVALID", ccxt.AuthenticationError],
  ["AUTH_FORBIDDEN_CHANNEL", ccxt.PermissionDenied],
  // A clock off by more than the window, or a replayed nonce: ccxt's InvalidNonce.
  ["AUTH_TIMESTAMP", ccxt.InvalidNonce],
  ["AUTH_NONCE_REPLAY", ccxt.InvalidNonce],
  ["NOT_READY", ccxt.ExchangeNotAvailable],
  ["SHUTTING_DOWN", ccxt.ExchangeNotAvailable],
  ["BUSY", ccxt.ExchangeNotAvailable],
]);

/** docs/API.md 7.5: ccxt's timeframes are the chart's periods. */
const TIMEFRAMES = ["1m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w"] as const;

/** Most records a user page holds (docs/API.md 7.9). */
const PAGE_SIZE = 100;

/** The Unix ms of a decimal string of Unix µs (docs/API.md 1), without a float. */
function msOfMicro(micro: string | undefined): number | undefined {
  if (micro === undefined || !/^\d+$/.test(micro)) return undefined;
  return micro.length <= 3 ? 0 : Number(micro.slice(0, -3));
}

/** Unix ms of a UTC datetime `YYYY-MM-DD HH:MM:SS` (docs/API.md 1). */
function msOfDatetime(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(`${text.replace(" ", "T")}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A price of 0 is "none" in the pair records (docs/API.md 5.2: an empty side, a pair never traded). */
function priceOrNone(text: string | undefined): string | undefined {
  return text === undefined || Precise.stringEq(text, "0") ? undefined : text;
}

/** What a live book of watchOrderBook belongs to: the connection whose snapshot started it. */
interface LiveBook {
  client: unknown;
  book: ReturnType<InstanceType<typeof ccxt.Exchange>["orderBook"]>;
}

/** The ws client ccxt keeps per stream URL, as far as this class touches it. */
interface StreamConnection {
  options: { headers?: Record<string, string> } & Record<string, unknown>;
  onMessage: (event: { data: unknown }) => void;
  createConnection: () => void;
  resolve: (result: unknown, messageHash: string) => void;
  reject: (error: unknown, messageHash?: string) => void;
  close: () => Promise<unknown>;
}

export default class ExchangeServer extends ccxt.Exchange {
  /** The caller's uid (docs/API.md 20.4), read once for the user channels (ccxt's `uid` is a credential). */
  private accountUidRead: string | undefined;
  /** watchOrderBook's books by symbol. */
  private readonly books = new Map<string, LiveBook>();
  /** Items received since the last watch call that returned them, by message hash. */
  private readonly unread = new Map<string, (Trade | Order)[]>();
  /** Stream connections already set up (signed upgrades, exact numbers). */
  private readonly prepared = new WeakSet<object>();

  override describe(): Dict {
    const exact = Object.create(null) as Dict;
    for (const [code, cls] of EXACT) exact[code] = cls;
    return this.deepExtend(super.describe(), {
      id: "exchange",
      name: "Exchange server",
      countries: [],
      version: "1.0",
      rateLimit: 1,
      pro: true,
      precisionMode: ccxt.TICK_SIZE,
      commonCurrencies: {},
      has: {
        CORS: undefined,
        spot: true,
        margin: false,
        swap: false,
        future: false,
        option: false,
        cancelAllOrders: true,
        cancelOrder: true,
        createOrder: true,
        createMarketOrder: true,
        createLimitOrder: true,
        createPostOnlyOrder: true,
        fetchBalance: true,
        fetchClosedOrders: true,
        fetchCurrencies: false,
        fetchMarkets: true,
        fetchMyTrades: true,
        fetchOHLCV: true,
        fetchOpenOrders: true,
        fetchOrder: true,
        fetchOrderBook: true,
        fetchOrders: true,
        fetchTicker: true,
        fetchTickers: true,
        fetchTime: true,
        fetchTrades: true,
        ws: true,
        watchOrderBook: true,
        watchTrades: true,
        watchOrders: true,
        watchMyTrades: true,
      },
      timeframes: Object.fromEntries(TIMEFRAMES.map((t) => [t, t])),
      urls: {
        api: { rest: "http://127.0.0.1:8080" },
        www: "http://127.0.0.1:8080",
        doc: "docs/API.md",
      },
      requiredCredentials: { apiKey: true, secret: true },
      api: {
        public: {
          get: [
            "time",
            "info",
            "trade/pairs",
            "trade/pairs/{pairName}/orders",
            "trade/pairs/{pairName}/history",
            "trade/pairs/{pairName}/chart/{period}",
          ],
        },
        private: {
          get: [
            "trade/account",
            "trade/orders",
            "trade/orders/{orderId}",
            "trade/pairs/{pairName}/open-orders",
            // The path's pair filters nothing (docs/API.md 7.9): the query's pairName does.
            "trade/pairs/{pathPair}/user-orders",
            "trade/pairs/user-history",
          ],
          post: ["trade/create-order", "trade/cancel-order", "trade/cancel-all-orders"],
        },
      },
      fees: { trading: { tierBased: false, percentage: true } },
      exceptions: { exact, broad: {} },
      options: {
        /** X-Recv-Window of signed requests (docs/API.md 3); unset: the server's 5000 ms. */
        recvWindow: undefined,
        /** Check the book checksum of every `orders:` message (docs/API.md 12.5). */
        checksum: true,
      },
    });
  }

  // ---- transport (docs/API.md 3, 4) -----------------------------------------------------------------

  /** The server origin from `urls.api.rest` (with or without `/1.0`). */
  private restOrigin(): string {
    let url = String(this.safeString(this.urls.api, "rest", "")).replace(/\/+$/, "");
    if (url.endsWith(REST_PREFIX)) url = url.slice(0, -REST_PREFIX.length);
    return url;
  }

  /** `urls.api.ws`, else the stream address of the REST origin (docs/API.md 1). */
  private streamBase(): string {
    const ws = this.safeString(this.urls.api, "ws");
    if (ws !== undefined) return ws;
    return `${this.restOrigin().replace(/^http/, "ws")}/stream`;
  }

  /**
   * The headers of a signed request in the bound form (docs/API.md 3): `<X-Timestamp>\n<METHOD>\n
   * <path>\n<payload>`, payload the body of a POST or the raw query of a GET (or a stream upgrade).
   */
  private signedHeaders(method: string, path: string, payload: string): Record<string, string> {
    this.checkRequiredCredentials();
    const timestamp = String(this.milliseconds());
    const headers = headerRecord({
      Authorization: this.apiKey,
      "X-Timestamp": timestamp,
      "X-Signature": signText(this.secret, boundSigningText(timestamp, method, path, payload)),
    });
    const recvWindow = this.safeInteger(this.options, "recvWindow");
    if (recvWindow !== undefined) headers["X-Recv-Window"] = String(recvWindow);
    return headers;
  }

  override sign(
    path: string,
    api: string = "public",
    method: string = "GET",
    params: Dict = {},
    headers: Dict | undefined = undefined,
    body: Str = undefined,
  ): Dict {
    const target = sentPath(`${REST_PREFIX}/${this.implodeParams(path, params)}`);
    const query = this.omit(params, this.extractParams(path));
    let url = `${this.restOrigin()}${target}`;
    let payload = "";
    if (method === "GET") {
      const text = this.urlencode(query);
      if (text !== "") {
        url += `?${text}`;
        payload = text;
      }
    } else {
      // The body is signed as the very text sent (docs/API.md 3).
      body = this.json(query);
      payload = body;
      headers = { "Content-Type": "application/json" };
    }
    if (api === "private") headers = this.extend(headers ?? {}, this.signedHeaders(method, target, payload));
    return { url, method, body, headers };
  }

  /**
   * Every answer keeps its numbers as their decimal text (ccxt's own quoting): prices, amounts,
   * `executedQuote` and fees are exact strings in `info`, and the parse methods compute on them.
   */
  override parseJson(jsonString: string): unknown {
    try {
      if (this.isJsonEncodedObject(jsonString)) return JSON.parse(this.onJsonResponse(jsonString));
    } catch {
      return undefined;
    }
    return undefined;
  }

  /** docs/API.md 4: the answer's `codes` choose the ccxt class, then the HTTP status does. */
  override handleErrors(
    code: number,
    _reason: string,
    url: string,
    _method: string,
    _headers: Dict,
    body: string,
    response: unknown,
    _requestHeaders: unknown,
    _requestBody: unknown,
  ): undefined {
    if (code < 400) return undefined;
    const feedback = `${this.id} ${body}`;
    const codes = this.safeDict(response as Dict, "codes");
    if (codes !== undefined) {
      for (const field of Object.keys(codes)) {
        for (const c of this.safeList(codes, field, []) ?? []) {
          const cls = typeof c === "string" ? EXACT.get(c) : undefined;
          if (cls !== undefined) throw new cls(feedback);
        }
      }
    }
    if (code === 401) throw new ccxt.AuthenticationError(feedback);
    if (code === 403) throw new ccxt.PermissionDenied(feedback);
    if (code === 404 && url.includes("/trade/orders")) throw new ccxt.OrderNotFound(feedback);
    if (code === 429) throw new ccxt.RateLimitExceeded(feedback);
    if (code === 503) throw new ccxt.ExchangeNotAvailable(feedback);
    if (code >= 500) throw new ccxt.ExchangeError(feedback);
    throw new ccxt.BadRequest(feedback);
  }

  // ---- markets and public data (docs/API.md 7, 9) ---------------------------------------------------

  /** docs/API.md 9: GET /time. */
  override async fetchTime(params: Dict = {}): Promise<Int> {
    const response = await this.request("time", "public", "GET", params);
    return this.safeInteger(response, "serverTime");
  }

  /** docs/API.md 9: one market per pair of `/info`, with its tick size, bounds and fees. */
  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    const response = await this.request("info", "public", "GET", params);
    return (this.safeList(response, "pairs", []) ?? []).map((pair) => this.parseMarket(pair as Dict));
  }

  override parseMarket(pair: Dict): Market {
    const id = this.safeString(pair, "name");
    const baseId = this.safeString(pair, "base");
    const quoteId = this.safeString(pair, "quote");
    const base = this.safeCurrencyCode(baseId);
    const quote = this.safeCurrencyCode(quoteId);
    const minNotional = this.safeString(pair, "minNotional", "0");
    return this.safeMarketStructure({
      id,
      symbol: `${base}/${quote}`,
      base,
      quote,
      settle: undefined,
      baseId,
      quoteId,
      settleId: undefined,
      type: "spot",
      spot: true,
      margin: false,
      swap: false,
      future: false,
      option: false,
      contract: false,
      // docs/API.md 11: `cancelOnly` and `halted` take no new orders.
      active: this.safeString(pair, "status", "trading") === "trading",
      linear: undefined,
      inverse: undefined,
      contractSize: undefined,
      expiry: undefined,
      expiryDatetime: undefined,
      strike: undefined,
      optionType: undefined,
      taker: this.safeNumber(pair, "takerFee"),
      maker: this.safeNumber(pair, "makerFee"),
      precision: {
        amount: this.safeNumber(pair, "stepSize"),
        price: this.safeNumber(pair, "tickSize"),
      },
      limits: {
        leverage: { min: undefined, max: undefined },
        amount: { min: this.safeNumber(pair, "minAmount"), max: this.safeNumber(pair, "maxAmount") },
        price: { min: this.safeNumber(pair, "tickSize"), max: this.safeNumber(pair, "maxPrice") },
        // docs/API.md 20.5: "0" is no minimum.
        cost: {
          min: Precise.stringEq(minNotional, "0") ? undefined : this.parseNumber(minNotional),
          max: undefined,
        },
      },
      created: undefined,
      info: pair,
    });
  }

  /** docs/API.md 7.3: every pair's 24 h record with the best bid and ask. */
  override async fetchTickers(symbols: Strings = undefined, params: Dict = {}): Promise<Tickers> {
    await this.loadMarkets();
    symbols = this.marketSymbols(symbols);
    const response = (await this.request("trade/pairs", "public", "GET", params)) as Dict[];
    const tickers = response.map((record) => this.parseTicker(record));
    return this.filterByArrayTickers(tickers, "symbol", symbols);
  }

  /** docs/API.md 7.3, the one pair's record. */
  override async fetchTicker(symbol: string, params: Dict = {}): Promise<Ticker> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const response = (await this.request("trade/pairs", "public", "GET", params)) as Dict[];
    const record = response.find((r) => this.safeString(r, "pairName") === market.id);
    if (record === undefined) throw new ccxt.BadSymbol(`${this.id} fetchTicker() has no record of ${symbol}`);
    return this.parseTicker(record, market);
  }

  override parseTicker(record: Dict, market: Market = undefined): Ticker {
    market = this.safeMarket(this.safeString(record, "pairName"), market);
    const bid = priceOrNone(this.safeString(record, "closeBidValue"));
    const ask = priceOrNone(this.safeString(record, "closeAskValue"));
    return this.safeTicker(
      {
        symbol: market.symbol,
        timestamp: undefined,
        datetime: undefined,
        high: priceOrNone(this.safeString(record, "maxValue")),
        low: priceOrNone(this.safeString(record, "minValue")),
        bid,
        bidVolume: undefined,
        ask,
        askVolume: undefined,
        vwap: undefined,
        open: priceOrNone(this.safeString(record, "openValue")),
        close: priceOrNone(this.safeString(record, "closeValue")),
        last: priceOrNone(this.safeString(record, "closeValue")),
        previousClose: undefined,
        change: undefined,
        percentage: undefined,
        average: undefined,
        baseVolume: this.safeString(record, "volume"),
        quoteVolume: undefined,
        info: record,
      },
      market,
    );
  }

  /** docs/API.md 7.6 and 20.2: the book, its `seq` as ccxt's nonce and its `time` as the timestamp. */
  override async fetchOrderBook(
    symbol: string,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<OrderBook> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { pairName: market.id };
    if (limit !== undefined) request.limit = Math.min(limit, 1000);
    const response = await this.request(
      "trade/pairs/{pairName}/orders",
      "public",
      "GET",
      this.extend(request, params),
    );
    const time = this.safeInteger(response, "time");
    const book = this.parseOrderBook(
      response,
      market.symbol,
      time === 0 ? undefined : time,
      "buy",
      "sell",
      "price",
      "amount",
    );
    book.nonce = this.safeInteger(response, "seq");
    return book;
  }

  /**
   * docs/API.md 7.7 and 20.3: with `since`, the trades at or after it, oldest first; without, the
   * newest. `params.fromId` reads from a trade id.
   */
  override async fetchTrades(
    symbol: string,
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { pairName: market.id };
    if (since !== undefined) request.since = since;
    if (limit !== undefined) request.limit = Math.min(limit, 1000);
    const response = (await this.request(
      "trade/pairs/{pairName}/history",
      "public",
      "GET",
      this.extend(request, params),
    )) as Dict[];
    return this.parseTrades(response, market, since, limit);
  }

  /** docs/API.md 7.5: candles `[time, open, min, max, close, volume]` become ccxt's OHLCV. */
  override async fetchOHLCV(
    symbol: string,
    timeframe: string = "1m",
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<OHLCV[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { pairName: market.id, period: timeframe };
    if (limit !== undefined) request.limit = Math.min(limit, 1000);
    if (since !== undefined) {
      request.from = since;
      // A range answers its newest `limit` candles (7.5): bound it so they are the first from `since`.
      if (limit !== undefined) request.to = since + limit * this.parseTimeframe(timeframe) * 1000 - 1;
    }
    const response = (await this.request(
      "trade/pairs/{pairName}/chart/{period}",
      "public",
      "GET",
      this.extend(request, params),
    )) as object[];
    return this.parseOHLCVs(response, market, timeframe, since, limit);
  }

  override parseOHLCV(candle: unknown, _market: Market = undefined): OHLCV {
    const c = candle as unknown[];
    return [
      this.safeInteger(c, 0),
      this.safeNumber(c, 1),
      this.safeNumber(c, 3),
      this.safeNumber(c, 2),
      this.safeNumber(c, 4),
      this.safeNumber(c, 5),
    ];
  }

  // ---- the caller's data (docs/API.md 7.8-7.10, 8.6, 20.4) ------------------------------------------

  /** docs/API.md 20.4: every currency's available (`free`) and reserved (`used`) balance. */
  override async fetchBalance(params: Dict = {}): Promise<Balances> {
    await this.loadMarkets();
    const response = await this.request("trade/account", "private", "GET", params);
    return this.parseBalance(response);
  }

  override parseBalance(response: Dict): Balances {
    this.accountUidRead = this.safeString(response, "uid") ?? this.accountUidRead;
    const result = Object.create(null) as Dict;
    result.info = response;
    for (const b of this.safeList(response, "balances", []) ?? []) {
      const account = this.account();
      account.free = this.safeString(b as Dict, "balance");
      account.used = this.safeString(b as Dict, "reserved");
      const code = this.safeCurrencyCode(this.safeString(b as Dict, "currency"));
      if (code !== undefined) result[code] = account;
    }
    return this.safeBalance(result);
  }

  /**
   * docs/API.md 7.1 and 8.2: `limit` or `market`; `params.clientOrderId`, `params.timeInForce`
   * (`GTC`, `IOC`, `FOK`; `PO` is post-only) and `params.postOnly`; other params go into the body
   * as they are (`selfTradePrevention`, `mmp`, `expiresAt`).
   */
  override async createOrder(
    symbol: string,
    type: OrderType,
    side: OrderSide,
    amount: number,
    price: Num = undefined,
    params: Dict = {},
  ): Promise<Order> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const isMarket = type === "market";
    const timeInForce = this.safeStringUpper(params, "timeInForce");
    const [postOnly, rest] = this.handlePostOnly(isMarket, timeInForce === "PO", params) as [boolean, Dict];
    const request: Dict = {
      pairName: market.id,
      tradeType: type,
      directionType: side,
      amount: this.amountToPrecision(market.symbol, amount),
    };
    if (!isMarket) {
      if (price === undefined)
        throw new ccxt.ArgumentsRequired(`${this.id} createOrder() needs a price for a limit order`);
      request.price = this.priceToPrecision(market.symbol, price);
    }
    const clientOrderId = this.safeString(rest, "clientOrderId");
    if (clientOrderId !== undefined) request.clientOrderId = clientOrderId;
    if (timeInForce !== undefined && timeInForce !== "PO") request.timeInForce = timeInForce;
    if (postOnly) request.postOnly = true;
    const response = await this.request(
      "trade/create-order",
      "private",
      "POST",
      this.extend(request, this.omit(rest, ["clientOrderId", "timeInForce", "postOnly"])),
    );
    return this.parseOrder(response, market);
  }

  /** docs/API.md 7.2; answers the order as the server now has it (8.6). */
  override async cancelOrder(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    await this.request(
      "trade/cancel-order",
      "private",
      "POST",
      this.extend({ orderId: orderIdOf(id) }, params),
    );
    return this.fetchOrder(id, symbol);
  }

  /** docs/API.md 8.4: every open order of the pair (or of every pair), as canceled orders. */
  override async cancelAllOrders(symbol: Str = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const request: Dict = market === undefined ? {} : { pairName: market.id };
    const response = await this.request(
      "trade/cancel-all-orders",
      "private",
      "POST",
      this.extend(request, params),
    );
    return (this.safeList(response, "cancelled", []) ?? []).map((id) =>
      this.safeOrder(
        { id: String(id), symbol: market?.symbol, status: "canceled", info: { orderId: id } },
        market,
      ),
    );
  }

  /** docs/API.md 8.6: by id, or by `params.clientOrderId`. */
  override async fetchOrder(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const clientOrderId = this.safeString(params, "clientOrderId");
    const response =
      clientOrderId !== undefined
        ? await this.request("trade/orders", "private", "GET", params)
        : await this.request(
            "trade/orders/{orderId}",
            "private",
            "GET",
            this.extend({ orderId: orderIdOf(id) }, params),
          );
    return this.parseOrder(response, market);
  }

  /** docs/API.md 8.6: the pair's open orders (without a symbol, every pair's). */
  override async fetchOpenOrders(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<Order[]> {
    await this.loadMarkets();
    const markets = symbol === undefined ? Object.values(this.markets ?? {}) : [this.market(symbol)];
    const orders: Order[] = [];
    for (const market of markets) {
      const response = (await this.request(
        "trade/pairs/{pairName}/open-orders",
        "private",
        "GET",
        this.extend({ pairName: market.id }, params),
      )) as Dict[];
      for (const o of response) orders.push(this.parseOrder(o, market));
    }
    return this.filterBySymbolSinceLimit(byId(orders), symbol, since, limit, since === undefined) as Order[];
  }

  /** docs/API.md 7.9 and 20.3: the caller's orders that are filled or canceled. */
  override async fetchClosedOrders(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<Order[]> {
    return this.readOrders(symbol, since, limit, params, (o) => o.status !== "open");
  }

  /** docs/API.md 7.9 and 20.3: the caller's orders, open and closed. */
  override async fetchOrders(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<Order[]> {
    return this.readOrders(symbol, since, limit, params, () => true);
  }

  /**
   * Pages of user-orders (docs/API.md 7.9, 20.3): from `since` oldest first, else newest first,
   * until `limit` orders (default one page's worth) pass `keep` or the pages end.
   */
  private async readOrders(
    symbol: Str,
    since: Int,
    limit: Int,
    params: Dict,
    keep: (order: Order) => boolean,
  ): Promise<Order[]> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const want = limit ?? PAGE_SIZE;
    const found: Order[] = [];
    for (let page = 1; found.length < want; page++) {
      const request: Dict = { pathPair: market?.id ?? this.ids?.[0], page, pageSize: PAGE_SIZE };
      if (market !== undefined) request.pairName = market.id;
      if (since !== undefined) request.since = since;
      const response = await this.request(
        "trade/pairs/{pathPair}/user-orders",
        "private",
        "GET",
        this.extend(request, params),
      );
      const items = (this.safeList(response, "items", []) ?? []) as Dict[];
      for (const item of items) {
        const order = this.parseOrder(item);
        if (keep(order) && found.length < want) found.push(order);
      }
      if (items.length < PAGE_SIZE) break;
    }
    return this.filterBySymbolSinceLimit(byId(found), symbol, since, limit, since === undefined) as Order[];
  }

  /**
   * docs/API.md 7.10 and 20.3: the caller's trades, each with its order (`order`), maker or taker and
   * fee; from `since` oldest first, else the newest `limit` (default 100).
   */
  override async fetchMyTrades(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    params: Dict = {},
  ): Promise<Trade[]> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const want = limit ?? PAGE_SIZE;
    const found: Trade[] = [];
    for (let page = 1; found.length < want; page++) {
      const request: Dict = { page, pageSize: Math.min(PAGE_SIZE, want) };
      if (market !== undefined) request.pairName = market.id;
      if (since !== undefined) request.since = since;
      const response = await this.request(
        "trade/pairs/user-history",
        "private",
        "GET",
        this.extend(request, params),
      );
      const items = (this.safeList(response, "items", []) ?? []) as Dict[];
      for (const item of items) if (found.length < want) found.push(this.parseTrade(item));
      if (items.length < Math.min(PAGE_SIZE, want)) break;
    }
    return this.filterBySymbolSinceLimit(byId(found), symbol, since, limit, since === undefined) as Trade[];
  }

  // ---- records (docs/API.md 5) ----------------------------------------------------------------------

  /**
   * docs/API.md 5.1: `open` until `amountUsed` reaches `amount`, then `closed`; `canceled` when
   * cancelled. `cost` is `executedQuote`, `average` `executedQuote / amountUsed`, both from the exact
   * texts.
   */
  override parseOrder(order: Dict, market: Market = undefined): Order {
    market = this.safeMarket(this.safeString(order, "pairName"), market);
    const amount = this.safeString(order, "amount");
    const filled = this.safeString(order, "amountUsed", "0");
    const cost = this.safeString(order, "executedQuote", "0");
    const type = this.safeString(order, "tradeType");
    let status = "open";
    if (this.safeBool(order, "isCancelled") === true) status = "canceled";
    else if (amount !== undefined && Precise.stringEq(filled, amount)) status = "closed";
    // Sixty decimals: the double nearest the quotient is the double nearest the exact ratio.
    const average = Precise.stringGt(filled, "0") ? Precise.stringDiv(cost, filled, 60) : undefined;
    const timestamp = msOfDatetime(this.safeString(order, "createTime"));
    return this.safeOrder(
      {
        info: order,
        id: this.safeString(order, "id"),
        clientOrderId: this.safeString(order, "clientOrderId"),
        timestamp,
        datetime: this.iso8601(timestamp),
        lastTradeTimestamp: undefined,
        lastUpdateTimestamp: msOfDatetime(this.safeString(order, "updateTime")),
        status,
        symbol: market.symbol,
        type,
        timeInForce: this.safeString(order, "timeInForce", type === "market" ? "IOC" : "GTC"),
        postOnly: this.safeBool(order, "postOnly", false),
        side: this.safeString(order, "directionType"),
        price: this.safeString(order, "price"),
        triggerPrice: undefined,
        amount,
        filled,
        remaining: amount === undefined ? undefined : Precise.stringSub(amount, filled),
        cost,
        average,
        trades: undefined,
        fee: undefined,
      },
      market,
    );
  }

  /**
   * A public trade (docs/API.md 5.4: the taker's side, time in µs) or a user trade (5.5: the
   * caller's side, order, liquidity and fee).
   */
  override parseTrade(trade: Dict, market: Market = undefined): Trade {
    market = this.safeMarket(this.safeString(trade, "pairName"), market);
    const price = this.safeString(trade, "price");
    const amount = this.safeString(trade, "amount");
    const orderId = this.safeString(trade, "orderId");
    const micro = msOfMicro(this.safeString(trade, "eventTimeMicro"));
    const timestamp = micro ?? msOfDatetime(this.safeString(trade, "tradeTime"));
    const feeCost = this.safeString(trade, "fee");
    const feeCurrency = this.safeString(trade, "feeCurrency");
    return this.safeTrade(
      {
        info: trade,
        id: this.safeString(trade, "id"),
        order: orderId,
        timestamp,
        datetime: this.iso8601(timestamp),
        symbol: market.symbol,
        type: this.safeString(trade, "tradeType"),
        side: this.safeString(trade, "directionType"),
        takerOrMaker: this.safeString(trade, "liquidity", orderId === undefined ? "taker" : undefined),
        price,
        amount,
        cost: price !== undefined && amount !== undefined ? Precise.stringMul(price, amount) : undefined,
        fee:
          feeCost === undefined
            ? undefined
            : {
                cost: feeCost,
                currency: feeCurrency === undefined ? undefined : this.safeCurrencyCode(feeCurrency),
              },
      },
      market,
    );
  }

  // ---- the stream (docs/API.md 12) ----------------------------------------------------------------

  /** The caller's uid (docs/API.md 20.4), which names its user channels. */
  private async accountUid(): Promise<string> {
    if (this.accountUidRead === undefined) {
      const response = await this.request("trade/account", "private", "GET", {});
      this.accountUidRead = this.safeString(response, "uid");
    }
    if (this.accountUidRead === undefined)
      throw new ccxt.BadResponse(`${this.id} GET /trade/account named no uid`);
    return this.accountUidRead;
  }

  /**
   * The stream URL of one channel: the subscriptions are fixed at connect time (docs/API.md 12.1).
   * ccxt dials a plain `ws://` address only through an http agent of its own, loaded here once.
   */
  private async streamUrl(channel: string): Promise<string> {
    const base = this.streamBase();
    if (base.startsWith("ws://")) await this.loadHttpProxyAgent();
    return `${base}?streams=${channel}`;
  }

  /**
   * ccxt's client for a stream URL, set up once: a user channel's upgrade is signed at every
   * (re)connect, as a GET of the raw query (docs/API.md 12.1), and messages keep their numbers as
   * decimal text like the REST answers.
   */
  override client(url: string): ReturnType<InstanceType<typeof ccxt.Exchange>["client"]> {
    const client = super.client(url);
    const conn = client as unknown as StreamConnection;
    if (!this.prepared.has(conn)) {
      this.prepared.add(conn);
      const parsed = new URL(url);
      const query = parsed.search.slice(1);
      if (query.includes("user_")) {
        const create = conn.createConnection.bind(conn);
        conn.createConnection = () => {
          conn.options.headers = this.signedHeaders("GET", parsed.pathname, query);
          create();
        };
      }
      const onMessage = conn.onMessage.bind(conn);
      conn.onMessage = (event) => {
        const data = event.data;
        const text =
          typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8") : undefined;
        onMessage({ data: text === undefined ? data : this.onJsonResponse(text) });
      };
    }
    return client;
  }

  override handleMessage(client: unknown, message: unknown): void {
    const stream = this.safeString(message as Dict, "stream") ?? "";
    const data = this.safeValue(message as Dict, "data");
    const colon = stream.indexOf(":");
    const kind = colon < 0 ? stream : stream.slice(0, colon);
    const name = colon < 0 ? "" : stream.slice(colon + 1);
    const conn = client as StreamConnection;
    if (kind === "orders") this.handleBook(conn, name, data as Dict);
    else if (kind === "history") {
      const market = this.safeMarket(name);
      this.handleItems(conn, `trades:${market.symbol}`, data, (t) => this.parseTrade(t, market));
    } else if (kind === "user_orders") this.handleItems(conn, "orders", [data], (o) => this.parseOrder(o));
    else if (kind === "user_history") this.handleItems(conn, "myTrades", [data], (t) => this.parseTrade(t));
  }

  /** Parses a message's items, keeps them until a watch call takes them and wakes the waiting one. */
  private handleItems(
    client: StreamConnection,
    hash: string,
    data: unknown,
    parse: (item: Dict) => Trade | Order,
  ): void {
    const list = this.unread.get(hash) ?? [];
    for (const item of Array.isArray(data) ? data : []) list.push(parse(item as Dict));
    // Bounded like ccxt's caches: a bot that stops watching keeps the newest only.
    const most =
      this.safeInteger(this.options, hash === "orders" ? "ordersLimit" : "tradesLimit", 1000) ?? 1000;
    if (list.length > most) list.splice(0, list.length - most);
    this.unread.set(hash, list);
    client.resolve(list, hash);
  }

  /**
   * docs/API.md 12.2-12.5: the first message of a connection is the whole book, each later one the
   * changed levels (amount 0: gone) with the next `seq`. A skipped `seq` or a book that does not
   * give the message's checksum drops the connection: the next watch call starts from a snapshot.
   */
  private handleBook(client: StreamConnection, marketId: string, data: Dict): void {
    const symbol = this.safeSymbol(marketId);
    const hash = `orderbook:${symbol}`;
    const seq = this.safeInteger(data, "seq");
    const bids = this.safeList(data, "buy", []) as Dict[];
    const asks = this.safeList(data, "sell", []) as Dict[];
    // Every level of one message carries the same stream time (docs/API.md 12.4).
    const first = bids[0] ?? asks[0];
    const timestamp = first === undefined ? undefined : msOfMicro(this.safeString(first, "eventTimeMicro"));
    let live = this.books.get(symbol);
    if (live === undefined || live.client !== client) {
      live = { client, book: this.orderBook({ symbol }) };
      this.books.set(symbol, live);
    } else if (seq !== undefined && live.book.nonce !== undefined && seq !== live.book.nonce + 1) {
      if (seq <= live.book.nonce) return;
      this.dropBook(
        client,
        symbol,
        new ccxt.InvalidNonce(`${this.id} ${symbol} book seq ${live.book.nonce} then ${seq}`),
      );
      return;
    }
    const book = live.book;
    for (const l of bids) book.bids.store(this.safeNumber(l, "price"), this.safeNumber(l, "amount"));
    for (const l of asks) book.asks.store(this.safeNumber(l, "price"), this.safeNumber(l, "amount"));
    book.nonce = seq;
    if (timestamp !== undefined) {
      book.timestamp = timestamp;
      book.datetime = this.iso8601(timestamp);
    }
    const checksum = this.safeInteger(data, "checksum");
    if (this.safeBool(this.options, "checksum", true) === true && checksum !== undefined) {
      const side = (levels: unknown[]) => levels.slice(0, CHECKSUM_LEVELS) as [number, number][];
      if (bookChecksum(side(book.asks), side(book.bids)) !== checksum) {
        this.dropBook(client, symbol, new ccxt.ChecksumError(`${this.id} ${symbol} book checksum mismatch`));
        return;
      }
    }
    client.resolve(book, hash);
  }

  private dropBook(client: StreamConnection, symbol: string, error: Error): void {
    this.books.delete(symbol);
    client.reject(error, `orderbook:${symbol}`);
    void client.close();
  }

  /** Takes what arrived for `hash` since the last call, after waiting for news if there is none. */
  private async watchItems<T extends Trade | Order>(
    url: string,
    hash: string,
    symbol: Str,
    since: Int,
    limit: Int,
  ): Promise<T[]> {
    for (;;) {
      const pending = this.unread.get(hash);
      if (pending === undefined || pending.length === 0) await this.watch(url, hash, undefined, hash);
      const items = this.unread.get(hash) ?? [];
      this.unread.set(hash, []);
      const kept = this.filterBySymbolSinceLimit(items, symbol, since, limit, true) as T[];
      if (kept.length > 0) return kept;
    }
  }

  /** docs/API.md 12.2 `orders:{pair}`: the live book, its `seq` as the nonce. */
  override async watchOrderBook(
    symbol: string,
    _limit: Int = undefined,
    _params: Dict = {},
  ): Promise<OrderBook> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const hash = `orderbook:${market.symbol}`;
    const book = await this.watch(await this.streamUrl(`orders:${market.id}`), hash, undefined, hash);
    return (book as { limit: () => OrderBook }).limit();
  }

  /** docs/API.md 12.2 `history:{pair}`: the pair's new trades since the last call. */
  override async watchTrades(
    symbol: string,
    since: Int = undefined,
    limit: Int = undefined,
    _params: Dict = {},
  ): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    return this.watchItems<Trade>(
      await this.streamUrl(`history:${market.id}`),
      `trades:${market.symbol}`,
      market.symbol,
      since,
      limit,
    );
  }

  /** docs/API.md 12.2 `user_orders:{uid}`: the caller's orders after each change, since the last call. */
  override async watchOrders(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    _params: Dict = {},
  ): Promise<Order[]> {
    await this.loadMarkets();
    const uid = await this.accountUid();
    return this.watchItems<Order>(await this.streamUrl(`user_orders:${uid}`), "orders", symbol, since, limit);
  }

  /** docs/API.md 12.2 `user_history:{uid}`: the caller's new trades, with their orders. */
  override async watchMyTrades(
    symbol: Str = undefined,
    since: Int = undefined,
    limit: Int = undefined,
    _params: Dict = {},
  ): Promise<Trade[]> {
    await this.loadMarkets();
    const uid = await this.accountUid();
    return this.watchItems<Trade>(
      await this.streamUrl(`user_history:${uid}`),
      "myTrades",
      symbol,
      since,
      limit,
    );
  }
}

/**
 * An order id as the path and the body take it (docs/API.md 1: a positive integer, here its digits):
 * anything else would change the path it is written into.
 */
function orderIdOf(id: string): string {
  if (typeof id !== "string" || !/^[0-9]{1,16}$/.test(id))
    throw new ccxt.OrderNotFound(`exchange has no order ${String(id)}`);
  return id;
}

/** Records in id order (ids grow in creation order, docs/API.md 1), for ccxt's since/limit filters. */
function byId<T extends { id?: Str }>(items: T[]): T[] {
  return [...items].sort((a, b) => Number(a.id) - Number(b.id));
}
