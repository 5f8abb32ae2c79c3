/**
 * Question: what does a read of a user's orders page cost as the tail of orders above the
 * user_orders mark grows? The apply thread writes user_orders rows in bulk every
 * DEFAULT_USER_ROWS_FLUSH_AT orders (src/db/writer-threads.ts); until then readers scan that tail of
 * `orders` (workers/db/reader-worker.ts: the count and the page of a user's orders). The tail is
 * at most the flush size, half of it on average.
 *
 * The reader's two statements as written there, on 200,000 orders of 128 users, with the mark set
 * so that TAIL orders lie above it; µs per page (count + page of 20), averaged over 1,000 reads of
 * users in turn.
 *
 *   npx tsx bench/db/user-tail.bench.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/protocol/db/db-open.ts";

const ORDERS = 200_000;
const USERS = 128;
const TAILS = [512, 1024, 4096, 8192, 16384];

const dir = mkdtempSync(join(tmpdir(), "user-tail-"));
const db = openDatabase(join(dir, "tail.db"));
const insertOrder = db.prepare(
  `INSERT INTO orders (id, user_id, pair, side, type, price, amount, amount_used, is_cancelled,
     create_micro, update_micro, flags) VALUES (?, ?, 'btc_usdt', 0, 0, 100, 10, 0, 0, 1, 1, 0)`,
);
const insertUserOrder = db.prepare("INSERT INTO user_orders (user_id, order_id) VALUES (?, ?)");
db.transaction(() => {
  for (let id = 1; id <= ORDERS; id++) insertOrder.run(id, id % USERS);
})();
// The reader's statements (workers/db/reader-worker.ts), on the order ids alone.
const count = db.prepare(
  `SELECT (SELECT COUNT(*) FROM user_orders WHERE user_id = @u AND order_id <= @w)
        + (SELECT COUNT(*) FROM orders WHERE id > @w AND user_id = @u) AS n`,
);
const page = db.prepare(
  `SELECT id FROM orders WHERE id IN
     (SELECT id FROM orders WHERE id > @w AND user_id = @u
      UNION ALL
      SELECT order_id FROM user_orders WHERE user_id = @u AND order_id <= @w
      ORDER BY 1 DESC LIMIT 20 OFFSET 0)
   ORDER BY id DESC`,
);

console.log(`${ORDERS} orders of ${USERS} users; a user's orders page (count + 20 rows)`);
console.log("| orders above the mark | µs per page |");
console.log("|---:|---:|");
for (const tail of TAILS) {
  const w = ORDERS - tail;
  db.exec("DELETE FROM user_orders");
  db.transaction(() => {
    for (let id = 1; id <= w; id++) insertUserOrder.run(id % USERS, id);
  })();
  for (let k = 0; k < 200; k++) {
    count.get({ u: k % USERS, w });
    page.all({ u: k % USERS, w });
  }
  const t0 = performance.now();
  for (let k = 0; k < 1000; k++) {
    count.get({ u: k % USERS, w });
    page.all({ u: k % USERS, w });
  }
  console.log(`| ${tail} | ${(performance.now() - t0).toFixed(0)} |`);
}
db.close();
rmSync(dir, { recursive: true, force: true });
