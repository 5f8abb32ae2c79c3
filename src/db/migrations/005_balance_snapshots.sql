-- Balances and candles as snapshots (issue 12). A balance row is no longer written with every commit that
-- changes it, but at most once a second (and at shutdown, and with every deposit or withdrawal).
-- Between snapshots the committed trades are the truth: a row holds the balance as of the trades
-- up to `through_trade`, and recovery adds the legs of every later committed trade (with its fees)
-- to it (src/db/recovery.ts replayTrades).
--
-- meta 'balances_through' is the mark of the last snapshot: every (user, currency) that any trade
-- up to it touched has a row with through_trade >= that trade, so recovery reads only the trades
-- above it. Until now every row was written in the transaction of the trades that changed it, so
-- each row, and the snapshot as a whole, is exact as of the last committed trade.
ALTER TABLE balances ADD COLUMN through_trade INTEGER NOT NULL DEFAULT 0;
UPDATE balances SET through_trade = (SELECT COALESCE(MAX(id), 0) FROM trades);
INSERT INTO meta (key, value) VALUES ('balances_through', (SELECT COALESCE(MAX(id), 0) FROM trades));

-- Candles the same way: the changed candles are written with the balance snapshot, and
-- meta 'candles_through' is the last trade they hold; recovery runs the later committed trades
-- of each pair through its candles again. Until now candles were written with every commit.
INSERT INTO meta (key, value) VALUES ('candles_through', (SELECT COALESCE(MAX(id), 0) FROM trades));
