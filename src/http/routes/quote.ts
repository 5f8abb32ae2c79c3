/** docs/API.md 8.12 `POST /trade/quote`: replaces the caller's quote on a pair in one step. */

import { quoteCall } from "../../entry/calls.ts";
import { QUOTE_FIELDS } from "../../entry/validate-quote.ts";
import { renderQuote } from "../../wire/render.ts";
import { quoteResultSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const quote: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/quote",
  auth: "signedBody",
  fields: QUOTE_FIELDS,
  body: (s) => s.quote,
  ok: quoteResultSchema, // written by quoteOne (trade.ts)
  errors: SIGNED_POST,
  operationId: "quote",
  summary: "Replace the caller's quote on a pair (mass quote): cancelled ids and the placed levels",
  source: "docs/API.md 8.12",
  handler: (ctx) => (res, info, key, body) =>
    quoteCall(ctx, key, body, QUOTE_FIELDS, httpReply(ctx, res, info, renderQuote)),
};
