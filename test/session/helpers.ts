/**
 * A trading-session client for the tests (docs/API.md 13): a real WebSocket (`ws`) to a real server
 * started by test/e2e/harness.ts. It keeps every frame it received, in order, so tests can assert
 * on order (answers before reports) as well as on content. Every frame is checked against the
 * AsyncAPI document (test/e2e/asyncapi-check.ts): the answer to a call of the document against that
 * call's answer and error answer, any other frame against everything the session may send. A frame
 * the document does not describe fails the next wait of this client and the test (the server's
 * `asyncApiMismatches`, checked after each test).
 */
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import WebSocket from "ws";
import { asyncApi } from "../e2e/asyncapi-check.ts";
import { expectError, expectOk, market, type TestServer, type TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

export type Frame = Record<string, unknown>;

export class SessionSocket {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  challenge = "";
  /** The first frame the AsyncAPI document does not describe. */
  mismatch: string | null = null;
  private nextId = 1;
  /** Methods of the calls sent and not answered yet, per id as JSON text, oldest first. */
  private readonly pending = new Map<string, string[]>();
  private readonly server: TestServer;

  private constructor(ws: WebSocket, server: TestServer) {
    this.ws = ws;
    this.server = server;
    ws.on("message", (data) => {
      const f = JSON.parse(String(data)) as Frame;
      if (f.event === "hello") this.challenge = f.challenge as string;
      this.check(f);
      this.frames.push(f);
    });
    ws.on("close", (code) => {
      this.closeCode = code;
    });
  }

  /** Connects and waits for the hello. */
  static async open(server: TestServer, headers: Record<string, string> = {}): Promise<SessionSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/session`, { headers });
    const s = new SessionSocket(ws, server);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    await waitFor(() => s.challenge !== "", { what: "the hello" });
    return s;
  }

  /** Opens and logs on as `user`; fails unless the logon answers 200. */
  static async logon(server: TestServer, user: TestUser, params: Frame = {}): Promise<SessionSocket> {
    const s = await SessionSocket.open(server);
    const a = await s.call("session.logon", { ...s.credentials(user), ...params });
    assert.equal(a.status, 200, JSON.stringify(a));
    return s;
  }

  credentials(user: TestUser): { apiToken: string; signature: string } {
    return {
      apiToken: user.apiToken,
      signature: createHmac("sha256", user.secretKey).update(this.challenge).digest("hex"),
    };
  }

  /** Sends a call; resolves with its answer. */
  call(method: string, params?: Frame, id: number | string = this.nextId++): Promise<Frame> {
    const frame: Frame = { id, method };
    if (params !== undefined) frame.params = params;
    this.send(JSON.stringify(frame));
    return this.answer(id);
  }

  /** Sends a raw text or binary frame. */
  send(data: string | Buffer, binary = false): void {
    if (!binary) this.sent(String(data));
    this.ws.send(data, { binary });
  }

  async answer(id: unknown, timeoutMs?: number): Promise<Frame> {
    const found = await waitFor(
      () => this.mismatch !== null || this.frames.find((f) => f.id === id && "status" in f),
      {
        what: `the answer to call ${String(id)}`,
        timeoutMs,
        detail: () => JSON.stringify(this.frames.slice(-5)),
      },
    );
    if (this.mismatch !== null) throw new Error(`AsyncAPI check failed: ${this.mismatch}`);
    return found as Frame;
  }

  /** Notes the method of a call frame sent with an id, to check its answer against that call. */
  private sent(text: string): void {
    let f: unknown;
    try {
      f = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof f !== "object" || f === null || Array.isArray(f)) return;
    const { id, method } = f as Frame;
    if (typeof method !== "string" || !asyncApi.hasCall(method)) return;
    if (typeof id !== "number" && typeof id !== "string") return;
    const key = JSON.stringify(id);
    const list = this.pending.get(key);
    if (list === undefined) this.pending.set(key, [method]);
    else list.push(method);
  }

  /** Checks a received frame against the AsyncAPI document. */
  private check(f: Frame): void {
    let mismatch: string | null;
    const list = "status" in f && f.id !== null ? this.pending.get(JSON.stringify(f.id)) : undefined;
    const method = list?.shift();
    if (list !== undefined && list.length === 0) this.pending.delete(JSON.stringify(f.id));
    // An answer to a call of the document is that call's answer or error answer; a call with an
    // unknown method, an invalid frame, hello and reports are whatever the session may send.
    if (method !== undefined) mismatch = asyncApi.answerMismatch(method, f);
    else mismatch = asyncApi.sessionMismatch(f);
    if (mismatch === null) return;
    this.mismatch ??= mismatch;
    this.server.asyncApiMismatches.push(mismatch);
  }

  /** The reports received so far (`event` order / trade). */
  reports(): Frame[] {
    return this.frames.filter((f) => f.event === "order" || f.event === "trade");
  }

  closed(timeoutMs?: number): Promise<number> {
    return waitFor(() => this.closeCode, { what: "the close of the session", timeoutMs });
  }

  close(): void {
    this.ws.close();
  }
}

/** Error keys and codes of an answer. */
export function errorOf(a: Frame): { status: unknown; keys: string[]; codes: Record<string, string[]> } {
  return {
    status: a.status,
    keys: Object.keys((a.errors as object) ?? {}),
    codes: (a.codes as Record<string, string[]>) ?? {},
  };
}

/**
 * A fresh client order id of `user` that the server's next create with it must ask the database
 * about: a market sell with it on btc_usdt is refused by the book (the tests leave no bids there), so
 * nothing uses it, but the in-memory filter has seen it.
 */
export async function clientIdJudgedByDatabase(user: TestUser): Promise<string> {
  const cid = `db-${randomBytes(12).toString("hex")}`;
  expectError(
    await user.client.createOrder({ ...market("btc_usdt", "sell", "1"), clientOrderId: cid }),
    400,
    "amount",
  );
  return cid;
}

/**
 * The server's clock now (`GET /time`). Durations that a test bounds are bounded between times the
 * server gives, never on this process's clock, which measures the test machine instead.
 */
export async function serverTime(server: TestServer): Promise<number> {
  return expectOk(await server.public.time(), "GET /time").serverTime;
}
