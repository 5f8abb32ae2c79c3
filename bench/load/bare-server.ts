/**
 * The ceiling: a bare uWebSockets.js server (its own process) on the same library as the exchange,
 * answering the same routes with constant bodies captured from the real server (an order ack for
 * POST, the prepared 50 + 50 book for `GET .../orders`, the pairs list for `GET /trade/pairs`). A
 * POST body is read completely before the answer, as the exchange does; nothing is parsed or signed.
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

serveConstantGets(app, bodies);
listenOnLoopback(app, "bare server", () => {});
