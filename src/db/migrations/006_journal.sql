-- The batch journal (issue 12). The writer thread commits each group-commit batch as one row here
-- before it acknowledges the batch, and writes the batch's rows (orders, trades, balances, ...) to
-- their tables later, several batches in one transaction that also deletes their journal rows: the
-- tables plus the journal rows left always describe every acknowledged change. At start the rows
-- left are applied in `seq` order before anything reads the tables (src/protocol/journal.ts).
--
-- A row holds the batch as the writer received it (writer-batch.ts): `counts` per record kind
-- (JSON array), `slots` the records' slots in a compact form (src/protocol/slot-codec.ts), `strs`
-- the batch's strings (JSON array) and `settled_below`.
CREATE TABLE journal (
  seq           INTEGER PRIMARY KEY,
  counts        TEXT NOT NULL,
  slots         BLOB NOT NULL,
  strs          TEXT NOT NULL,
  settled_below INTEGER NOT NULL
) STRICT;

-- The symbol table of the run that wrote the journal rows: symbol `id` is `name` (pair, currency,
-- period and meta key names; writer-batch.ts SYM). Appended with the journal row of the batch that
-- brings a new name; emptied at start once the journal is applied, as a new run numbers its
-- symbols from 0 again.
CREATE TABLE journal_syms (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL
) STRICT;
