-- Fees and book sequence numbers (docs/API.md 9, 12.3).
--
-- A trade keeps the fee rates it was settled at (units of 10^-6: 1000 is 0.1%), so the fees of old
-- trades read the same after the config changes. A fee is what its side received times its rate:
-- the buyer pays in base (amount x rate), the seller in quote (price x amount x rate), both exact.
-- Balances (including the fee account's, a plain user) are stored as before, so recovery and the
-- start-up ledger check include the fees with nothing more to do.
ALTER TABLE trades ADD COLUMN taker_fee_rate INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trades ADD COLUMN maker_fee_rate INTEGER NOT NULL DEFAULT 0;
ALTER TABLE user_trades ADD COLUMN fee_rate INTEGER NOT NULL DEFAULT 0;

DROP VIEW trade_sides;
CREATE VIEW trade_sides (user_id, trade_id, pair, side, type, price, amount, time_micro, fee_rate) AS
  SELECT taker_user_id, id, pair, taker_side, taker_type, price, amount, time_micro, taker_fee_rate
  FROM trades
  UNION ALL
  SELECT maker_user_id, id, pair, 1 - taker_side, maker_type, price, amount, time_micro, maker_fee_rate
  FROM trades;

-- The book sequence of each pair lives in meta under 'book_seq:<pair>', written with every commit
-- that changes the pair's book, so a restart continues from it (rows appear on first use).
