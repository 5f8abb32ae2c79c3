-- A user's deposits and withdrawals, newest first, a page at a time (docs/API.md 7.11, transfers
-- history): the key (user_id, id) lets a page stop after its rows instead of reading every
-- transfer.
CREATE INDEX transfers_user ON transfers (user_id, id);
