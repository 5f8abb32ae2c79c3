/**
 * Two HTTP/1.1 keep-alive clients with one interface, so that the load generator can measure which
 * gives the higher ceiling and then drive both the exchange and the bare server with the faster:
 *
 * - `raw`: one `net.Socket` per connection, request bytes written by hand, the answer parsed here
 *   (`HTTP/1.1 NNN`, `Content-Length`; chunked answers are reported as a protocol error). One
 *   request in flight per connection: no pipelining.
 * - `agent`: `http.request` over `http.Agent({keepAlive: true})`, at most one request per socket.
 *
 * A `Pool` holds N connections and a FIFO of requests waiting for an idle one (open loop: a backlog
 * grows there when the server is slower than the offered rate; the waiting time counts in the
 * latency because the caller measures from the scheduled send time).
 */
import http from "node:http";
import net from "node:net";
import type { ClientKind } from "./common.ts";

export interface HttpRequestSpec {
  method: "GET" | "POST";
  /** Path and query, from the server root. */
  path: string;
  /** Headers other than Host, Connection and Content-Length. */
  headers: Record<string, string>;
  body: string;
}

/** status 0: the connection failed or the answer could not be parsed. `body` is only valid in the call. */
export type Done = (status: number, body: Buffer) => void;

interface Conn {
  busy: boolean;
  send(req: HttpRequestSpec, done: Done): void;
  destroy(): void;
}

const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from("\r\n\r\n", "latin1");
const CONTENT_LENGTH = Buffer.from("Content-Length:", "latin1");
const CONTENT_LENGTH_LC = Buffer.from("content-length:", "latin1");

/** A keep-alive connection over a bare socket; reconnects lazily after a failure. */
class RawConn implements Conn {
  busy = false;
  private socket: net.Socket | null = null;
  private pending: Buffer | null = null;
  private done: Done | null = null;
  private destroyed = false;
  private readonly hostHeader: string;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.hostHeader = `${host}:${port}`;
  }

  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
      this.socket = socket;
      socket.on("data", (chunk: Buffer) => this.onData(chunk));
      socket.on("error", () => {
        // Reported through "close".
      });
      socket.on("close", () => {
        if (this.socket === socket) this.socket = null;
        this.pending = null;
        this.fail();
      });
      socket.once("connect", () => resolve());
      socket.once("error", reject);
    });
  }

  send(req: HttpRequestSpec, done: Done): void {
    this.busy = true;
    this.done = done;
    let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nConnection: keep-alive\r\n`;
    for (const name in req.headers) head += `${name}: ${req.headers[name]}\r\n`;
    const text =
      req.method === "GET" && req.body === ""
        ? `${head}\r\n`
        : `${head}Content-Length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
    if (this.socket === null) {
      if (this.destroyed) {
        this.fail();
        return;
      }
      this.connect().then(
        () => this.socket?.write(text),
        () => this.fail(),
      );
      return;
    }
    this.socket.write(text);
  }

  private fail(): void {
    const done = this.done;
    this.done = null;
    this.busy = false;
    if (done !== null) done(0, EMPTY);
  }

  private onData(chunk: Buffer): void {
    let buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    const headEnd = buf.indexOf(HEAD_END);
    if (headEnd === -1) {
      this.pending = buf;
      return;
    }
    if (buf.length < 12 || buf[0] !== 0x48 /* H */) {
      this.protocolError();
      return;
    }
    const status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
    let at = buf.indexOf(CONTENT_LENGTH);
    if (at === -1 || at > headEnd) at = buf.indexOf(CONTENT_LENGTH_LC);
    if (at === -1 || at > headEnd) {
      this.protocolError();
      return;
    }
    let i = at + CONTENT_LENGTH.length;
    while (buf[i] === 0x20) i++;
    let length = 0;
    for (let c = buf[i]; c >= 48 && c <= 57; c = buf[++i]) length = length * 10 + (c - 48);
    const bodyStart = headEnd + 4;
    if (buf.length < bodyStart + length) {
      this.pending = buf;
      return;
    }
    if (buf.length > bodyStart + length) {
      this.protocolError(); // nothing was pipelined: more bytes than one answer
      return;
    }
    const body = buf.subarray(bodyStart, bodyStart + length);
    buf = EMPTY;
    const done = this.done;
    this.done = null;
    this.busy = false;
    if (done !== null) done(status, body);
  }

  private protocolError(): void {
    // Start over on a fresh socket: the stream position is unknown.
    this.pending = null;
    const s = this.socket;
    this.socket = null;
    s?.destroy();
    this.fail();
  }

  destroy(): void {
    this.destroyed = true;
    const s = this.socket;
    this.socket = null;
    s?.destroy();
    this.done = null;
    this.busy = false;
  }
}

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
      const conns = Array.from({ length: connections }, () => new RawConn(host, port));
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
