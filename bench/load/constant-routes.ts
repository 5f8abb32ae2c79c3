/**
 * What the two comparison servers of bench:load share (bare-server.ts, the ceiling, and
 * floor-server.ts, the design floor): the bodies captured from the exchange, constant JSON answers,
 * the GET routes answered with them, and listening on 127.0.0.1 with an ephemeral port.
 */
import { readFileSync } from "node:fs";
import uws from "@trufflesuite/uws-js-unofficial";

/** Answers captured from the exchange (run.ts writes them to a file). */
export interface Bodies {
  /** An order ack. */
  post: string;
  /** The prepared 50 + 50 level book, by pair name. */
  book: Record<string, string>;
  pairs: string;
}

export function readBodies(file: string): Bodies {
  return JSON.parse(readFileSync(file, "utf8")) as Bodies;
}

/** A 200 JSON answer, corked as the exchange answers. */
export function sendJson(res: uws.HttpResponse, body: string): void {
  res.cork(() => {
    // As the exchange answers (src/wire/request.ts): uWS writes `200 OK` itself.
    res.writeHeader("content-type", "application/json").end(body);
  });
}

/** GET /1.0/trade/pairs, GET /1.0/trade/pairs/:pairName/orders and /health, with constant bodies. */
export function serveConstantGets(app: uws.TemplatedApp, bodies: Bodies): void {
  app.get("/1.0/trade/pairs", (res) => sendJson(res, bodies.pairs));
  app.get("/1.0/trade/pairs/:pairName/orders", (res, req) => {
    const body = bodies.book[req.getParameter(0) ?? ""];
    if (body === undefined) {
      res.writeStatus("404 Not Found").end("{}");
      return;
    }
    sendJson(res, body);
  });
  app.get("/health", (res) => sendJson(res, '{"status":"ok"}'));
}

/**
 * Listens on 127.0.0.1 on an ephemeral port and prints `listening on http://127.0.0.1:<port>` (what
 * servers.ts waits for); SIGTERM/SIGINT close the socket, run `stop`, and exit.
 */
export function listenOnLoopback(
  app: uws.TemplatedApp,
  name: string,
  stop: () => Promise<void> | void,
): void {
  app.listen("127.0.0.1", 0, (token) => {
    if (token === false) {
      console.error(`${name}: cannot listen`);
      process.exit(1);
    }
    const port = uws.us_socket_local_port(token as unknown as uws.us_socket);
    console.log(`listening on http://127.0.0.1:${port}`);
    const onSignal = async () => {
      uws.us_listen_socket_close(token);
      await stop();
      process.exit(0);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
