/**
 * The server (src/main.ts) with every order tagged with session 1, as a trading session with
 * cancel-on-disconnect tags its creates (CONTRACT 11.4): the recovery test creates such orders over
 * REST, kills this process, and starts the plain server on its database.
 */
import { Exchange, type OrderInputs } from "../../src/core/exchange.ts";

const create = Exchange.prototype.createOrder;
Exchange.prototype.createOrder = function (user: number, pair: number, order: OrderInputs, request: number) {
  return create.call(this, user, pair, { ...order, session: 1 }, request);
};
await import("../../src/main.ts");
