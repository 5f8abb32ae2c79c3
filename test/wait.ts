/**
 * Waiting in tests: on the condition a test needs (a row committed, a message arrived, a thread or
 * process gone, a server answering), never on a guessed delay. One helper for the whole suite.
 *
 *   await waitFor(() => feed.ready, { what: "the book feed's first snapshot" });
 *   const rows = await waitFor(async () => (await read()).length === 2 && rows, { what: "two rows" });
 *
 * `check` is polled (sync or async) until it returns something other than false, null or
 * undefined, which `waitFor` then returns. A timeout fails with what was waited for, how long, and
 * the last error `check` threw or the `detail()` of the state at the end.
 *
 * Where time itself is the condition (a rate-limit window, a key's expiry, a timer that must have
 * had its chance to fire), `sleepUntil` waits for that instant and no longer; the caller says why.
 */

export interface WaitOptions {
  /** Fails after this long (default 10 s: generous for a loaded two-core machine). */
  timeoutMs?: number;
  /** What is waited for, as it should read in the failure: "the dead-man's cancel of both orders". */
  what: string;
  /** Pause between checks in ms (default 10); 0 checks again on the next event-loop turn. */
  intervalMs?: number;
  /** The state worth showing when it times out (e.g. the messages received so far). */
  detail?: () => string;
}

export const WAIT_TIMEOUT_MS = 10_000;

/** Resolves with the first value of `check` that is not false, null or undefined. */
export async function waitFor<T>(
  check: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  options: WaitOptions,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? WAIT_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? 10;
  const started = performance.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== null && value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    const waited = performance.now() - started;
    if (waited >= timeoutMs) {
      let message = `timed out after ${Math.round(waited)} ms waiting for ${options.what}`;
      if (lastError !== undefined)
        message += `; last check threw: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      if (options.detail !== undefined) message += `; ${options.detail()}`;
      throw new Error(message, { cause: lastError });
    }
    await pause(Math.min(intervalMs, timeoutMs - waited));
  }
}

/** Waits until the wall clock (`Date.now()`) reaches `epochMs`: only where that instant is the condition. */
export async function sleepUntil(epochMs: number): Promise<void> {
  for (let left = epochMs - Date.now(); left > 0; left = epochMs - Date.now()) await pause(left);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0) setImmediate(resolve);
    else setTimeout(resolve, ms);
  });
}
