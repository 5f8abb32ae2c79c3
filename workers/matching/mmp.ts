/**
 * One user's market-maker protection on one pair (docs/API.md 8.10), as the fast book keeps it: the
 * settings, the window of protected fills and the frozen state. Times are command times in ms
 * (the book reads no clock). The window holds the fills of the last `intervalMs`: a fill at time
 * `t` counts while the command time is below `t + intervalMs`.
 */
export class MmpState {
  intervalMs = 0;
  qtyLimit = 0;
  frozenMs = 0;
  frozen = false;
  /** Command time when the freeze ends; 0 while frozen means until a reset. */
  frozenUntil = 0;
  private times: number[] = [];
  private qtys: number[] = [];
  private head = 0;
  private sum = 0;

  /** New settings; the window starts empty, the frozen state stays. */
  set(intervalSeconds: number, qtyLimit: number, frozenSeconds: number): void {
    this.intervalMs = intervalSeconds * 1000;
    this.qtyLimit = qtyLimit;
    this.frozenMs = frozenSeconds * 1000;
    this.clear();
  }

  reset(): void {
    this.frozen = false;
    this.frozenUntil = 0;
    this.clear();
  }

  isFrozen(now: number): boolean {
    if (!this.frozen) return false;
    if (this.frozenUntil === 0 || now < this.frozenUntil) return true;
    this.frozen = false;
    this.frozenUntil = 0;
    return false;
  }

  /**
   * Counts a protected fill of `qty` lots at `now`. True when the window reached the limit: the
   * window is emptied and the user is frozen (the caller cancels the protected orders).
   */
  add(qty: number, now: number): boolean {
    if (this.intervalMs === 0) return false;
    const from = now - this.intervalMs;
    while (this.head < this.times.length && this.times[this.head] <= from) {
      this.sum -= this.qtys[this.head];
      this.head++;
    }
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.qtys = this.qtys.slice(this.head);
      this.head = 0;
    }
    this.times.push(now);
    this.qtys.push(qty);
    this.sum += qty;
    if (this.sum < this.qtyLimit) return false;
    this.clear();
    this.frozen = true;
    this.frozenUntil = this.frozenMs > 0 ? now + this.frozenMs : 0;
    return true;
  }

  private clear(): void {
    this.times = [];
    this.qtys = [];
    this.head = 0;
    this.sum = 0;
  }
}
