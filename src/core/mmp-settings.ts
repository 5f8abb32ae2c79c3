/**
 * Market-maker protection on the main thread (docs/API.md 8.10). The pair worker decides everything
 * (workers/matching/mmp.ts: the window, the trigger, the freeze, the refusal of protected orders
 * of a frozen user); the main thread keeps what it must answer and resend:
 *
 *   settings   per user and pair, stored (migration 010) and sent to the worker by a OP_MMP_SET
 *              command (also at start, before /health turns 200: the worker keeps nothing)
 *   frozen     per user and pair, from the worker's `mmp` events; memory only, as the worker's
 *              own state: after a restart nobody is frozen and every window is empty
 *
 * A settings change or a reset is a command of the pair's FIFO (src/core/sequencer.ts), so it
 * takes effect between two orders exactly where it was sent; its answer leaves after the commit of
 * the batch that holds the settings row (`MmpRequest.done`, run by the core's afterCommit).
 *
 * Which order is protected is the `ORDER_MMP` bit of its flags (src/core/order-options.ts); the frozen
 * refusal is the engine's ERR_MMP_FROZEN (catalogue MMP_FROZEN, 400 `errors.mmp`). Quote orders
 * set the same bit.
 */

/** The settings of one user on one pair (docs/API.md 8.10); all 0 when never set (disabled). */
export interface MmpSettings {
  /** 1..3600; 0 disables counting. */
  intervalSeconds: number;
  /** Base lots; 0 only with intervalSeconds 0. */
  qtyLimit: number;
  /** 0..3600; 0: frozen until a reset. */
  frozenSeconds: number;
}

/** What GET /trade/mmp answers, in book units (the edge formats qtyLimit). */
export interface MmpStatus extends MmpSettings {
  frozen: boolean;
  /** Unix ms when the freeze ends; 0 when not frozen or frozen until a reset. */
  frozenUntil: number;
}

/** A settings change or a reset on its way through the pair's FIFO (Command.mmp). */
export interface MmpRequest {
  /** The new settings; null for a reset. */
  settings: MmpSettings | null;
  /** Runs once the command's effects are committed (never for a restore at start). */
  done: (() => void) | null;
}

/** Receives the frozen state changes (the trading sessions send them as `mmp` events). */
export type MmpListener = (user: number, pair: number, frozen: boolean, frozenUntil: number) => void;

const DISABLED: MmpSettings = Object.freeze({ intervalSeconds: 0, qtyLimit: 0, frozenSeconds: 0 });

/** A key per (user, pair): user ids are small integers and pairs fewer than 2^16. */
function keyOf(user: number, pair: number): number {
  return user * 65536 + pair;
}

export class MmpBook {
  constructor(
    /** Sends a CMD_MMP command into the pair's FIFO; false when the FIFO is full (nothing sent). */
    private readonly submit: (user: number, pair: number, request: MmpRequest) => boolean,
    /** Puts the settings row into the writer's current batch. */
    private readonly store: (user: number, pair: number, s: MmpSettings) => void,
  ) {}

  /**
   * New settings of `user` on `pair`: stored, and sent to the worker behind the commands already
   * in the pair's FIFO; `done` runs once they are committed. 0, or Code.BUSY (nothing changed).
   */
  set(user: number, pair: number, s: MmpSettings, done: () => void, busy: number): number {
    if (!this.submit(user, pair, { settings: { ...s }, done })) return busy;
    this.put(user, pair, s);
    this.store(user, pair, s);
    return 0;
  }

  /** Unfreezes `user` on `pair` and empties the window; `done` as for `set`. */
  reset(user: number, pair: number, done: () => void, busy: number): number {
    return this.submit(user, pair, { settings: null, done }) ? 0 : busy;
  }

  /** Start-up: stored settings back into memory and into the worker (false: the FIFO is full). */
  restore(user: number, pair: number, s: MmpSettings): boolean {
    this.put(user, pair, s);
    return this.submit(user, pair, { settings: { ...s }, done: null });
  }

  private readonly settings = new Map<number, MmpSettings>();
  /** Frozen users: the freeze's end in Unix ms (0: until a reset); absent: not frozen. */
  private readonly frozen = new Map<number, number>();
  /** Changes of the frozen state not yet handed to the listener (sent after their commit). */
  private pending: [number, number, boolean, number][] = [];
  listener: MmpListener | null = null;

  settingsOf(user: number, pair: number): MmpSettings {
    return this.settings.get(keyOf(user, pair)) ?? DISABLED;
  }

  /** Settings and frozen state as GET /trade/mmp answers them at `now` (Unix ms). */
  status(user: number, pair: number, now: number): MmpStatus {
    const s = this.settingsOf(user, pair);
    const until = this.frozenUntil(user, pair, now);
    return { ...s, frozen: until >= 0, frozenUntil: until < 0 ? 0 : until };
  }

  /** The end of the user's freeze on the pair (0: until a reset), or -1 when not frozen at `now`. */
  frozenUntil(user: number, pair: number, now: number): number {
    const key = keyOf(user, pair);
    const until = this.frozen.get(key);
    if (until === undefined) return -1;
    // A freeze that ran out is not frozen (the worker ends it at its next command of the user).
    if (until !== 0 && until <= now) {
      this.frozen.delete(key);
      return -1;
    }
    return until;
  }

  /** Records new settings (also at start, from the stored rows). */
  put(user: number, pair: number, s: MmpSettings): void {
    const key = keyOf(user, pair);
    if (s.intervalSeconds === 0 && s.qtyLimit === 0 && s.frozenSeconds === 0) this.settings.delete(key);
    else this.settings.set(key, { ...s });
  }

  /** The worker reported a trigger (frozen) or a reset (not frozen). */
  changed(user: number, pair: number, frozen: boolean, frozenUntil: number): void {
    const key = keyOf(user, pair);
    if (frozen) this.frozen.set(key, frozenUntil);
    else this.frozen.delete(key);
    this.pending.push([user, pair, frozen, frozenUntil]);
  }

  /** True when changes wait to be told (`takePending`). */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** The changes not yet told, oldest first; the list starts empty again. */
  takePending(): [number, number, boolean, number][] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Every stored setting (start-up resends them to the workers). */
  *all(): IterableIterator<[number, number, MmpSettings]> {
    for (const [key, s] of this.settings) yield [Math.floor(key / 65536), key % 65536, s];
  }
}
