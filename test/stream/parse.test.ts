/** The `streams` list parser alone (src/stream/channels.ts): what a list means and why it is refused. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code } from "../../src/errors/catalogue.ts";
import {
  CH_EXCHANGES,
  CH_HISTORY,
  CH_ORDERS,
  CH_STATUS,
  CH_USER_HISTORY,
  CH_USER_ORDERS,
  MAX_STREAMS,
  parseStreams,
} from "../../src/stream/channels.ts";

const PAIRS = new Map([
  ["btc_usdt", 0],
  ["eth_usdt", 1],
  ["eth_btc", 2],
]);
const parse = (query: string) => parseStreams(query, (name) => PAIRS.get(name));
const UID = "0b7e4c1e-6a51-4c0e-9b0a-6f3f2d1c9a10";

test("reads every channel kind in the order listed", () => {
  const r = parse(`streams=exchanges,orders:eth_btc,history:btc_usdt,user_orders:${UID},user_history:${UID}`);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.channels, [
    { kind: CH_EXCHANGES, name: "exchanges", pair: -1, uid: "" },
    { kind: CH_ORDERS, name: "orders:eth_btc", pair: 2, uid: "" },
    { kind: CH_HISTORY, name: "history:btc_usdt", pair: 0, uid: "" },
    { kind: CH_USER_ORDERS, name: `user_orders:${UID}`, pair: -1, uid: UID },
    { kind: CH_USER_HISTORY, name: `user_history:${UID}`, pair: -1, uid: UID },
  ]);
});

test("reads the status channel, which takes no pair, and refuses it with an argument or in another case", () => {
  const r = parse("streams=status,orders:btc_usdt,status");
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.channels, [
    { kind: CH_STATUS, name: "status", pair: -1, uid: "" },
    { kind: CH_ORDERS, name: "orders:btc_usdt", pair: 0, uid: "" },
  ]);
  assert.deepEqual(parse("streams=status:btc_usdt,Status").errors, [
    [Code.STREAMS_UNKNOWN_CHANNEL, "status:btc_usdt"],
    [Code.STREAMS_UNKNOWN_CHANNEL, "Status"],
  ]);
});

test("decodes a URL-encoded list and joins repeated streams parameters", () => {
  const r = parse(
    `a=1&streams=${encodeURIComponent("orders:btc_usdt,history:btc_usdt")}&streams=exchanges&nonce=7`,
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.channels.map((c) => c.name),
    ["orders:btc_usdt", "history:btc_usdt", "exchanges"],
  );
});

test("subscribes a channel listed twice once; a uid in any case is the same channel", () => {
  const r = parse(
    `streams=exchanges,exchanges, exchanges,user_orders:${UID},user_orders:${UID.toUpperCase()}`,
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.channels.map((c) => c.name),
    ["exchanges", `user_orders:${UID}`],
  );
});

test("allows 100 entries and refuses 101, duplicates included", () => {
  assert.deepEqual(parse(`streams=${Array(MAX_STREAMS).fill("exchanges").join(",")}`).errors, []);
  assert.deepEqual(
    parse(
      `streams=${Array(MAX_STREAMS + 1)
        .fill("exchanges")
        .join(",")}`,
    ).errors,
    [[Code.STREAMS_TOO_MANY, "101"]],
  );
});

test("refuses an empty list", () => {
  for (const q of ["", "streams", "streams=", "streams=,", "other=exchanges", "streams=%20"]) {
    assert.deepEqual(parse(q).errors, [[Code.STREAMS_EMPTY]], q);
  }
});

test("names each bad entry: unknown kind, unknown pair, malformed", () => {
  assert.deepEqual(parse("streams=trades:btc_usdt,orders:doge_usdt,orders,,history:,user_orders:").errors, [
    [Code.STREAMS_UNKNOWN_CHANNEL, "trades:btc_usdt"],
    [Code.STREAMS_UNKNOWN_PAIR, "orders:doge_usdt"],
    [Code.STREAMS_UNKNOWN_CHANNEL, "orders"],
    [Code.STREAMS_MALFORMED, "empty entry 4"],
    [Code.STREAMS_UNKNOWN_CHANNEL, "history:"],
    [Code.STREAMS_UNKNOWN_CHANNEL, "user_orders:"],
  ]);
  assert.deepEqual(parse("streams=Exchanges").errors, [[Code.STREAMS_UNKNOWN_CHANNEL, "Exchanges"]]);
  assert.equal(parse("streams=%E0%A4%A").errors[0][0], Code.STREAMS_MALFORMED);
});

test("reports at most ten errors for a hostile list", () => {
  const r = parse(`streams=${Array(60).fill("x").join(",")}`);
  assert.equal(r.errors.length, 10);
});
