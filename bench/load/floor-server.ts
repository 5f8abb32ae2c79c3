/**
 * The design floor: what the fixed shape of the exchange costs with no business logic in it. Its
 * own process, on the exchange's real components, so bench:load can show how much of the gap
 * between the bare ceiling and the exchange the shape itself takes:
 *
 *   POST ─▶ read the whole body (src/wire/request.ts readBody, as the exchange)
 *        ─▶ one command through the real PairChannel rings to a real pair worker (three pairs,
 *           round robin; a cancel of an unknown id, so the book does no work and answers END)
 *        ─▶ on END, one order record to the real DbWriter (synchronous=FULL, group commit)
 *        ─▶ after that commit, the constant order ack (corked, as the exchange answers)
 *
 * Nothing is parsed, signed, checked, reserved or fanned out: every cost left is a hand-off the
 * shape requires (HTTP in and out, main → pair worker → main, main → writer → fsync → main) plus
 * one persisted row. GET routes answer constant bodies, as the bare server does.
 *
 *   node --import tsx bench/load/floor-server.ts <bodies.json> <database file>
 *
 * prints `listening on http://127.0.0.1:<port>`; SIGTERM/SIGINT close the pair workers and the
 * writer, then exit.
 */
import uws from "@trufflesuite/uws-js-unofficial";
import { DbWriter } from "../../src/db/writer.ts";
import { PairChannel } from "../../src/pair/pair-client.ts";
import { EV_END, EV_KIND } from "../../src/protocol/pair/records.ts";
import { readBody } from "../../src/wire/request.ts";
import { listenOnLoopback, readBodies, sendJson, serveConstantGets } from "./constant-routes.ts";

const [file, dbFile] = process.argv.slice(2);
if (file === undefined || dbFile === undefined)
  throw new Error("usage: floor-server.ts <bodies.json> <database file>");
const bodies = readBodies(file);
const PAIRS = ["btc_usdt", "eth_usdt", "eth_btc"];

const writer = await DbWriter.start(dbFile);
writer.onFatal((err) => {
  console.error(`floor server: ${err.message}`);
  process.exit(1);
});

interface Pending {
  res: uws.HttpResponse;
  aborted: boolean;
  id: number;
  pair: string;
}

const answer = (p: Pending) => {
  if (!p.aborted) sendJson(p.res, bodies.post);
};

const channels = PAIRS.map((pair) => {
  // Commands are answered in order, so a FIFO per pair finds the request of each END.
  const queue: Pending[] = [];
  let head = 0;
  const channel = new PairChannel({
    pairName: pair,
    onEvent: (f64, o) => {
      if (f64[o + EV_KIND] !== EV_END) return;
      const p = queue[head++];
      if (head === queue.length) {
        queue.length = 0;
        head = 0;
      }
      const micro = Date.now() * 1000;
      writer.insertOrder(p.id, 1, p.pair, 0, 0, 1, 1, 0, false, micro, micro);
      writer.afterCommit(() => answer(p));
    },
  });
  /** Id of the oldest request still in the worker, or Infinity. */
  const oldest = () => (head < queue.length ? queue[head].id : Number.POSITIVE_INFINITY);
  return { channel, queue, oldest };
});
await Promise.all(channels.map((c) => c.channel.ready));

let nextId = 1;
// As the exchange does (src/core/exchange.ts lowestUnsettledOrderId): every id below the oldest request
// still in a pair worker has its order record, so the writer's user_orders mark moves. Without it
// each flush of user rows scans every order since the start again, and the floor's apply thread
// grows dearer the longer it runs.
writer.settledOrderIds(() => {
  let low = nextId;
  for (const c of channels) low = Math.min(low, c.oldest());
  return low;
});
let nextPair = 0;
const app = uws.App();

app.post("/*", (res, req) => {
  const cl = req.getHeader("content-length");
  const p: Pending = { res, aborted: false, id: 0, pair: "" };
  res.onAborted(() => {
    p.aborted = true;
  });
  readBody(res, { contentLength: cl === "" ? -1 : Number(cl) }, () => {
    const k = nextPair;
    nextPair = (k + 1) % channels.length;
    const c = channels[k];
    p.id = nextId++;
    p.pair = PAIRS[k];
    // An id the book never saw: the worker answers "not found" with END and nothing else.
    if (!c.channel.sendCancel(1e12 + p.id)) {
      res.cork(() => res.writeStatus("503 Service Unavailable").end("{}"));
      return;
    }
    c.queue.push(p);
  });
});

serveConstantGets(app, bodies);
listenOnLoopback(app, "floor server", async () => {
  await Promise.all(channels.map((c) => c.channel.close()));
  await writer.close();
});
