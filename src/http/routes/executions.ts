/**
 * docs/API.md 14 `GET /trade/executions?after=&limit=`: the caller's executions after a number, as
 * a resume replays them, paged by number.
 */
import { EXECUTIONS_LIMIT_DEFAULT, EXECUTIONS_LIMIT_MAX, executionsCall } from "../../entry/calls.ts";
import { renderExecutions } from "../../wire/render.ts";
import { executionsAfterParam, executionsLimitParam } from "../../wire/request-schemas.ts";
import { executionsSchema } from "../../wire/schemas.ts";
import { httpReply } from "../http-reply.ts";
import { type GetRoute, nonceQuery, SIGNED_GET } from "../route-types.ts";

export const executions: GetRoute = {
  kind: "get",
  method: "get",
  path: "/1.0/trade/executions",
  auth: "signedQuery",
  query: [
    {
      name: "after",
      description: "Items numbered above this execution number (default 0: from the first)",
      schema: executionsAfterParam,
    },
    {
      name: "limit",
      description: `At most this many items, 1..${EXECUTIONS_LIMIT_MAX} (default ${EXECUTIONS_LIMIT_DEFAULT})`,
      schema: executionsLimitParam,
    },
    nonceQuery,
  ],
  ok: executionsSchema, // renderExecutions
  errors: SIGNED_GET,
  operationId: "executions",
  summary: "The caller's executions after a number: trades, and orders at their latest change",
  source: "docs/API.md 14",
  description:
    "Every trade of the caller numbered above `after` (once, at its number) and every order of the " +
    "caller whose latest change is numbered above `after` (once, in its current state, at that " +
    "number), in number order, the first `limit` of them; `lastExecSeq` is the caller's last " +
    "committed number when the read was cut: page on with `after` = the last item's `execSeq` " +
    "until it reaches `lastExecSeq`. The same merged view a session's `resumeFrom` replays.",
  handler: (ctx) => (res, info, _pair, key) => {
    const q = new URLSearchParams(info.query);
    executionsCall(
      ctx,
      key!.userId,
      q.get("after") ?? undefined,
      q.get("limit") ?? undefined,
      httpReply(ctx, res, info, renderExecutions),
    );
  },
};
