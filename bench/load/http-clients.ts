/**
 * Two HTTP/1.1 keep-alive clients with one interface, so that the load generator can measure which
 * gives the higher ceiling and then drive both the exchange and the bare server with the faster:
 *
 * - `raw`: one `net.Socket` per connection, request bytes written by hand, the answer parsed by
 *   hand (`RawConnection` of test/support/raw-http.ts). One request in flight per connection: no
 *   pipelining.
 * - `agent`: `http.request` over `http.Agent({keepAlive: true})`, at most one request per socket.
 *
 * A `Pool` holds N connections and a FIFO of requests waiting for an idle one (open loop: a backlog
 * grows there when the server is slower than the offered rate; the waiting time counts in the
 * latency because the caller measures from the scheduled send time).
 */
import http from "node:http";
import { type Done, type HttpRequestSpec, RawConnection } from "../../test/support/raw-http.ts";
import type { ClientKind } from "./common.ts";

export type { Done, HttpRequestSpec };

interface Conn {
  busy: boolean;
  send(req: HttpRequestSpec, done: Done): void;
  destroy(): void;
}

const EMPTY = Buffer.alloc(0);

/** A slot of an `http.Agent` with keepAlive (the agent owns the sockets, one per slot). */
class AgentConn implements Conn {
  busy = false;
  private current: http.ClientRequest | null = null;
  private destroyed = false;

  constructor(
    private readonly agent: http.Agent,
    private readonly host: string,
    private readonly port: number,
  ) {}

  send(req: HttpRequestSpec, done: Done): void {
    this.busy = true;
    let finished = false;
    const finish = (status: number, body: Buffer) => {
      if (finished) return;
      finished = true;
      this.current = null;
      this.busy = false;
      if (!this.destroyed) done(status, body);
    };
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.method !== "GET" || req.body !== "") headers["Content-Length"] = Buffer.byteLength(req.body);
    const r = http.request(
      { agent: this.agent, host: this.host, port: this.port, method: req.method, path: req.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          finish(res.statusCode ?? 0, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
        );
        res.on("error", () => finish(0, EMPTY));
      },
    );
    r.on("error", () => finish(0, EMPTY));
    r.once("socket", (socket) => socket.setNoDelay(true)); // as the raw client: no Nagle delay
    this.current = r;
    if (req.method === "GET" && req.body === "") r.end();
    else r.end(req.body);
  }

  destroy(): void {
    this.destroyed = true;
    this.current?.destroy();
    this.current = null;
    this.busy = false;
  }
}

interface Waiting {
  req: HttpRequestSpec;
  onDispatch: (() => void) | null;
  done: Done;
}

/** N connections of one kind and a FIFO of requests waiting for an idle connection. */
export class Pool {
  private readonly conns: Conn[] = [];
  private readonly idle: Conn[] = [];
  private readonly queue: Waiting[] = [];
  private queueHead = 0;
  private agent: http.Agent | null = null;
  private closed = false;

  private constructor(readonly kind: ClientKind) {}

  static async open(kind: ClientKind, host: string, port: number, connections: number): Promise<Pool> {
    const pool = new Pool(kind);
    if (kind === "raw") {
      const conns = Array.from({ length: connections }, () => new RawConnection(host, port));
      await Promise.all(conns.map((c) => c.connect()));
      pool.conns.push(...conns);
    } else {
      pool.agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
      for (let i = 0; i < connections; i++) pool.conns.push(new AgentConn(pool.agent, host, port));
    }
    pool.idle.push(...pool.conns);
    return pool;
  }

  get backlog(): number {
    return this.queue.length - this.queueHead;
  }

  get inFlight(): number {
    return this.conns.length - this.idle.length;
  }

  /**
   * Sends now on an idle connection, or queues. `onDispatch` runs right before the bytes are
   * written (to measure the generator's own lag); `done` runs with the answer.
   */
  submit(req: HttpRequestSpec, done: Done, onDispatch: (() => void) | null = null): void {
    if (this.closed) return;
    const conn = this.idle.pop();
    if (conn === undefined) {
      this.queue.push({ req, onDispatch, done });
      return;
    }
    this.dispatch(conn, req, done, onDispatch);
  }

  private dispatch(conn: Conn, req: HttpRequestSpec, done: Done, onDispatch: (() => void) | null): void {
    onDispatch?.();
    conn.send(req, (status, body) => {
      // The connection is free again before the caller reacts (it may submit at once).
      if (!this.closed) this.idle.push(conn);
      done(status, body);
      if (!this.closed) this.next();
    });
  }

  private next(): void {
    while (this.queueHead < this.queue.length) {
      const conn = this.idle.pop();
      if (conn === undefined) return;
      const w = this.queue[this.queueHead];
      this.queue[this.queueHead++] = undefined as unknown as Waiting;
      if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
        this.queue.splice(0, this.queueHead);
        this.queueHead = 0;
      }
      this.dispatch(conn, w.req, w.done, w.onDispatch);
    }
  }

  /** Requests still waiting for a connection (never sent), removed from the pool. */
  takeBacklog(): Waiting[] {
    const rest = this.queue.slice(this.queueHead);
    this.queue.length = 0;
    this.queueHead = 0;
    return rest;
  }

  close(): void {
    this.closed = true;
    for (const c of this.conns) c.destroy();
    this.agent?.destroy();
    this.queue.length = 0;
    this.queueHead = 0;
  }
}
