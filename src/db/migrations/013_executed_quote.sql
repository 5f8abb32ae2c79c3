-- The executed value of an order (docs/API.md 5.1 `executedQuote`, DECISIONS.md "Executed value").
--
-- executed_quote: the sum of price x amount over the order's trades, in ticks x lots of its pair
-- (units of 10^-(price_decimals + amount_decimals) of the quote currency), fees excluded. TEXT of
-- the integer's decimal digits, as balances are (migration 001): ticks and lots are each below
-- 10^15, so one order's sum may pass 2^63 (10^19 on btc_usdt of the shipped config, at its
-- maxPrice and maxAmount). Written with every record of the order from now on.
ALTER TABLE orders ADD COLUMN executed_quote TEXT NOT NULL DEFAULT '0';

-- Existing orders get the sum over their trades (as taker and as maker), exactly: SQLite's integers
-- are 64 bits and a product that overflows turns into a float, so price and amount are cut into
-- three base-10^5 digits each (both are below 10^15), the products of digits (below 10^10) are
-- summed per power of 10^5 (exact while an order has fewer than 3 x 10^8 trades; past that SUM
-- fails with "integer overflow" and so does the migration, rather than store a wrong value), the
-- carries are propagated, and the digits printed. The trades table has no index by order: one
-- pass over it, grouped by order.
WITH sides (order_id, price, amount) AS (
  SELECT taker_order_id, price, amount FROM trades
  UNION ALL
  SELECT maker_order_id, price, amount FROM trades
),
digits (order_id, p2, p1, p0, a2, a1, a0) AS (
  SELECT order_id,
    price / 10000000000, price / 100000 % 100000, price % 100000,
    amount / 10000000000, amount / 100000 % 100000, amount % 100000
  FROM sides
),
sums (order_id, c0, c1, c2, c3, c4) AS (
  SELECT order_id,
    SUM(p0 * a0),
    SUM(p1 * a0 + p0 * a1),
    SUM(p2 * a0 + p1 * a1 + p0 * a2),
    SUM(p2 * a1 + p1 * a2),
    SUM(p2 * a2)
  FROM digits GROUP BY order_id
),
carry1 (order_id, d0, k1, c2, c3, c4) AS (
  SELECT order_id, c0 % 100000, c1 + c0 / 100000, c2, c3, c4 FROM sums
),
carry2 (order_id, d0, d1, k2, c3, c4) AS (
  SELECT order_id, d0, k1 % 100000, c2 + k1 / 100000, c3, c4 FROM carry1
),
carry3 (order_id, d0, d1, d2, k3, c4) AS (
  SELECT order_id, d0, d1, k2 % 100000, c3 + k2 / 100000, c4 FROM carry2
),
carry4 (order_id, d0, d1, d2, d3, k4) AS (
  SELECT order_id, d0, d1, d2, k3 % 100000, c4 + k3 / 100000 FROM carry3
)
UPDATE orders
SET executed_quote = COALESCE(NULLIF(ltrim(printf('%d%05d%05d%05d%05d', k4, d3, d2, d1, d0), '0'), ''), '0')
FROM carry4
WHERE orders.id = carry4.order_id;

-- The journal table of migration 006 (read at start only, for rows a server before migration 007
-- left) takes the `layout` column the journal file's table has now (src/protocol/db/journal.ts),
-- so the two are read alike. Its rows are all older than the column: their kinds tell their layout.
ALTER TABLE journal ADD COLUMN layout INTEGER NOT NULL DEFAULT 1;
