/** docs/API.md 18 `POST /trade/create-oco`: an OCO, its limit leg and its stop leg in one step. */
import { createOcoCall } from "../../entry/calls.ts";
import { OCO_FIELDS } from "../../entry/validate.ts";
import { renderOco } from "../../wire/render.ts";
import { ocoResultSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type PostRoute, SIGNED_POST } from "../route-types.ts";

export const createOco: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/create-oco",
  auth: "signedBody",
  fields: OCO_FIELDS,
  body: (s) => s.createOco,
  ok: ocoResultSchema, // renderOco
  errors: SIGNED_POST,
  operationId: "createOco",
  summary: "Create an OCO: a post-only limit order and a stop order, one cancelling the other",
  source: "docs/API.md 18",
  description:
    "Answers `{ocoId, orders: [limit leg, stop leg]}` once both legs are committed. A sell needs price " +
    "above and stopPrice below the last trade price (a buy: the reverse): else 400 `errors.price` " +
    "(OCO_PRICE_SIDE) or `errors.stopPrice` (STOP_WOULD_TRIGGER, OCO_STOP_PRICE_SIDE). A limit leg " +
    "that would take: 400 `errors.price` (post-only), nothing created.",
  handler: (ctx) => (res, info, key, body) =>
    createOcoCall(ctx, key, body, OCO_FIELDS, httpReply(ctx, res, info, renderOco)),
};
