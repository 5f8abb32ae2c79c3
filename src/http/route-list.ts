/**
 * Every REST route of the front end, one file each, in the order docs/API.md documents them:
 * section 7 (REST calls), 8 (market-maker controls), 9 (venue data), 10 (listen keys), then
 * the service paths. `mountRoutes` (src/http/server.ts) mounts this list and the OpenAPI document
 * (src/documents/openapi.ts) describes it, so a new route is one file plus one line here.
 * Admin calls are mounted by src/http/admin.ts and the stream by src/stream/.
 */
import type { Route } from "./route-types.ts";
import { account } from "./routes/account.ts";
import { amendOrder } from "./routes/amend-order.ts";
import { asyncapi } from "./routes/asyncapi-json.ts";
import { balances } from "./routes/balances.ts";
import { bbo } from "./routes/bbo.ts";
import { cancelAllAfter } from "./routes/cancel-all-after.ts";
import { cancelAllOrders } from "./routes/cancel-all-orders.ts";
import { cancelOrder } from "./routes/cancel-order.ts";
import { cancelOrders } from "./routes/cancel-orders.ts";
import { chart } from "./routes/chart.ts";
import { createOco } from "./routes/create-oco.ts";
import { createOrder } from "./routes/create-order.ts";
import { createOrders } from "./routes/create-orders.ts";
import { executions } from "./routes/executions.ts";
import { health } from "./routes/health.ts";
import { history } from "./routes/history.ts";
import { venueInfo } from "./routes/info.ts";
import { listenKey } from "./routes/listen-key.ts";
import { closeListenKey } from "./routes/listen-key-close.ts";
import { metrics } from "./routes/metrics.ts";
import { mmpGet, mmpReset, mmpSet } from "./routes/mmp.ts";
import { openOrders } from "./routes/open-orders.ts";
import { openapi } from "./routes/openapi-json.ts";
import { order } from "./routes/order.ts";
import { orderBook } from "./routes/order-book.ts";
import { orderBookL3 } from "./routes/order-book-l3.ts";
import { orderByClientId } from "./routes/order-by-client-id.ts";
import { pairPage } from "./routes/pair-page.ts";
import { pairs } from "./routes/pairs.ts";
import { quote } from "./routes/quote.ts";
import { time } from "./routes/time.ts";
import { transfers } from "./routes/transfers.ts";
import { userHistory } from "./routes/user-history.ts";
import { userOrders } from "./routes/user-orders.ts";

export const REST_ROUTES: readonly Route[] = [
  // docs/API.md 7.1-7.10
  createOrder,
  cancelOrder,
  pairs,
  userHistory,
  pairPage,
  chart,
  orderBook,
  history,
  balances,
  userOrders,
  // docs/API.md 8.3-8.7 market-maker controls
  amendOrder,
  cancelAllOrders,
  createOrders,
  cancelOrders,
  order,
  orderByClientId,
  openOrders,
  cancelAllAfter,
  // docs/API.md 8.10, 8.12 market-maker protection
  mmpGet,
  mmpSet,
  mmpReset,
  quote,
  // docs/API.md 9 venue data
  time,
  venueInfo,
  // docs/API.md 7.6.1, 7.6.2 market data for makers
  bbo,
  orderBookL3,
  // docs/API.md 10 browser access
  listenKey,
  closeListenKey,
  // docs/API.md 7.11 transfers
  transfers,
  // docs/API.md 16 executions that survive a reconnect
  executions,
  // docs/API.md 18 conditional orders
  createOco,
  // docs/API.md 20 what trading bots need
  account,
  // service
  health,
  metrics,
  openapi,
  asyncapi,
];
