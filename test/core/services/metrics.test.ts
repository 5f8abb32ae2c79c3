/**
 * Metrics: what the hot path counts comes out of `/metrics` in the Prometheus text format, with the
 * names the server always had.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LATENCY_BUCKETS, Metrics } from "../../../src/core/services/metrics.ts";

/** `name{labels} value` lines of a text exposition, as a map from `name{labels}` to the value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const sp = line.lastIndexOf(" ");
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

describe("Metrics", () => {
  it("renders request counts per route and status and a cumulative latency histogram", async () => {
    const m = new Metrics(undefined, ["btc_usdt", "eth_usdt"]);
    m.request("/trade/create-order", 200, 0.0003);
    m.request("/trade/create-order", 200, 0.002);
    m.request("/trade/create-order", 400, 0.00005);
    m.request("/trade/create-order", 200, 3);
    m.request("/stream", 101);
    const text = await m.render();
    const s = samples(text);
    assert.equal(s.get('exchange_http_requests_total{route="/trade/create-order",status="200"}'), 3);
    assert.equal(s.get('exchange_http_requests_total{route="/trade/create-order",status="400"}'), 1);
    assert.equal(s.get('exchange_http_requests_total{route="/stream",status="101"}'), 1);
    const bucket = (le: string) =>
      s.get(`exchange_http_request_duration_seconds_bucket{le="${le}",route="/trade/create-order"}`);
    assert.equal(bucket("0.0001"), 1);
    assert.equal(bucket("0.00025"), 1);
    assert.equal(bucket("0.0005"), 2);
    assert.equal(bucket("0.0025"), 3);
    assert.equal(bucket("1"), 3);
    assert.equal(bucket("+Inf"), 4);
    assert.equal(s.get('exchange_http_request_duration_seconds_count{route="/trade/create-order"}'), 4);
    assert.ok(
      Math.abs(s.get('exchange_http_request_duration_seconds_sum{route="/trade/create-order"}')! - 3.00235) <
        1e-12,
    );
    // The stream route has counts but no latency samples.
    assert.equal(s.get('exchange_http_request_duration_seconds_count{route="/stream"}'), undefined);
    for (const le of LATENCY_BUCKETS) assert.notEqual(bucket(String(le)), undefined, `bucket ${le}`);
    assert.match(text, /^# TYPE exchange_http_request_duration_seconds histogram$/m);
    assert.match(text, /^# TYPE exchange_http_requests_total counter$/m);
    // prom-client's own part is still there.
    assert.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
    assert.match(text, /^# TYPE exchange_stream_connections gauge$/m);
  });

  it("counts orders per pair and type and trades per pair", async () => {
    const m = new Metrics(undefined, ["btc_usdt", "eth_usdt"]);
    m.order(0, 0);
    m.order(0, 0);
    m.order(1, 1);
    m.trade(1);
    const s = samples(await m.render());
    assert.equal(s.get('exchange_orders_total{pair="btc_usdt",type="limit"}'), 2);
    assert.equal(s.get('exchange_orders_total{pair="eth_usdt",type="market"}'), 1);
    assert.equal(s.get('exchange_orders_total{pair="btc_usdt",type="market"}'), undefined);
    assert.equal(s.get('exchange_trades_total{pair="eth_usdt"}'), 1);
  });

  it("escapes label values", async () => {
    const m = new Metrics();
    m.request('a"b\\c\nd', 404, 0.001);
    assert.match(await m.render(), /route="a\\"b\\\\c\\nd",status="404"/);
  });
});
