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
import { readFileSync } from "node:fs";
import uws from "@trufflesuite/uws-js-unofficial";

interface Bodies {
  post: string;
  book: Record<string, string>;
  pairs: string;
}

const file = process.argv[2];
if (file === undefined) throw new Error("usage: bare-server.ts <bodies.json>");
const bodies = JSON.parse(readFileSync(file, "utf8")) as Bodies;

const app = uws.App();

const answer = (res: uws.HttpResponse, body: string) => {
  res.cork(() => {
    res.writeStatus("200 OK").writeHeader("content-type", "application/json").end(body);
  });
};

app.post("/*", (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  let size = 0;
  res.onData((chunk, isLast) => {
    size += chunk.byteLength;
    if (isLast && !aborted) answer(res, size >= 0 ? bodies.post : "");
  });
});

app.get("/1.0/trade/pairs", (res) => answer(res, bodies.pairs));

app.get("/1.0/trade/pairs/:pairName/orders", (res, req) => {
  const body = bodies.book[req.getParameter(0) ?? ""];
  if (body === undefined) {
    res.writeStatus("404 Not Found").end("{}");
    return;
  }
  answer(res, body);
});

app.get("/health", (res) => answer(res, '{"status":"ok"}'));

app.listen("127.0.0.1", 0, (token) => {
  if (token === false) {
    console.error("bare server: cannot listen");
    process.exit(1);
  }
  const port = uws.us_socket_local_port(token as unknown as uws.us_socket);
  console.log(`listening on http://127.0.0.1:${port}`);
  const stop = () => {
    uws.us_listen_socket_close(token);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
});
