-- A user's orders are found through user_orders, which the writer fills in bulk instead of with
-- every order: an index on orders (user_id, id) dirtied one scattered page per user in every group
-- commit (BENCHMARKS.md, "Per-user rows written in bulk").
--
-- Invariant: every order with id <= meta 'user_orders_through' has its user_orders row. Orders
-- above it are found by scanning orders from that id on (a short tail). The writer advances the
-- mark in the transaction that writes the rows, and catches up at start (workers/db/writer-worker.ts).
CREATE TABLE user_orders (
  user_id  INTEGER NOT NULL,
  order_id INTEGER NOT NULL,
  PRIMARY KEY (user_id, order_id)
) STRICT, WITHOUT ROWID;
INSERT INTO user_orders (user_id, order_id) SELECT user_id, id FROM orders;
DROP INDEX orders_user;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('user_orders_through', (SELECT COALESCE(MAX(id), 0) FROM orders));
