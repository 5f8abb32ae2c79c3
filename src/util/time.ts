/** Wall-clock helpers of the front end (the matching engine never reads a clock). */

/** Microseconds since the epoch (sub-millisecond resolution from the monotonic clock). */
export function nowMicro(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

let cachedSecond = -1;
let cachedText = "";

/** `YYYY-MM-DD HH:MM:SS` in UTC (docs/API.md 1); cached per second since many records share one. */
export function formatDateTime(micro: number): string {
  const second = Math.floor(micro / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    const iso = new Date(second * 1000).toISOString();
    cachedText = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  }
  return cachedText;
}
