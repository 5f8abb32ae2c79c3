#!/usr/bin/env node
/**
 * `exchange`: a command line over the typed client (src/client/). Installed as the package's `bin`
 * (`npx exchange ...` after `npm run build`), or run from the sources with `npx tsx src/cli.ts`.
 *
 *   exchange user create [--uid UUID]                          admin: a new user and API key
 *   exchange user UID                                          admin: balances and API keys
 *   exchange api-key create UID                                admin: another key
 *   exchange pair-status PAIR trading|cancelOnly|halted        admin
 *   exchange deposit UID CURRENCY AMOUNT                       admin
 *   exchange withdraw UID CURRENCY AMOUNT                      admin
 *   exchange backup                                            admin: a copy of the database
 *   exchange promote [--force]                                 admin: this follower becomes the leader
 *   exchange order place PAIR buy|sell AMOUNT [PRICE]          limit with a price, market without
 *         [--client-order-id ID] [--time-in-force GTC|IOC|FOK] [--post-only] [--mmp]
 *         [--stp cancelMaker|cancelTaker|cancelBoth] [--stop PRICE --stop-direction up|down]
 *         [--trailing-delta D --stop-direction up|down]     (a trailing stop: docs/API.md 18)
 *   exchange order amend ORDER_ID [--amount A] [--price P] [--stop P | --trailing-delta D]
 *   exchange order cancel ORDER_ID
 *   exchange order cancel-all [--pair PAIR]
 *   exchange oco PAIR buy|sell AMOUNT --price P --stop S      an OCO (docs/API.md 18.1): a post-only
 *         [--stop-limit L] [--client-order-id ID]          limit leg and a stop leg, one cancels the other
 *   exchange mmp get PAIR                                      market-maker protection (docs/API.md 8.10)
 *   exchange mmp set PAIR INTERVAL_S QTY_LIMIT FROZEN_S
 *   exchange mmp reset PAIR
 *   exchange quote PAIR [--bid PRICE:AMOUNT]... [--ask PRICE:AMOUNT]...   mass quote; none: pull
 *   exchange orders [--pair PAIR] [--page N] [--page-size N]   the caller's orders, newest first
 *         [--since MS | --from-id ID]                          (from a point, oldest first: docs/API.md 20.3)
 *   exchange my-trades [--pair PAIR] [--page N] [--page-size N] [--since MS | --from-id ID]
 *   exchange account                                           the caller's uid and balances (docs/API.md 20.4)
 *   exchange transfers [--page N] [--page-size N]              the caller's deposits and withdrawals
 *   exchange balances PAIR
 *   exchange pairs | book PAIR | history PAIR [--since MS | --from-id ID] [--limit N]
 *   exchange tail CHANNEL... [--count N] [--book]              one JSON line per stream message
 *         (`exchange tail status`: every pair's status, then each change; docs/API.md 12.2)
 *   exchange session place PAIR buy|sell AMOUNT [PRICE] [...]  the same order over a trading session
 *   exchange session cancel ORDER_ID                           a cancel over a trading session
 *   exchange session tail [--count N] [--resume N]             one JSON line per execution report
 *         (--resume: first the executions numbered above N, replayed; docs/API.md 16)
 *
 * Settings, flags winning over the environment: the end of USAGE below, which `--help` prints.
 * Answers are printed as JSON on stdout; a non-200 answer prints its body on stderr and exits 1;
 * a usage error exits 2. What it says when the server cannot be reached, or refuses an unknown
 * name, is src/cli-faults.ts.
 */
import { parseArgs } from "node:util";
import { codesOf, DEFAULT_URL, explainNetworkFault, targetOf, validNames } from "./cli-faults.ts";
import { OrderBookFeed } from "./client/book.ts";
import {
  type AmendOrderRequest,
  type ApiResponse,
  type CreateOcoRequest,
  type CreateOrderRequest,
  ExchangeClient,
  type QuoteLevelInput,
  type SelfTradePrevention,
  type TimeInForce,
} from "./client/index.ts";
import { SessionError, TradingSession } from "./client/session.ts";
import { StreamClient, StreamRejected } from "./client/stream.ts";
import { nearest, unknownOptionOf } from "./util/nearest.ts";

const USAGE = `usage: exchange <command> [args] [settings]
  user create [--uid UUID]            user UID                 api-key create UID      (admin)
  deposit UID CURRENCY AMOUNT         withdraw UID CURRENCY AMOUNT                      (admin)
  pair-status PAIR trading|cancelOnly|halted                   backup                  (admin)
  promote [--force]   a follower becomes the leader (--force: even if it may lack changes) (admin)
  order place PAIR buy|sell AMOUNT [PRICE] [--client-order-id ID] [--time-in-force GTC|IOC|FOK]
    [--post-only] [--mmp] [--stp cancelMaker|cancelTaker|cancelBoth]   (no PRICE: a market order)
    [--stop PRICE --stop-direction up|down]   (a stop order, docs/API.md 18: waits for a trade there)
    [--trailing-delta D --stop-direction up|down]   (a trailing stop: its stop price follows the
                                       trades at distance D; --stop or --trailing-delta, not both)
  order amend ORDER_ID [--amount A] [--price P] [--stop P | --trailing-delta D]   (a waiting stop)
  order cancel ORDER_ID               order cancel-all [--pair PAIR]
  oco PAIR buy|sell AMOUNT --price P --stop S [--stop-limit L] [--client-order-id ID]
    (docs/API.md 18.1: a post-only limit leg at P and a stop leg at S, stop-limit at L or else
    stop-market; either trading or triggering cancels the other)
  mmp get PAIR                        mmp reset PAIR
  mmp set PAIR INTERVAL_S QTY_LIMIT FROZEN_S
  quote PAIR [--bid PRICE:AMOUNT]... [--ask PRICE:AMOUNT]...   (no levels: pull the quote)
  orders [--pair PAIR] [--page N] [--page-size N] [--since MS | --from-id ID]     balances PAIR
  my-trades [--pair PAIR] [--page N] [--page-size N] [--since MS | --from-id ID]  account
    (--since, --from-id: from that point, oldest first; --pair: that pair only)
  transfers [--page N] [--page-size N]
  pairs | book PAIR | history PAIR [--since MS | --from-id ID] [--limit N]
  tail CHANNEL... [--count N] [--book]
  session place PAIR buy|sell AMOUNT [PRICE] [order flags]   session cancel ORDER_ID
  session tail [--count N] [--resume N]   (over a trading session: logon, then the call, or one
                                       JSON line per execution report until Ctrl-C; --resume N:
                                       first the executions numbered above N)
settings (a flag wins over its environment variable; an empty variable counts as unset):
  --url URL              EXCHANGE_URL          the server, default ${DEFAULT_URL}
  --token T              EXCHANGE_API_TOKEN    API token: signed commands, user_ channels
  --secret S             EXCHANGE_SECRET_KEY   its secret key
  --admin-token A        ADMIN_TOKEN           the admin commands
  --lang en|ru           EXCHANGE_LANG         language of error messages, default en
  --signature bound|legacy  EXCHANGE_SIGNATURE   signing form, default bound (X-Timestamp)
  --recv-window MS       EXCHANGE_RECV_WINDOW  1 to 60000, default unset (the server's 5000)
                         NODE_EXTRA_CA_CERTS   a PEM file of certificates to trust for https
                                               (a self-signed server's own, or its CA)
answers print as JSON on stdout; an error answer prints on stderr and exits 1, a usage error 2`;

class UsageError extends Error {}

/** The commands, for the suggestion after a mistyped one. */
const COMMANDS = [
  "user",
  "api-key",
  "pair-status",
  "deposit",
  "withdraw",
  "backup",
  "promote",
  "order",
  "oco",
  "mmp",
  "quote",
  "orders",
  "my-trades",
  "account",
  "transfers",
  "balances",
  "pairs",
  "book",
  "history",
  "tail",
  "session",
];

const OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  secret: { type: "string" },
  "admin-token": { type: "string" },
  lang: { type: "string" },
  signature: { type: "string" },
  "recv-window": { type: "string" },
  uid: { type: "string" },
  pair: { type: "string" },
  page: { type: "string" },
  "page-size": { type: "string" },
  since: { type: "string" },
  "from-id": { type: "string" },
  limit: { type: "string" },
  "client-order-id": { type: "string" },
  "time-in-force": { type: "string" },
  "post-only": { type: "boolean" },
  mmp: { type: "boolean" },
  stp: { type: "string" },
  stop: { type: "string" },
  "stop-direction": { type: "string" },
  "trailing-delta": { type: "string" },
  amount: { type: "string" },
  price: { type: "string" },
  "stop-limit": { type: "string" },
  bid: { type: "string", multiple: true },
  ask: { type: "string", multiple: true },
  count: { type: "string" },
  resume: { type: "string" },
  book: { type: "boolean" },
  force: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  err: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  } catch (error) {
    const flag = unknownOptionOf(error);
    if (flag === undefined) err(`${(error as Error).message}\n${USAGE}`);
    else {
      const near = nearest(flag.replace(/^-+/, ""), Object.keys(OPTIONS));
      err(`unknown flag ${flag}${near === undefined ? "" : `: did you mean --${near}?`}\n${USAGE}`);
    }
    return 2;
  }
  const { values: v, positionals: p } = parsed;
  if (v.help === true || p.length === 0) {
    (v.help === true ? out : err)(USAGE);
    return v.help === true ? 0 : 2;
  }
  const target = targetOf(v.url, env.EXCHANGE_URL);
  if ("error" in target) {
    err(`${target.error}\n${USAGE}`);
    return 2;
  }
  const baseUrl = target.url;
  /** A setting from its flag, else its variable; an empty variable counts as unset. */
  const setting = (flag: string | undefined, name: string): string | undefined =>
    flag ?? (env[name] === "" ? undefined : env[name]);
  const signatureForm = setting(v.signature, "EXCHANGE_SIGNATURE") ?? "bound";
  if (signatureForm !== "bound" && signatureForm !== "legacy") {
    err(`--signature must be bound or legacy\n${USAGE}`);
    return 2;
  }
  const windowText = v["recv-window"] ?? env.EXCHANGE_RECV_WINDOW;
  const recvWindow = windowText === undefined || windowText === "" ? undefined : Number(windowText);
  if (
    recvWindow !== undefined &&
    !(Number.isInteger(recvWindow) && recvWindow >= 1 && recvWindow <= 60_000)
  ) {
    err(`--recv-window must be an integer from 1 to 60000\n${USAGE}`);
    return 2;
  }
  const client = new ExchangeClient({
    baseUrl,
    apiToken: setting(v.token, "EXCHANGE_API_TOKEN"),
    secretKey: setting(v.secret, "EXCHANGE_SECRET_KEY"),
    adminToken: setting(v["admin-token"], "ADMIN_TOKEN"),
    lang: setting(v.lang, "EXCHANGE_LANG"),
    signatureForm,
    recvWindow,
  });
  /** An error answer's body, then the names the server has when it refused an unknown one. */
  const refused = async (text: string) => {
    err(text);
    const names = await validNames(codesOf(text.slice(text.indexOf("{"))), client);
    if (names !== undefined) err(names);
  };
  const print = async (res: ApiResponse<unknown>): Promise<number> => {
    if (res.status === 200) {
      out(res.text);
      return 0;
    }
    await refused(`HTTP ${res.status}: ${res.text}`);
    return 1;
  };
  const arg = (i: number, name: string): string => {
    const value = p[i];
    if (value === undefined) throw new UsageError(`missing ${name}`);
    return value;
  };
  // Checked before anything is sent: without them the server could only answer 401.
  const needKey = () => {
    const { apiToken, secretKey } = client.options;
    if (apiToken === undefined || secretKey === undefined)
      throw new UsageError(
        `this command is signed: it needs --token and --secret (or EXCHANGE_API_TOKEN and EXCHANGE_SECRET_KEY)${
          apiToken === undefined && secretKey === undefined
            ? ""
            : `; ${apiToken === undefined ? "--token" : "--secret"} is missing`
        }`,
      );
  };
  /** `PAIR buy|sell AMOUNT [PRICE]` from positional 2 on, and the order flags. */
  const orderArgs = (): CreateOrderRequest => {
    const side = arg(3, "buy|sell");
    if (side !== "buy" && side !== "sell") throw new UsageError("direction must be buy or sell");
    const price = p[5];
    const order: CreateOrderRequest = {
      pairName: arg(2, "PAIR"),
      tradeType: price === undefined ? "market" : "limit",
      directionType: side,
      amount: arg(4, "AMOUNT"),
    };
    if (price !== undefined) order.price = price;
    if (v["client-order-id"] !== undefined) order.clientOrderId = v["client-order-id"];
    if (v["time-in-force"] !== undefined) order.timeInForce = v["time-in-force"] as TimeInForce;
    if (v["post-only"] === true) order.postOnly = true;
    if (v.mmp === true) order.mmp = true;
    if (v.stp !== undefined) order.selfTradePrevention = v.stp as SelfTradePrevention;
    // docs/API.md 18: a stop price or a trailing delta, with a direction; the server names a
    // missing one.
    stopOf(order);
    if (v.price !== undefined || v.amount !== undefined)
      throw new UsageError("the price and amount of a new order are arguments: PAIR buy|sell AMOUNT [PRICE]");
    const direction = v["stop-direction"];
    if (direction !== undefined) {
      if (direction !== "up" && direction !== "down")
        throw new UsageError("--stop-direction must be up or down");
      order.stopDirection = direction;
    }
    return order;
  };
  /**
   * `--stop` or `--trailing-delta` into a create-order or amend body. Both at once is refused here,
   * as the server refuses it (docs/API.md 18: TRAILING_DELTA_WITH_STOP_PRICE), before anything is sent.
   */
  const stopOf = (body: { stopPrice?: string | number; trailingDelta?: string | number }) => {
    if (v.stop !== undefined && v["trailing-delta"] !== undefined)
      throw new UsageError(
        "--stop and --trailing-delta cannot go together: a stop order has a fixed stop price or a trailing delta",
      );
    if (v.stop !== undefined) body.stopPrice = v.stop;
    if (v["trailing-delta"] !== undefined) body.trailingDelta = v["trailing-delta"];
  };
  /** `order amend ORDER_ID` and what changes (docs/API.md 8.3; a waiting stop's too, 18). */
  const amendArgs = (): AmendOrderRequest => {
    const amend: AmendOrderRequest = { orderId: arg(2, "ORDER_ID") };
    if (v.amount !== undefined) amend.amount = v.amount;
    if (v.price !== undefined) amend.price = v.price;
    stopOf(amend);
    if (v["stop-direction"] !== undefined)
      throw new UsageError("an order keeps its --stop-direction: amend changes --stop or --trailing-delta");
    if (Object.keys(amend).length === 1)
      throw new UsageError("amend needs --amount, --price, --stop or --trailing-delta");
    return amend;
  };
  /** `oco PAIR buy|sell AMOUNT --price P --stop S [--stop-limit L] [--client-order-id ID]`. */
  const ocoArgs = (): CreateOcoRequest => {
    const side = arg(2, "buy|sell");
    if (side !== "buy" && side !== "sell") throw new UsageError("direction must be buy or sell");
    if (v.price === undefined) throw new UsageError("missing --price (the limit leg's price)");
    if (v.stop === undefined) throw new UsageError("missing --stop (the stop leg's stop price)");
    const oco: CreateOcoRequest = {
      pairName: arg(1, "PAIR"),
      directionType: side,
      amount: arg(3, "AMOUNT"),
      price: v.price,
      stopPrice: v.stop,
    };
    if (v["stop-limit"] !== undefined) oco.stopLimitPrice = v["stop-limit"];
    if (v["client-order-id"] !== undefined) oco.clientOrderId = v["client-order-id"];
    return oco;
  };
  const needAdmin = () => {
    if (client.options.adminToken === undefined)
      throw new UsageError("this is an admin command: it needs --admin-token (or ADMIN_TOKEN)");
  };

  try {
    const [cmd, sub] = p;
    switch (cmd) {
      case "user":
        needAdmin();
        if (sub === "create") return await print(await client.createUser(v.uid));
        return await print(await client.user(arg(1, "UID")));
      case "api-key":
        if (sub !== "create") throw new UsageError(`unknown: api-key ${sub ?? ""}`);
        needAdmin();
        return await print(await client.createApiKey(arg(2, "UID")));
      case "pair-status":
        needAdmin();
        return await print(await client.setPairStatus(arg(1, "PAIR"), arg(2, "STATUS")));
      case "deposit":
      case "withdraw": {
        needAdmin();
        const call = cmd === "deposit" ? client.deposit : client.withdraw;
        return await print(await call.call(client, arg(1, "UID"), arg(2, "CURRENCY"), arg(3, "AMOUNT")));
      }
      case "backup":
        needAdmin();
        return await print(await client.backup());
      case "promote":
        needAdmin();
        return await print(await client.promote(v.force === true));
      case "order":
        needKey();
        if (sub === "place") return await print(await client.createOrder(orderArgs()));
        if (sub === "amend") return await print(await client.amendOrder(amendArgs()));
        if (sub === "cancel") return await print(await client.cancelOrder(arg(2, "ORDER_ID")));
        if (sub === "cancel-all") {
          out(JSON.stringify({ cancelled: await client.cancelAll(v.pair) }));
          return 0;
        }
        throw new UsageError(`unknown: order ${sub ?? ""}`);
      case "oco":
        needKey();
        return await print(await client.createOco(ocoArgs()));
      case "mmp": {
        needKey();
        const pair = arg(2, "PAIR");
        if (sub === "get") return await print(await client.getMmp(pair));
        if (sub === "reset") return await print(await client.resetMmp(pair));
        if (sub === "set")
          return await print(
            await client.setMmp({
              pairName: pair,
              intervalSeconds: arg(3, "INTERVAL_S"),
              qtyLimit: arg(4, "QTY_LIMIT"),
              frozenSeconds: arg(5, "FROZEN_S"),
            }),
          );
        throw new UsageError(`unknown: mmp ${sub ?? ""}`);
      }
      case "quote": {
        needKey();
        const levels = (list: string[] | undefined, name: string): QuoteLevelInput[] =>
          (list ?? []).map((text) => {
            const [price, amount, extra] = text.split(":");
            if (amount === undefined || extra !== undefined || price === "" || amount === "")
              throw new UsageError(`--${name} must be PRICE:AMOUNT, got ${text}`);
            return [price, amount];
          });
        return await print(await client.quote(arg(1, "PAIR"), levels(v.bid, "bid"), levels(v.ask, "ask")));
      }
      case "orders":
        needKey();
        // docs/API.md 20.3: `pairName` filters; the path's pair does not.
        return await print(await client.userOrders(v.pair ?? "btc_usdt", pointOf(v)));
      case "my-trades":
        needKey();
        return await print(await client.userHistory(pointOf(v)));
      case "account":
        needKey();
        return await print(await client.account());
      case "transfers":
        needKey();
        return await print(await client.transfers({ page: v.page, pageSize: v["page-size"] }));
      case "balances":
        needKey();
        return await print(await client.balances(arg(1, "PAIR")));
      case "pairs":
        return await print(await client.pairs());
      case "book":
        return await print(await client.orderBook(arg(1, "PAIR")));
      case "history":
        return await print(
          await client.history(arg(1, "PAIR"), { since: v.since, fromId: v["from-id"], limit: v.limit }),
        );
      case "tail":
        return await tail(p.slice(1), v, client, baseUrl, out, err, needKey);
      case "session": {
        needKey();
        if (sub === "tail") return await sessionTail(v, client, baseUrl, out, err);
        if (sub !== "place" && sub !== "cancel") throw new UsageError(`unknown: session ${sub ?? ""}`);
        const call = sub === "place" ? orderArgs() : arg(2, "ORDER_ID");
        const session = await TradingSession.connect({ ...sessionOptions(client, baseUrl), reports: false });
        try {
          const result =
            typeof call === "string" ? await session.cancelOrder(call) : await session.createOrder(call);
          out(JSON.stringify(result));
          return 0;
        } catch (error) {
          if (!(error instanceof SessionError)) throw error;
          await refused(`status ${error.status}: ${JSON.stringify(error.body)}`);
          return 1;
        } finally {
          await session.close();
        }
      }
      default: {
        const near = nearest(cmd, COMMANDS);
        throw new UsageError(`unknown command ${cmd}${near === undefined ? "" : `: did you mean ${near}?`}`);
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`${error.message}\n${USAGE}`);
      return 2;
    }
    const fault = explainNetworkFault(error, target);
    if (fault !== undefined) err(fault);
    else if (error instanceof StreamRejected) await refused(error.message);
    else err(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

/**
 * docs/API.md 20.3: the page and point of a user read from the flags: `--pair` (only that pair),
 * `--since` (Unix ms) or `--from-id` (oldest first from there), `--page`, `--page-size`.
 */
function pointOf(v: {
  pair?: string;
  since?: string;
  "from-id"?: string;
  page?: string;
  "page-size"?: string;
}) {
  return { pairName: v.pair, since: v.since, fromId: v["from-id"], page: v.page, pageSize: v["page-size"] };
}

/**
 * Prints stream messages as JSON lines until `--count` messages (or forever). With `--book` and one
 * `orders:{pair}` channel, prints the whole resynced book after each change instead.
 */
async function tail(
  channels: string[],
  v: { count?: string; book?: boolean },
  client: ExchangeClient,
  baseUrl: string,
  out: (line: string) => void,
  err: (line: string) => void,
  needKey: () => void,
): Promise<number> {
  if (channels.length === 0) throw new UsageError("missing CHANNEL");
  // The user channels need a signed upgrade (docs/API.md section 12.1).
  if (channels.some((c) => c.startsWith("user_"))) needKey();
  const count = v.count === undefined ? Number.POSITIVE_INFINITY : Number(v.count);
  if (!(count >= 1)) throw new UsageError("--count must be a positive integer");
  let seen = 0;
  let finished = false;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = (code) => {
      finished = true;
      resolve(code);
    };
  });
  const onSignal = () => finish(0);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    if (v.book === true) {
      const channel = channels[0];
      if (channels.length !== 1 || !channel.startsWith("orders:"))
        throw new UsageError("--book takes one orders:{pair} channel");
      const feed = await OrderBookFeed.open({
        baseUrl,
        pairName: channel.slice("orders:".length),
        onBook: (book) => {
          if (seen >= count) return;
          out(JSON.stringify(book));
          if (++seen >= count) finish(0);
        },
        onError: (error) => {
          err(error.message);
          finish(1);
        },
      });
      const code = await done;
      await feed.close();
      return code;
    }
    const { apiToken, secretKey, signatureForm, recvWindow } = client.options;
    // A refused upgrade rejects `connect` with the refusal, which says why (no onClose for it).
    const stream = await StreamClient.connect({
      baseUrl,
      streams: channels,
      apiToken,
      secretKey,
      signatureForm,
      recvWindow,
      keep: false,
      onMessage: (m) => {
        if (seen >= count) return;
        out(JSON.stringify(m));
        if (++seen >= count) finish(0);
      },
      onClose: (code) => {
        if (finished) return;
        err(`stream closed (${code})`);
        finish(1);
      },
    });
    const code = await done;
    await stream.close();
    return code;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** A session's address, key and language from the command's settings. */
function sessionOptions(client: ExchangeClient, baseUrl: string) {
  const { apiToken, secretKey, lang } = client.options;
  return { baseUrl, apiToken, secretKey, lang };
}

/**
 * Logs on (reconnecting after a drop, with a fresh logon that resumes from the last report printed)
 * and prints each execution report as one JSON line, `{"event":"order"|"trade","data":...,
 * "execSeq":n}`, until `--count` reports or Ctrl-C. With `--resume N` the logon resumes from N: the
 * executions numbered above N come first, replayed (docs/API.md 16). What happens to the session
 * itself goes to stderr.
 */
async function sessionTail(
  v: { count?: string; resume?: string },
  client: ExchangeClient,
  baseUrl: string,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const count = v.count === undefined ? Number.POSITIVE_INFINITY : Number(v.count);
  if (!(count >= 1)) throw new UsageError("--count must be a positive integer");
  const resumeFrom = v.resume === undefined ? undefined : Number(v.resume);
  if (resumeFrom !== undefined && !(/^\d+$/.test(v.resume!) && Number.isSafeInteger(resumeFrom)))
    throw new UsageError("--resume must be an integer >= 0 (an execSeq)");
  let seen = 0;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const onSignal = () => finish(0);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const session = await TradingSession.connect({
      ...sessionOptions(client, baseUrl),
      reconnect: true,
      ...(resumeFrom === undefined ? {} : { resumeFrom }),
    });
    // Listeners added in the turn `connect` resolved in see the replay (it follows the logon).
    const report = (event: string) => (data: unknown, execSeq: number) => {
      if (seen >= count) return;
      out(JSON.stringify({ event, data, execSeq }));
      if (++seen >= count) finish(0);
    };
    session.on("order", report("order"));
    session.on("trade", report("trade"));
    session.on("disconnect", (d) => {
      if (d.reconnecting) err(`session dropped (close ${d.code}); reconnecting`);
    });
    session.on("logon", (r) => err(`logged on again as ${r.uid}`));
    session.on("resumed", (r) => err(`resumed: replayed up to execSeq ${r.execSeq} (epoch ${r.execEpoch})`));
    session.on("resumeRefused", (r) =>
      err(
        `resume from ${r.resumeFrom} refused (${(r.error.codes.resumeFrom ?? []).join(", ")}): logged on without it; what changed meanwhile is not replayed`,
      ),
    );
    session.on("close", (c) => {
      err(`session ended (close ${c.code})${c.error === undefined ? "" : `: ${c.error.message}`}`);
      finish(1);
    });
    err(`logged on as ${session.logonResult?.uid}`);
    const code = await done;
    // Ending it here is no drop to report (Ctrl-C, or --count reached).
    session.removeAllListeners("close");
    session.removeAllListeners("disconnect");
    await session.close();
    return code;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

// Run when executed directly (node dist/src/cli.js, the `exchange` bin, or tsx src/cli.ts).
const invoked = process.argv[1] ?? "";
if (/(?:^|[/\\])(?:cli\.[jt]s|exchange)$/.test(invoked)) {
  run(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
