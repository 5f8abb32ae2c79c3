/**
 * A bare FIX 4.4 client for the gateway's tests (docs/API.md 17): frames built and read here over a
 * `node:net` socket, with nothing of the server's codec, so that the server is checked against an
 * independent reading of the format. It logs on with the signed Logon, numbers what it sends, keeps
 * every message it received in order and lets a test await one.
 */
import { createHmac } from "node:crypto";
import net from "node:net";
import type { TestServer, TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

const SOH = "\x01";
/** The end of a message: `<SOH>10=NNN<SOH>`. */
const TRAILER = new RegExp(`${SOH}10=\\d{3}${SOH}`);

/** A received message: its fields in order, and the first value of each tag. */
export interface Msg {
  readonly fields: readonly [number, string][];
  readonly raw: string;
  get(tag: number): string | undefined;
  readonly type: string;
}

function parse(raw: string): Msg {
  const fields: [number, string][] = [];
  for (const part of raw.split(SOH)) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    fields.push([Number(part.slice(0, eq)), part.slice(eq + 1)]);
  }
  const get = (tag: number) => fields.find((f) => f[0] === tag)?.[1];
  return { fields, raw, get, type: get(35) ?? "" };
}

/** `YYYYMMDD-HH:MM:SS.sss` UTC. */
export function utc(ms = Date.now()): string {
  const d = new Date(ms).toISOString();
  return `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 23)}`;
}

/** One message as bytes: 8, 9, the fields, 10 (computed here). */
export function frame(fields: readonly [number, string | number][]): Buffer {
  const body = fields.map(([t, v]) => `${t}=${v}${SOH}`).join("");
  const head = `8=FIX.4.4${SOH}9=${Buffer.byteLength(body)}${SOH}`;
  const bytes = Buffer.from(head + body, "utf8");
  let sum = 0;
  for (const b of bytes) sum += b;
  return Buffer.concat([bytes, Buffer.from(`10=${String(sum % 256).padStart(3, "0")}${SOH}`)]);
}

/** The FIX port the test server's readiness line names. */
export function fixPortOf(server: TestServer): number {
  const m = /"fixPort":(\d+)/.exec(server.output().stdout);
  if (m === null) throw new Error("the server's readiness line names no FIX port");
  return Number(m[1]);
}

export class RawFix {
  readonly received: Msg[] = [];
  closed = false;
  seq = 1;
  private buf = "";
  readonly compId: string;

  private constructor(
    readonly socket: net.Socket,
    compId: string,
    readonly target = "EXCHANGE",
  ) {
    this.compId = compId;
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      this.buf += d;
      for (;;) {
        const end = TRAILER.exec(this.buf);
        if (end === null) break;
        const stop = end.index + end[0].length;
        this.received.push(parse(Buffer.from(this.buf.slice(0, stop), "latin1").toString("utf8")));
        this.buf = this.buf.slice(stop);
      }
    });
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {});
  }

  static async connect(server: TestServer, compId = "CLIENT"): Promise<RawFix> {
    const socket = net.connect(fixPortOf(server), "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new RawFix(socket, compId);
  }

  /** The Logon fields of `user`, signed; `extra` fields are appended, `over` replaces by tag. */
  logonFields(
    user: { apiToken: string; secretKey: string },
    extra: [number, string | number][] = [],
    time = utc(),
  ): [number, string | number][] {
    const signed = `${time}${SOH}A${SOH}1${SOH}${this.compId}${SOH}${this.target}`;
    const sig = createHmac("sha256", user.secretKey).update(signed).digest("hex");
    return [
      [35, "A"],
      [49, this.compId],
      [56, this.target],
      [34, 1],
      [52, time],
      [98, 0],
      [108, 30],
      [141, "Y"],
      [553, user.apiToken],
      [95, sig.length],
      [96, sig],
      ...extra,
    ];
  }

  /** Logs on and waits for the Logon answer. */
  static async logon(
    server: TestServer,
    user: TestUser,
    extra: [number, string | number][] = [],
    compId = "CLIENT",
  ): Promise<RawFix> {
    const c = await RawFix.connect(server, compId);
    c.writeRaw(frame(c.logonFields(user, extra)));
    c.seq = 2;
    const a = await c.next("A");
    if (a.get(141) !== "Y") throw new Error(`unexpected logon answer ${a.raw}`);
    return c;
  }

  writeRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Sends a message of `type` with the header filled in and the next MsgSeqNum. */
  send(type: string, fields: [number, string | number][], header: [number, string | number][] = []): number {
    const seq = this.seq++;
    this.writeRaw(
      frame([[35, type], [49, this.compId], [56, this.target], [34, seq], [52, utc()], ...header, ...fields]),
    );
    return seq;
  }

  private read = 0;

  /** The next received message of `type` after those already taken by `next` (any type when ""). */
  async next(type: string, timeoutMs = 10_000): Promise<Msg> {
    return waitFor(
      () => {
        for (let i = this.read; i < this.received.length; i++) {
          if (type === "" || this.received[i].type === type) {
            this.read = i + 1;
            return this.received[i];
          }
        }
        return undefined;
      },
      { what: `a FIX message 35=${type}`, timeoutMs, detail: () => this.dump() },
    );
  }

  /** Waits until `count` messages satisfying `pred` arrived after the read mark; takes them. */
  async take(count: number, pred: (m: Msg) => boolean, timeoutMs = 10_000): Promise<Msg[]> {
    return waitFor(
      () => {
        const got: Msg[] = [];
        let last = -1;
        for (let i = this.read; i < this.received.length && got.length < count; i++)
          if (pred(this.received[i])) {
            got.push(this.received[i]);
            last = i;
          }
        if (got.length < count) return undefined;
        this.read = last + 1;
        return got;
      },
      { what: `${count} FIX messages`, timeoutMs, detail: () => this.dump() },
    );
  }

  dump(): string {
    return this.received
      .slice(-8)
      .map((m) => m.raw.replaceAll(SOH, "|"))
      .join("\n");
  }

  async waitClosed(timeoutMs = 10_000): Promise<void> {
    await waitFor(() => this.closed, {
      what: "the FIX connection to close",
      timeoutMs,
      detail: () => this.dump(),
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
