/**
 * HTTP/1.1 written by hand over a plain socket, for the tests and the benchmarks alike: what fetch
 * and http.request cannot do (send bytes exactly as written, read an answer the server sends
 * before the upload is done, act the moment a status line arrives) and the load generator's
 * keep-alive client, which must cost as little as possible per request.
 *
 * - `requestHead`: a request head, the one place the request line and headers are written.
 * - `rawHttp`: one request, `Connection: close`, the complete answer parsed (`parseHttpAnswer`).
 * - `openRaw`: a connection that sends bytes as they are and keeps what comes back.
 * - `RawConnection`: a keep-alive connection with one request in flight (bench/load's `raw` client).
 */
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";

/** Where to connect. */
export interface RawTarget {
  host: string;
  port: number;
}

export interface RawHttpAnswer {
  status: number;
  /** Header names in lower case; the last value of a repeated header. */
  headers: Record<string, string>;
  /** The body as UTF-8 text, and parsed as JSON (undefined when it is not JSON). */
  text: string;
  body: unknown;
  /** The status line and headers as received (latin1), and the body's bytes (de-chunked). */
  head: string;
  bytes: Buffer;
}

/** `METHOD path HTTP/1.1`, Host, Connection, then `headers`, ending with the blank line. */
export function requestHead(
  method: string,
  pathAndQuery: string,
  host: string,
  headers: Record<string, string>,
  connection?: "close" | "keep-alive",
): string {
  let head = `${method} ${pathAndQuery} HTTP/1.1\r\nHost: ${host}\r\n`;
  if (connection !== undefined) head += `Connection: ${connection}\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  return `${head}\r\n`;
}

export interface RawHttpOptions {
  timeoutMs?: number;
  /** Checks a complete answer; a string is the reason it is refused (the promise rejects). */
  check?: (answer: RawHttpAnswer) => string | null;
}

/**
 * One HTTP/1.1 request over a plain socket, `Connection: close`, with `Content-Length`. Used for
 * oversized bodies: a server may answer 413 and close before reading everything, which fetch
 * reports as a network error; here the answer is read whatever happens to the rest of the upload.
 */
export function rawHttp(
  target: RawTarget,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer = Buffer.alloc(0),
  options: RawHttpOptions = {},
): Promise<RawHttpAnswer> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolveAnswer, reject) => {
    const socket = net.connect(target.port, target.host);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      const answer = parseHttpAnswer(Buffer.concat(chunks));
      if (answer === null && error === undefined && !socket.destroyed) return; // wait for more
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer !== null) {
        const refused = options.check?.(answer) ?? null;
        if (refused === null) resolveAnswer(answer);
        else reject(new Error(refused));
      } else reject(error ?? new Error(`no complete HTTP answer (${Buffer.concat(chunks).length} bytes)`));
    };
    const timer = setTimeout(() => finish(new Error(`rawHttp ${method} ${path}: timed out`)), timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      finish();
    });
    // EPIPE / ECONNRESET after the server answered and closed: the answer may already be here.
    // 'close' follows 'error' once the socket is torn down (no data comes after it): decide then.
    let socketError: Error | undefined;
    socket.on("error", (error) => {
      socketError = error;
    });
    socket.on("close", () => finish(socketError ?? new Error("connection closed without a complete answer")));
    socket.on("connect", () => {
      socket.write(
        requestHead(
          method,
          path,
          `${target.host}:${target.port}`,
          { ...headers, "Content-Length": String(body.length) },
          "close",
        ),
      );
      if (body.length === 0) return;
      // Like a client using `Expect: 100-continue`, give the server a moment to answer from the
      // headers alone (404, 413, 415) before uploading. Otherwise a server that answers early and
      // closes with the upload unread makes the kernel send RST, which discards its answer here.
      setTimeout(() => {
        if (!done && chunks.length === 0 && !socket.destroyed) socket.write(body, () => {});
      }, EARLY_ANSWER_MS);
    });
  });
}

const EARLY_ANSWER_MS = 100;

/** A complete HTTP answer in `data` (Content-Length or chunked), or null when more is needed. */
export function parseHttpAnswer(data: Buffer): RawHttpAnswer | null {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd === -1) return null;
  const headText = data.subarray(0, headEnd).toString("latin1");
  const head = headText.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]);
  if (m === null) return null;
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = data.subarray(headEnd + 4);
  let bodyBytes: Buffer;
  if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      if (lineEnd === -1) return null;
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString("latin1"), 16);
      if (Number.isNaN(size)) return null;
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return null;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    bodyBytes = Buffer.concat(parts);
  } else {
    const length = Number(headers["content-length"] ?? "0");
    if (rest.length < length) return null;
    bodyBytes = rest.subarray(0, length);
  }
  const text = bodyBytes.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(m[1]), headers, text, body, head: headText, bytes: bodyBytes };
}

/**
 * A connection that sends `request` as is once connected and keeps what comes back (latin1).
 * `onData` sees the whole text received so far after each chunk. Errors are ignored: a server
 * that refuses the request may reset the connection.
 */
export function openRaw(
  target: RawTarget,
  request: string,
  onData?: (received: string) => void,
): { received: () => string; destroy: () => void } {
  const socket = net.connect(target.port, target.host);
  let data = "";
  socket.on("data", (chunk: Buffer) => {
    data += chunk.toString("latin1");
    onData?.(data);
  });
  socket.on("error", () => {});
  socket.on("connect", () => socket.write(request, () => {}));
  return { received: () => data, destroy: () => socket.destroy() };
}

/**
 * Sends `request`, which must ask `Connection: close`, and resolves once the server closed the
 * connection with the status of every answer that came back (none when it closed without one) and
 * the bytes received.
 *
 * `pieceBytes` (default: one write) sends it the way a network delivers a long head: that many
 * bytes per write, `gapMs` apart, each write its own segment (no Nagle). So that the server reads
 * the first piece on its own whatever the machine's load (a server that falls a few ms behind reads
 * several pieces at once), a complete `GET /health` goes in the same write as that piece and the rest
 * waits for its answer, which is then the first status.
 */
export function statusesUntilClosed(
  target: RawTarget,
  request: string,
  pieceBytes = Number.POSITIVE_INFINITY,
  gapMs = 2,
): Promise<{ statuses: number[]; received: Buffer }> {
  const bytes = Buffer.from(request, "latin1");
  const inPieces = pieceBytes < bytes.length;
  const probe = Buffer.from(requestHead("GET", "/health", `${target.host}:${target.port}`, {}), "latin1");
  return new Promise((resolveStatuses, reject) => {
    const socket = net.connect({ host: target.host, port: target.port, noDelay: true });
    let received = Buffer.alloc(0);
    let rest = inPieces;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`the server did not close the connection; received ${received.toString("latin1", 0, 300)}`),
      );
    }, 10_000);
    const sendRest = async () => {
      for (let i = pieceBytes; i < bytes.length && !socket.destroyed; i += pieceBytes) {
        await delay(gapMs);
        socket.write(bytes.subarray(i, i + pieceBytes), () => {});
      }
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (rest && parseHttpAnswer(received) !== null) {
        rest = false;
        void sendRest();
      }
    });
    // A server that closes with part of the request unread resets the connection: what it sent
    // before is already here.
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const statuses = [...received.toString("latin1").matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) =>
        Number(m[1]),
      );
      resolveStatuses({ statuses, received });
    });
    socket.on("connect", () => {
      socket.write(inPieces ? Buffer.concat([probe, bytes.subarray(0, pieceBytes)]) : bytes, () => {});
    });
  });
}

// ---- keep-alive, one request in flight (the load generator's `raw` client) -----------------------

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

const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from("\r\n\r\n", "latin1");
const CONTENT_LENGTH = Buffer.from("Content-Length:", "latin1");
const CONTENT_LENGTH_LC = Buffer.from("content-length:", "latin1");

/**
 * A keep-alive connection over a bare socket; reconnects lazily after a failure. One request in
 * flight: no pipelining. The answer is parsed here as cheaply as possible (`HTTP/1.1 NNN`,
 * `Content-Length`; a chunked answer is reported as a protocol error).
 */
export class RawConnection {
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
    const head = requestHead(req.method, req.path, this.hostHeader, req.headers, "keep-alive");
    const text =
      req.method === "GET" && req.body === ""
        ? head
        : `${head.slice(0, -2)}Content-Length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
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
