/**
 * The size of a request head (docs/API.md 4.1), through the real server and plain sockets. The
 * HTTP parser reads a head of up to 4,096 bytes however it arrives, and a longer one only when it
 * arrives in one read; a network delivers a head of more than about 1.4 KB in pieces, so each size
 * is sent both ways: in one write, and in 1,448-byte pieces 2 ms apart (the parser surely reading
 * the first piece on its own: test/support/raw-http.ts `statusesUntilClosed`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHttpAnswer, statusesUntilClosed } from "../support/raw-http.ts";
import { expectOk, sharedServer, TestServer } from "./harness.ts";

const PATH = "/1.0/trade/pairs";
const PIECE = 1448;
/** The documented limit of a head (docs/API.md 4.1), and of a request target. */
const MAX_HEAD_BYTES = 4096;

/** A GET of `path` whose head is exactly `size` bytes, padded by a header the server does not read. */
function headOf(server: TestServer, size: number, path = PATH): string {
  const start = `GET ${path} HTTP/1.1\r\nHost: ${server.host}:${server.port}\r\nConnection: close\r\nX-Pad: `;
  const pad = size - start.length - "\r\n\r\n".length;
  assert.ok(pad >= 0, `a head of ${size} bytes cannot hold ${path}`);
  return `${start}${"p".repeat(pad)}\r\n\r\n`;
}

/**
 * A GET whose request line and the headers the server reads, counted as docs/API.md 4.1 counts them
 * (shortest method, `host:` without its value, no whitespace), are exactly `counted` bytes: an
 * X-Signature header carries the padding. The real head is longer (Host's value, Connection, spaces).
 */
function countedHeadOf(server: TestServer, counted: number): string {
  const fixed = `GET ${PATH} HTTP/1.1\r\n`.length + "host:\r\n".length + "x-signature:\r\n".length + 2;
  const signature = "a".repeat(counted - fixed);
  return `GET ${PATH} HTTP/1.1\r\nHost: ${server.host}:${server.port}\r\nConnection: close\r\nX-Signature: ${signature}\r\n\r\n`;
}

describe("request heads", () => {
  let server: TestServer;
  sharedServer((s) => {
    server = s;
  });

  /** Each send's statuses: in one write [the answer], in pieces [/health's, the answer]. */
  const inOneWrite = async (request: string) => (await statusesUntilClosed(server, request)).statuses;
  const inPieces = async (request: string) => (await statusesUntilClosed(server, request, PIECE)).statuses;

  it("serves a head of exactly 4,096 bytes in one write and in 1,448-byte pieces 2 ms apart", async () => {
    const head = headOf(server, MAX_HEAD_BYTES);
    assert.equal(head.length, 4096);
    assert.deepEqual(await inOneWrite(head), [200]);
    assert.deepEqual(await inPieces(head), [200, 200]);
  });

  it("closes a head over 4,096 bytes that arrives in pieces without an answer, and goes on serving", async () => {
    for (const size of [MAX_HEAD_BYTES + 1, 4100, 8 * 1024, 16 * 1024, 64 * 1024]) {
      assert.deepEqual(
        await inPieces(headOf(server, size)),
        [200],
        `${size} bytes in pieces: only /health answered`,
      );
      expectOk(await server.public.health(), `health after a head of ${size} bytes in pieces`);
    }
  });

  it("keeps the limit with UWS_HTTP_MAX_HEADERS_SIZE set: the uWebSockets.js build in use does not read it", async () => {
    const other = await TestServer.start({ env: { UWS_HTTP_MAX_HEADERS_SIZE: "65536" } });
    try {
      const inPiecesThere = async (size: number) =>
        (await statusesUntilClosed(other, headOf(other, size), PIECE)).statuses;
      assert.deepEqual(await inPiecesThere(MAX_HEAD_BYTES), [200, 200]);
      assert.deepEqual(await inPiecesThere(MAX_HEAD_BYTES + 1), [200]);
    } finally {
      await other.close();
    }
  });

  it("answers 431 errors.headers to a head over 4,096 bytes in one write when the parts it reads pass 4,096", async () => {
    assert.deepEqual(await inOneWrite(countedHeadOf(server, MAX_HEAD_BYTES)), [200]);
    for (const counted of [MAX_HEAD_BYTES + 1, 8 * 1024]) {
      const answer = await answerOf(countedHeadOf(server, counted));
      assert.equal(answer.status, 431, `${counted} bytes counted: ${answer.text}`);
      assert.deepEqual(answer.codes, { headers: ["HEADER_TOO_LARGE"] });
    }
    // The same heads in pieces never reach the server: the parser closes them first.
    assert.deepEqual(await inPieces(countedHeadOf(server, MAX_HEAD_BYTES + 1)), [200]);
  });

  it("answers 414 errors.path to a request target over 4 KiB in one write", async () => {
    const target = `${PATH}?x=${"a".repeat(MAX_HEAD_BYTES + 1 - PATH.length - 3)}`;
    assert.equal(target.length, MAX_HEAD_BYTES + 1);
    const answer = await answerOf(headOf(server, target.length + 200, target));
    assert.equal(answer.status, 414, answer.text);
    assert.deepEqual(answer.codes, { path: ["URI_TOO_LONG"] });
  });

  /** The one answer to `request` sent in one write: its status, body text and codes. */
  async function answerOf(request: string): Promise<{ status: number; text: string; codes: unknown }> {
    const { statuses, received } = await statusesUntilClosed(server, request);
    const answer = parseHttpAnswer(received);
    assert.ok(answer !== null && statuses.length === 1, `one answer: ${received.toString("latin1", 0, 300)}`);
    return { status: answer.status, text: answer.text, codes: (answer.body as { codes?: unknown }).codes };
  }
});
