/**
 * The OpenAPI and AsyncAPI documents as the server serves them (GET /openapi.json, /asyncapi.json):
 * built once at start from the config, here where both front ends are known: the REST routes'
 * descriptions (openapi-routes.ts) and the trading sessions' calls (src/session/methods.ts).
 */
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { ServedDocuments } from "../http/route-context.ts";
import { DESCRIBED_SESSION_CALLS } from "../session/methods.ts";
import { buildAsyncApi } from "./asyncapi.ts";
import { buildOpenApi } from "./openapi.ts";
import { ROUTES } from "./openapi-routes.ts";

export function servedDocuments(config: ExchangeConfig): ServedDocuments {
  return {
    openApiJson: JSON.stringify(buildOpenApi(config, ROUTES)),
    asyncApiJson: JSON.stringify(buildAsyncApi(config, DESCRIBED_SESSION_CALLS)),
  };
}
