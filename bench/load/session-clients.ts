/**
 * The trading-session client of bench:load (docs/API.md 13): N WebSocket sessions (`ws`), each logged
 * on as one user, each keeping up to `depth` calls in flight; calls beyond that wait in the
 * session's FIFO (open loop: that wait counts, the latency runs from the scheduled send time).
 *
 * It has the interface of http-clients.ts's `Pool`, so the load generator's loops, checks and
 * accounting are the same as for HTTP: a request's `user` picks its session (the index of the
 * session's user in the list given to `open`), its REST body becomes the call's `params` verbatim
 * (create-order: `order.create`, cancel-order: `order.cancel`), and the answer's `result` is handed
 * back as the REST body (`{"id":N,"status":S,"result":R}` → S, R; an error answer → S and its
 * `{"errors",...}` object). Logon asks for `"reports": false` (see BENCHMARKS.md: the REST rows
 * have no user stream either), unless the run asks for reports (RunSpec.sessionReports): then each
 * create-order also carries a `clientOrderId` unique over the run, and the reports are read and
 * dropped.
 */
import { createHmac, randomBytes } from "node:crypto";
import WebSocket from "ws";
import type { BenchUser } from "./common.ts";
import type { Done, HttpRequestSpec } from "./http-clients.ts";

interface SessionRequest extends HttpRequestSpec {
  kind: string;
  user: number;
}

interface Waiting {
  req: SessionRequest;
  onDispatch: (() => void) | null;
  done: Done;
}

const METHODS: Record<string, string> = { create: "order.create", cancel: "order.cancel" };
const EMPTY = Buffer.alloc(0);

class Session {
  private readonly calls = new Map<number, Done>();
  private readonly queue: Waiting[] = [];
  private nextId = 1;
  private closed = false;
  /** With reports: the clientOrderId prefix of this session, unique over runs. */
  private readonly prefix = randomBytes(6).toString("hex");

  private constructor(
    private readonly ws: WebSocket,
    private readonly depth: number,
    private readonly reports: boolean,
  ) {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.onFrame(data);
    });
    ws.on("close", () => this.fail());
    ws.on("error", () => this.fail());
  }

  static async open(
    user: BenchUser,
    host: string,
    port: number,
    depth: number,
    reports: boolean,
  ): Promise<Session> {
    const ws = new WebSocket(`ws://${host}:${port}/session`, { perMessageDeflate: false });
    const hello = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("session: no hello within 5 s")), 5000);
      ws.once("message", (data: Buffer) => {
        clearTimeout(timer);
        resolve((JSON.parse(data.toString("utf8")) as { challenge: string }).challenge);
      });
      ws.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const signature = createHmac("sha256", user.secretKey).update(hello).digest("hex");
    const answer = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("session: no logon answer within 5 s")), 5000);
      ws.once("message", (data: Buffer) => {
        clearTimeout(timer);
        resolve(data.toString("utf8"));
      });
      ws.send(
        JSON.stringify({
          id: 0,
          method: "session.logon",
          params: { apiToken: user.apiToken, signature, reports },
        }),
      );
    });
    if (!answer.includes('"status":200')) throw new Error(`session logon refused: ${answer.slice(0, 200)}`);
    ws.binaryType = "nodebuffer";
    return new Session(ws, depth, reports);
  }

  get inFlight(): number {
    return this.calls.size;
  }

  submit(w: Waiting): void {
    if (this.closed) {
      w.done(0, EMPTY);
      return;
    }
    if (this.calls.size >= this.depth) this.queue.push(w);
    else this.send(w);
  }

  private send(w: Waiting): void {
    const id = this.nextId++;
    this.calls.set(id, w.done);
    w.onDispatch?.();
    const method = METHODS[w.req.kind] ?? "ping";
    let params = w.req.body === "" ? "{}" : w.req.body;
    // A create-order body is a JSON object: the clientOrderId goes in as its first member.
    if (this.reports && w.req.kind === "create")
      params = `{"clientOrderId":"${this.prefix}${id}",${params.slice(1)}`;
    this.ws.send(`{"id":${id},"method":"${method}","params":${params}}`);
  }

  /** `{"id":N,"status":S,"result":R}` or `{"id":N,"status":S,"errors":...}`; events are skipped. */
  private onFrame(data: Buffer): void {
    // {"id":
    if (data[2] !== 0x69 || data[3] !== 0x64) return;
    let i = 6;
    let id = 0;
    for (let c = data[i]; c >= 48 && c <= 57; c = data[++i]) id = id * 10 + (c - 48);
    i += 10; // ,"status":
    let status = 0;
    for (let c = data[i]; c >= 48 && c <= 57; c = data[++i]) status = status * 10 + (c - 48);
    const done = this.calls.get(id);
    if (done === undefined) return;
    this.calls.delete(id);
    // 200: `,"result":` then the REST body and the closing brace; else `{` + the rest is the body.
    const body =
      status === 200
        ? data.subarray(i + 10, data.length - 1)
        : Buffer.concat([Buffer.from("{"), data.subarray(i + 1)]);
    if (this.queue.length > 0 && this.calls.size < this.depth) this.send(this.queue.shift()!);
    done(status, body);
  }

  private fail(): void {
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
    this.ws.terminate();
  }
}

/** Sessions of one load generator process; `Pool`'s interface (http-clients.ts). */
export class SessionPool {
  private constructor(private readonly sessions: Session[]) {}

  static async open(
    users: readonly BenchUser[],
    host: string,
    port: number,
    depth: number,
    reports: boolean,
  ): Promise<SessionPool> {
    return new SessionPool(await Promise.all(users.map((u) => Session.open(u, host, port, depth, reports))));
  }

  submit(req: HttpRequestSpec, done: Done, onDispatch: (() => void) | null = null): void {
    const r = req as SessionRequest;
    this.sessions[r.user % this.sessions.length].submit({ req: r, onDispatch, done });
  }

  takeBacklog(): Waiting[] {
    return this.sessions.flatMap((s) => s.takeQueue());
  }

  close(): void {
    for (const s of this.sessions) s.close();
  }
}
