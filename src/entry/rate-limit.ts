/**
 * Requests per second per key (an API token, or a client address for public calls), docs/API.md 3:
 * a sliding window of one second, estimated from two fixed one-second windows (the "sliding window
 * counter"). The count of the previous second is weighted by the part of it that still lies inside
 * the last 1000 ms:
 *
 *     estimate(now) = previous × (1000 − ms into this second) / 1000 + current
 *
 * and a request is allowed while the estimate, itself included, stays within the limit. A fixed
 * window lets 2 × limit through around a window edge (a full window's worth just before it and
 * again just after); here the burst after the edge is held back by the one before it. Integer
 * arithmetic only (counts × ms). Only allowed requests are counted, so a client that keeps
 * hammering is served again as soon as its older requests slide out.
 *
 * Memory: two maps, this second's keys and the last second's; older keys are forgotten. A limit
 * of 0 turns limiting off.
 */
export class RateLimiter {
  readonly limit: number;
  private readonly limitMs: number;
  private window = 0;
  private previous = new Map<string, number>();
  private current = new Map<string, number>();

  constructor(perSecond: number) {
    this.limit = perSecond;
    this.limitMs = perSecond * 1000;
  }

  get enabled(): boolean {
    return this.limit > 0;
  }

  /**
   * Counts one request for `key` at `nowMs`. Returns the requests left in the window after it
   * (`X-RateLimit-Remaining`, ≥ 0), or −1 when it is refused (and not counted).
   */
  take(key: string, nowMs: number): number {
    if (this.limit <= 0) return 0;
    const second = Math.floor(nowMs / 1000);
    if (second !== this.window) {
      // The last second's counts weigh on this one; anything older is gone.
      this.previous = second === this.window + 1 ? this.current : new Map();
      this.current = new Map();
      this.window = second;
    }
    const curr = this.current.get(key) ?? 0;
    // The previous second weighs by the part of it still inside the last 1000 ms.
    let used = curr * 1000;
    if (this.previous.size > 0) {
      const prev = this.previous.get(key);
      if (prev !== undefined) used += prev * (1000 - (nowMs - second * 1000));
    }
    if (used + 1000 > this.limitMs) return -1;
    this.current.set(key, curr + 1);
    return Math.floor((this.limitMs - used - 1000) / 1000);
  }

  /**
   * Whole seconds (at least 1) until `key` may send again (the `Retry-After` of a 429 at `nowMs`,
   * just after `take` refused it).
   */
  retryAfter(key: string, nowMs: number): number {
    if (this.limit <= 0) return 0;
    const second = Math.floor(nowMs / 1000);
    const into = nowMs - second * 1000;
    const prev = second === this.window ? (this.previous.get(key) ?? 0) : 0;
    const curr = second === this.window ? (this.current.get(key) ?? 0) : 0;
    let waitMs: number;
    if (curr + 1 <= this.limit) {
      // Later in this second the previous second's weight has fallen enough:
      // prev × (1000 − t) + (curr + 1) × 1000 ≤ limit × 1000.
      const t = prev === 0 ? into : 1000 - Math.floor((this.limitMs - (curr + 1) * 1000) / prev);
      waitMs = Math.max(t, into) - into;
    } else {
      // In the next second this second's count is the weighted one: curr × (1000 − t) + 1000 ≤ limitMs.
      const t = 1000 - Math.floor((this.limitMs - 1000) / curr);
      waitMs = 1000 - into + Math.max(0, t);
    }
    return Math.max(1, Math.ceil(waitMs / 1000));
  }
}
