/**
 * A load generator process (forked by run.ts, never inside a server's process). It receives the
 * users once, then runs one `RunSpec` at a time and answers with counts and HDR histograms.
 *
 * Latency is measured from each request's *scheduled* send time:
 * - open loop: request i of a run is scheduled at start + i / rate, whatever happened before; when
 *   every connection is busy it waits in the pool's FIFO, and that wait counts (no coordinated
 *   omission). The generator sleeps with setTimeout when the next send is more than 2 ms away and
 *   spins with setImmediate otherwise (pacing "spin": sends on time, costs a core) or always sleeps
 *   (pacing "timer": ~1 ms timer granularity, the lateness counts in the latency), or a ticker
 *   thread wakes it at each send time (pacing "thread", bench/load/ticker.ts: little CPU, but each
 *   wake-up is late by about 0.15 ms here); its own lateness (write time − scheduled time) is
 *   reported apart as `sendLag`.
 * - closed loop: `connections` loops, each sends, waits for the answer, sends again; the latency
 *   is from the write of each request (this mode measures maximum throughput, not latency).
 * Requests scheduled in the warm-up are sent but not recorded. Throughput counts answers received
 * inside the measurement window. At the end, requests never sent (backlog at the drain deadline) or
 * never answered (2 s after it) are recorded at their age then (a lower bound) and counted apart.
 */

import WebSocket from "ws";
import { signText } from "../../src/client/index.ts";
import {
  type BenchUser,
  encodeHistogram,
  errorMessage,
  type FromLoadgen,
  type KindResult,
  newHistogram,
  READ_PROBE_EVERY_MS,
  type RunResult,
  type RunSpec,
  type StreamResult,
  type ToLoadgen,
} from "./common.ts";
import { openFixPool } from "./fix-clients.ts";
import { Pool } from "./http-clients.ts";
import { openSessionPool } from "./session-clients.ts";
import { Ticker } from "./ticker.ts";
import { type BenchRequest, type Kind, RequestFlow } from "./workload.ts";

type Histogram = ReturnType<typeof newHistogram>;

let users: BenchUser[] = [];
/** This process's index among the load generators (FIX SenderCompIDs differ between processes). */
let genIndex = 0;
/** FIX pools opened so far: each opening's SenderCompIDs are new. */
let fixOpenings = 0;

function reply(msg: FromLoadgen): void {
  process.send?.(msg);
}

process.on("message", (msg: ToLoadgen) => {
  if (msg.type === "init") {
    users = msg.users;
    genIndex = msg.index;
    reply({ type: "ready" });
  } else if (msg.type === "run") {
    run(msg.spec).then(
      (result) => reply({ type: "result", id: msg.id, result }),
      (err: unknown) => reply({ type: "failed", id: msg.id, error: errorMessage(err) }),
    );
  } else if (msg.type === "exit") {
    process.exit(0);
  }
});
process.on("disconnect", () => process.exit(0));

interface KindAcc {
  sent: number;
  answered: number;
  statuses: Record<string, number>;
  verified: number;
  expectedErrors: number;
  completedInWindow: number;
  errorSamples: string[];
  hist: Histogram;
}

interface InFlight {
  req: BenchRequest;
  sched: number;
}

/** After the deadline, how long requests already on the wire may still take before they count as timeouts. */
const GRACE_MS = 2000;

const us = (ms: number) => Math.max(0, Math.round(ms * 1000));

async function run(spec: RunSpec): Promise<RunResult> {
  if (spec.target.host !== "127.0.0.1") throw new Error("load generator targets 127.0.0.1 only");
  const sessions = spec.sessionDepth > 0;
  // A session is one user: the first `connections` users of this process, one per session.
  const flowUsers = sessions ? users.slice(0, spec.connections) : users;
  if (flowUsers.length < spec.connections) throw new Error("fewer users than sessions");
  const pool =
    sessions && spec.fixPort > 0
      ? await openFixPool(
          flowUsers,
          spec.target.host,
          spec.fixPort,
          spec.sessionDepth,
          "EXCHANGE",
          (genIndex * 1000 + fixOpenings++) * 1000,
        )
      : sessions
        ? await openSessionPool(
            flowUsers,
            spec.target.host,
            spec.target.port,
            spec.sessionDepth,
            spec.sessionReports,
          )
        : await Pool.open(spec.client, spec.target.host, spec.target.port, spec.connections);
  const track = spec.realServer && spec.workload === "mix";
  const flow = new RequestFlow(
    flowUsers,
    spec.workload,
    spec.seed,
    spec.cancelShare,
    track,
    spec.mode === "closed" ? spec.connections : 0,
  );
  const wantsStream =
    spec.streamUsers > 0 && spec.realServer && (spec.workload === "create" || spec.workload === "mix");
  const probe = wantsStream
    ? await StreamProbe.open(users.slice(0, spec.streamUsers), spec.target.port)
    : null;

  const accs = new Map<Kind, KindAcc>();
  const acc = (kind: Kind): KindAcc => {
    let a = accs.get(kind);
    if (a === undefined) {
      a = {
        sent: 0,
        answered: 0,
        statuses: {},
        verified: 0,
        expectedErrors: 0,
        completedInWindow: 0,
        errorSamples: [],
        hist: newHistogram(),
      };
      accs.set(kind, a);
    }
    return a;
  };
  const sendLag = newHistogram();
  const inflight = new Set<InFlight>();
  let unsent = 0;

  const cpu0 = process.cpuUsage();
  const start = performance.now() + 50;
  const measureFrom = start + spec.warmupMs;
  const measureTo = measureFrom + spec.durationMs;
  const deadline = measureTo + spec.drainMs;
  const inWindow = (t: number) => t >= measureFrom && t < measureTo;

  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let schedulingDone = false;
  const maybeDone = () => {
    if (schedulingDone && inflight.size === 0) finish();
  };

  // RunSpec.readProbe: slot 0 reads an order back right after its create ack, now and then.
  const readHist = newHistogram();
  let reads = 0;
  let readsFailed = 0;
  let lastRead = 0;
  const readProbe = spec.readProbe && spec.realServer && spec.mode === "closed" && !sessions;
  /** Reads order `id` of `user` from its committed row; `next` runs once answered. */
  const readBack = (user: number, id: number, next: () => void) => {
    const u = users[user];
    const sent = performance.now();
    lastRead = sent;
    const expect = Buffer.from(`{"id":${id},`, "latin1");
    pool.submit(
      {
        method: "GET",
        path: `/1.0/trade/orders/${id}`,
        headers: { Authorization: u.apiToken, "X-Signature": signText(u.secretKey, "") },
        body: "",
      },
      (status, body) => {
        const t = performance.now();
        if (inWindow(sent)) {
          // The row must be there: a read right after the ack sees what the ack reported.
          if (status === 200 && body.subarray(0, expect.length).equals(expect)) {
            reads++;
            readHist.recordValue(us(t - sent));
          } else readsFailed++;
        }
        next();
      },
    );
  };

  /** Sends one request scheduled at `sched`; `after` runs once it is answered (closed loop). */
  const submit = (
    sched: number,
    slot: number,
    after: ((status: number, user: number, orderId: number) => void) | null,
  ) => {
    const req = flow.next(sessions && slot >= 0 ? slot % spec.connections : slot);
    const entry: InFlight = { req, sched };
    inflight.add(entry);
    const measured = inWindow(sched);
    if (measured) acc(req.kind).sent++;
    pool.submit(
      req,
      (status, body) => {
        if (!inflight.delete(entry)) return;
        const t = performance.now();
        const check = status > 0 ? flow.verify(req, status, body) : { ok: false, orderId: 0 };
        // Throughput counts served requests: good answers and the expected cancel race.
        if (inWindow(t) && (check.ok || (status > 0 && RequestFlow.expectedError(req, status, body))))
          acc(req.kind).completedInWindow++;
        if (measured) {
          const a = acc(req.kind);
          const key = status === 0 ? "error" : status === -1 ? "unsent" : String(status);
          a.statuses[key] = (a.statuses[key] ?? 0) + 1;
          if (status !== -1) a.answered++;
          if (check.ok) a.verified++;
          else if (status > 0 && RequestFlow.expectedError(req, status, body)) a.expectedErrors++;
          else if (status > 0 && a.errorSamples.length < 5) {
            const sample = `${status} ${body.toString("utf8", 0, Math.min(body.length, 300))} <- ${req.body}`;
            if (!a.errorSamples.some((e) => e.slice(0, 60) === sample.slice(0, 60)))
              a.errorSamples.push(sample);
          }
          a.hist.recordValue(us(t - sched));
          if (probe !== null && check.orderId > 0) probe.ack(req.user, check.orderId, t);
        }
        if (after !== null) after(status, req.user, check.orderId);
        else maybeDone();
      },
      spec.mode === "open" && measured ? () => sendLag.recordValue(us(performance.now() - sched)) : null,
    );
  };

  let ticker: Ticker | null = null;
  if (spec.mode === "closed") {
    const loops = sessions ? spec.connections * spec.sessionDepth : spec.connections;
    let active = loops;
    let sent = 0;
    const loop = (slot: number) => {
      const now = performance.now();
      if (now >= measureTo || sent >= spec.maxRequests) {
        if (--active === 0) {
          schedulingDone = true;
          maybeDone();
        }
        return;
      }
      sent++;
      submit(now, slot, (status, user, orderId) => {
        if (status <= 0)
          setTimeout(loop, 5, slot); // a broken connection: do not spin on errors
        else if (
          readProbe &&
          slot === 0 &&
          orderId > 0 &&
          performance.now() - lastRead >= READ_PROBE_EVERY_MS
        )
          readBack(user, orderId, () => loop(slot));
        else loop(slot);
      });
    };
    setTimeout(
      () => {
        for (let i = 0; i < loops; i++) loop(i);
      },
      Math.max(0, start - performance.now()),
    );
  } else {
    const interval = 1000 / spec.rate;
    const total = Math.min(
      spec.maxRequests,
      Math.floor((spec.rate * (spec.warmupMs + spec.durationMs)) / 1000),
    );
    let i = 0;
    /** Sends every request due by now; returns false once all are sent. */
    const sendDue = (): boolean => {
      const now = performance.now();
      while (i < total) {
        const sched = start + i * interval;
        if (sched > now) break;
        i++;
        submit(sched, -1, null);
      }
      if (i < total) return true;
      ticker?.stop();
      schedulingDone = true;
      maybeDone();
      return false;
    };
    if (spec.pacing === "thread") {
      ticker = new Ticker(start, interval, total, sendDue);
    } else {
      const pump = () => {
        if (!sendDue()) return;
        const wait = start + i * interval - performance.now();
        if (spec.pacing === "timer" || wait > 2) setTimeout(pump, Math.max(0, wait - 1));
        else setImmediate(pump);
      };
      setTimeout(pump, Math.max(0, start - performance.now() - 1));
    }
  }

  const timer = setTimeout(finish, deadline - performance.now());
  await finished;
  clearTimeout(timer);
  ticker?.stop();

  // Never sent (still in the backlog at the deadline): recorded at their age now (a lower bound).
  // Sent but not answered yet: a last grace period, then they are timeouts, recorded at their age.
  for (const w of pool.takeBacklog()) w.done(-1, Buffer.alloc(0));
  const graceUntil = performance.now() + GRACE_MS;
  while (inflight.size > 0 && performance.now() < graceUntil) await new Promise((r) => setTimeout(r, 10));
  const end = performance.now();
  for (const entry of inflight) {
    if (!inWindow(entry.sched)) continue;
    const a = acc(entry.req.kind);
    a.statuses.timeout = (a.statuses.timeout ?? 0) + 1;
    a.hist.recordValue(us(end - entry.sched));
  }
  for (const a of accs.values()) unsent += a.statuses.unsent ?? 0;
  inflight.clear();
  pool.close();

  let stream: StreamResult | null = null;
  if (probe !== null) {
    await new Promise((r) => setTimeout(r, 300)); // late stream messages
    stream = probe.close();
  }
  const cpu = process.cpuUsage(cpu0);

  const kinds: Record<string, KindResult> = {};
  for (const [kind, a] of accs) {
    kinds[kind] = {
      sent: a.sent,
      statuses: a.statuses,
      verified: a.verified,
      expectedErrors: a.expectedErrors,
      completedInWindow: a.completedInWindow,
      errorSamples: a.errorSamples,
      histogram: encodeHistogram(a.hist),
    };
    a.hist.destroy();
  }
  const result: RunResult = {
    label: spec.label,
    windowMs: spec.durationMs,
    kinds,
    sendLag: encodeHistogram(sendLag),
    unsent,
    stream,
    readAfterAck: readProbe
      ? { count: reads, failed: readsFailed, histogram: encodeHistogram(readHist) }
      : null,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  sendLag.destroy();
  readHist.destroy();
  return result;
}

/**
 * `user_orders:<uid>` streams of a few users: the time from a create-order ack (HTTP answer
 * parsed) to the first stream message carrying that order id, both taken in this process.
 */
class StreamProbe {
  private readonly sockets: WebSocket[] = [];
  private readonly subscribed: number;
  /** Order id → time of its first stream message. */
  private readonly firstSeen = new Map<number, number>();
  /** Order id → ack time, waiting for the stream message. */
  private readonly waiting = new Map<number, number>();
  private readonly hist = newHistogram();
  private matched = 0;
  private streamFirst = 0;
  private note = "";

  private constructor(subscribed: number) {
    this.subscribed = subscribed;
  }

  static async open(subscribers: readonly BenchUser[], port: number): Promise<StreamProbe> {
    const probe = new StreamProbe(subscribers.length);
    try {
      await Promise.all(subscribers.map((u) => probe.connect(u, port)));
    } catch (err) {
      probe.close();
      const skipped = new StreamProbe(0);
      skipped.note = `stream measurement skipped: ${(err as Error).message}`;
      return skipped;
    }
    return probe;
  }

  private connect(user: BenchUser, port: number): Promise<void> {
    const query = `streams=user_orders:${user.uid}`;
    const signature = signText(user.secretKey, query);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/stream?${query}`, {
      headers: { Authorization: user.apiToken, "X-Signature": signature },
      perMessageDeflate: false,
    });
    this.sockets.push(ws);
    ws.on("message", (data: Buffer) => this.onMessage(data));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("upgrade timed out after 3 s")), 3000);
      ws.once("open", () => {
        clearTimeout(timer);
        resolve();
      });
      ws.once("unexpected-response", (_req, res) => {
        clearTimeout(timer);
        reject(new Error(`upgrade answered HTTP ${res.statusCode}`));
      });
      ws.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  private onMessage(data: Buffer): void {
    const t = performance.now();
    let id: unknown;
    try {
      id = (JSON.parse(data.toString("utf8")) as { data?: { id?: unknown } }).data?.id;
    } catch {
      return;
    }
    if (typeof id !== "number" || this.firstSeen.has(id)) return;
    this.firstSeen.set(id, t);
    const ackAt = this.waiting.get(id);
    if (ackAt !== undefined) {
      this.waiting.delete(id);
      this.matched++;
      this.hist.recordValue(us(t - ackAt));
    }
  }

  /** A create-order ack of user index `user` (only the first `subscribed` users have a stream). */
  ack(user: number, orderId: number, t: number): void {
    if (user >= this.subscribed) return;
    const seen = this.firstSeen.get(orderId);
    if (seen === undefined) {
      this.waiting.set(orderId, t);
      return;
    }
    this.matched++;
    this.streamFirst++;
    this.hist.recordValue(0);
  }

  close(): StreamResult {
    for (const ws of this.sockets) ws.terminate();
    const result: StreamResult = {
      status: this.subscribed > 0 ? "ok" : "skipped",
      note: this.note,
      connections: this.subscribed,
      matched: this.matched,
      streamFirst: this.streamFirst,
      missing: this.waiting.size,
      histogram: encodeHistogram(this.hist),
    };
    this.hist.destroy();
    return result;
  }
}
