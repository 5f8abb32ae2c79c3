-- OCO orders (docs/API.md 18): both legs carry oco_id, the id of the limit leg; 0 for any other
-- order. A restart links the two open legs again by it (src/db/recovery.ts).
ALTER TABLE orders ADD COLUMN oco_id INTEGER NOT NULL DEFAULT 0;
