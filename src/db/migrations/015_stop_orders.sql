-- Stop orders (docs/API.md 18, DECISIONS.md "Stop orders").
--
-- stop_price: the stop price in ticks, 0 for an order that is not a stop.
-- stop_direction: 1 up (triggers at a trade price >= stop_price), 2 down (<=), 0 not a stop.
-- trigger_micro: when it triggered (Unix µs), 0 while it waits (or for an order that is not a stop).
-- cancel_reason: why a triggered order ended cancelled whole (6 no liquidity, 7 insufficient funds,
-- 8 below the minimum order value: the matching engine's done reasons), 0 otherwise.
ALTER TABLE orders ADD COLUMN stop_price INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN stop_direction INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN trigger_micro INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN cancel_reason INTEGER NOT NULL DEFAULT 0;
