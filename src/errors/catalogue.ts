/**
 * The one catalogue of errors. Every failure the server can answer has a numeric code,
 * the HTTP status, the key under `errors` (docs/API.md 4) and an English and a Russian message.
 * Stages pass codes around; only the HTTP/stream edge turns a code into a status and a body.
 *
 * Code ranges (a code is never reused, even when its error is retired):
 *   1xx matching engine (the numbers are defined in src/protocol/pair/engine.ts and reused here)
 *   2xx request validation (body shape and each field)
 *   3xx authentication and authorisation
 *   4xx routing and limits
 *   5xx server
 *   6xx request validation of the market-maker controls (docs/API.md 8)
 * These are our codes, not HTTP statuses: 401 is "unknown path", answered with HTTP 404.
 *
 * Within 2xx the decimal fields keep a fixed layout, `<field base> + ParseError` (numbers.ts), so the
 * validator turns a parse failure into a code by one addition.
 *
 * Turning a code into its status, key and serialised body is src/errors/bodies.ts; choosing the
 * language of the message is src/errors/language.ts.
 */

import {
  ERR_AMEND_TOO_SMALL,
  ERR_BELOW_MIN_NOTIONAL,
  ERR_DUPLICATE_ID,
  ERR_INSUFFICIENT_FUNDS,
  ERR_MMP_FROZEN,
  ERR_NO_LIQUIDITY,
  ERR_OCO_PRICE,
  ERR_ORDER_NOT_FOUND,
  ERR_QUOTE_LEVELS,
  ERR_STOP_WOULD_TRIGGER,
  ERR_WOULD_TAKE,
} from "../protocol/pair/engine.ts";
import type { ParseError } from "../util/numbers.ts";

export interface ErrorDef {
  readonly code: number;
  readonly status: number;
  /** Key under `errors` in the body. */
  readonly field: string;
  readonly en: string;
  readonly ru: string;
  /**
   * The machine-readable code sent beside the message (docs/API.md 4 `codes`); by default the entry's
   * key in ERRORS. Set only where the key would reveal internals (the code is then `INTERNAL`).
   * A wire code never changes meaning: rename a key only together with a `name` keeping the old one.
   */
  readonly name?: string;
  /**
   * How the detail a validator adds (a number) reads in each language, `{}` standing for it: the
   * message then ends in `(<detail>)`. Without it the detail is added as it is, `(<extra>)`.
   */
  readonly detail?: { readonly en: string; readonly ru: string };
  /**
   * For the published catalogue (src/errors/doc.ts): the key under `errors` is the offending
   * field's own name, not `field` (an unknown body field is reported under that field).
   */
  readonly keyIsFieldName?: true;
  /**
   * For the published catalogue: answered only as an element of a batch's 200 answer
   * (create-orders), never as an HTTP status of its own.
   */
  readonly batchElementOnly?: true;
}

const INTERNAL_EN = "Internal server error";
const INTERNAL_RU = "Внутренняя ошибка сервера";

/** The catalogue. Grouped by range; keep codes ascending within a group. */
export const ERRORS = {
  // 1xx matching engine (src/protocol/pair/engine.ts)
  NO_LIQUIDITY: {
    code: ERR_NO_LIQUIDITY,
    status: 400,
    field: "amount",
    en: "No liquidity: there are no opposite orders of other users",
    ru: "Нет ликвидности: нет встречных заявок других пользователей",
  },
  INSUFFICIENT_FUNDS: {
    code: ERR_INSUFFICIENT_FUNDS,
    status: 400,
    field: "amount",
    en: "Insufficient funds on balance",
    ru: "Недостаточно средств на балансе",
  },
  ORDER_NOT_FOUND: {
    code: ERR_ORDER_NOT_FOUND,
    status: 400,
    field: "orderId",
    en: "Order not found",
    ru: "Заявка не найдена",
  },
  /** A caller bug (an id was assigned twice); never the client's fault. */
  DUPLICATE_ORDER_ID: {
    code: ERR_DUPLICATE_ID,
    status: 500,
    field: "server",
    name: "INTERNAL",
    en: INTERNAL_EN,
    ru: INTERNAL_RU,
  },

  /** A post-only order (or amend) whose price reaches the opposite side (docs/API.md 8.2). */
  WOULD_TAKE_LIQUIDITY: {
    code: ERR_WOULD_TAKE,
    status: 400,
    field: "price",
    en: "Post-only order would take liquidity",
    ru: "Заявка post-only забрала бы ликвидность",
  },
  /** A protected order or a quote from a user frozen by market-maker protection (docs/API.md 8.10). */
  MMP_FROZEN: {
    code: ERR_MMP_FROZEN,
    status: 400,
    field: "mmp",
    en: "Market maker protection is frozen on this pair",
    ru: "Защита маркет-мейкера заморожена на этой паре",
  },
  /** A quote the main thread should have refused (too many levels, a bad side): a caller bug. */
  QUOTE_LEVELS_REFUSED: {
    code: ERR_QUOTE_LEVELS,
    status: 500,
    field: "server",
    name: "INTERNAL",
    en: INTERNAL_EN,
    ru: INTERNAL_RU,
  },
  /** An amend whose new amount is not above what the order already executed (docs/API.md 8.3). */
  AMEND_NOT_ABOVE_EXECUTED: {
    code: ERR_AMEND_TOO_SMALL,
    status: 400,
    field: "amount",
    en: "Amount must be above the amount already executed",
    ru: "Количество должно быть больше уже исполненного",
  },
  /**
   * docs/API.md 20.5: price × amount of a limit order, or the value a market order would take at
   * submission, below the pair's minimum order value (`minNotional`): nothing happened.
   */
  NOTIONAL_BELOW_MIN: {
    code: ERR_BELOW_MIN_NOTIONAL,
    status: 400,
    field: "amount",
    en: "Order value (price × amount) is below the minimum for this pair",
    ru: "Стоимость заявки (цена × количество) меньше минимальной для этой пары",
  },
  /** docs/API.md 18: the pair's last trade price already meets the stop's condition. */
  STOP_WOULD_TRIGGER: {
    code: ERR_STOP_WOULD_TRIGGER,
    status: 400,
    field: "stopPrice",
    en: "The last trade price already meets this stop condition",
    ru: "Цена последней сделки уже удовлетворяет условию стоп-заявки",
  },
  /** docs/API.md 18: an OCO's limit leg price on the wrong side of the pair's last trade price. */
  OCO_PRICE_SIDE: {
    code: ERR_OCO_PRICE,
    status: 400,
    field: "price",
    en: "An OCO's price must be above the last trade price for a sell and below it for a buy",
    ru: "Цена OCO должна быть выше цены последней сделки для продажи и ниже неё для покупки",
  },

  // 200-209 request body
  BODY_NOT_JSON: {
    code: 200,
    status: 400,
    field: "body",
    en: "Request body is not valid JSON",
    ru: "Тело запроса не является корректным JSON",
  },
  BODY_NOT_OBJECT: {
    code: 201,
    status: 400,
    field: "body",
    en: "Request body must be a JSON object",
    ru: "Тело запроса должно быть JSON-объектом",
  },
  /** An object repeating a key, at any depth, in a body or a session frame (docs/API.md 8.1). */
  BODY_DUPLICATE_KEY: {
    code: 202,
    status: 400,
    field: "body",
    en: "A JSON object in the request repeats a key",
    ru: "В JSON-объекте запроса повторяется ключ",
  },

  // 210-219 price: 210 + ParseError for parse failures
  PRICE_REQUIRED: {
    code: 210,
    status: 400,
    field: "price",
    en: "Price is required for a limit order",
    ru: "Для лимитной заявки нужно указать цену",
  },
  PRICE_NOT_NUMBER: {
    code: 211,
    status: 400,
    field: "price",
    en: "Price must be a number or a decimal string",
    ru: "Цена должна быть числом или десятичной строкой",
  },
  PRICE_MALFORMED: {
    code: 212,
    status: 400,
    field: "price",
    en: "Price is not a valid decimal number",
    ru: "Цена не является корректным десятичным числом",
  },
  PRICE_ZERO: {
    code: 213,
    status: 400,
    field: "price",
    en: "Price must be greater than zero",
    ru: "Цена должна быть больше нуля",
  },
  PRICE_NEGATIVE: {
    code: 214,
    status: 400,
    field: "price",
    en: "Price must not be negative",
    ru: "Цена не может быть отрицательной",
  },
  PRICE_TOO_MANY_DECIMALS: {
    code: 215,
    status: 400,
    field: "price",
    en: "Price has too many decimal places",
    ru: "Слишком много знаков после запятой в цене",
    // The pair's priceDecimals, so that the client knows what to round to (docs/API.md section 4).
    detail: { en: "at most {}", ru: "не больше {}" },
  },
  PRICE_TOO_LARGE: {
    code: 216,
    status: 400,
    field: "price",
    en: "Price is too large",
    ru: "Цена слишком велика",
  },
  PRICE_ABOVE_MAX: {
    code: 217,
    status: 400,
    field: "price",
    en: "Price is above the maximum for this pair",
    ru: "Цена выше максимальной для этой пары",
  },

  // 220-229 amount: 220 + ParseError for parse failures
  AMOUNT_REQUIRED: {
    code: 220,
    status: 400,
    field: "amount",
    en: "Amount is required",
    ru: "Нужно указать количество",
  },
  AMOUNT_NOT_NUMBER: {
    code: 221,
    status: 400,
    field: "amount",
    en: "Amount must be a number or a decimal string",
    ru: "Количество должно быть числом или десятичной строкой",
  },
  AMOUNT_MALFORMED: {
    code: 222,
    status: 400,
    field: "amount",
    en: "Amount is not a valid decimal number",
    ru: "Количество не является корректным десятичным числом",
  },
  AMOUNT_ZERO: {
    code: 223,
    status: 400,
    field: "amount",
    en: "Amount must be greater than zero",
    ru: "Количество должно быть больше нуля",
  },
  AMOUNT_NEGATIVE: {
    code: 224,
    status: 400,
    field: "amount",
    en: "Amount must not be negative",
    ru: "Количество не может быть отрицательным",
  },
  AMOUNT_TOO_MANY_DECIMALS: {
    code: 225,
    status: 400,
    field: "amount",
    en: "Amount has too many decimal places",
    ru: "Слишком много знаков после запятой в количестве",
    // The pair's amountDecimals (a transfer: the currency's scale).
    detail: { en: "at most {}", ru: "не больше {}" },
  },
  AMOUNT_TOO_LARGE: {
    code: 226,
    status: 400,
    field: "amount",
    en: "Amount is too large",
    ru: "Количество слишком велико",
  },
  AMOUNT_BELOW_MIN: {
    code: 227,
    status: 400,
    field: "amount",
    en: "Amount is below the minimum for this pair",
    ru: "Количество меньше минимального для этой пары",
  },
  AMOUNT_ABOVE_MAX: {
    code: 228,
    status: 400,
    field: "amount",
    en: "Amount is above the maximum for this pair",
    ru: "Количество больше максимального для этой пары",
  },
  AMOUNT_NOTIONAL_TOO_LARGE: {
    code: 229,
    status: 400,
    field: "amount",
    en: "Order value (price × amount) is too large",
    ru: "Сумма заявки (цена × количество) слишком велика",
  },

  // 230-234 pairName
  PAIR_REQUIRED: {
    code: 230,
    status: 400,
    field: "pairName",
    en: "Pair name is required",
    ru: "Нужно указать пару",
  },
  PAIR_NOT_STRING: {
    code: 231,
    status: 400,
    field: "pairName",
    en: "Pair name must be a string",
    ru: "Название пары должно быть строкой",
  },
  PAIR_UNKNOWN: {
    code: 232,
    status: 400,
    field: "pairName",
    en: "Unknown pair",
    ru: "Неизвестная пара",
  },

  // 235-239 tradeType, directionType
  TRADE_TYPE_REQUIRED: {
    code: 235,
    status: 400,
    field: "tradeType",
    en: "Trade type is required",
    ru: "Нужно указать тип заявки",
  },
  TRADE_TYPE_INVALID: {
    code: 236,
    status: 400,
    field: "tradeType",
    en: "Trade type must be limit or market",
    ru: "Тип заявки должен быть limit или market",
  },
  DIRECTION_REQUIRED: {
    code: 237,
    status: 400,
    field: "directionType",
    en: "Direction is required",
    ru: "Нужно указать направление",
  },
  DIRECTION_INVALID: {
    code: 238,
    status: 400,
    field: "directionType",
    en: "Direction must be buy or sell",
    ru: "Направление должно быть buy или sell",
  },

  // 240-244 orderId (ORDER_NOT_FOUND is 103)
  ORDER_ID_REQUIRED: {
    code: 240,
    status: 400,
    field: "orderId",
    en: "Order id is required",
    ru: "Нужно указать номер заявки",
  },
  ORDER_ID_INVALID: {
    code: 241,
    status: 400,
    field: "orderId",
    en: "Order id must be a positive integer",
    ru: "Номер заявки должен быть положительным целым числом",
  },
  ORDER_ALREADY_CANCELLED: {
    code: 242,
    status: 400,
    field: "orderId",
    en: "Order already cancelled",
    ru: "Заявка уже отменена",
  },
  ORDER_ALREADY_EXECUTED: {
    code: 243,
    status: 400,
    field: "orderId",
    en: "Order already executed",
    ru: "Заявка уже исполнена",
  },

  // 245-249 page, pageSize
  PAGE_INVALID: {
    code: 245,
    status: 400,
    field: "page",
    en: "Page must be an integer",
    ru: "Номер страницы должен быть целым числом",
  },
  PAGE_OUT_OF_RANGE: {
    code: 246,
    status: 400,
    field: "page",
    en: "Page must be 1 or greater",
    ru: "Номер страницы должен быть не меньше 1",
  },
  PAGE_SIZE_INVALID: {
    code: 247,
    status: 400,
    field: "pageSize",
    en: "Page size must be an integer",
    ru: "Размер страницы должен быть целым числом",
  },
  PAGE_SIZE_OUT_OF_RANGE: {
    code: 248,
    status: 400,
    field: "pageSize",
    en: "Page size must be from 1 to 100",
    ru: "Размер страницы должен быть от 1 до 100",
  },

  // 250-259 chart and order book parameters
  PERIOD_UNKNOWN: {
    code: 250,
    status: 400,
    field: "period",
    en: "Unknown period; use one of 1m, 5m, 15m, 30m, 1h, 2h, 4h, 6h, 12h, 1d, 1w",
    ru: "Неизвестный период; допустимы 1m, 5m, 15m, 30m, 1h, 2h, 4h, 6h, 12h, 1d, 1w",
  },
  LIMIT_INVALID: {
    code: 251,
    status: 400,
    field: "limit",
    en: "Limit must be an integer",
    ru: "Лимит должен быть целым числом",
  },
  LIMIT_OUT_OF_RANGE: {
    code: 252,
    status: 400,
    field: "limit",
    en: "Limit must be from 1 to 1000",
    ru: "Лимит должен быть от 1 до 1000",
  },
  FROM_INVALID: {
    code: 253,
    status: 400,
    field: "from",
    en: "From must be a time in milliseconds (a non-negative integer)",
    ru: "Параметр from должен быть временем в миллисекундах (неотрицательным целым числом)",
  },
  TO_INVALID: {
    code: 254,
    status: 400,
    field: "to",
    en: "To must be a time in milliseconds (a non-negative integer)",
    ru: "Параметр to должен быть временем в миллисекундах (неотрицательным целым числом)",
  },
  FROM_AFTER_TO: {
    code: 255,
    status: 400,
    field: "from",
    en: "From must not be later than to",
    ru: "Параметр from не может быть позже to",
  },

  // 256-258 pair status (docs/API.md 11)
  PAIR_CANCEL_ONLY: {
    code: 256,
    status: 400,
    field: "pairName",
    en: "The pair accepts only cancels now",
    ru: "Пара сейчас принимает только отмены",
  },
  PAIR_HALTED: {
    code: 257,
    status: 400,
    field: "pairName",
    en: "Trading on the pair is halted",
    ru: "Торговля по паре остановлена",
  },
  PAIR_STATUS_INVALID: {
    code: 258,
    status: 400,
    field: "status",
    en: "Status must be trading, cancelOnly or halted",
    ru: "Статус должен быть trading, cancelOnly или halted",
  },

  // 260-269 uid, currency (admin calls)
  UID_REQUIRED: {
    code: 260,
    status: 400,
    field: "uid",
    en: "User id is required",
    ru: "Нужно указать идентификатор пользователя",
  },
  UID_INVALID: {
    code: 261,
    status: 400,
    field: "uid",
    en: "User id must be a UUID",
    ru: "Идентификатор пользователя должен быть UUID",
  },
  UID_UNKNOWN: {
    code: 262,
    status: 400,
    field: "uid",
    en: "User not found",
    ru: "Пользователь не найден",
  },
  UID_EXISTS: {
    code: 263,
    status: 400,
    field: "uid",
    en: "A user with this id already exists",
    ru: "Пользователь с таким идентификатором уже существует",
  },
  /** docs/API.md 9: the fee account cannot log in, so it gets no API key. */
  UID_FEE_ACCOUNT: {
    code: 264,
    status: 400,
    field: "uid",
    en: "This is the fee account, which cannot have API keys",
    ru: "Это счёт комиссий, у него не может быть API-ключей",
  },
  CURRENCY_REQUIRED: {
    code: 265,
    status: 400,
    field: "currency",
    en: "Currency is required",
    ru: "Нужно указать валюту",
  },
  CURRENCY_UNKNOWN: {
    code: 266,
    status: 400,
    field: "currency",
    en: "Unknown currency",
    ru: "Неизвестная валюта",
  },
  BALANCE_TOO_LARGE: {
    code: 267,
    status: 400,
    field: "amount",
    en: "The resulting balance would be too large: at most 2^127 - 1 units of the currency's ledger scale",
    ru: "Итоговый баланс был бы слишком большим: не более 2^127 - 1 единиц шкалы учёта валюты",
  },

  // 270-279 nonce, apiToken
  NONCE_INVALID: {
    code: 270,
    status: 400,
    field: "nonce",
    en: "Nonce must be a non-negative integer up to 2^64-1 (a JSON integer or a string of digits)",
    ru: "Nonce должен быть неотрицательным целым числом до 2^64-1 (JSON-число или строка из цифр)",
  },
  API_TOKEN_REQUIRED: {
    code: 272,
    status: 400,
    field: "apiToken",
    en: "API token is required",
    ru: "Нужно указать API-токен",
  },
  API_TOKEN_UNKNOWN: {
    code: 273,
    status: 400,
    field: "apiToken",
    en: "API token not found",
    ru: "API-токен не найден",
  },

  // 280-289 stream list (rejected at the upgrade, docs/API.md 12)
  STREAMS_EMPTY: {
    code: 280,
    status: 400,
    field: "streams",
    en: "The stream list is empty",
    ru: "Список потоков пуст",
  },
  STREAMS_UNKNOWN_CHANNEL: {
    code: 281,
    status: 400,
    field: "streams",
    en: "Unknown channel",
    ru: "Неизвестный канал",
  },
  STREAMS_UNKNOWN_PAIR: {
    code: 282,
    status: 400,
    field: "streams",
    en: "Unknown pair in the stream list",
    ru: "Неизвестная пара в списке потоков",
  },
  STREAMS_TOO_MANY: {
    code: 283,
    status: 400,
    field: "streams",
    en: "Too many streams: at most 100 per connection",
    ru: "Слишком много потоков: не более 100 на одно соединение",
  },
  STREAMS_MALFORMED: {
    code: 284,
    status: 400,
    field: "streams",
    en: "The stream list is malformed",
    ru: "Список потоков имеет неверный формат",
  },

  // 285-289 ledger capacity
  /** A deposit that would take the currency's total over all accounts past the ledger's bound. */
  LEDGER_TOTAL_TOO_LARGE: {
    code: 285,
    status: 400,
    field: "amount",
    en: "The currency's total over all accounts would be too large: at most 2^127 - 1 units of its ledger scale",
    ru: "Сумма валюты по всем счетам была бы слишком большой: не более 2^127 - 1 единиц её шкалы учёта",
  },

  // 290-299 listen keys (docs/API.md 10)
  LISTEN_KEY_REQUIRED: {
    code: 290,
    status: 400,
    field: "listenKey",
    en: "Listen key is required",
    ru: "Нужно указать ключ прослушивания (listenKey)",
  },
  LISTEN_KEY_UNKNOWN: {
    code: 291,
    status: 400,
    field: "listenKey",
    en: "Unknown or expired listen key",
    ru: "Неизвестный или истёкший ключ прослушивания (listenKey)",
  },
  /** docs/API.md 11 `POST /admin/promote`. */
  PROMOTE_FORCE_INVALID: {
    code: 292,
    status: 400,
    field: "force",
    en: "force must be true or false",
    ru: "force должен быть true или false",
  },
  /** docs/API.md 11 `POST /admin/promote` on a server that follows no leader. */
  NOT_A_FOLLOWER: {
    code: 293,
    status: 400,
    field: "role",
    en: "This server is not a follower: only a follower can be promoted",
    ru: "Этот сервер не ведомый: повысить до ведущего можно только ведомый",
  },
  /**
   * docs/API.md 11 `POST /admin/promote` without `"force": true` on a follower that cannot vouch
   * for holding every change its leader acknowledged (the detail says why).
   */
  FOLLOWER_BEHIND: {
    code: 294,
    status: 400,
    field: "force",
    en: 'This follower may lack changes its leader acknowledged; send {"force": true} to promote it anyway',
    ru: 'У этого ведомого могут отсутствовать изменения, подтверждённые ведущим; чтобы всё равно повысить его, отправьте {"force": true}',
  },

  // 3xx authentication
  AUTH_TOKEN_MISSING: {
    code: 301,
    status: 401,
    field: "auth",
    en: "Authorization header with the API token is missing",
    ru: "Отсутствует заголовок Authorization с API-токеном",
  },
  AUTH_TOKEN_UNKNOWN: {
    code: 302,
    status: 401,
    field: "auth",
    en: "Unknown or revoked API token",
    ru: "Неизвестный или отозванный API-токен",
  },
  AUTH_SIGNATURE_MISSING: {
    code: 303,
    status: 401,
    field: "auth",
    en: "X-Signature header is missing",
    ru: "Отсутствует заголовок X-Signature",
  },
  AUTH_SIGNATURE_INVALID: {
    code: 304,
    status: 401,
    field: "auth",
    en: "Invalid signature",
    ru: "Неверная подпись",
  },
  AUTH_NONCE_REPLAY: {
    code: 305,
    status: 401,
    field: "auth",
    en: "Nonce must be greater than the nonce of the previous request",
    ru: "Nonce должен быть больше, чем у предыдущего запроса",
  },
  AUTH_FORBIDDEN_CHANNEL: {
    code: 306,
    status: 403,
    field: "auth",
    en: "This channel belongs to another user",
    ru: "Этот канал принадлежит другому пользователю",
  },
  AUTH_ADMIN_INVALID: {
    code: 307,
    status: 401,
    field: "auth",
    en: "Missing or invalid admin token",
    ru: "Отсутствует или неверен токен администратора",
  },

  /**
   * docs/API.md 3: X-Timestamp empty or not an integer, X-Recv-Window not an integer from 1 to 60000,
   * or the timestamp further than the window from the server's clock. Consumes no nonce.
   */
  AUTH_TIMESTAMP: {
    code: 310,
    status: 401,
    field: "auth",
    en: "X-Timestamp must be Unix milliseconds within X-Recv-Window (1 to 60000 ms, default 5000) of the server time",
    ru: "X-Timestamp должен быть Unix-временем в миллисекундах, отличающимся от времени сервера не больше чем на X-Recv-Window (от 1 до 60000 мс, по умолчанию 5000)",
  },

  /** A stream upgrade whose `listenKey` is unknown, closed or expired (docs/API.md 10). */
  AUTH_LISTEN_KEY_INVALID: {
    code: 320,
    status: 401,
    field: "auth",
    en: "Unknown or expired listen key",
    ru: "Неизвестный или истёкший ключ прослушивания (listenKey)",
  },
  // 311-314 trading sessions (docs/API.md 13)
  SESSION_NOT_LOGGED_ON: {
    code: 311,
    status: 401,
    field: "auth",
    en: "Log on first: the first call of a session must be session.logon",
    ru: "Сначала выполните вход: первым вызовом сессии должен быть session.logon",
  },

  // 4xx routing and limits
  UNKNOWN_PATH: {
    code: 401,
    status: 404,
    field: "path",
    en: "Unknown path",
    ru: "Неизвестный путь",
  },
  METHOD_NOT_ALLOWED: {
    code: 402,
    status: 405,
    field: "path",
    en: "Method not allowed",
    ru: "Метод не поддерживается",
  },
  PAIR_UNKNOWN_IN_PATH: {
    code: 403,
    status: 404,
    field: "pairName",
    en: "Unknown pair",
    ru: "Неизвестная пара",
  },
  BODY_TOO_LARGE: {
    code: 404,
    status: 413,
    field: "body",
    en: "Request body is larger than 64 KiB",
    ru: "Тело запроса больше 64 КиБ",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 405,
    status: 415,
    field: "body",
    en: "Content-Type must be application/json",
    ru: "Content-Type должен быть application/json",
  },
  RATE_LIMITED: {
    code: 406,
    status: 429,
    field: "rate",
    en: "Too many requests, slow down",
    ru: "Слишком много запросов, снизьте частоту",
  },
  UPGRADE_REQUIRED: {
    code: 407,
    status: 426,
    field: "path",
    en: "This path accepts WebSocket connections only",
    ru: "Этот путь принимает только WebSocket-соединения",
  },

  ORDER_NOT_FOUND_PATH: {
    code: 408,
    status: 404,
    field: "orderId",
    en: "Order not found",
    ru: "Заявка не найдена",
  },

  /** docs/API.md 11 `GET /admin/users/{uid}`: an unknown or malformed uid in the path. */
  USER_NOT_FOUND_PATH: {
    code: 409,
    status: 404,
    field: "uid",
    en: "User not found",
    ru: "Пользователь не найден",
  },

  // 420-429 limits of the request head (src/wire/request.ts)
  URI_TOO_LONG: {
    code: 420,
    status: 414,
    field: "path",
    en: "Request target (path and query) is too long",
    ru: "Слишком длинный адрес запроса (путь и параметры)",
  },
  HEADER_TOO_LARGE: {
    code: 421,
    status: 431,
    field: "headers",
    en: "Request line and headers together are larger than 4 KiB",
    ru: "Строка запроса и заголовки вместе больше 4 КиБ",
  },

  // 430-439 limits of a trading session (docs/API.md 13)
  TOO_MANY_IN_FLIGHT: {
    code: 430,
    status: 429,
    field: "rate",
    en: "Too many calls of this session are waiting for their answers (at most 1000)",
    ru: "Слишком много вызовов этой сессии ожидают ответа (не больше 1000)",
  },

  // 5xx server
  INTERNAL: { code: 501, status: 500, field: "server", en: INTERNAL_EN, ru: INTERNAL_RU },
  BUSY: {
    code: 502,
    status: 503,
    field: "server",
    en: "Service is busy, try again shortly",
    ru: "Сервис перегружен, повторите попытку чуть позже",
  },
  NOT_READY: {
    code: 503,
    status: 503,
    field: "server",
    en: "Service is starting, try again shortly",
    ru: "Сервис запускается, повторите попытку чуть позже",
  },
  SHUTTING_DOWN: {
    code: 504,
    status: 503,
    field: "server",
    en: "Service is shutting down",
    ru: "Сервис останавливается",
  },
  /**
   * docs/API.md 4 and 1: a follower (docs/OPERATIONS.md, "A second box: follower") serves reads
   * only; every call that would change state is refused and changes nothing.
   */
  FOLLOWER_READ_ONLY: {
    code: 508,
    status: 503,
    field: "server",
    en: "This server is a read-only follower: send changes to the leader",
    ru: "Этот сервер только для чтения (ведомый): изменения отправляйте на ведущий",
  },
  /** docs/API.md 11 `POST /admin/backup`: the copy could not be made (e.g. the folder is not writable or the disk is full). */
  BACKUP_FAILED: {
    code: 507,
    status: 500,
    field: "server",
    en: "The backup could not be written (see the server log)",
    ru: "Не удалось записать резервную копию (подробности в журнале сервера)",
  },

  // 600-619 market-maker controls (docs/API.md 8)
  /** A body field the call does not define; the key under `errors` is that field (docs/API.md 8.1). */
  UNKNOWN_FIELD: {
    code: 600,
    status: 400,
    field: "body",
    keyIsFieldName: true,
    en: "Unknown field",
    ru: "Неизвестное поле",
  },
  CLIENT_ORDER_ID_INVALID: {
    code: 601,
    status: 400,
    field: "clientOrderId",
    en: "Client order id must be 1 to 36 characters: letters, digits, _ or -",
    ru: "Клиентский номер заявки должен состоять из 1-36 символов: буквы, цифры, _ или -",
  },
  CLIENT_ORDER_ID_DUPLICATE: {
    code: 602,
    status: 400,
    field: "clientOrderId",
    en: "An order with this client order id already exists",
    ru: "Заявка с таким клиентским номером уже существует",
  },
  CLIENT_ORDER_ID_REQUIRED: {
    code: 603,
    status: 400,
    field: "clientOrderId",
    en: "Client order id is required",
    ru: "Нужно указать клиентский номер заявки",
  },
  TIME_IN_FORCE_INVALID: {
    code: 604,
    status: 400,
    field: "timeInForce",
    en: "Time in force must be GTC, IOC or FOK",
    ru: "Срок действия должен быть GTC, IOC или FOK",
  },
  TIME_IN_FORCE_NOT_LIMIT: {
    code: 605,
    status: 400,
    field: "timeInForce",
    en: "Time in force applies to limit orders only",
    ru: "Срок действия задаётся только для лимитных заявок",
  },
  POST_ONLY_INVALID: {
    code: 606,
    status: 400,
    field: "postOnly",
    en: "Post-only must be true or false",
    ru: "Параметр postOnly должен быть true или false",
  },
  POST_ONLY_NOT_GTC: {
    code: 607,
    status: 400,
    field: "postOnly",
    en: "Post-only applies to limit GTC orders only",
    ru: "Параметр postOnly допустим только для лимитных заявок GTC",
  },
  AMEND_NOTHING: {
    code: 608,
    status: 400,
    field: "body",
    en: "Give a new amount, a new price or both",
    ru: "Укажите новое количество, новую цену или оба",
  },
  ORDERS_INVALID: {
    code: 609,
    status: 400,
    field: "orders",
    en: "Orders must be an array of 1 to 20 order objects",
    ru: "Поле orders должно быть массивом из 1-20 заявок",
  },
  ORDER_IDS_INVALID: {
    code: 610,
    status: 400,
    field: "orderIds",
    en: "Order ids must be an array of 1 to 100 order ids",
    ru: "Поле orderIds должно быть массивом из 1-100 номеров заявок",
  },
  TIMEOUT_INVALID: {
    code: 611,
    status: 400,
    field: "timeout",
    en: "Timeout must be an integer number of seconds from 0 to 600",
    ru: "Таймаут должен быть целым числом секунд от 0 до 600",
  },
  ORDER_NOT_OBJECT: {
    code: 612,
    status: 400,
    field: "body",
    batchElementOnly: true,
    en: "Each order must be a JSON object",
    ru: "Каждая заявка должна быть JSON-объектом",
  },

  // 650-669: market-maker protection, quotes and self-trade modes (docs/API.md 8.10-8.12).
  MMP_NOT_GTC: {
    code: 650,
    status: 400,
    field: "mmp",
    en: "Market maker protection applies to limit GTC orders only",
    ru: "Защита маркет-мейкера допустима только для лимитных заявок GTC",
  },
  MMP_INTERVAL_INVALID: {
    code: 651,
    status: 400,
    field: "intervalSeconds",
    en: "Interval must be an integer number of seconds from 0 to 3600",
    ru: "Интервал должен быть целым числом секунд от 0 до 3600",
  },
  MMP_QTY_LIMIT_INVALID: {
    code: 652,
    status: 400,
    field: "qtyLimit",
    en: "Quantity limit must be a positive amount of the pair, or 0 with interval 0",
    ru: "Лимит количества должен быть положительным количеством пары или 0 при интервале 0",
  },
  MMP_FROZEN_SECONDS_INVALID: {
    code: 653,
    status: 400,
    field: "frozenSeconds",
    en: "Freeze time must be an integer number of seconds from 0 to 3600",
    ru: "Время заморозки должно быть целым числом секунд от 0 до 3600",
  },
  QUOTE_BIDS_INVALID: {
    code: 654,
    status: 400,
    field: "bids",
    en: "Bids must be 0 to 20 valid levels with strictly decreasing prices",
    ru: "Поле bids должно содержать 0-20 корректных уровней со строго убывающими ценами",
  },
  QUOTE_ASKS_INVALID: {
    code: 655,
    status: 400,
    field: "asks",
    en: "Asks must be 0 to 20 valid levels with strictly increasing prices, above the best bid",
    ru: "Поле asks должно содержать 0-20 корректных уровней со строго возрастающими ценами выше лучшего bid",
  },
  SELF_TRADE_PREVENTION_INVALID: {
    code: 656,
    status: 400,
    field: "selfTradePrevention",
    en: "Self-trade prevention must be cancelMaker, cancelTaker or cancelBoth",
    ru: "Параметр selfTradePrevention должен быть cancelMaker, cancelTaker или cancelBoth",
  },
  MMP_INVALID: {
    code: 657,
    status: 400,
    field: "mmp",
    en: "mmp must be true or false",
    ru: "Параметр mmp должен быть true или false",
  },
  /** docs/API.md 8.8 deadline: not a positive integer of Unix milliseconds. */
  EXPIRES_AT_INVALID: {
    code: 640,
    status: 400,
    field: "expiresAt",
    en: "expiresAt must be a positive integer: Unix time in milliseconds",
    ru: "expiresAt должен быть положительным целым числом: время Unix в миллисекундах",
  },
  /** docs/API.md 8.8 deadline: the call's risk check started after `expiresAt`; nothing changed. */
  REQUEST_EXPIRED: {
    code: 641,
    status: 400,
    field: "expiresAt",
    en: "The request expired before it was executed; nothing was changed",
    ru: "Срок запроса истёк до его исполнения; ничего не изменено",
  },
  // 620-639 trading session frames and params (docs/API.md 13)
  SESSION_FRAME_INVALID: {
    code: 620,
    status: 400,
    field: "body",
    en: "A call must be a text frame holding one JSON object",
    ru: "Вызов должен быть текстовым кадром с одним JSON-объектом",
  },
  SESSION_ID_INVALID: {
    code: 621,
    status: 400,
    field: "id",
    en: "id must be an integer from 0 to 2^53-1 or a string of 1 to 36 characters: letters, digits, _ or -",
    ru: "id должен быть целым числом от 0 до 2^53-1 или строкой из 1-36 символов: буквы, цифры, _ или -",
  },
  SESSION_METHOD_UNKNOWN: {
    code: 622,
    status: 400,
    field: "method",
    en: "Unknown method",
    ru: "Неизвестный метод",
  },
  SESSION_PARAMS_NOT_OBJECT: {
    code: 623,
    status: 400,
    field: "params",
    en: "params must be a JSON object",
    ru: "params должен быть JSON-объектом",
  },
  SESSION_ALREADY_LOGGED_ON: {
    code: 624,
    status: 400,
    field: "method",
    en: "This session is already logged on",
    ru: "Вход в эту сессию уже выполнен",
  },
  SESSION_HEARTBEAT_INVALID: {
    code: 625,
    status: 400,
    field: "heartbeatSeconds",
    en: "heartbeatSeconds must be an integer from 1 to 120",
    ru: "heartbeatSeconds должен быть целым числом от 1 до 120",
  },
  SESSION_CANCEL_ON_DISCONNECT_INVALID: {
    code: 626,
    status: 400,
    field: "cancelOnDisconnect",
    en: "cancelOnDisconnect must be true or false",
    ru: "cancelOnDisconnect должен быть true или false",
  },
  SESSION_REPORTS_INVALID: {
    code: 627,
    status: 400,
    field: "reports",
    en: "reports must be true or false",
    ru: "reports должен быть true или false",
  },
  SESSION_ORDER_GET_PARAMS: {
    code: 628,
    status: 400,
    field: "orderId",
    en: "Give exactly one of orderId and clientOrderId",
    ru: "Укажите ровно одно из полей orderId и clientOrderId",
  },
  SESSION_PAIR_REQUIRED: {
    code: 629,
    status: 400,
    field: "pairName",
    en: "pairName is required",
    ru: "Поле pairName обязательно",
  },
  SESSION_ENDED: {
    code: 630,
    status: 400,
    field: "method",
    en: "The session ended before this call ran; nothing was changed",
    ru: "Сессия завершилась до выполнения этого вызова; ничего не изменено",
  },
  // ---------------------------------------------------------------- executions (docs/API.md 16)
  /** `after` of GET /trade/executions or the session call `executions`: not an integer >= 0. */
  EXECUTIONS_AFTER_INVALID: {
    code: 660,
    status: 400,
    field: "after",
    en: "after must be an integer, 0 or more",
    ru: "after должен быть целым числом не меньше 0",
  },
  EXECUTIONS_LIMIT_INVALID: {
    code: 661,
    status: 400,
    field: "limit",
    en: "limit must be an integer from 1 to 1000",
    ru: "limit должен быть целым числом от 1 до 1000",
  },
  RESUME_FROM_INVALID: {
    code: 662,
    status: 400,
    field: "resumeFrom",
    en: "resumeFrom must be an integer, 0 or more",
    ru: "resumeFrom должен быть целым числом не меньше 0",
  },
  /** resumeFrom above the user's last committed execution number. */
  RESUME_AHEAD: {
    code: 663,
    status: 400,
    field: "resumeFrom",
    en: "resumeFrom is above your last execution number",
    ru: "resumeFrom больше вашего последнего номера исполнения",
  },
  /** resumeEpoch names another epoch than the server's: the numbers mean nothing here. */
  RESUME_EPOCH: {
    code: 664,
    status: 400,
    field: "resumeFrom",
    en: "resumeEpoch is not this server's execution epoch: read your state again instead of resuming",
    ru: "resumeEpoch не совпадает с эпохой исполнений сервера: перечитайте состояние вместо возобновления",
  },
  /** resumeFrom with "reports": false: a replay is a stream of reports. */
  RESUME_WITHOUT_REPORTS: {
    code: 665,
    status: 400,
    field: "resumeFrom",
    en: 'resumeFrom needs "reports": true',
    ru: 'resumeFrom требует "reports": true',
  },
  RESUME_EPOCH_INVALID: {
    code: 666,
    status: 400,
    field: "resumeEpoch",
    en: "resumeEpoch must be a positive integer",
    ru: "resumeEpoch должен быть положительным целым числом",
  },
  // ---------------------------------------------------------------- reads from a point (docs/API.md 20.3)
  /** `since` of the history and the user pages: not a Unix time in ms. */
  SINCE_INVALID: {
    code: 670,
    status: 400,
    field: "since",
    en: "since must be a time in milliseconds (an integer, 0 or more)",
    ru: "since должен быть временем в миллисекундах (целым числом не меньше 0)",
  },
  /** `fromId` of the history and the user pages: not an id. */
  FROM_ID_INVALID: {
    code: 671,
    status: 400,
    field: "fromId",
    en: "fromId must be an id (an integer, 1 or more)",
    ru: "fromId должен быть идентификатором (целым числом не меньше 1)",
  },
  // ---------------------------------------------------------------- stop orders (docs/API.md 18)
  /** stopDirection without stopPrice. */
  STOP_PRICE_REQUIRED: {
    code: 680,
    status: 400,
    field: "stopPrice",
    en: "stopPrice is required with stopDirection",
    ru: "С stopDirection нужно указать stopPrice",
  },
  /** Not a positive price of the pair (its decimals, at most maxPrice). */
  STOP_PRICE_INVALID: {
    code: 681,
    status: 400,
    field: "stopPrice",
    en: "stopPrice must be a price of the pair: above 0, at most its price decimals and its maxPrice",
    ru: "stopPrice должен быть ценой пары: больше 0, не больше её знаков цены и её maxPrice",
  },
  /** stopPrice without stopDirection. */
  STOP_DIRECTION_REQUIRED: {
    code: 682,
    status: 400,
    field: "stopDirection",
    en: "stopDirection is required with stopPrice",
    ru: "С stopPrice нужно указать stopDirection",
  },
  STOP_DIRECTION_INVALID: {
    code: 683,
    status: 400,
    field: "stopDirection",
    en: 'stopDirection must be "up" or "down"',
    ru: 'stopDirection должен быть "up" или "down"',
  },
  /** postOnly with a stop. */
  POST_ONLY_WITH_STOP: {
    code: 684,
    status: 400,
    field: "postOnly",
    en: "Post-only does not apply to stop orders",
    ru: "Параметр postOnly недопустим для стоп-заявок",
  },
  /** mmp with a stop. */
  MMP_WITH_STOP: {
    code: 685,
    status: 400,
    field: "mmp",
    en: "Market maker protection does not apply to stop orders",
    ru: "Защита маркет-мейкера недопустима для стоп-заявок",
  },
  /** amend-order with `price` for a stop-market order that has not triggered. */
  STOP_MARKET_PRICE: {
    code: 686,
    status: 400,
    field: "price",
    en: "A stop-market order has no price to amend",
    ru: "У стоп-маркет заявки нет цены, которую можно изменить",
  },
  /** `trailingDelta` and `stopPrice` together (docs/API.md 18: one or the other). */
  TRAILING_DELTA_WITH_STOP_PRICE: {
    code: 688,
    status: 400,
    field: "trailingDelta",
    en: "A trailing stop takes trailingDelta in place of stopPrice, not both",
    ru: "Скользящая стоп-заявка принимает trailingDelta вместо stopPrice, а не оба",
  },
  /** Not a positive price of the pair. */
  TRAILING_DELTA_INVALID: {
    code: 689,
    status: 400,
    field: "trailingDelta",
    en: "trailingDelta must be a price of the pair: above 0, at most its price decimals and its maxPrice",
    ru: "trailingDelta должен быть ценой пары: больше 0, не больше её знаков цены и её maxPrice",
  },
  /** amend-order with `trailingDelta` for an order that is not a waiting trailing stop. */
  TRAILING_AMEND_NOT_TRAILING: {
    code: 690,
    status: 400,
    field: "trailingDelta",
    en: "Only a trailing stop order that has not triggered has a trailingDelta to amend",
    ru: "Изменить trailingDelta можно только у скользящей стоп-заявки, которая ещё не сработала",
  },
  /** amend-order with `stopPrice` for an order that is not a stop order waiting for its trigger. */
  STOP_AMEND_NOT_WAITING: {
    code: 687,
    status: 400,
    field: "stopPrice",
    en: "Only a stop order at a fixed stopPrice that has not triggered has a stopPrice to amend",
    ru: "Изменить stopPrice можно только у стоп-заявки с заданным stopPrice, которая ещё не сработала",
  },
  /** docs/API.md 18: create-oco's stopPrice on the wrong side of its price. */
  OCO_STOP_PRICE_SIDE: {
    code: 691,
    status: 400,
    field: "stopPrice",
    en: "An OCO's stopPrice must be below its price for a sell and above it for a buy",
    ru: "stopPrice у OCO должен быть ниже price для продажи и выше него для покупки",
  },
  /** docs/API.md 18: amend-order of either leg of an OCO. */
  OCO_AMEND: {
    code: 692,
    status: 400,
    field: "orderId",
    en: "An OCO leg cannot be amended: cancel it (both legs are cancelled) and create a new OCO",
    ru: "Ногу OCO нельзя изменить: отмените её (отменятся обе ноги) и создайте новую OCO",
  },
  /** docs/API.md 18: create-oco's stopLimitPrice. */
  STOP_LIMIT_PRICE_INVALID: {
    code: 693,
    status: 400,
    field: "stopLimitPrice",
    en: "stopLimitPrice must be a price of the pair: above 0, at most its price decimals and its maxPrice",
    ru: "stopLimitPrice должен быть ценой пары: больше 0, не больше её знаков цены и её maxPrice",
  },
  /** docs/API.md 18: create-oco without stopPrice. */
  OCO_STOP_PRICE_REQUIRED: {
    code: 694,
    status: 400,
    field: "stopPrice",
    en: "stopPrice is required",
    ru: "Нужно указать stopPrice",
  },
} as const satisfies Record<string, ErrorDef>;

export type ErrorName = keyof typeof ERRORS;
/** Every code of the catalogue, as a union of literals. */
export type ErrorCode = (typeof ERRORS)[ErrorName]["code"];

/** `Code.INSUFFICIENT_FUNDS === 102`: the codes by name. */
export const Code = Object.fromEntries(Object.entries(ERRORS).map(([name, def]) => [name, def.code])) as {
  readonly [K in ErrorName]: (typeof ERRORS)[K]["code"];
};

/** Every definition, ascending by code. */
export const ERROR_LIST: readonly ErrorDef[] = Object.values(ERRORS as Record<string, ErrorDef>).sort(
  (a, b) => a.code - b.code,
);

/** The wire code (docs/API.md 4) of a definition: its explicit `name`, else its key in ERRORS. */
export function wireCode(def: ErrorDef): string {
  return def.name ?? KEY_OF.get(def)!;
}
const KEY_OF = new Map<ErrorDef, string>(
  Object.entries(ERRORS as Record<string, ErrorDef>).map(([key, def]) => [def, key]),
);

/** Validator helper: the price code for a `parseDecimal` failure (210 + ParseError). */
export function priceParseError(error: ParseError): ErrorCode {
  return (ERRORS.PRICE_REQUIRED.code + error) as ErrorCode;
}

/** Validator helper: the amount code for a `parseDecimal` failure (220 + ParseError). */
export function amountParseError(error: ParseError): ErrorCode {
  return (ERRORS.AMOUNT_REQUIRED.code + error) as ErrorCode;
}
