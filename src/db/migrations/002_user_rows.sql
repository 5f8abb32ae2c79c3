-- Per-user rows written in bulk. A user's orders are found through user_orders and a user's trades
-- through user_trades, which the writer fills in bulk instead of with every commit: an index keyed
-- by user dirties one scattered page per user in every group commit (BENCHMARKS.md, "Changes kept").
--
-- Invariants: every order with id <= meta 'user_orders_through' has its user_orders row, and
-- every trade with id <= meta 'user_trades_through' its two user_trades rows. Orders (trades)
-- above the mark are found by scanning orders (trades) from that id on: a short tail. The writer
-- moves a mark in the transaction that writes the rows, and catches up at start
-- (workers/db/writer-worker.ts).
CREATE TABLE user_orders (
  user_id  INTEGER NOT NULL,
  order_id INTEGER NOT NULL,
  PRIMARY KEY (user_id, order_id)
) STRICT, WITHOUT ROWID;
INSERT INTO user_orders (user_id, order_id) SELECT user_id, id FROM orders;
DROP INDEX orders_user;

-- Each trade as each of its two users saw it (own direction, own order's type): the one definition
-- of a user_trades row, for the writer's bulk writes and for the readers' tail. No trade has the
-- same user on both sides (self-trades are prevented).
CREATE VIEW trade_sides (user_id, trade_id, pair, side, type, price, amount, time_micro) AS
  SELECT taker_user_id, id, pair, taker_side, taker_type, price, amount, time_micro FROM trades
  UNION ALL
  SELECT maker_user_id, id, pair, 1 - taker_side, maker_type, price, amount, time_micro FROM trades;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('user_orders_through', (SELECT COALESCE(MAX(id), 0) FROM orders));
INSERT INTO meta (key, value) VALUES ('user_trades_through', (SELECT COALESCE(MAX(id), 0) FROM trades));
