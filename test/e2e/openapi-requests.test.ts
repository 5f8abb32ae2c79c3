/**
 * The OpenAPI document describes requests exactly as the server checks them: for every operation,
 * bodies, queries and path parameters generated from the document the server serves
 * (test/e2e/schema-arbitrary.ts) go to a real server. A valid one is accepted, or refused only for a
 * state reason (funds, liquidity, an unknown order or user, a duplicate id), and at least a tenth
 * of each operation's valid cases are accepted (known ids, keys and live deadlines stand in for
 * random ones in most cases, so that they can be); an invalid one (one
 * field made invalid) is refused with 400 (404 for a path's pair) naming that field. The batch calls
 * answer each element on its own, so their elements are checked in the 200 answer.
 *
 * One server for the file; about 30 valid and 30 invalid cases per operation.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import fc from "fast-check";
import { type ApiResponse, type ExchangeClient, ok } from "../../src/client/index.ts";
import { INTEGER_TEXT } from "../../src/wire/request-schemas.ts";
import { limit, PAIRS, rawHttp, TestServer, type TestUser } from "./harness.ts";
import { components, deref, doc } from "./openapi-check.ts";
import {
  invalidOf,
  isValid,
  type Mutated,
  mutate,
  RawNumber,
  type Schema,
  toJson,
  validOf,
} from "./schema-arbitrary.ts";
import { tradeAt } from "./stop-helpers.ts";

const RUNS = Number(process.env.OPENAPI_REQUEST_RUNS ?? 30);

/** Refusals that depend on the state, not on the request's form (the codes of `codes`). */
const STATE_CODES = new Set([
  "NO_LIQUIDITY",
  "INSUFFICIENT_FUNDS",
  "ORDER_NOT_FOUND",
  "ORDER_NOT_FOUND_PATH",
  "ORDER_ALREADY_CANCELLED",
  "ORDER_ALREADY_EXECUTED",
  "CLIENT_ORDER_ID_DUPLICATE",
  "WOULD_TAKE_LIQUIDITY",
  "AMEND_NOT_ABOVE_EXECUTED",
  "LISTEN_KEY_UNKNOWN",
  "UID_UNKNOWN",
  "USER_NOT_FOUND_PATH",
  "UID_EXISTS",
  "API_TOKEN_UNKNOWN",
  "BALANCE_TOO_LARGE",
  // docs/API.md 8.8: a well-formed deadline that the clock has passed.
  "REQUEST_EXPIRED",
  // docs/API.md 18: a stop that the pair's last trade price already meets.
  "STOP_WOULD_TRIGGER",
  // docs/API.md 18: amend fields that only a waiting (trailing) stop, or a stop-limit, has.
  "STOP_AMEND_NOT_WAITING",
  "TRAILING_AMEND_NOT_TRAILING",
  "STOP_MARKET_PRICE",
  // docs/API.md 18: an OCO's price against the pair's last trade price.
  "OCO_PRICE_SIDE",
  // docs/API.md 11: promote on this server, which follows no leader (test/e2e/promotion.test.ts
  // promotes followers).
  "NOT_A_FOLLOWER",
]);
/** Calls no valid body of which can succeed here (a state code above says why). */
const NEVER_ACCEPTED = new Set(["/admin/promote"]);

type Json = Record<string, unknown>;

interface Param {
  name: string;
  in: "path" | "query";
  required: boolean;
  /** As text on the wire: an integer schema becomes digits with the same bounds. */
  schema: Schema;
}

interface Operation {
  method: "get" | "post";
  path: string;
  auth: string;
  params: Param[];
  body: Schema | undefined;
}

/** A query or path integer is text: digits (docs/API.md 1) within the schema's bounds. */
function asText(schema: Schema): Schema {
  if (schema.type !== "integer") return schema;
  return {
    type: "string",
    pattern: INTEGER_TEXT,
    "x-minimum": String(schema.minimum ?? 0),
    "x-maximum": String(schema["x-maximum"] ?? schema.maximum),
  };
}

const OPERATIONS: Operation[] = [];
for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
  if (path === "/stream") continue; // a WebSocket upgrade (test/stream)
  for (const [method, raw] of Object.entries(item)) {
    const op = raw as Json;
    const params = ((op.parameters ?? []) as Json[]).map((p) => ({
      name: p.name as string,
      in: p.in as "path" | "query",
      required: p.required === true,
      schema: asText(deref(p.schema) as Schema),
    }));
    const content = (op.requestBody as Json | undefined)?.content as Json | undefined;
    const body =
      content === undefined ? undefined : (deref((content["application/json"] as Json).schema) as Schema);
    if (params.length === 0 && body === undefined) continue;
    OPERATIONS.push({ method: method as "get" | "post", path, auth: op["x-auth"] as string, params, body });
  }
}

// ---------------------------------------------------------------- requests

interface Request {
  path: Record<string, string>;
  query: [string, string][];
  body?: Json;
  /** The field made invalid, and where. */
  bad?: { field: string; in: "path" | "query" | "body" };
}

/** Text of a generated parameter value. */
function text(v: unknown): string {
  return typeof v === "string" ? v : toJson(v);
}

function paramArb(p: Param, valid: boolean): fc.Arbitrary<string> {
  if (valid)
    return validOf(p.schema)
      .map(text)
      .filter((t) => isValid(p.schema, t));
  return invalidOf(p.schema)
    .map(text)
    .filter((t) => !isValid(p.schema, t) && !(p.in === "path" && (t === "" || t.includes("/"))));
}

/** Valid path parameters and a valid query (optional parameters sometimes left out). */
function validParams(op: Operation): fc.Arbitrary<Request> {
  // Keyed by where and name: a path and a query parameter may share a name (user-orders' `pairName`).
  const key = (p: Param) => `${p.in}:${p.name}`;
  const model: Record<string, fc.Arbitrary<string | undefined>> = {};
  for (const p of op.params)
    model[key(p)] = p.required ? paramArb(p, true) : fc.option(paramArb(p, true), { nil: undefined });
  return fc.record(model).map((values) => {
    const req: Request = { path: {}, query: [] };
    for (const p of op.params) {
      const v = values[key(p)];
      if (v === undefined) continue;
      if (p.in === "path") req.path[p.name] = v;
      else req.query.push([p.name, v]);
    }
    // The chart's range: `from` after `to` is a 400 on `from` (documented beside the parameter).
    const from = req.query.find(([k]) => k === "from");
    const to = req.query.find(([k]) => k === "to");
    if (from !== undefined && to !== undefined && BigInt(from[1]) > BigInt(to[1]))
      [from[1], to[1]] = [to[1], from[1]];
    return req;
  });
}

function invalidParams(op: Operation): fc.Arbitrary<Request> {
  return fc.tuple(validParams(op), fc.constantFrom(...op.params)).chain(([req, p]) =>
    paramArb(p, false).map((v) => {
      const query = p.in === "query" ? req.query.filter(([k]) => k !== p.name) : req.query;
      const out: Request = { path: { ...req.path }, query };
      if (p.in === "path") out.path[p.name] = v;
      else out.query.push([p.name, v]);
      out.bad = { field: p.name, in: p.in };
      return out;
    }),
  );
}

/** Every path parameter a valid value (for the body-only operations). */
function fixedPath(op: Operation): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of op.params) if (p.in === "path") out[p.name] = fc.sample(paramArb(p, true), 1)[0];
  return out;
}

// ---------------------------------------------------------------- the server

let server: TestServer;
/** The user of the running test: a new one per test, so that a nonce one case spoils stays there. */
let user: TestUser;
const FUNDS: Record<string, string> = {};
for (const p of PAIRS) FUNDS[p.base] = FUNDS[p.quote] = "10000000";
let nonce = 0n;
/** Ids of orders the user created, to cancel by a known id now and then. */
const orderIds: number[] = [];
/** The pair of each of those orders. */
const orderPair = new Map<number, string>();
/** Client order ids of the user's orders, to read an order by a known one now and then. */
const clientOrderIds: string[] = [];
/**
 * Each operation's valid cases answered 200, at least: a state refusal (an unknown id, an expired
 * deadline, no liquidity) is an acceptable answer to one case, but an operation whose every valid
 * case is refused shows nothing about what the server accepts.
 */
const MIN_ACCEPTED = Math.ceil(RUNS / 10);

/**
 * amend-order reads the amount and price by the rules of the order's pair (the document's amend
 * schema is the widest over the pairs and says so): those of CreateOrderRequest's limit branch.
 */
function amendRulesOf(pairName: string): Schema {
  const branches = (deref(components.CreateOrderRequest) as Schema).oneOf as Schema[];
  const limit = branches.find((b) => b.title === `${pairName} limit`)!;
  const props = limit.properties as Record<string, Schema>;
  const amend = deref(components.CreateOrderRequest) as Schema;
  void amend;
  // docs/API.md 18: a stop price and a trailing delta are prices of the pair.
  return { amount: props.amount, price: props.price, stopPrice: props.price, trailingDelta: props.price };
}

/** The field of an amend that the rules of the order's pair refuse, if the order is the caller's. */
function amendFieldRefused(body: Json): string | undefined {
  const pairName = typeof body.orderId === "number" ? orderPair.get(body.orderId) : undefined;
  if (pairName === undefined) return undefined;
  const rules = amendRulesOf(pairName);
  for (const field of ["amount", "price", "stopPrice", "trailingDelta"]) {
    if (body[field] !== undefined && !isValid(rules[field] as Schema, body[field])) return field;
  }
  return undefined;
}

/**
 * The side of a quote whose order the document cannot state (docs/API.md 8.12): bids strictly
 * decreasing, asks strictly increasing, the best bid below the best ask; undefined when in order.
 */
function quoteFieldRefused(body: Json): string | undefined {
  const prices = (side: unknown): number[] =>
    Array.isArray(side) ? side.map((l) => Number(toJson((l as unknown[])[0]).replaceAll('"', ""))) : [];
  const bids = prices(body.bids);
  const asks = prices(body.asks);
  if (bids.some((p, i) => i > 0 && p >= bids[i - 1])) return "bids";
  if (asks.some((p, i) => i > 0 && p <= asks[i - 1])) return "asks";
  if (bids.length > 0 && asks.length > 0 && bids[0] >= asks[0]) return "asks";
  return undefined;
}

/** The integer `digits` in the form (number, string, long number) of the value `like`. */
function sameForm(like: unknown, digits: string): unknown {
  return typeof like === "string"
    ? digits
    : like instanceof RawNumber
      ? new RawNumber(digits)
      : Number(digits);
}

/** A nonce the token has not used, in the form (number, string, long number) the case chose. */
function withFreshNonce(where: Json | [string, string][], keep: boolean): void {
  if (keep) return;
  nonce++;
  if (Array.isArray(where)) {
    const i = where.findIndex(([k]) => k === "nonce");
    if (i >= 0) where[i] = ["nonce", String(nonce)];
    return;
  }
  const v = where.nonce;
  if (v === undefined) return;
  where.nonce = sameForm(v, String(nonce));
}

function pick<T>(list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)];
}

/** A new resting order of the user (a buy at the pair's lowest price), for a call on a known id. */
async function restingOrder(): Promise<number> {
  const p = pick(PAIRS);
  const res = await user.client.createOrder(
    limit(p.name, "buy", `0.${"0".repeat(p.priceDecimals - 1)}1`, p.minAmount),
  );
  remember(res);
  return ok(res, "a resting order").id;
}

/**
 * Known values in place of random ones, so that valid cases also reach the checks after the
 * lookup and can succeed: the caller's uid, a resting order of the caller, a live listen key, an
 * API key to revoke, a deadline still ahead. `bad` (the field a case made invalid) is left alone.
 */
async function withKnownValues(path: string, body: Json, bad: string | undefined): Promise<void> {
  const chance = (field: string, p: number) => bad !== field && field in body && Math.random() < p;
  if (chance("uid", 0.75) && path !== "/admin/users") body.uid = user.uid;
  if (chance("orderId", 0.8) && (path === "/1.0/trade/cancel-order" || path === "/1.0/trade/amend-order"))
    body.orderId = await restingOrder();
  if (chance("listenKey", 0.75)) body.listenKey = ok(await user.client.listenKey(), "listen key").listenKey;
  if (chance("apiToken", 0.75) && path === "/admin/api-keys/revoke")
    body.apiToken = ok(await server.admin.createApiKey(user.uid), "another API key").apiToken;
  // A deadline is valid in any form; most cases get one that has not passed (docs/API.md 8.8).
  if (chance("expiresAt", 0.75)) body.expiresAt = sameForm(body.expiresAt, String(Date.now() + 600_000));
}

/** The same for a GET's path and query: an order, a client order id or a uid of the caller. */
function withKnownParams(req: Request): void {
  const chance = (field: string) => req.bad?.field !== field && Math.random() < 0.75;
  if ("orderId" in req.path && chance("orderId") && orderIds.length > 0)
    req.path.orderId = String(pick(orderIds));
  if ("uid" in req.path && chance("uid")) req.path.uid = user.uid;
  const i = req.query.findIndex(([k]) => k === "clientOrderId");
  if (i >= 0 && chance("clientOrderId") && clientOrderIds.length > 0)
    req.query[i] = ["clientOrderId", pick(clientOrderIds)];
}

/**
 * An amend of one of the caller's orders in the rules of that order's pair (the document's schema
 * is the widest over the pairs): a value those rules refuse is replaced by one they accept.
 */
function withPairRules(body: Json): void {
  const pairName = typeof body.orderId === "number" ? orderPair.get(body.orderId) : undefined;
  if (pairName === undefined) return;
  const rules = amendRulesOf(pairName);
  // docs/API.md 18: a stop price or a trailing delta is only for a waiting stop, which the orders
  // of these cases seldom are: kept only when nothing else would be amended.
  if (body.amount !== undefined || body.price !== undefined) {
    delete body.stopPrice;
    delete body.trailingDelta;
  }
  for (const field of ["amount", "price", "stopPrice", "trailingDelta"]) {
    const rule = rules[field] as Schema;
    if (body[field] !== undefined && !isValid(rule, body[field]))
      body[field] = fc.sample(
        validOf(rule).filter((v) => isValid(rule, v)),
        1,
      )[0];
  }
}

/** A decimal field of a generated body as a number (a JSON number, its text, or a decimal string). */
const decimalOf = (v: unknown): number => Number(toJson(v).replaceAll('"', ""));

/**
 * docs/API.md 18: an OCO's prices on the sides the document states only in words: a sell's price
 * above and its stopPrice below the pair's last trade price (a buy: the reverse), a few ticks off
 * it; on a pair that never traded, the two swapped when the other way round. Earlier random bodies
 * may have left a pair's last trade at its lowest price (or near its highest), where one side has
 * no room: the body then moves to a pair with room, with that pair's smallest amount.
 */
async function withOcoSides(body: Json): Promise<void> {
  if (body.price === undefined || body.stopPrice === undefined) return;
  const sell = body.directionType === "sell";
  const first = PAIRS.find((p) => p.name === body.pairName);
  if (first === undefined) return;
  const generated = { ...body };
  const pairs = [first, ...PAIRS.filter((p) => p !== first)];
  const restore = () => {
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, generated);
  };
  for (const pass of [0, 1])
    for (const pair of pairs) {
      restore();
      if (pair !== first) {
        body.pairName = pair.name;
        body.amount = pair.minAmount;
        delete body.stopLimitPrice;
      }
      // Without a query: the newest trades as the server holds them (a page read from the
      // database may not show the last commit yet).
      let last = ok(await server.public.history(pair.name), "last trade")[0]?.price;
      if (last === undefined) {
        // The generated prices are of the first pair's scale: another pair without trades is no help.
        if (pair !== first) continue;
        const above = decimalOf(body.price) > decimalOf(body.stopPrice);
        if (above !== sell) [body.price, body.stopPrice] = [body.stopPrice, body.price];
        return;
      }
      const tick = 10 ** -pair.priceDecimals;
      const maxTicks = Math.round(Number(pair.maxPrice) / tick);
      // The limit leg is post-only: beyond the best price of the other side too (docs/API.md 8.1).
      const bbo = ok(await server.public.bbo(pair.name), "bbo");
      const bid = Math.round(bbo.bid / tick);
      const ask = bbo.ask > 0 ? Math.round(bbo.ask / tick) : Number.POSITIVE_INFINITY;
      if (pass === 1) {
        // No pair had room: a trade of the smallest amount inside the spread moves the last price,
        // at least 7 ticks up (a stop up to 5 ticks below it stays a price).
        const at = bid > 0 ? Math.max(bid + 1, 7) : 10_000;
        if (at >= ask || at > maxTicks - 6) continue;
        ocoTaker ??= await server.newUser(FUNDS);
        await tradeAt(user, ocoTaker, pair.name, (at * tick).toFixed(pair.priceDecimals), pair.minAmount);
        last = at * tick;
      }
      const ticks = Math.round(last / tick);
      const off = 1 + Math.floor(Math.random() * 5);
      const price = sell ? Math.max(ticks, bid) + off : Math.min(ticks, ask) - off;
      const stop = sell ? ticks - off : ticks + off;
      if (Math.min(price, stop) < 1 || Math.max(price, stop) > maxTicks) continue;
      const at = (n: number) => (n * tick).toFixed(pair.priceDecimals);
      body.price = at(price);
      body.stopPrice = at(stop);
      return;
    }
  // No pair has room: the body as generated (the server refuses it on its sides, ocoFieldRefused).
  restore();
}

/** The taker of the trade withOcoSides makes when no pair's last price leaves room. */
let ocoTaker: TestUser | undefined;

/** The field an OCO body breaks the sides rule on (withOcoSides), or undefined. */
function ocoFieldRefused(body: Json): string | undefined {
  const price = decimalOf(body.price);
  const stop = decimalOf(body.stopPrice);
  return (body.directionType === "sell" ? stop < price : stop > price) ? undefined : "stopPrice";
}

/**
 * A quote ladder in the order the document states only in words (docs/API.md 8.12): bids strictly
 * decreasing, asks strictly increasing, the best bid below the best ask.
 */
function withLadderInOrder(body: Json): void {
  const price = (l: unknown) => Number(toJson((l as unknown[])[0]).replaceAll('"', ""));
  const sorted = (side: unknown, sign: number) => {
    const seen = new Set<number>();
    return ((side ?? []) as unknown[])
      .filter((l) => !seen.has(price(l)) && seen.add(price(l)))
      .sort((a, b) => sign * (price(a) - price(b)));
  };
  const bids = sorted(body.bids, -1);
  const bestBid = bids.length > 0 ? price(bids[0]) : 0;
  body.bids = bids;
  body.asks = sorted(body.asks, 1).filter((l) => price(l) > bestBid);
}

/**
 * A case whose invalid field is the nonce signs with a key of its own: a nonce the server wrongly
 * accepted would otherwise refuse every later case of the test with 401.
 */
async function clientFor(req: Request): Promise<ExchangeClient> {
  if (req.bad?.field !== "nonce") return user.client;
  const key = ok(await server.admin.createApiKey(user.uid), "another API key");
  return server.client(key);
}

/** Percent-encodes every character but unreserved ones (RFC 3986), so the query is sent as signed. */
function encodeQuery(v: string): string {
  return encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

async function send(op: Operation, req: Request): Promise<ApiResponse<unknown>> {
  const client = await clientFor(req);
  // A segment of dots only ("." or "..") is a dot-segment that URL parsing removes (RFC 3986 5.2.4):
  // encoded, and sent over a socket below, it reaches the server as the value it is.
  const segment = (v: string) => (/^\.+$/.test(v) ? v.replaceAll(".", "%2E") : encodeURIComponent(v));
  const path = op.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => segment(req.path[name]));
  const query = req.query.map(([k, v]) => `${k}=${encodeQuery(v)}`).join("&");
  const signed = op.auth === "signedBody" || op.auth === "signedQuery" || op.auth === "optionalSignedQuery";
  if (op.method === "get") {
    // fetch parses the URL (WHATWG) and drops a dot-only segment even encoded as %2E: such a path
    // goes over a socket as written, signed as sent.
    if (Object.values(req.path).some((v) => /^\.+$/.test(v))) {
      const headers: Record<string, string> = signed ? client.signFor("GET", path, query) : {};
      if (op.auth === "admin") headers.authorization = `Bearer ${server.adminToken}`;
      const a = await rawHttp(server, "GET", query === "" ? path : `${path}?${query}`, headers);
      return { status: a.status, headers: new Headers(a.headers), text: a.text, body: a.body as never };
    }
    return client.raw("GET", path, {
      query: query === "" ? undefined : query,
      sign: signed,
      headers: op.auth === "admin" ? { authorization: `Bearer ${server.adminToken}` } : {},
    });
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (op.auth === "admin") headers.authorization = `Bearer ${server.adminToken}`;
  const res = await client.raw("POST", path, { body: toJson(req.body), headers, sign: signed });
  // A pair status a case set would refuse the later cases for a state reason: back to trading.
  if (op.path === "/admin/pairs/status" && res.status === 200)
    for (const p of PAIRS) ok(await server.admin.setPairStatus(p.name, "trading"), "pair status reset");
  return res;
}

function describeCase(op: Operation, req: Request, res: ApiResponse<unknown>): string {
  return `${op.method.toUpperCase()} ${op.path} ${JSON.stringify(req.path)} ?${req.query
    .map(([k, v]) => `${k}=${v}`)
    .join("&")} ${req.body === undefined ? "" : toJson(req.body)}\n  -> ${res.status} ${res.text}`;
}

function codesOf(body: unknown): string[] {
  const codes = (body as { codes?: Record<string, string[]> } | undefined)?.codes ?? {};
  return Object.values(codes).flat();
}

/** 200, or a refusal for a state reason only. */
function assertAccepted(what: string, status: number, body: unknown): void {
  if (status === 200) return;
  const codes = codesOf(body);
  assert.ok(
    (status === 400 || status === 404) && codes.length > 0 && codes.every((c) => STATE_CODES.has(c)),
    `a valid request was refused: ${what}`,
  );
}

/**
 * Refused with `status` naming `field`; or refused for a state reason only (an unknown user or
 * order found before the field was read: the request could not have succeeded either way).
 */
function assertRefused(what: string, status: number, body: unknown, field: string, expected = 400): void {
  const errors = (body as { errors?: Json } | undefined)?.errors ?? {};
  const codes = codesOf(body);
  if (status === 400 && codes.length > 0 && codes.every((c) => STATE_CODES.has(c))) return;
  assert.equal(status, expected, `an invalid request was not refused with ${expected}: ${what}`);
  assert.ok(field in errors, `the refusal does not name ${field}: ${what}`);
}

function remember(res: ApiResponse<unknown>): void {
  const id = (res.body as { id?: unknown } | undefined)?.id;
  if (res.status === 200 && typeof id === "number") {
    orderIds.push(id);
    orderPair.set(id, (res.body as { pairName: string }).pairName);
  }
}

// ---------------------------------------------------------------- the tests

describe("requests generated from the OpenAPI document", () => {
  before(async () => {
    server = await TestServer.start();
  });
  beforeEach(async () => {
    user = await server.newUser(FUNDS);
    // A resting order per pair, for the cases that use a known order id.
    orderIds.length = 0;
    orderPair.clear();
    clientOrderIds.length = 0;
    for (const p of PAIRS) {
      const clientOrderId = `known-${p.name}`;
      const placed = await user.client.createOrder({
        ...limit(p.name, "buy", `0.${"0".repeat(p.priceDecimals - 1)}1`, p.minAmount),
        clientOrderId,
      });
      remember(placed);
      clientOrderIds.push(clientOrderId);
    }
  });
  after(async () => {
    await server?.close();
  });

  test("the server serves the document these cases are generated from", async () => {
    const res = await server.public.openapi();
    assert.deepEqual(res.body, doc);
  });

  for (const op of OPERATIONS) {
    const name = `${op.method.toUpperCase()} ${op.path}`;

    if (op.body !== undefined) {
      const schema = op.body;
      const valid = validOf(schema).filter((v) => isValid(schema, v)) as fc.Arbitrary<Json>;

      test(`${name}: accepts every valid body`, async () => {
        const path = fixedPath(op);
        let accepted = 0;
        await fc.assert(
          fc.asyncProperty(valid, async (body) => {
            const req: Request = { path, query: [], body: { ...body } };
            withFreshNonce(req.body!, false);
            await withKnownValues(op.path, req.body!, undefined);
            // Most amends and quotes also follow the rules the document states in words; the
            // others check that the server refuses what breaks them.
            if (op.path === "/1.0/trade/amend-order" && Math.random() < 0.75) withPairRules(req.body!);
            if (op.path === "/1.0/trade/quote" && Math.random() < 0.75) withLadderInOrder(req.body!);
            if (op.path === "/1.0/trade/create-oco" && Math.random() < 0.75) await withOcoSides(req.body!);
            const res = await send(op, req);
            if (res.status === 200) accepted++;
            remember(res);
            // An amend of one of the caller's orders: the rules of that order's pair decide.
            const refused =
              op.path === "/1.0/trade/amend-order"
                ? amendFieldRefused(req.body!)
                : op.path === "/1.0/trade/quote"
                  ? quoteFieldRefused(req.body!)
                  : op.path === "/1.0/trade/create-oco"
                    ? ocoFieldRefused(req.body!)
                    : undefined;
            if (refused !== undefined)
              return assertRefused(describeCase(op, req, res), res.status, res.body, refused);
            assertAccepted(describeCase(op, req, res), res.status, res.body);
            if (res.status === 200) checkBatchAnswer(op, req.body!, res.body);
          }),
          { numRuns: RUNS, includeErrorInReport: true },
        );
        if (!NEVER_ACCEPTED.has(op.path))
          assert.ok(accepted >= MIN_ACCEPTED, `${accepted} of ${RUNS} valid bodies answered 200`);
      });

      test(`${name}: refuses every body with an invalid field, naming it`, async () => {
        const path = fixedPath(op);
        await fc.assert(
          fc.asyncProperty(mutate(schema, valid), async (m: Mutated) => {
            const req: Request = {
              path,
              query: [],
              body: { ...m.body },
              bad: { field: m.field, in: "body" },
            };
            withFreshNonce(req.body!, m.field === "nonce");
            await withKnownValues(op.path, req.body!, m.field);
            const res = await send(op, req);
            remember(res);
            assertRefused(describeCase(op, req, res), res.status, res.body, m.field);
          }),
          { numRuns: RUNS, includeErrorInReport: true },
        );
      });
    }

    if (op.method === "get" && op.params.length > 0) {
      test(`${name}: accepts every valid query and path`, async () => {
        let accepted = 0;
        await fc.assert(
          fc.asyncProperty(validParams(op), async (req) => {
            withFreshNonce(req.query, false);
            withKnownParams(req);
            const res = await send(op, req);
            if (res.status === 200) accepted++;
            assertAccepted(describeCase(op, req, res), res.status, res.body);
          }),
          { numRuns: RUNS, includeErrorInReport: true },
        );
        assert.ok(accepted >= MIN_ACCEPTED, `${accepted} of ${RUNS} valid queries answered 200`);
      });

      test(`${name}: refuses every query or path with an invalid parameter, naming it`, async () => {
        await fc.assert(
          fc.asyncProperty(invalidParams(op), async (req) => {
            withFreshNonce(req.query, req.bad?.field === "nonce");
            withKnownParams(req);
            const res = await send(op, req);
            // An unknown pair in the path is a 404 (docs/API.md 4), and so is a malformed uid in the
            // admin view of a user (docs/API.md 11); every other field a 400.
            const inPath404 = req.bad!.field === "pairName" || req.bad!.field === "uid";
            const status = inPath404 && req.bad!.in === "path" ? 404 : 400;
            assertRefused(describeCase(op, req, res), res.status, res.body, req.bad!.field, status);
          }),
          { numRuns: RUNS, includeErrorInReport: true },
        );
      });
    }
  }

  test("create-orders refuses each invalid element in its place, naming the field", async () => {
    const op = OPERATIONS.find((o) => o.path === "/1.0/trade/create-orders")!;
    const element = deref(components.BatchOrder) as Schema;
    const valid = validOf(element).filter((v) => isValid(element, v)) as fc.Arbitrary<Json>;
    const elements = fc.array(
      fc.oneof(
        mutate(element, valid),
        valid.map((body) => ({ body, field: "" })),
      ),
      {
        minLength: 1,
        maxLength: 20,
      },
    );
    await fc.assert(
      fc.asyncProperty(elements, async (list) => {
        const req: Request = { path: {}, query: [], body: { orders: list.map((m) => m.body) } };
        const res = await send(op, req);
        const what = describeCase(op, req, res);
        assert.equal(res.status, 200, what);
        const answers = res.body as Json[];
        assert.equal(answers.length, list.length, what);
        list.forEach((m, i) => {
          if (m.field === "")
            assertAccepted(`element ${i}: ${what}`, "id" in answers[i] ? 200 : 400, answers[i]);
          else
            assertRefused(`element ${i}: ${what}`, "errors" in answers[i] ? 400 : 200, answers[i], m.field);
        });
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });
});

/**
 * A 200 of a batch: each element answered on its own; an element valid by the element schema is
 * created or refused for a state reason, any other one carries its errors.
 */
function checkBatchAnswer(op: Operation, body: Json, answer: unknown): void {
  const items =
    op.path === "/1.0/trade/create-orders"
      ? (body.orders as unknown[])
      : op.path === "/1.0/trade/cancel-orders"
        ? (body.orderIds as unknown[])
        : undefined;
  if (items === undefined) return;
  const element =
    op.path === "/1.0/trade/create-orders"
      ? (deref(components.BatchOrder) as Schema)
      : (deref(components.OrderIdInput) as Schema);
  const answers = answer as Json[];
  assert.equal(answers.length, items.length);
  items.forEach((item, i) => {
    const what = `element ${i} ${toJson(item)} -> ${JSON.stringify(answers[i])}`;
    if (isValid(element, item)) assertAccepted(what, "errors" in answers[i] ? 400 : 200, answers[i]);
    else assert.ok("errors" in answers[i], `an invalid element was accepted: ${what}`);
    if (typeof answers[i].id === "number") {
      orderIds.push(answers[i].id as number);
      orderPair.set(answers[i].id as number, answers[i].pairName as string);
    }
  });
}
