/**
 * The FIX test client (jspurefix-client.ts) against a minimal acceptor written here on node:net and
 * node:tls, which keeps the bytes it receives and answers a Logon: the Logon is signed over the
 * fields it carries, the custom tags travel both ways, raw bytes go out as given, and the session
 * ends by Logout or by a dropped link as the test asks.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { createServer as createTlsServer } from "node:tls";
import { selfSignedCertificate } from "../support/certificate.ts";
import { waitFor } from "../wait.ts";
import {
  FixClient,
  type FixClientOptions,
  type FixField,
  FixLogonRefused,
  fixFrame,
  fixTime,
} from "./jspurefix-client.ts";

const SOH = "\x01";
const SECRET = "s3cret";
/** The CheckSum field that ends a message. */
const TRAILER = new RegExp(`${SOH}10=\\d{3}${SOH}`);

/** One message as the acceptor read it off the wire. */
class Wire {
  readonly fields: FixField[];
  constructor(readonly text: string) {
    this.fields = text
      .split(SOH)
      .slice(0, -1)
      .map((f) => {
        const eq = f.indexOf("=");
        return [Number(f.slice(0, eq)), f.slice(eq + 1)] as const;
      });
  }
  get(tag: number): string | undefined {
    return this.fields.find(([t]) => t === tag)?.[1];
  }
  /** BodyLength and CheckSum recomputed from the bytes. */
  framingOk(): boolean {
    const body = this.text.slice(
      this.text.indexOf(SOH, this.text.indexOf("9=")) + 1,
      this.text.lastIndexOf("10="),
    );
    let sum = 0;
    for (const byte of Buffer.from(this.text.slice(0, this.text.lastIndexOf("10=")))) sum += byte;
    return Number(this.get(9)) === Buffer.byteLength(body) && Number(this.get(10)) === sum % 256;
  }
}

/** One accepted connection: what it received, and a way to answer as the exchange. */
class Peer {
  readonly received: Wire[] = [];
  closed = false;
  private seqNum = 1;
  private pending = "";

  constructor(
    readonly socket: Socket,
    refuse: string | undefined,
  ) {
    socket.on("data", (chunk: Buffer) => {
      this.pending += chunk.toString("latin1");
      for (let m = TRAILER.exec(this.pending); m !== null; m = TRAILER.exec(this.pending)) {
        const wire = new Wire(this.pending.slice(this.pending.indexOf("8="), m.index + m[0].length));
        this.pending = this.pending.slice(m.index + m[0].length);
        this.received.push(wire);
        this.answer(wire, refuse);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
    });
  }

  send(msgType: string, body: FixField[], fault: { checkSum?: string } = {}): void {
    const header: FixField[] = [
      [35, msgType],
      [49, "EXCHANGE"],
      [56, "MAKER1"],
      [34, String(this.seqNum++)],
      [52, fixTime(new Date())],
    ];
    this.socket.write(fixFrame([...header, ...body], fault));
  }

  async nextReceived(msgType: string, after = 0): Promise<Wire> {
    return waitFor(() => this.received.slice(after).find((w) => w.get(35) === msgType), {
      what: `35=${msgType} at the acceptor`,
      detail: () => this.received.map((w) => w.text.replaceAll(SOH, "|")).join(" "),
    });
  }

  private answer(wire: Wire, refuse: string | undefined): void {
    if (wire.get(35) === "A" && refuse !== undefined) {
      this.send("5", [[58, refuse]]);
      this.socket.end();
    } else if (wire.get(35) === "A") {
      this.send("A", [
        [98, "0"],
        [108, wire.get(108) ?? ""],
        [141, "Y"],
      ]);
    } else if (wire.get(35) === "5") {
      this.send("5", [[58, "bye"]]);
      this.socket.end();
    }
  }
}

/** A listening acceptor; `refuse` answers every Logon with a Logout of that Text. */
class Acceptor {
  readonly peers: Peer[] = [];
  readonly server: Server;
  port = 0;

  constructor(options: AcceptorOptions) {
    const onSocket = (socket: Socket) => this.peers.push(new Peer(socket, options.refuse));
    this.server =
      options.tls === undefined ? createTcpServer(onSocket) : createTlsServer(options.tls, onSocket);
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async peer(): Promise<Peer> {
    return waitFor(() => this.peers[0], { what: "a connection" });
  }

  close(): void {
    for (const p of this.peers) p.socket.destroy();
    this.server.close();
  }
}

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

interface AcceptorOptions {
  refuse?: string;
  tls?: { cert: string; key: string };
}

async function acceptor(options: AcceptorOptions = {}): Promise<Acceptor> {
  const a = await new Acceptor(options).listen();
  open.push(a);
  return a;
}

function clientOptions(a: Acceptor, more: Partial<FixClientOptions> = {}): FixClientOptions {
  return {
    host: "127.0.0.1",
    port: a.port,
    senderCompId: "MAKER1",
    targetCompId: "EXCHANGE",
    apiToken: "token-1",
    secretKey: SECRET,
    heartBtInt: 5,
    ...more,
  };
}

async function connect(a: Acceptor, more: Partial<FixClientOptions> = {}): Promise<FixClient> {
  const c = await FixClient.connect(clientOptions(a, more));
  open.push({ close: () => c.destroy() });
  return c;
}

/** The signature the exchange expects over the Logon's own fields. */
function expectedSignature(logon: Wire): string {
  const text = [logon.get(52), "A", logon.get(34), logon.get(49), logon.get(56)].join(SOH);
  return createHmac("sha256", SECRET).update(text).digest("hex");
}

describe("jspurefix FIX test client", () => {
  it("logs on with 141=Y, the options' tags and an HMAC over the SendingTime and MsgSeqNum it sent", async () => {
    const a = await acceptor();
    const c = await connect(a, {
      cancelOnDisconnect: true,
      dropCopy: true,
      resumeFromExecSeq: 7,
      resumeEpoch: 2,
    });
    const logon = (await a.peer()).received[0];
    assert.equal(logon.get(35), "A");
    assert.ok(logon.framingOk());
    assert.equal(logon.get(34), "1");
    assert.match(logon.get(52) ?? "", /^\d{8}-\d\d:\d\d:\d\d\.\d{3}$/);
    assert.deepEqual(
      [98, 108, 141, 553, 57, 8013, 20001, 20008].map((t) => logon.get(t)),
      ["0", "5", "Y", "token-1", "DROPCOPY", "Y", "7", "2"],
    );
    assert.equal(logon.get(96), expectedSignature(logon));
    assert.equal(logon.get(95), "64");
    assert.equal(c.received[0].msgType, "A");
    assert.equal(c.nextSeqNum, 2);
  });

  it("sends logonFields in place of its own tags, and signs the SendingTime it was given", async () => {
    const a = await acceptor();
    const stale = fixTime(new Date(Date.now() - 60_000));
    await connect(a, { logonFields: { 52: stale, 141: null, 108: "0" } });
    const logon = (await a.peer()).received[0];
    assert.equal(logon.get(52), stale);
    assert.equal(logon.get(141), undefined);
    assert.equal(logon.get(108), "0");
    assert.equal(logon.get(96), expectedSignature(logon));

    const b = await acceptor();
    await connect(b, { logonFields: { 96: "deadbeef" } });
    const wrong = (await b.peer()).received[0];
    assert.deepEqual([wrong.get(95), wrong.get(96)], ["8", "deadbeef"]);
    await assert.rejects(
      FixClient.connect(clientOptions(b, { logonFields: { 1: "x" } })),
      /not declared on Logon/,
    );
  });

  it("rejects connect with the Text of the Logout that refuses the Logon", async () => {
    const a = await acceptor({ refuse: "AUTH: invalid signature" });
    await assert.rejects(FixClient.connect(clientOptions(a)), (e: unknown) => {
      assert.ok(e instanceof FixLogonRefused);
      assert.equal(e.logoutText, "AUTH: invalid signature");
      return true;
    });
  });

  it("sends the custom order tags and header overrides through jspurefix, MsgSeqNum in step", async () => {
    const a = await acceptor();
    const c = await connect(a);
    const peer = await a.peer();
    c.send("D", [
      [11, "o1"],
      [55, "BTC_USDT"],
      [54, "1"],
      [40, "4"],
      [38, "1.50"],
      [44, "100.5"],
      [99, "101"],
      [60, fixTime(new Date())],
      [20003, "cancelMaker"],
      [20004, "Y"],
      [20005, "1760000000000"],
      [20006, "U"],
      [20007, "2.5"],
    ]);
    const d = await peer.nextReceived("D");
    assert.ok(d.framingOk());
    assert.deepEqual(
      [34, 49, 56, 11, 55, 38, 44, 99, 20003, 20004, 20005, 20006, 20007].map((t) => d.get(t)),
      ["2", "MAKER1", "EXCHANGE", "o1", "BTC_USDT", "1.50", "100.5", "101", "cancelMaker", "Y"].concat([
        "1760000000000",
        "U",
        "2.5",
      ]),
    );
    c.send("G", { 41: "o1", 11: "o2", 55: "BTC_USDT", 54: "1", 40: "4", 99: "102", 20006: "D", 20007: "3" });
    const g = await peer.nextReceived("G");
    assert.deepEqual(
      [34, 41, 20006, 20007].map((t) => g.get(t)),
      ["3", "o1", "D", "3"],
    );

    c.send("F", [
      [49, "OTHER"],
      [52, "20200101-00:00:00.000"],
      [11, "c1"],
      [41, "o1"],
      [55, "BTC_USDT"],
      [54, "1"],
    ]);
    const f = await peer.nextReceived("F");
    assert.deepEqual(
      [34, 49, 52].map((t) => f.get(t)),
      ["4", "OTHER", "20200101-00:00:00.000"],
    );
    c.send("F", [
      [34, "4"],
      [43, "Y"],
      [11, "c2"],
      [41, "o1"],
      [55, "BTC_USDT"],
      [54, "1"],
    ]);
    const dup = await waitFor(() => peer.received.find((w) => w.get(11) === "c2"), { what: "the duplicate" });
    assert.deepEqual([dup.get(34), dup.get(43)], ["4", "Y"]);
    assert.equal(c.nextSeqNum, 5);

    assert.throws(() => c.send("F", [[20003, "cancelMaker"]]), /not declared on OrderCancelRequest/);
    assert.throws(() => c.send("ZZ", []), /not in the dictionary/);
  });

  it("exposes a received ExecutionReport with its custom, unknown and repeated tags", async () => {
    const a = await acceptor();
    const c = await connect(a);
    const peer = await a.peer();
    peer.send("8", [
      [37, "42"],
      [11, "o1"],
      [17, "e1"],
      [150, "0"],
      [39, "0"],
      [55, "BTC_USDT"],
      [54, "1"],
      [58, "first"],
      [58, "second"],
      [20002, "17"],
      [29999, "x"],
    ]);
    const report = await c.next("8");
    assert.equal(report.get(20002), "17");
    assert.equal(report.get(29999), "x");
    assert.deepEqual(report.getAll(58), ["first", "second"]);
    assert.deepEqual(
      report.fields.slice(0, 3).map(([t]) => t),
      [8, 9, 35],
    );
    assert.ok(report.checkSumOk && report.bodyLengthOk);

    peer.send(
      "8",
      [
        [37, "43"],
        [150, "0"],
      ],
      { checkSum: "000" },
    );
    const bad = await c.next((m) => m.get(37) === "43");
    assert.equal(bad.checkSumOk, false);
  });

  it("answers a TestRequest with a Heartbeat of its TestReqID, and not with heartbeats: false", async () => {
    const a = await acceptor();
    await connect(a);
    const peer = await a.peer();
    peer.send("1", [[112, "ping-1"]]);
    assert.equal((await peer.nextReceived("0")).get(112), "ping-1");

    const b = await acceptor();
    const quiet = await connect(b, { heartbeats: false });
    const quietPeer = await b.peer();
    quietPeer.send("1", [[112, "ping-2"]]);
    await quiet.next("1");
    peer.send("1", [[112, "ping-3"]]); // answered on the other link after this one had its chance
    await waitFor(() => peer.received.find((w) => w.get(112) === "ping-3"), { what: "the other answer" });
    assert.equal(quietPeer.received.filter((w) => w.get(35) === "0").length, 0);
  });

  it("writes raw bytes as given, outside jspurefix's MsgSeqNum", async () => {
    const a = await acceptor();
    const c = await connect(a);
    const peer = await a.peer();
    const raw = fixFrame([...c.header("D"), [11, ""]], { checkSum: "000" });
    c.sendRaw(raw);
    c.sendRaw("garbage");
    c.send("0", []);
    const heartbeat = await peer.nextReceived("0");
    const d = peer.received.find((w) => w.get(35) === "D");
    assert.equal(d?.text, raw.toString("latin1"));
    assert.deepEqual([d?.get(34), heartbeat.get(34)], ["2", "2"]);
  });

  it("logout() sends 35=5 with its Text and ends when the server answers", async () => {
    const a = await acceptor();
    const c = await connect(a);
    const peer = await a.peer();
    const closed = await c.logout("done for today");
    assert.equal((await peer.nextReceived("5")).get(58), "done for today");
    assert.equal(closed.logoutText, "bye");
    assert.throws(() => c.send("0", []), /ended/);
  });

  it("destroy() drops the link without a Logout", async () => {
    const a = await acceptor();
    const c = await connect(a);
    const peer = await a.peer();
    c.destroy();
    await waitFor(() => peer.closed, { what: "the close at the acceptor" });
    assert.deepEqual(
      peer.received.map((w) => w.get(35)),
      ["A"],
    );
    assert.equal((await c.closed).logoutText, undefined);
    await assert.rejects(c.next("8"), /ended/);
  });

  describe("over TLS", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "fix-client-tls-"));
    const cert = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    selfSignedCertificate(cert, key);
    const tls = { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("logs on with the server's CA, or with rejectUnauthorized false", async () => {
      const a = await acceptor({ tls });
      await connect(a, { tls: { ca: tls.cert } });
      assert.ok((await a.peer()).received[0].framingOk());
      const b = await acceptor({ tls });
      await connect(b, { tls: { rejectUnauthorized: false } });
    });

    it("fails to connect to an unknown certificate", async () => {
      const a = await acceptor({ tls });
      await assert.rejects(FixClient.connect(clientOptions(a, { tls: {}, connectTimeoutSeconds: 1 })));
    });
  });
});
