/** docs/API.md 1 `GET /metrics`: Prometheus text, rendered at scrape time (src/core/services/metrics.ts). */
import { Code } from "../../errors/catalogue.ts";
import { readRequest, sendError } from "../../wire/request.ts";
import type { PlainRoute } from "../route-types.ts";

export const metrics: PlainRoute = {
  kind: "plain",
  method: "get",
  path: "/metrics",
  auth: "none",
  ok: "text",
  errors: [500],
  operationId: "metrics",
  summary: "Prometheus text format",
  source: "docs/API.md 1",
  handler: (ctx) => {
    const m = ctx.metrics;
    return (res, req) => {
      const info = readRequest(res, req, "/metrics");
      m.render().then(
        (text) => {
          if (info.aborted) return;
          info.done = true;
          res.cork(() => {
            res.writeStatus("200 OK").writeHeader("content-type", m.contentType).end(text);
          });
        },
        (err) => sendError(res, info, Code.INTERNAL, ctx.finish, undefined, err),
      );
    };
  },
};
