-- Execution numbers kept as blocks (docs/API.md 16, DECISIONS.md "Execution numbers").
--
-- One row per number (migration 011) cost the apply thread a B-tree insert per number, about 2.5
-- numbers per order of bench:load's workload. The apply thread now writes, per user and per bulk
-- apply, one block: the run of that user's numbers it applied (`first_seq` to `last_seq`, no gap:
-- a user's numbers are given and applied in commit order) and what each numbers, `refs`, a comma
-- separated list with one entry per number: the order's id for an order change, minus the trade's
-- id for a trade side. A reader finds the block holding a number on the key and reads on in order.
CREATE TABLE execution_blocks (
  user_id   INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq  INTEGER NOT NULL,
  refs      TEXT NOT NULL,
  PRIMARY KEY (user_id, first_seq)
) STRICT, WITHOUT ROWID;

-- The rows of 011, each a block of one number.
INSERT INTO execution_blocks (user_id, first_seq, last_seq, refs)
  SELECT user_id, exec_seq, exec_seq, CAST(CASE kind WHEN 1 THEN -ref_id ELSE ref_id END AS TEXT)
  FROM executions;
DROP TABLE executions;
