/**
 * The ceiling: a bare uWebSockets.js server (its own process) on the same library as the exchange,
 * answering the same routes with constant bodies captured from the real server (an order ack for
 * POST, the prepared 50 + 50 book for `GET .../orders`, the pairs list for `GET /trade/pairs`). A
 * POST body is read completely before the answer, as the exchange does; nothing is parsed or signed.
 * `ws://.../session` is the WebSocket ceiling of the trading sessions (docs/API.md 13): a hello on
 * open, then every text frame answered with the same captured order ack as
 * `{"id":<the frame's id>,"status":200,"result":<ack>}` (the id is read from the frame's head, the
 * rest is neither parsed nor checked; the logon is answered like any call).
 *
 *   node --import tsx bench/load/bare-server.ts <bodies.json>
 *
 * prints `listening on http://127.0.0.1:<port>`; SIGTERM/SIGINT exit.
 */
import uws from "@trufflesuite/uws-js-unofficial";
import { listenOnLoopback, readBodies, sendJson, serveConstantGets } from "./constant-routes.ts";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: bare-server.ts <bodies.json>");
const bodies = readBodies(file);

const app = uws.App();

app.post("/*", (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  let size = 0;
  res.onData((chunk, isLast) => {
    size += chunk.byteLength;
    if (isLast && !aborted) sendJson(res, size >= 0 ? bodies.post : "");
  });
});

const helloFrame = JSON.stringify({ event: "hello", challenge: "0".repeat(64), serverTime: Date.now() });
const ackTail = `,"status":200,"result":${bodies.post}}`;
app.ws("/session", {
  maxPayloadLength: 64 * 1024,
  idleTimeout: 120,
  maxBackpressure: 0,
  open: (ws) => {
    ws.send(helloFrame, false);
  },
  message: (ws, message, isBinary) => {
    if (isBinary) return;
    // `{"id":` then the id's digits.
    const bytes = new Uint8Array(message);
    let id = 0;
    for (let i = 6, c = bytes[i]; c >= 48 && c <= 57; c = bytes[++i]) id = id * 10 + (c - 48);
    ws.send(`{"id":${id}${ackTail}`, false);
  },
});

serveConstantGets(app, bodies);
listenOnLoopback(app, "bare server", () => {});
