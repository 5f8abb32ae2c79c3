/**
 * One JSON schema per response body, compiled once at start by fast-json-stringify (a serializer made
 * for the body's shape, faster than JSON.stringify). The same schemas describe the wire format of the
 * interface (docs/API.md 5) and feed the OpenAPI document.
 */
import fastJson from "fast-json-stringify";

/** Compiles a schema written as a plain object (the literal types of `as const` are not needed). */
function compile(schema: object): (doc: unknown) => string {
  return fastJson(schema as Parameters<typeof fastJson>[0]) as (doc: unknown) => string;
}

/**
 * The properties whose numbers are exact decimals that may have more significant digits than a
 * double keeps: a user trade's `fee` (docs/API.md 5.5) and an order's `executedQuote` (5.1).
 * fast-json-stringify prints numbers as doubles, so these are serialised as their decimal text in
 * a string and the quotes are taken off after: `"fee":"0.000000000012345678"` becomes
 * `"fee":0.000000000012345678`. Only our texts can match `"fee":"` or `"executedQuote":"`: every
 * other string in a body is JSON-escaped (a quote inside it is `\"`) or one of the server's own
 * words (`word`, which holds no quote). A body that is one order, whose last member is
 * `executedQuote`, gets it appended instead (`lastExactProperty`).
 */
const EXACT_NUMBERS = ["fee", "executedQuote"] as const;

/** A serializer for a body that holds exact numbers (EXACT_NUMBERS). */
function compileExact(schema: object): (doc: unknown) => string {
  const last = lastExactProperty(schema);
  if (last !== null) {
    // One order (the create-order answer, a report's data): the object's last member is written
    // after the rest, with no scan of the body.
    const f = compile(withoutProperty(schema, last));
    const member = `,"${last}":`;
    return (doc) => {
      const json = f(doc);
      return `${json.slice(0, -1)}${member}${(doc as Record<string, string>)[last]}}`;
    };
  }
  const f = compile(exactAsText(schema) as object);
  const keys = EXACT_NUMBERS.filter((k) => JSON.stringify(schema).includes(`"${k}":`)).map((k) => `"${k}":"`);
  if (keys.length === 1) {
    const key = keys[0];
    return (doc) => unquote(f(doc), key);
  }
  return (doc) => {
    let json = f(doc);
    for (const key of keys) json = unquote(json, key);
    return json;
  };
}

/**
 * `json` with the quotes around the value of each `key` (`"name":"`) taken off: a scan by
 * `indexOf`, cheaper than a regular expression on the create-order answer.
 */
function unquote(json: string, key: string): string {
  let at = json.indexOf(key);
  if (at === -1) return json;
  let out = "";
  let from = 0;
  while (at !== -1) {
    const open = at + key.length - 1;
    const close = json.indexOf('"', open + 1);
    out += json.slice(from, open) + json.slice(open + 1, close);
    from = close + 1;
    at = json.indexOf(key, from);
  }
  return out + json.slice(from);
}

/**
 * The exact number that is the last property of `schema`, an object with no other exact number
 * (its value is then always written last: fast-json-stringify keeps the schema's order, and it is
 * required); null for any other body.
 */
function lastExactProperty(schema: object): string | null {
  const props = (schema as { properties?: Record<string, unknown> }).properties;
  const required = (schema as { required?: readonly string[] }).required ?? [];
  if (props === undefined) return null;
  const names = Object.keys(props);
  const last = names[names.length - 1];
  const exact = (k: string) => (EXACT_NUMBERS as readonly string[]).includes(k);
  if (!exact(last) || !required.includes(last)) return null;
  const rest = JSON.stringify(names.slice(0, -1).map((k) => props[k]));
  if (names.slice(0, -1).some(exact) || EXACT_NUMBERS.some((k) => rest.includes(`"${k}":`))) return null;
  return last;
}

/** A copy of the object schema `schema` without property `name`. */
function withoutProperty(schema: object, name: string): object {
  const s = schema as { properties: Record<string, unknown>; required: readonly string[] };
  const { [name]: _, ...properties } = s.properties;
  return { ...schema, properties, required: s.required.filter((r) => r !== name) };
}

/** A copy of `schema` in which every property of EXACT_NUMBERS is a string. */
function exactAsText(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(exactAsText);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = exactAsText(v);
  const props = out.properties as Record<string, unknown> | undefined;
  if (props !== undefined)
    for (const k of EXACT_NUMBERS) if (k in props) props[k] = { type: "string", format: "unsafe" };
  return out;
}

const num = { type: "number" } as const;
const int = { type: "integer" } as const;
const str = { type: "string" } as const;
const bool = { type: "boolean" } as const;
/**
 * A string the server composes from characters that never need JSON escaping: pair and currency
 * names (`[a-z0-9_]`, checked when the config loads), the interface's fixed words (limit, market,
 * buy, sell), `YYYY-MM-DD HH:MM:SS` times and integers written as text. fast-json-stringify writes
 * it between quotes as it is (its "unsafe" format) instead of scanning it for characters to escape:
 * an order body in 124 instead of 210 ns (`npx tsx bench/http/serialize.bench.ts`). Text a client
 * chose (clientOrderId, a stream name) stays `str`. openapi.ts leaves the format out of the document.
 */
const word = { type: "string", format: "unsafe" } as const;

const orderProps = {
  id: int,
  pairName: word,
  tradeType: word,
  directionType: word,
  price: num,
  amount: num,
  amountUsed: num,
  isCancelled: bool,
  createTime: word,
};
const orderRequired = Object.keys(orderProps);
/** docs/API.md 5.1: the exact quote amount the order's fills executed, fees excluded. */
const executedQuote = {
  type: "number",
  minimum: 0,
  description:
    "The quote amount the order's fills executed so far: the sum of price x amount over its trades, " +
    "fees excluded, exact (0 before any fill). The average price is executedQuote / amountUsed.",
} as const;
/** docs/API.md 5.1: present only when the order has them (src/core/order-options.ts). */
const orderOptionProps = {
  clientOrderId: str,
  timeInForce: { type: "string", enum: ["GTC", "IOC", "FOK"] },
  postOnly: bool,
  cancelOnDisconnect: bool,
  /** docs/API.md 8.10: a protected order. */
  mmp: bool,
  /** docs/API.md 8.11: present when not cancelMaker. */
  selfTradePrevention: { type: "string", enum: ["cancelTaker", "cancelBoth"] },
  /** docs/API.md 8.12: a quote order (always with postOnly and mmp). */
  quote: bool,
} as const;

/**
 * docs/API.md 18: present only on a stop order (`triggerTime` once triggered, `cancelReason` when
 * ended so) or an OCO leg (`ocoId`; `cancelReason` "OCO" when its sibling cancelled it).
 */
const stopProps = {
  stopPrice: num,
  /** A trailing stop's delta; its stopPrice is absent until the pair's first trade. */
  trailingDelta: num,
  stopDirection: { type: "string", enum: ["up", "down"] },
  triggered: bool,
  triggerTime: word,
  cancelReason: { type: "string", enum: ["NO_LIQUIDITY", "INSUFFICIENT_FUNDS", "NOTIONAL_BELOW_MIN", "OCO"] },
  /** docs/API.md 18: an OCO leg's OCO id, the id of its limit leg. */
  ocoId: int,
} as const;

/** docs/API.md 5.1 Order, with updateTime (create-order response). */
export const orderWithUpdateSchema = {
  type: "object",
  properties: {
    ...orderProps,
    updateTime: word,
    ...orderOptionProps,
    ...stopProps,
    execSeq: int,
    executedQuote,
  },
  required: [...orderRequired, "updateTime", "execSeq", "executedQuote"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.1 Order without updateTime (lists, pages, stream). */
export const orderSchema = {
  type: "object",
  properties: { ...orderProps, ...orderOptionProps, ...stopProps, execSeq: int, executedQuote },
  required: [...orderRequired, "execSeq", "executedQuote"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.5 User history item. */
export const userTradeSchema = {
  type: "object",
  properties: {
    id: int,
    pairName: word,
    tradeType: word,
    directionType: word,
    price: num,
    amount: num,
    tradeTime: word,
    fee: num,
    feeCurrency: word,
    /** docs/API.md 16: the trade's number in this user's execution sequence. */
    execSeq: int,
    /** docs/API.md 20: this user's order in the trade. */
    orderId: int,
    /** docs/API.md 20: this user's side was the resting (maker) or the incoming (taker) order. */
    liquidity: { type: "string", enum: ["maker", "taker"] },
  },
  required: [
    "id",
    "pairName",
    "tradeType",
    "directionType",
    "price",
    "amount",
    "tradeTime",
    "fee",
    "feeCurrency",
    "execSeq",
    "orderId",
    "liquidity",
  ],
  additionalProperties: false,
} as const;

const exchangeProps = {
  pairName: word,
  openValue: num,
  minValue: num,
  maxValue: num,
  closeValue: num,
  volume: num,
};

/** docs/API.md 5.2 Pair exchange record (pair page, without bid/ask). */
export const exchangeSchema = {
  type: "object",
  properties: exchangeProps,
  required: Object.keys(exchangeProps),
  additionalProperties: false,
} as const;

/** docs/API.md 5.2 with closeBidValue / closeAskValue (pairs list). */
export const pairRecordSchema = {
  type: "object",
  properties: { ...exchangeProps, closeBidValue: num, closeAskValue: num },
  required: [...Object.keys(exchangeProps), "closeBidValue", "closeAskValue"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.2 in the `exchanges` stream channel. */
export const exchangeStreamSchema = {
  type: "object",
  properties: { ...exchangeProps, eventTimeMicro: word },
  required: [...Object.keys(exchangeProps), "eventTimeMicro"],
  additionalProperties: false,
} as const;

const levelSchema = {
  type: "object",
  properties: { price: num, amount: num },
  required: ["price", "amount"],
  additionalProperties: false,
} as const;

/** docs/API.md 12.5: CRC-32 of the best 25 levels of each side (0..4294967295). */
const checksum = { type: "integer", minimum: 0, maximum: 4294967295 } as const;

/**
 * Aggregated order book `{buy, sell, seq, checksum, time}` (docs/API.md 5.3; `seq`: 12.3; `checksum`:
 * 12.5; `time`: 20.2, Unix ms of the change `seq`, 0 for a book that never changed).
 */
export const bookSchema = {
  type: "object",
  properties: {
    buy: { type: "array", items: levelSchema },
    sell: { type: "array", items: levelSchema },
    seq: int,
    checksum,
    time: int,
  },
  required: ["buy", "sell", "seq", "checksum", "time"],
  additionalProperties: false,
} as const;

/** docs/API.md 7.6.1 best bid and offer: 0 for an empty side; `eventTimeMicro` "0" for an unchanged book. */
export const bboSchema = {
  type: "object",
  properties: {
    bid: num,
    bidAmount: num,
    ask: num,
    askAmount: num,
    seq: int,
    eventTimeMicro: word,
  },
  required: ["bid", "bidAmount", "ask", "askAmount", "seq", "eventTimeMicro"],
  additionalProperties: false,
} as const;

/** docs/API.md 7.6.2 one resting order of the L3 book (no owner). */
const l3OrderSchema = {
  type: "object",
  properties: { id: int, price: num, amount: num },
  required: ["id", "price", "amount"],
  additionalProperties: false,
} as const;

/** docs/API.md 7.6.2 the L3 book: sides in price then time priority. */
export const l3BookSchema = {
  type: "object",
  properties: {
    seq: int,
    buy: { type: "array", items: l3OrderSchema },
    sell: { type: "array", items: l3OrderSchema },
  },
  required: ["seq", "buy", "sell"],
  additionalProperties: false,
} as const;

/** docs/API.md 12.5 one L3 event. */
const l3EventSchema = {
  type: "object",
  properties: {
    type: { type: "string", enum: ["open", "change", "done"] },
    id: int,
    side: { type: "string", enum: ["buy", "sell"] },
    price: num,
    amount: num,
  },
  required: ["type", "id", "side", "price", "amount"],
  additionalProperties: false,
} as const;

/** docs/API.md 12.5 `orders_l3:{pair}` after the snapshot: one book change's events, in order. */
export const l3ChangeSchema = {
  type: "object",
  properties: { seq: int, events: { type: "array", items: l3EventSchema } },
  required: ["seq", "events"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.4 Pair trade history item. */
export const publicTradeSchema = {
  type: "object",
  properties: {
    /** docs/API.md 20: the trade id. */
    id: int,
    directionType: word,
    tradeType: word,
    price: num,
    amount: num,
    tradeTime: int,
    eventTimeMicro: word,
  },
  required: ["id", "directionType", "tradeType", "price", "amount", "tradeTime", "eventTimeMicro"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.6 Balance item, with `reserved`. */
export const balanceSchema = {
  type: "object",
  properties: { currency: str, balance: str, reserved: str },
  required: ["currency", "balance", "reserved"],
  additionalProperties: false,
} as const;

function page(items: object) {
  return {
    type: "object",
    properties: { total: int, items: { type: "array", items } },
    required: ["total", "items"],
    additionalProperties: false,
  } as const;
}

/** docs/API.md 7.4 Pair page. */
export const pairPageSchema = {
  type: "object",
  properties: {
    exchanges: { type: "array", items: exchangeSchema },
    orders: bookSchema,
    history: { type: "array", items: publicTradeSchema },
    userOrders: { type: ["array", "null"], items: orderSchema },
    userHistory: { type: ["array", "null"], items: userTradeSchema },
  },
  required: ["exchanges", "orders", "history", "userOrders", "userHistory"],
  additionalProperties: false,
} as const;

/** docs/API.md 5.3 level in the `orders:{pair}` stream channel: with its eventTimeMicro. */
const streamLevelSchema = {
  type: "object",
  properties: { price: num, amount: num, eventTimeMicro: word },
  required: ["price", "amount", "eventTimeMicro"],
  additionalProperties: false,
} as const;

/**
 * `orders:{pair}` data: a snapshot or the changed levels of each side, the book `seq` and the
 * checksum of the whole book after it (docs/API.md 12.5).
 */
const streamBookSchema = {
  type: "object",
  properties: {
    buy: { type: "array", items: streamLevelSchema },
    sell: { type: "array", items: streamLevelSchema },
    seq: int,
    checksum,
  },
  required: ["buy", "sell", "seq", "checksum"],
  additionalProperties: false,
} as const;

/** A stream message: `{"stream": <channel as subscribed>, "data": ...}`. */
function envelope(data: object) {
  return {
    type: "object",
    properties: { stream: str, data },
    required: ["stream", "data"],
    additionalProperties: false,
  } as const;
}

/**
 * A stream message of the user's executions (`user_orders`, `user_history`, docs/API.md 16):
 * `{"stream", "data", "execSeq"}`, the number of the change or the trade side it reports.
 */
function numberedEnvelope(data: object) {
  return {
    type: "object",
    properties: { stream: str, data, execSeq: int },
    required: ["stream", "data", "execSeq"],
    additionalProperties: false,
  } as const;
}

/** An item of a user's executions (docs/API.md 16): an order at its latest change, or a trade side. */
export const executionSchema = {
  oneOf: [
    {
      type: "object",
      properties: { execSeq: int, event: { const: "order" }, data: orderSchema },
      required: ["execSeq", "event", "data"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { execSeq: int, event: { const: "trade" }, data: userTradeSchema },
      required: ["execSeq", "event", "data"],
      additionalProperties: false,
    },
  ],
} as const;

/** GET /trade/executions, the session call `executions` (docs/API.md 16). */
export const executionsSchema = {
  type: "object",
  properties: {
    items: { type: "array", items: executionSchema },
    /** The user's last committed execution number when the read was cut. */
    lastExecSeq: int,
    execEpoch: int,
  },
  required: ["items", "lastExecSeq", "execEpoch"],
  additionalProperties: false,
} as const;

/** Array and page bodies (named so the OpenAPI document refers to the objects compiled here). */
export const pairsSchema = { type: "array", items: pairRecordSchema } as const;
export const historySchema = { type: "array", items: publicTradeSchema } as const;
/** docs/API.md 5.7 candles: [timestamp ms, open, min, max, close, volume]. */
export const chartSchema = { type: "array", items: { type: "array", items: num } } as const;
export const balancesSchema = { type: "array", items: balanceSchema } as const;
export const ordersPageSchema = page(orderSchema);
/** docs/API.md 8.6 open orders. */
export const orderListSchema = { type: "array", items: orderSchema } as const;
/** docs/API.md 8.4 answer. */
export const cancelledSchema = {
  type: "object",
  properties: { cancelled: { type: "array", items: int } },
  required: ["cancelled"],
} as const;
/** docs/API.md 8.12 answer: `placed[i]` is the order or `{errors, codes}` for level i (bids then asks). */
export const quoteResultSchema = {
  type: "object",
  properties: {
    cancelled: { type: "array", items: int },
    placed: {
      type: "array",
      items: {
        anyOf: [
          orderWithUpdateSchema,
          {
            type: "object",
            properties: { errors: { type: "object" }, codes: { type: "object" } },
            required: ["errors", "codes"],
          },
        ],
      },
    },
  },
  required: ["cancelled", "placed"],
  additionalProperties: false,
} as const;
/** docs/API.md 18 create-oco answer: the OCO's id and its legs, limit leg first. */
export const ocoResultSchema = {
  type: "object",
  properties: {
    ocoId: int,
    orders: { type: "array", items: orderWithUpdateSchema, minItems: 2, maxItems: 2 },
  },
  required: ["ocoId", "orders"],
  additionalProperties: false,
} as const;
/** docs/API.md 8.7 answer. */
export const triggerTimeSchema = {
  type: "object",
  properties: { triggerTime: int },
  required: ["triggerTime"],
} as const;
export const tradesPageSchema = page(userTradeSchema);
/** docs/API.md 7.11 one deposit or withdrawal of GET /trade/transfers. */
export const transferRecordSchema = {
  type: "object",
  properties: { id: int, type: word, currency: word, amount: word, time: word },
  required: ["id", "type", "currency", "amount", "time"],
  additionalProperties: false,
} as const;
/** docs/API.md 7.11 GET /trade/transfers. */
export const transfersPageSchema = page(transferRecordSchema);
/** docs/API.md 11 answers. */
export const newUserSchema = {
  type: "object",
  properties: { uid: str, apiToken: str, secretKey: str },
  required: ["uid", "apiToken", "secretKey"],
} as const;
export const newKeySchema = {
  type: "object",
  properties: { apiToken: str, secretKey: str },
  required: ["apiToken", "secretKey"],
} as const;
export const transferSchema = {
  type: "object",
  properties: { currency: str, balance: str },
  required: ["currency", "balance"],
} as const;
/** docs/API.md 20.4 GET /trade/account: the caller's uid and its balances of every configured currency. */
export const accountSchema = {
  type: "object",
  properties: { uid: str, balances: balancesSchema },
  required: ["uid", "balances"],
  additionalProperties: false,
} as const;

/** docs/API.md 11 GET /admin/users/{uid}. */
export const adminUserSchema = {
  type: "object",
  properties: {
    uid: str,
    balances: balancesSchema,
    apiKeys: {
      type: "array",
      items: {
        type: "object",
        properties: { apiTokenPrefix: str, revoked: bool },
        required: ["apiTokenPrefix", "revoked"],
        additionalProperties: false,
      },
    },
  },
  required: ["uid", "balances", "apiKeys"],
  additionalProperties: false,
} as const;
/** docs/API.md 8.10 GET, POST /trade/mmp and POST /trade/mmp/reset. */
export const mmpSchema = {
  type: "object",
  properties: {
    pairName: word,
    intervalSeconds: int,
    qtyLimit: { type: "string", description: "Base amount, decimal text" },
    frozenSeconds: int,
    frozen: bool,
    frozenUntil: {
      type: "integer",
      description: "Unix ms when the freeze ends; 0 when not frozen or until a reset",
    },
  },
  required: ["pairName", "intervalSeconds", "qtyLimit", "frozenSeconds", "frozen", "frozenUntil"],
  additionalProperties: false,
} as const;
/** docs/API.md 8.10 the `mmp` event's data (trading sessions). */
export const mmpEventSchema = {
  type: "object",
  properties: { pairName: word, frozen: bool, frozenUntil: int },
  required: ["pairName", "frozen", "frozenUntil"],
  additionalProperties: false,
} as const;
/**
 * docs/API.md 11 POST /admin/pairs/status; also a `status` stream message's data and a session's
 * `pairStatus` event data (docs/API.md 12.2, 13).
 */
export const pairStatusSchema = {
  type: "object",
  properties: { pairName: word, status: { type: "string", enum: ["trading", "cancelOnly", "halted"] } },
  required: ["pairName", "status"],
  additionalProperties: false,
} as const;
/** The `status` channel's message on connect: every pair in config order (docs/API.md 12.2). */
export const pairStatusListSchema = { type: "array", items: pairStatusSchema } as const;
/** docs/API.md 11 POST /admin/backup. */
export const backupSchema = {
  type: "object",
  properties: { dir: str, file: str, bytes: int, lastOrderId: int, lastTradeId: int },
  required: ["dir", "file", "bytes", "lastOrderId", "lastTradeId"],
  additionalProperties: false,
} as const;
/** docs/API.md 11 POST /admin/promote: the promoted server's epoch, where it began, and whether forced. */
export const promoteSchema = {
  type: "object",
  properties: {
    role: { type: "string", enum: ["leader"] },
    epoch: int,
    began: int,
    forced: { type: "boolean" },
  },
  required: ["role", "epoch", "began", "forced"],
  additionalProperties: false,
} as const;
/** docs/API.md 9 GET /admin/fees. */
export const feesSchema = {
  type: "array",
  items: {
    type: "object",
    properties: { currency: str, balance: str },
    required: ["currency", "balance"],
    additionalProperties: false,
  },
} as const;
/** docs/API.md 9 GET /time. */
export const timeSchema = {
  type: "object",
  properties: { serverTime: int },
  required: ["serverTime"],
  additionalProperties: false,
} as const;
/** docs/API.md 9 one pair of GET /info. */
export const pairInfoSchema = {
  type: "object",
  properties: {
    name: str,
    base: str,
    quote: str,
    priceDecimals: int,
    amountDecimals: int,
    tickSize: str,
    stepSize: str,
    minAmount: str,
    maxAmount: str,
    maxPrice: str,
    /** docs/API.md 20.5: the minimum order value in the quote currency ("0": none). */
    minNotional: str,
    makerFee: str,
    takerFee: str,
    status: { type: "string", enum: ["trading", "cancelOnly", "halted"] },
  },
  required: [
    "name",
    "base",
    "quote",
    "priceDecimals",
    "amountDecimals",
    "tickSize",
    "stepSize",
    "minAmount",
    "maxAmount",
    "maxPrice",
    "minNotional",
    "makerFee",
    "takerFee",
    "status",
  ],
  additionalProperties: false,
} as const;
/** docs/API.md 9 GET /info. */
export const infoSchema = {
  type: "object",
  properties: { serverTime: int, pairs: { type: "array", items: pairInfoSchema } },
  required: ["serverTime", "pairs"],
  additionalProperties: false,
} as const;
/** Stream messages (docs/API.md 12.2), one per channel kind. */
export const streamSchemas = {
  exchanges: envelope({ type: "array", items: exchangeStreamSchema }),
  orders: envelope(streamBookSchema),
  history: envelope({ type: "array", items: publicTradeSchema }),
  user_orders: numberedEnvelope(orderSchema),
  user_history: numberedEnvelope(userTradeSchema),
  bbo: envelope(bboSchema),
  /** On connect the L3 book, then one book change's events per message. */
  orders_l3: envelope({ oneOf: [l3BookSchema, l3ChangeSchema] }),
  /** On connect every pair's status, then one pair's status per change. */
  statusSnapshot: envelope(pairStatusListSchema),
  status: envelope(pairStatusSchema),
};

/** Compiled serializers, one per body. */
export const serialize = {
  order: compileExact(orderWithUpdateSchema),
  /** An order without updateTime (an item of the executions). */
  orderItem: compileExact(orderSchema),
  /** A user trade (an item of the executions). */
  userTrade: compileExact(userTradeSchema),
  pairs: compile(pairsSchema),
  pairPage: compileExact(pairPageSchema),
  book: compile(bookSchema),
  history: compile(historySchema),
  chart: compile(chartSchema),
  balances: compile(balancesSchema),
  account: compile(accountSchema),
  ordersPage: compileExact(ordersPageSchema),
  orders: compileExact(orderListSchema),
  cancelled: compile(cancelledSchema),
  triggerTime: compile(triggerTimeSchema),
  tradesPage: compileExact(tradesPageSchema),
  transfersPage: compile(transfersPageSchema),
  newUser: compile(newUserSchema),
  adminUser: compile(adminUserSchema),
  pairStatus: compile(pairStatusSchema),
  mmp: compile(mmpSchema),
  mmpEvent: compile(mmpEventSchema),
  newKey: compile(newKeySchema),
  balance: compile(transferSchema),
  fees: compile(feesSchema),
  backup: compile(backupSchema),
  promote: compile(promoteSchema),
  time: compile(timeSchema),
  info: compile(infoSchema),
  // Stream envelopes `{stream, data}` (docs/API.md 12.2), with the channel's data schema.
  streamExchanges: compile(streamSchemas.exchanges),
  streamLevels: compile(streamSchemas.orders),
  streamHistory: compile(streamSchemas.history),
  streamOrder: compileExact(streamSchemas.user_orders),
  streamUserTrade: compileExact(streamSchemas.user_history),
  bbo: compile(bboSchema),
  l3Book: compile(l3BookSchema),
  streamBbo: compile(streamSchemas.bbo),
  streamL3Book: compile(envelope(l3BookSchema)),
  streamL3Change: compile(envelope(l3ChangeSchema)),
  streamStatusSnapshot: compile(streamSchemas.statusSnapshot),
  streamStatus: compile(streamSchemas.status),
};
