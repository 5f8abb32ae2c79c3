/**
 * The reads from a point (docs/API.md 20.3) find their rows through keys: every table they touch
 * is searched on a key or an index (user_orders / user_trades by user and id, the tail above the
 * writer's mark by rowid, trades by (pair, id)), never scanned whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { migrate } from "../../src/protocol/db/migrate.ts";
import { POINT_READ_SQL } from "../../workers/db/reader-worker.ts";

describe("query plans of the reads from a point", () => {
  it("search every table on a key, for every statement", () => {
    const db = new Database(":memory:");
    try {
      migrate(db);
      const args = { u: 1, w: 5, pair: "btc_usdt", since: 0, from: 0, limit: 10, offset: 0 };
      for (const [name, sql] of Object.entries(POINT_READ_SQL)) {
        // Named parameters, or the positional ones (pair, id, limit) of the pair's trades.
        const positional = ["btc_usdt", 1, 10].slice(0, (sql.match(/\?/g) ?? []).length);
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...(sql.includes("@") ? [args] : positional))
          .map((r) => r.detail);
        const reads = plan.filter((d) => /^(SEARCH|SCAN) /.test(d));
        assert.ok(reads.length > 0, `${name}: ${plan.join("; ")}`);
        for (const d of reads) {
          // The trade_sides view's co-routine is scanned over what its own searches found.
          const ok = d.startsWith("SEARCH ") || d === "SCAN CONSTANT ROW" || d === "SCAN trade_sides";
          assert.ok(ok, `${name}: ${d} (plan: ${plan.join("; ")})`);
        }
        if (name === "lastTradeId") continue;
        assert.ok(
          reads.some((d) => /USING (INTEGER PRIMARY KEY|PRIMARY KEY|INDEX|COVERING INDEX)/.test(d)),
          `${name} uses a key: ${plan.join("; ")}`,
        );
      }
    } finally {
      db.close();
    }
  });
});
