/**
 * docs/API.md 8.10 market-maker protection settings: `GET /trade/mmp?pairName=`, `POST /trade/mmp`
 * and `POST /trade/mmp/reset` (src/core/mmp-settings.ts). Each answers the caller's settings and
 * frozen state on the pair; the two POSTs once their change is committed.
 */

import { MMP_RESET_FIELDS, MMP_SET_FIELDS, mmpGetCall, mmpResetCall, mmpSetCall } from "../../entry/calls.ts";
import { renderMmp } from "../../wire/render.ts";
import { mmpSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type GetRoute, nonceQuery, type PostRoute, SIGNED_GET, SIGNED_POST } from "../route-types.ts";

export const mmpGet: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/mmp",
  auth: "signedQuery",
  query: [
    {
      name: "pairName",
      description: "A configured pair",
      schema: { type: "string" },
      configParam: "pairName",
      required: true,
    },
    nonceQuery,
  ],
  ok: mmpSchema, // serialize.mmp
  errors: SIGNED_GET,
  operationId: "getMmp",
  summary: "The caller's market-maker protection settings and frozen state on a pair",
  source: "docs/API.md 8.10",
  description:
    'A pair never set answers intervalSeconds 0, qtyLimit "0", frozenSeconds 0, frozen false. ' +
    "`frozenUntil`: Unix ms when the freeze ends, 0 when not frozen or frozen until a reset. The frozen " +
    "state is held in memory: a restart unfreezes.",
  handler: (ctx) => (res, info, _pair, key) =>
    mmpGetCall(
      ctx,
      key!.userId,
      new URLSearchParams(info.query).get("pairName") ?? undefined,
      httpReply(ctx, res, info, renderMmp),
    ),
};

export const mmpSet: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/mmp",
  auth: "signedBody",
  fields: MMP_SET_FIELDS,
  body: (s) => s.mmpSet,
  ok: mmpSchema, // serialize.mmp
  errors: SIGNED_POST,
  operationId: "setMmp",
  summary: "Set the caller's market-maker protection on a pair",
  source: "docs/API.md 8.10",
  description:
    "When the fills of the caller's protected orders (`mmp: true`, quotes) on the pair within the last " +
    "`intervalSeconds` reach `qtyLimit`, every open protected order of the caller on the pair is " +
    "cancelled and new ones are refused (400 `errors.mmp`, MMP_FROZEN) for `frozenSeconds` (0: until a " +
    "reset). Empties the window; a freeze in force stays. Stored: the settings survive a restart.",
  handler: (ctx) => (res, info, key, body) =>
    mmpSetCall(ctx, key, body, MMP_SET_FIELDS, httpReply(ctx, res, info, renderMmp)),
};

export const mmpReset: PostRoute = {
  kind: "signedPost",
  method: "post",
  path: "/1.0/trade/mmp/reset",
  auth: "signedBody",
  fields: MMP_RESET_FIELDS,
  body: (s) => s.mmpReset,
  ok: mmpSchema, // serialize.mmp
  errors: SIGNED_POST,
  operationId: "resetMmp",
  summary: "Unfreeze the caller's market-maker protection on a pair and empty its window",
  source: "docs/API.md 8.10",
  handler: (ctx) => (res, info, key, body) =>
    mmpResetCall(ctx, key, body, MMP_RESET_FIELDS, httpReply(ctx, res, info, renderMmp)),
};
