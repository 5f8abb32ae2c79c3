/**
 * A FIX connection of raw bytes for the tests that must send what no engine sends (garbage, broken
 * framing, faults in any tag) and read every answer as it was on the wire: plain node:net, frames
 * written by `fixFrame` (jspurefix-client.ts), received bytes cut at `8=FIX.4.4<SOH>9=<n><SOH>` and
 * read here, with nothing of src/fix. Each received message is checked for its BodyLength and
 * CheckSum (docs/FIX.md 1).
 */
import assert from "node:assert/strict";
import net from "node:net";
import { waitFor } from "../wait.ts";
import { fixFrame, fixTime, logonSignature } from "./jspurefix-client.ts";

export type Field = [tag: number, value: string];

/** `tag=value|...|`, SOH shown as `|`. */
export function show(fields: readonly Field[]): string {
  return `${fields.map(([t, v]) => `${t}=${v}`).join("|")}|`;
}

/** The fields of one whole message, BodyLength and CheckSum checked. */
export function parseFrame(bytes: Buffer): Field[] {
  const text = bytes.toString("latin1");
  const fields = text
    .slice(0, -1)
    .split("\x01")
    .map((f): Field => {
      const eq = f.indexOf("=");
      return [Number(f.slice(0, eq)), f.slice(eq + 1)];
    });
  const bodyStart = text.indexOf("\x01", text.indexOf("\x019=") + 1) + 1;
  const trailer = text.lastIndexOf("\x0110=") + 1;
  assert.equal(Number(fields[1][1]), trailer - bodyStart, `BodyLength of ${show(fields)}`);
  let sum = 0;
  for (let i = 0; i < trailer; i++) sum += bytes[i];
  assert.equal(
    fields[fields.length - 1][1],
    String(sum % 256).padStart(3, "0"),
    `CheckSum of ${show(fields)}`,
  );
  return fields;
}

/** The first value of `tag`. */
export function get(fields: readonly Field[], tag: number): string | undefined {
  return fields.find(([t]) => t === tag)?.[1];
}

export class RawFix {
  readonly received: Field[][] = [];
  closed = false;
  /** The MsgSeqNum `send` puts on the next message. */
  seq = 1;
  private taken = 0;
  private buf = Buffer.alloc(0);

  private constructor(
    readonly socket: net.Socket,
    readonly senderCompId: string,
    readonly targetCompId: string,
  ) {
    socket.on("data", (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      for (;;) {
        const start = this.buf.toString("latin1", 0, 32).replaceAll("\x01", "|");
        const head = /^8=FIX\.4\.4\|9=(\d+)\|/.exec(start);
        if (head === null) break;
        const total = head[0].length + Number(head[1]) + 7;
        if (this.buf.length < total) break;
        this.received.push(parseFrame(this.buf.subarray(0, total)));
        this.buf = this.buf.subarray(total);
      }
    });
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {});
  }

  static open(port: number, senderCompId = "RAW", targetCompId = "EXCHANGE"): Promise<RawFix> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: "127.0.0.1", port }, () =>
        resolve(new RawFix(s, senderCompId, targetCompId)),
      );
      s.once("error", reject);
    });
  }

  /** Connects and logs on as `user` (after `first`, when given); resolves on the server's Logon. */
  static async logon(
    port: number,
    user: { apiToken: string; secretKey: string },
    senderCompId: string,
    first?: Buffer,
  ): Promise<RawFix> {
    const c = await RawFix.open(port, senderCompId);
    if (first !== undefined) c.writeBytes(first);
    const time = fixTime(new Date());
    const sig = logonSignature(user.secretKey, time, "1", senderCompId, c.targetCompId);
    c.write([
      [35, "A"],
      [49, senderCompId],
      [56, c.targetCompId],
      [34, "1"],
      [52, time],
      [98, "0"],
      [108, "30"],
      [141, "Y"],
      [553, user.apiToken],
      [95, String(sig.length)],
      [96, sig],
    ]);
    c.seq = 2;
    const answer = await c.next("the Logon's answer");
    assert.equal(get(answer, 35), "A", `the Logon's answer: ${show(answer)}`);
    return c;
  }

  /** The fields of `msgType` with this connection's header (49, 56, the next MsgSeqNum, 52). */
  header(msgType: string): Field[] {
    return [
      [35, msgType],
      [49, this.senderCompId],
      [56, this.targetCompId],
      [34, String(this.seq++)],
      [52, fixTime(new Date())],
    ];
  }

  /** One message of `fields` (from 35 on), BodyLength and CheckSum computed. */
  write(fields: readonly Field[]): void {
    this.socket.write(fixFrame(fields));
  }

  writeBytes(bytes: Buffer | string): void {
    this.socket.write(bytes);
  }

  /** The next message not yet taken; rejects after `timeoutMs`. */
  next(what: string, timeoutMs = 5000): Promise<Field[]> {
    return waitFor(() => this.received[this.taken] ?? undefined, { what, timeoutMs }).then((m) => {
      this.taken++;
      return m;
    });
  }

  /** Every message not yet taken, now taken. */
  take(): Field[][] {
    const out = this.received.slice(this.taken);
    this.taken = this.received.length;
    return out;
  }

  unread(): Field[][] {
    return this.received.slice(this.taken);
  }

  /** Resolves true when the server closes the connection within `timeoutMs`. */
  async waitClosed(timeoutMs = 3000): Promise<boolean> {
    return waitFor(() => this.closed || undefined, { what: "the close", timeoutMs }).then(
      () => true,
      () => false,
    );
  }

  destroy(): void {
    this.socket.destroy();
  }
}
