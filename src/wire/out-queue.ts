/**
 * What the trading sessions' outbox (src/session/outbox.ts) and the FIX gateway's queue
 * (src/fix/fix-gateway.ts) share: each connection's outgoing slots in arrival order from `head`
 * (an answer takes its slot when its call arrives, so it precedes the reports of what it changed),
 * written once per event-loop turn per connection that has something ready.
 */

/** A connection's outgoing slots, oldest unsent first from `head`. */
export interface OutQueue<S> {
  out: S[];
  head: number;
  /** Marked for this turn's flush. */
  dirty: boolean;
}

/**
 * The slots before `i` are written: they leave the queue (the array is emptied when all are out,
 * and cut once the written part is long and most of it).
 */
export function written<S>(q: OutQueue<S>, i: number): void {
  const out = q.out;
  if (i === out.length) {
    out.length = 0;
    q.head = 0;
  } else if (i > 1024 && i * 2 > out.length) {
    out.splice(0, i);
    q.head = 0;
  } else q.head = i;
}

/** Connections with something to write, each flushed once at the end of this event-loop turn. */
export class TurnFlush<C> {
  private readonly pending: C[] = [];
  private readonly queues: OutQueue<unknown>[] = [];
  private scheduled = false;

  constructor(
    /** Writes what `c` has ready (its `dirty` flag is already down). */
    private readonly flushOne: (c: C) => void,
  ) {}

  /** `c`, whose queue is `q`, has something ready: written this turn (once, however often marked). */
  mark(c: C, q: OutQueue<unknown>): void {
    if (q.dirty) return;
    q.dirty = true;
    this.pending.push(c);
    this.queues.push(q);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const list = this.pending.splice(0);
    const queues = this.queues.splice(0);
    for (let i = 0; i < list.length; i++) {
      queues[i].dirty = false;
      this.flushOne(list[i]);
    }
  };
}
