-- user_trades keeps only its key (user_id, trade_id) (issue 12). The rest of a user's row is the
-- trade's, from the user's side: no trade has the same user on both sides (self-trades are
-- prevented), so the user is its taker or its maker, and the direction, the order type and the fee
-- rate are that side's. `user_trade_rows` reads them through the trade's rowid: the rows of the
-- `trade_sides` view (migration 003), by CASE instead of by UNION ALL, because a join with that
-- view would read every trade below the mark for one page (test/db/user-rows.test.ts checks that
-- the two agree). The apply thread's bulk flush then writes two integers per row instead of nine
-- columns through its sorter (the rows of 2,650 trades in 3.7-6.5 instead of 5.2-8.8 ms under
-- bench:load), and the file no longer holds every trade three times (BENCHMARKS.md, "Changes kept").
CREATE TABLE user_trades_keys (
  user_id  INTEGER NOT NULL,
  trade_id INTEGER NOT NULL,
  PRIMARY KEY (user_id, trade_id)
) STRICT, WITHOUT ROWID;
INSERT INTO user_trades_keys (user_id, trade_id) SELECT user_id, trade_id FROM user_trades;
DROP TABLE user_trades;
ALTER TABLE user_trades_keys RENAME TO user_trades;

CREATE VIEW user_trade_rows (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate) AS
  SELECT u.user_id, u.trade_id, t.pair,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_side ELSE 1 - t.taker_side END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_type ELSE t.maker_type END,
    t.price, t.amount, t.time_micro,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_fee_rate ELSE t.maker_fee_rate END
  FROM user_trades u JOIN trades t ON t.id = u.trade_id;
