/**
 * Every REST route of the front end, one file each, in the order the interface documents them:
 * seed 4.1-4.10, CONTRACT 8 (market-maker controls), 9 (venue data), 10 (listen keys), then the
 * service paths. `mountRoutes` (src/http/server.ts) mounts this list and the OpenAPI document
 * (src/http/openapi.ts) describes it, so a new route is one file plus one line here.
 * Admin calls are mounted by src/http/admin.ts and the stream by src/stream/.
 */
import type { Route } from "../route.ts";
import { amendOrder } from "./amend-order.ts";
import { asyncapi } from "./asyncapi-json.ts";
import { balances } from "./balances.ts";
import { bbo } from "./bbo.ts";
import { cancelAllAfter } from "./cancel-all-after.ts";
import { cancelAllOrders } from "./cancel-all-orders.ts";
import { cancelOrder } from "./cancel-order.ts";
import { cancelOrders } from "./cancel-orders.ts";
import { chart } from "./chart.ts";
import { createOrder } from "./create-order.ts";
import { createOrders } from "./create-orders.ts";
import { health } from "./health.ts";
import { history } from "./history.ts";
import { venueInfo } from "./info.ts";
import { listenKey } from "./listen-key.ts";
import { closeListenKey } from "./listen-key-close.ts";
import { metrics } from "./metrics.ts";
import { mmpGet, mmpReset, mmpSet } from "./mmp.ts";
import { openOrders } from "./open-orders.ts";
import { openapi } from "./openapi-json.ts";
import { order } from "./order.ts";
import { orderBook } from "./order-book.ts";
import { orderBookL3 } from "./order-book-l3.ts";
import { orderByClientId } from "./order-by-client-id.ts";
import { pairPage } from "./pair-page.ts";
import { pairs } from "./pairs.ts";
import { quote } from "./quote.ts";
import { time } from "./time.ts";
import { transfers } from "./transfers.ts";
import { userHistory } from "./user-history.ts";
import { userOrders } from "./user-orders.ts";

export const REST_ROUTES: readonly Route[] = [
  // seed 4.1-4.10
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
  // CONTRACT 8 market-maker controls
  amendOrder,
  cancelAllOrders,
  createOrders,
  cancelOrders,
  order,
  orderByClientId,
  openOrders,
  cancelAllAfter,
  // CONTRACT 12 market-maker protection
  mmpGet,
  mmpSet,
  mmpReset,
  quote,
  // CONTRACT 9 venue data
  time,
  venueInfo,
  // CONTRACT 13 market data for makers
  bbo,
  orderBookL3,
  // CONTRACT 10 browser access
  listenKey,
  closeListenKey,
  // CONTRACT 14 operating a box
  transfers,
  // service
  health,
  metrics,
  openapi,
  asyncapi,
];
