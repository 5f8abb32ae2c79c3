import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RateLimiter } from "../../src/entry/rate-limit.ts";

/** Sends `n` requests for `key` at `at` ms; returns how many were allowed. */
function burst(limiter: RateLimiter, key: string, at: number, n: number): number {
  let allowed = 0;
  for (let i = 0; i < n; i++) if (limiter.take(key, at) >= 0) allowed++;
  return allowed;
}

describe("RateLimiter (sliding one-second window)", () => {
  it("counts down the remaining requests and refuses the one over the limit", () => {
    const l = new RateLimiter(3);
    assert.deepEqual(
      [0, 1, 2, 3].map(() => l.take("k", 10_000)),
      [2, 1, 0, -1],
    );
    assert.equal(l.take("other", 10_000), 2, "keys are counted apart");
  });

  it("holds back a second burst right after a window edge (a fixed window lets 2x through)", () => {
    const l = new RateLimiter(100);
    assert.equal(burst(l, "k", 10_990, 100), 100, "a full burst 10 ms before the edge");
    // 10 ms after the edge 99% of the previous second still lies inside the last 1000 ms.
    assert.equal(burst(l, "k", 11_010, 100), 1);
    // Half-way through, half of the previous second's burst has slid out.
    assert.equal(burst(l, "k", 11_500, 100), 100 - 50 - 1);
  });

  it("allows the full limit again once the earlier requests slid out of the window", () => {
    const l = new RateLimiter(10);
    assert.equal(burst(l, "k", 5_000, 10), 10);
    assert.equal(burst(l, "k", 6_000, 10), 0, "at the edge the whole previous second still counts");
    assert.equal(burst(l, "k", 7_000, 10), 10, "a second later it has all slid out");
    assert.equal(burst(l, "k", 9_500, 10), 10, "after a quiet second nothing weighs");
  });

  it("does not count refused requests, so a client that keeps trying is served again", () => {
    const l = new RateLimiter(2);
    assert.equal(burst(l, "k", 1_000, 50), 2);
    assert.equal(burst(l, "k", 3_000, 2), 2);
  });

  it("says when to retry: within this second, or after the next one for a full current window", () => {
    const l = new RateLimiter(10);
    burst(l, "k", 1_000, 10);
    assert.equal(l.take("k", 1_400), -1);
    // This second's 10 requests must slide out: allowed from 2 000 + 100 ms on (10 × 0.9 + 1 ≤ 10).
    assert.equal(l.retryAfter("k", 1_400), 1);
    assert.ok(l.take("k", 2_050) === -1 && l.take("k", 2_100) >= 0);
    const m = new RateLimiter(4);
    burst(m, "k", 3_999, 4);
    burst(m, "k", 4_000, 4);
    assert.equal(m.take("k", 4_000), -1);
    assert.ok(m.retryAfter("k", 4_000) >= 1);
  });

  it("is off with a limit of 0", () => {
    const l = new RateLimiter(0);
    assert.equal(l.enabled, false);
    assert.equal(burst(l, "k", 0, 10_000), 10_000);
  });
});
