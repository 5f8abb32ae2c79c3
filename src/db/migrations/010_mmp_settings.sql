-- Market-maker protection settings (docs/API.md 8.10), one row per user and pair that set them
-- (src/core/mmp-settings.ts). qty_limit is in base lots of the pair (10^-amountDecimals).
-- Only the settings are kept: the window of fills and the frozen state start empty after a
-- restart, and the server sends these rows to the pair workers before /health turns 200.
CREATE TABLE mmp_settings (
  user_id          INTEGER NOT NULL,
  pair             TEXT NOT NULL,
  interval_seconds INTEGER NOT NULL,
  qty_limit        INTEGER NOT NULL,
  frozen_seconds   INTEGER NOT NULL,
  PRIMARY KEY (user_id, pair)
) WITHOUT ROWID;
