-- Trades tied to orders (docs/API.md 20): each side of a trade as a user sees it gains the order
-- of that user in the trade (`order_id`) and whether that side was the maker (`maker`: 1 maker,
-- 0 taker). The columns come from the trade row; the keys of user_trades are unchanged.
DROP VIEW trade_sides;
CREATE VIEW trade_sides (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate, exec_seq, order_id, maker) AS
  SELECT taker_user_id, id, pair, taker_side, taker_type, price, amount, time_micro, taker_fee_rate, taker_exec_seq,
    taker_order_id, 0
  FROM trades
  UNION ALL
  SELECT maker_user_id, id, pair, 1 - taker_side, maker_type, price, amount, time_micro, maker_fee_rate, maker_exec_seq,
    maker_order_id, 1
  FROM trades;

DROP VIEW user_trade_rows;
CREATE VIEW user_trade_rows (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate, exec_seq, order_id, maker) AS
  SELECT u.user_id, u.trade_id, t.pair,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_side ELSE 1 - t.taker_side END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_type ELSE t.maker_type END,
    t.price, t.amount, t.time_micro,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_fee_rate ELSE t.maker_fee_rate END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_exec_seq ELSE t.maker_exec_seq END,
    CASE WHEN t.taker_user_id = u.user_id THEN t.taker_order_id ELSE t.maker_order_id END,
    CASE WHEN t.taker_user_id = u.user_id THEN 0 ELSE 1 END
  FROM user_trades u JOIN trades t ON t.id = u.trade_id;
