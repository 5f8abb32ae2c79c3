/**
 * What the trading-session and FIX clients of bench:load share (session-clients.ts,
 * fix-clients.ts): a connection keeping up to `depth` calls in flight, each waiting for the answer
 * that names it by a key (a call id, a ClOrdID); calls beyond the depth wait in a FIFO (open loop:
 * that wait counts). The pool of such connections has http-clients.ts's `Pool` interface: a
 * request's `user` picks its connection.
 */
import type { Done, HttpRequestSpec } from "./http-clients.ts";

export interface PipelinedRequest extends HttpRequestSpec {
  kind: string;
  user: number;
}

export interface Waiting {
  req: PipelinedRequest;
  onDispatch: (() => void) | null;
  done: Done;
}

const EMPTY = Buffer.alloc(0);

export abstract class Pipelined<K> {
  private readonly calls = new Map<K, Done>();
  private readonly queue: Waiting[] = [];
  protected closed = false;

  constructor(private readonly depth: number) {}

  get inFlight(): number {
    return this.calls.size;
  }

  submit(w: Waiting): void {
    if (this.closed) {
      w.done(0, EMPTY);
      return;
    }
    if (this.calls.size >= this.depth) this.queue.push(w);
    else this.dispatch(w);
  }

  /** The key that will name the answer to the next call written. */
  protected abstract nextKey(): K;

  /** Writes the call of `w` under `key`. */
  protected abstract write(w: Waiting, key: K): void;

  /** Closes the connection (the pool is done with it). */
  protected abstract terminate(): void;

  private dispatch(w: Waiting): void {
    const key = this.nextKey();
    this.calls.set(key, w.done);
    w.onDispatch?.();
    this.write(w, key);
  }

  /** The answer naming `key` arrived: its call's `done` (undefined: no such call); the next waiting call goes. */
  protected answered(key: K): Done | undefined {
    const done = this.calls.get(key);
    if (done === undefined) return undefined;
    this.calls.delete(key);
    if (this.queue.length > 0 && this.calls.size < this.depth) this.dispatch(this.queue.shift()!);
    return done;
  }

  /** The connection failed: every call in flight ends with status 0. */
  protected fail(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = [...this.calls.values()];
    this.calls.clear();
    for (const d of pending) d(0, EMPTY);
  }

  takeQueue(): Waiting[] {
    return this.queue.splice(0);
  }

  close(): void {
    this.closed = true;
    this.calls.clear();
    this.queue.length = 0;
    this.terminate();
  }
}

/** Connections of one load generator process; `Pool`'s interface (http-clients.ts). */
export class PipelinedPool {
  constructor(private readonly conns: readonly Pipelined<unknown>[]) {}

  submit(req: HttpRequestSpec, done: Done, onDispatch: (() => void) | null = null): void {
    const r = req as PipelinedRequest;
    this.conns[r.user % this.conns.length].submit({ req: r, onDispatch, done });
  }

  takeBacklog(): Waiting[] {
    return this.conns.flatMap((c) => c.takeQueue());
  }

  close(): void {
    for (const c of this.conns) c.close();
  }
}
