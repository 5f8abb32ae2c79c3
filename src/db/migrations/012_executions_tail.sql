-- Execution numbers written in bulk (docs/API.md 16, DECISIONS.md "Execution numbers").
--
-- `executions` is keyed by user: a row written with every apply transaction dirties a page of each
-- user that has new numbers, as user_orders would (migration 002). The apply thread appends each
-- number to `executions_tail` instead (a rowid table: every append lands on its last page), and
-- moves the tail into `executions`, sorted by user, in the transaction that brings it to the
-- user-rows flush size, or at close, or at start.
--
-- Invariants: a number is in exactly one of the two tables; a user's numbers in the tail are above
-- every number of that user in `executions` (numbers are given and applied in commit order), so a
-- reader takes a user's numbers from `executions` in key order, then from the tail.
CREATE TABLE executions_tail (
  user_id  INTEGER NOT NULL,
  exec_seq INTEGER NOT NULL,
  kind     INTEGER NOT NULL,
  ref_id   INTEGER NOT NULL
) STRICT;
