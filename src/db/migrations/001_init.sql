-- Initial schema. Units:
--   prices are integer ticks of the pair, amounts integer lots of the pair (pairs.*_decimals);
--   balances and transfer amounts are integers at the currency's ledger scale, stored as TEXT
--   because they may exceed 2^63; times are microseconds since the epoch (candles: ms).
-- Tables are STRICT so a float or a misplaced string is an error rather than a silent coercion.

CREATE TABLE pairs (
  name            TEXT PRIMARY KEY,
  price_decimals  INTEGER NOT NULL,
  amount_decimals INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE currencies (
  name  TEXT PRIMARY KEY,
  scale INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  uid           TEXT NOT NULL UNIQUE,
  created_micro INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  token         TEXT PRIMARY KEY,
  user_id       INTEGER NOT NULL,
  secret        TEXT NOT NULL,
  revoked       INTEGER NOT NULL DEFAULT 0,
  created_micro INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- last_nonce is TEXT: a client nonce is any integer and may exceed 2^63.
CREATE TABLE nonces (
  token      TEXT PRIMARY KEY,
  last_nonce TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Latest values only (upserted); the history is in transfers, orders and trades.
CREATE TABLE balances (
  user_id   INTEGER NOT NULL,
  currency  TEXT NOT NULL,
  available TEXT NOT NULL,
  reserved  TEXT NOT NULL,
  PRIMARY KEY (user_id, currency)
) STRICT, WITHOUT ROWID;

-- amount is signed: deposits positive, withdrawals negative.
CREATE TABLE transfers (
  id         INTEGER PRIMARY KEY,
  user_id    INTEGER NOT NULL,
  currency   TEXT NOT NULL,
  amount     TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('deposit', 'withdraw')),
  time_micro INTEGER NOT NULL
) STRICT;

-- side 0 buy / 1 sell; type 0 limit / 1 market. A market order's price is its average execution
-- price in ticks (rounded half-up), 0 until it fills.
CREATE TABLE orders (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL,
  pair         TEXT NOT NULL,
  side         INTEGER NOT NULL,
  type         INTEGER NOT NULL,
  price        INTEGER NOT NULL,
  amount       INTEGER NOT NULL,
  amount_used  INTEGER NOT NULL,
  is_cancelled INTEGER NOT NULL,
  create_micro INTEGER NOT NULL,
  update_micro INTEGER NOT NULL
) STRICT;
CREATE INDEX orders_user ON orders (user_id, id);
-- Recovery reads the open orders in id order; this partial index holds only them.
CREATE INDEX orders_open ON orders (id) WHERE is_cancelled = 0 AND amount_used < amount;

-- Trade ids grow globally and time_micro (the trade's eventTimeMicro) grows per pair, so within a
-- pair id order is time order and (pair, id) serves both the history and the 24 h window.
CREATE TABLE trades (
  id             INTEGER PRIMARY KEY,
  pair           TEXT NOT NULL,
  price          INTEGER NOT NULL,
  amount         INTEGER NOT NULL,
  taker_order_id INTEGER NOT NULL,
  maker_order_id INTEGER NOT NULL,
  taker_user_id  INTEGER NOT NULL,
  maker_user_id  INTEGER NOT NULL,
  taker_side     INTEGER NOT NULL,
  taker_type     INTEGER NOT NULL,
  maker_type     INTEGER NOT NULL,
  time_micro     INTEGER NOT NULL
) STRICT;
CREATE INDEX trades_pair ON trades (pair, id);

-- Each trade seen from each of its two users (own direction, own order's type): user history
-- pages read one contiguous range of this table.
CREATE TABLE user_trades (
  user_id    INTEGER NOT NULL,
  trade_id   INTEGER NOT NULL,
  pair       TEXT NOT NULL,
  side       INTEGER NOT NULL,
  type       INTEGER NOT NULL,
  price      INTEGER NOT NULL,
  amount     INTEGER NOT NULL,
  time_micro INTEGER NOT NULL,
  PRIMARY KEY (user_id, trade_id)
) STRICT, WITHOUT ROWID;

-- period is the chart interval name ('1m', '1h', '1d', ...); start_ms its UTC-aligned start.
CREATE TABLE candles (
  pair     TEXT NOT NULL,
  period   TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  open     INTEGER NOT NULL,
  high     INTEGER NOT NULL,
  low      INTEGER NOT NULL,
  close    INTEGER NOT NULL,
  volume   INTEGER NOT NULL,
  PRIMARY KEY (pair, period, start_ms)
) STRICT, WITHOUT ROWID;
