/**
 * What the FIX gateway's tests share (docs/API.md 17): the FIX port of a test server, a jspurefix
 * client logged on as a user, and the comparison of an ExecutionReport with the REST record of the
 * same order.
 */
import assert from "node:assert/strict";
import type { CreatedOrder } from "../../src/client/index.ts";
import { expectOk, type TestServer, type TestUser } from "../e2e/harness.ts";
import { FixClient, type FixClientOptions, fixTime, type ReceivedMessage } from "./jspurefix-client.ts";

/** The FIX port the readiness line of the test server's last start names. */
export function fixPortOf(server: TestServer): number {
  const all = [...server.output().stdout.matchAll(/"fixPort":(\d+)/g)];
  if (all.length === 0) throw new Error("the server's readiness line names no FIX port");
  return Number(all[all.length - 1][1]);
}

let compIds = 0;

/** A jspurefix client logged on as `user` (a fresh SenderCompID unless given). */
export function fixLogon(
  server: TestServer,
  user: { apiToken: string; secretKey: string },
  options: Partial<FixClientOptions> = {},
): Promise<FixClient> {
  return FixClient.connect({
    host: "127.0.0.1",
    port: fixPortOf(server),
    senderCompId: `CLIENT${++compIds}`,
    targetCompId: "EXCHANGE",
    apiToken: user.apiToken,
    secretKey: user.secretKey,
    ...options,
  });
}

/** TransactTime(60) now. */
export function now(): string {
  return fixTime(new Date());
}

/** A NewOrderSingle's fields: a limit order unless `price` is null. */
export function newOrder(
  clOrdId: string,
  side: "buy" | "sell",
  qty: string,
  price: string | null,
  pair = "btc_usdt",
  more: [number, string][] = [],
): [number, string][] {
  const fields: [number, string][] = [
    [11, clOrdId],
    [55, pair],
    [54, side === "buy" ? "1" : "2"],
    [40, price === null ? "1" : "2"],
    [38, qty],
    [60, now()],
  ];
  if (price !== null) fields.push([44, price]);
  return [...fields, ...more];
}

/** The next ExecutionReport with ExecType `execType` (and ClOrdID `clOrdId` when given). */
export function nextReport(c: FixClient, execType: string, clOrdId?: string): Promise<ReceivedMessage> {
  return c.next(
    (m) => m.msgType === "8" && m.get(150) === execType && (clOrdId === undefined || m.get(11) === clOrdId),
  );
}

/**
 * The report's order fields against the order's REST record (GET /trade/orders/{id}): id, symbol,
 * side, type, quantity, price of a limit, executed amount, leaves and status.
 */
export async function assertMatchesRest(user: TestUser, report: ReceivedMessage): Promise<CreatedOrder> {
  const id = Number(report.get(37));
  const o = expectOk(await user.client.order(id), `GET /trade/orders/${id}`);
  assert.equal(report.get(55), o.pairName);
  assert.equal(report.get(54), o.directionType === "buy" ? "1" : "2");
  // docs/API.md 17.2: a stop order is OrdType 3 (market) or 4 (limit) with its StopPx(99).
  const stop = o.stopPrice !== undefined;
  assert.equal(report.get(40), o.tradeType === "limit" ? (stop ? "4" : "2") : stop ? "3" : "1");
  assert.equal(report.get(99) === undefined ? undefined : Number(report.get(99)), o.stopPrice);
  assert.equal(Number(report.get(38)), o.amount);
  if (o.tradeType === "limit") assert.equal(Number(report.get(44)), o.price);
  assert.equal(Number(report.get(14)), o.amountUsed);
  const done = o.isCancelled || o.amountUsed === o.amount;
  const status = o.isCancelled ? "4" : o.amountUsed === o.amount ? "2" : o.amountUsed > 0 ? "1" : "0";
  assert.equal(report.get(39), status);
  assert.equal(Number(report.get(151)), done ? 0 : Number((o.amount - o.amountUsed).toFixed(8)));
  // A cancel's or replace's report names the request (11) and the order (41).
  if (o.clientOrderId !== undefined) assert.equal(report.get(41) ?? report.get(11), o.clientOrderId);
  return o;
}
