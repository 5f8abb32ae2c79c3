-- Executions that survive a reconnect (docs/API.md 16, DECISIONS.md "Execution numbers").
--
-- Every user has one sequence of execution numbers, 1, 2, 3, ... in commit order: one number per
-- change of one of the user's orders (the state a command left it in) and one per side of each of
-- the user's trades. `executions` keeps one row per number: the user, the number, what it numbers
-- (0: an order change, 1: a trade) and the order's or the trade's id, written by the apply thread
-- with the batch that committed it; a replay and `GET /trade/executions` read a user's numbers from
-- it in order. An order row keeps the number of its latest change, a trade the number of each side.
-- Rows written before this migration have 0: their users' numbers start at 1.
CREATE TABLE executions (
  user_id  INTEGER NOT NULL,
  exec_seq INTEGER NOT NULL,
  kind     INTEGER NOT NULL,
  ref_id   INTEGER NOT NULL,
  PRIMARY KEY (user_id, exec_seq)
) STRICT, WITHOUT ROWID;

ALTER TABLE orders ADD COLUMN exec_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trades ADD COLUMN taker_exec_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trades ADD COLUMN maker_exec_seq INTEGER NOT NULL DEFAULT 0;

DROP VIEW trade_sides;
CREATE VIEW trade_sides (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate, exec_seq) AS
  SELECT taker_user_id, id, pair, taker_side, taker_type, price, amount, time_micro, taker_fee_rate, taker_exec_seq
  FROM trades
  UNION ALL
  SELECT maker_user_id, id, pair, 1 - taker_side, maker_type, price, amount, time_micro, maker_fee_rate, maker_exec_seq
  FROM trades;

DROP VIEW user_trade_rows;
CREATE VIEW user_trade_rows (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate, exec_seq) AS
  SELECT u.user_id, u.trade_id, t.pair,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_side ELSE 1 - t.taker_side END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_type ELSE t.maker_type END,
    t.price, t.amount, t.time_micro,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_fee_rate ELSE t.maker_fee_rate END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_exec_seq ELSE t.maker_exec_seq END
  FROM user_trades u JOIN trades t ON t.id = u.trade_id;

-- The epoch of the numbers (docs/API.md 16): 1 on a new database, one higher each time a backup
-- copy is started (the copy holds meta 'exec_epoch_next_start', written into it when it is made).
INSERT INTO meta (key, value) VALUES ('exec_epoch', 1);
