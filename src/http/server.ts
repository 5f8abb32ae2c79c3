/**
 * The REST front end: routes under `/1.0`, admin under `/admin`, `/health` and `/metrics`.
 *
 * Each route is one file of routes/ (listed in routes/index.ts); route.ts runs the guarded steps
 * every route shares, in the order CONTRACT 5 ranks the failures: 404 (path, pair) → 413 (body
 * size) → 415 (media type) → 401 (auth, nonce) → 429 (rate) → 400; trade.ts is where the order
 * routes talk to the core. This file mounts them, then the admin calls, the CORS preflights, 405
 * for a known path with another method and 404 for the rest.
 */
import type { TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { Code } from "../errors.ts";
import { buildOpenApi } from "./openapi.ts";
import { readRequest, sendError } from "./request.ts";
import { type FrontEndDeps, mountRoute, PREFIX, pairFromPath, routeContext, routeLabel } from "./route.ts";
import { REST_ROUTES } from "./routes/index.ts";

export type { FrontEndDeps, UserReads } from "./route.ts";
export { orderRowView, tradeRowView } from "./row-views.ts";
export { validateOrder } from "./validate.ts";

export function mountRoutes(app: TemplatedApp, deps: FrontEndDeps): void {
  // The OpenAPI document is built once from the config (src/http/openapi.ts) and served by routes/openapi-json.ts.
  const ctx = routeContext(deps, JSON.stringify(buildOpenApi(deps.config)));
  const finish = ctx.finish;

  for (const route of REST_ROUTES) mountRoute(app, ctx, route);

  if (deps.admin !== null) deps.admin.mount(app, finish);
  else
    app.any("/admin/*", (res, req) =>
      sendError(res, readRequest(res, req, "/admin"), Code.UNKNOWN_PATH, finish),
    );

  // ---------------------------------------------------------------- 404 / 405

  // CORS preflights (CONTRACT 10), answered for any path under the REST base.
  app.options(`${PREFIX}/*`, (res, req) => deps.cors.preflight(res, req));

  // A path of the REST base with a method it does not serve: 405 (404 first for an unknown pair).
  for (const r of REST_ROUTES) {
    if (!r.path.startsWith(`${PREFIX}/`)) continue;
    const route = routeLabel(r);
    const withPair = route.includes(":pairName");
    app.any(PREFIX + route, (res, req) => {
      if (req.getMethod() === "options") return deps.cors.preflight(res, req);
      const info = readRequest(res, req, route);
      if (withPair && pairFromPath(ctx, req) === undefined) {
        return sendError(res, info, Code.PAIR_UNKNOWN_IN_PATH, finish);
      }
      sendError(res, info, Code.METHOD_NOT_ALLOWED, finish);
    });
  }
  app.any("/*", (res, req) => {
    const info = readRequest(res, req, "unknown");
    sendError(res, info, Code.UNKNOWN_PATH, finish, req.getUrl());
  });
}
