/**
 * The dead-man's switch (docs/API.md 8.7): `arm(user, seconds)` cancels every open order of the user
 * when `seconds` pass without another call; `seconds` 0 disarms. Held in memory only: a restart
 * disarms every switch (the open orders stay).
 */
export class DeadMansSwitch {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  /** `fire(user)` cancels the user's open orders. */
  constructor(private readonly fire: (user: number) => void) {}

  /** Arms (or re-arms, or with 0 disarms) the user's switch; the Unix ms it fires at, or 0. */
  arm(user: number, seconds: number, nowMs = Date.now()): number {
    const old = this.timers.get(user);
    if (old !== undefined) clearTimeout(old);
    this.timers.delete(user);
    if (seconds === 0) return 0;
    const timer = setTimeout(() => {
      this.timers.delete(user);
      this.fire(user);
    }, seconds * 1000);
    // A pending switch does not keep a stopping server alive.
    timer.unref();
    this.timers.set(user, timer);
    return nowMs + seconds * 1000;
  }

  /** Disarms every switch (shutdown). */
  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
