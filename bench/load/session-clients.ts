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
import { Pipelined, PipelinedPool, type Waiting } from "./pipelined.ts";

const METHODS: Record<string, string> = { create: "order.create", cancel: "order.cancel" };

class Session extends Pipelined<number> {
  private nextId = 1;
  /** With reports: the clientOrderId prefix of this session, unique over runs. */
  private readonly prefix = randomBytes(6).toString("hex");

  private constructor(
    private readonly ws: WebSocket,
    depth: number,
    private readonly reports: boolean,
  ) {
    super(depth);
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

  protected nextKey(): number {
    return this.nextId++;
  }

  protected write(w: Waiting, id: number): void {
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
    const done = this.answered(id);
    if (done === undefined) return;
    // 200: `,"result":` then the REST body and the closing brace; else `{` + the rest is the body.
    const body =
      status === 200
        ? data.subarray(i + 10, data.length - 1)
        : Buffer.concat([Buffer.from("{"), data.subarray(i + 1)]);
    done(status, body);
  }

  protected terminate(): void {
    this.ws.terminate();
  }
}

/** Sessions of one load generator process; `Pool`'s interface (http-clients.ts). */
export async function openSessionPool(
  users: readonly BenchUser[],
  host: string,
  port: number,
  depth: number,
  reports: boolean,
): Promise<PipelinedPool> {
  return new PipelinedPool(await Promise.all(users.map((u) => Session.open(u, host, port, depth, reports))));
}
