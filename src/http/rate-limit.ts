/**
 * Requests per second per key (an API token, or a client address for public calls), CONTRACT 1
 * and 5: a fixed one-second window per key. A limit of 0 turns limiting off.
 */
export class RateLimiter {
  private readonly limit: number;
  private window = 0;
  private counts = new Map<string, number>();

  constructor(perSecond: number) {
    this.limit = perSecond;
  }

  get enabled(): boolean {
    return this.limit > 0;
  }

  /** Counts one request for `key`; false when it exceeds this second's allowance. */
  allow(key: string, nowMs: number): boolean {
    if (this.limit <= 0) return true;
    const second = Math.floor(nowMs / 1000);
    if (second !== this.window) {
      // A new window: forget every key (memory stays bounded by one second of clients).
      this.window = second;
      this.counts = new Map();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n <= this.limit;
  }

  /** Seconds until the current window ends (the `Retry-After` value): at most 1, rounded up. */
  retryAfter(): number {
    return 1;
  }
}
