-- The options of an order (docs/API.md 8.2).
--   flags: bits 0-1 time in force (0 GTC, 1 IOC, 2 FOK), bit 2 post-only, bit 3 set when the client
--          named the time in force (records show `timeInForce` only then); see src/orders.ts.
--   client_order_id: the client's own id, unique per user over all of that user's orders ever.
-- An amend (docs/API.md 8.3) changes price and amount in place: the order keeps its id.
ALTER TABLE orders ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN client_order_id TEXT;
-- Finds an order by its client id, and refuses a duplicate should one ever get past the main
-- thread's check (the writer then fails rather than store it).
CREATE UNIQUE INDEX orders_client_id ON orders (user_id, client_order_id) WHERE client_order_id IS NOT NULL;
