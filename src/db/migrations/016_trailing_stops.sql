-- Trailing stops (docs/API.md 18, DECISIONS.md "Trailing stops").
--
-- trailing_delta: a trailing stop's delta in ticks, 0 for any other order. Its stop_price is the
-- current one (it moves with the trades; 0 until the pair's first trade).
ALTER TABLE orders ADD COLUMN trailing_delta INTEGER NOT NULL DEFAULT 0;
