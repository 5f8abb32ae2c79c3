/**
 * docs/API.md 7.6.2 `GET /trade/pairs/{pairName}/orders/l3`: every resting order with its remaining
 * amount, in price then time priority, with the book `seq`; no owner.
 *
 * The core follows a pair's L3 book only while someone wants it (src/core/read-models/l3-view.ts): the first
 * read starts it, and waits until its snapshot is the committed book (a command or a batch at
 * most); reads within L3_IDLE_MS of the last keep it followed.
 */

import { l3BookSchema, serialize } from "../../wire/schemas.ts";
import { ok } from "../route-steps.ts";
import { type GetRoute, PUBLIC_GET_PAIR } from "../route-types.ts";

export const orderBookL3: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/pairs/{pairName}/orders/l3",
  auth: "none",
  ok: l3BookSchema, // serialize.l3Book
  errors: PUBLIC_GET_PAIR,
  operationId: "orderBookL3",
  summary: "Order-by-order book: every resting order (id, price, remaining amount), with the book seq",
  source: "docs/API.md 7.6.2",
  description:
    "`buy` descending and `sell` ascending by price, each price in time priority. Applying the " +
    "`orders_l3:{pair}` events with `seq` greater than this `seq` gives the live L3 book.",
  handler: (ctx) => {
    const exchange = ctx.exchange;
    return (res, info, pair) => {
      const index = pair!.index;
      const book = exchange.wantL3(index);
      book.lastRead = Date.now();
      const answer = () => {
        const m = exchange.market(index);
        ok(ctx, res, info, serialize.l3Book(book.snapshot(m.seq, m.priceDecimals, m.amountDecimals)));
      };
      if (book.readyAt(exchange.market(index).seq)) answer();
      else book.whenReady(answer);
    };
  },
};
