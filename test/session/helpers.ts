/**
 * A trading-session client for the tests (CONTRACT 11): a real WebSocket (`ws`) to a real server
 * started by test/e2e/harness.ts. It keeps every frame it received, in order, so tests can assert
 * on order (answers before reports) as well as on content.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import WebSocket from "ws";
import type { TestServer, TestUser } from "../e2e/harness.ts";
import { waitFor } from "../wait.ts";

export type Frame = Record<string, unknown>;

export class SessionSocket {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  challenge = "";
  private nextId = 1;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => {
      const f = JSON.parse(String(data)) as Frame;
      if (f.event === "hello") this.challenge = f.challenge as string;
      this.frames.push(f);
    });
    ws.on("close", (code) => {
      this.closeCode = code;
    });
  }

  /** Connects and waits for the hello. */
  static async open(server: TestServer, headers: Record<string, string> = {}): Promise<SessionSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/session`, { headers });
    const s = new SessionSocket(ws);
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
    this.ws.send(JSON.stringify(frame));
    return this.answer(id);
  }

  /** Sends a raw text or binary frame. */
  send(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  answer(id: unknown, timeoutMs?: number): Promise<Frame> {
    return waitFor(() => this.frames.find((f) => f.id === id && "status" in f), {
      what: `the answer to call ${String(id)}`,
      timeoutMs,
      detail: () => JSON.stringify(this.frames.slice(-5)),
    });
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
