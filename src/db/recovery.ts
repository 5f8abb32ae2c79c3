/**
 * Startup, on the main thread before listening (synchronous by design: nothing else runs yet).
 *
 *   1. checkPairs            refuse a configured pair whose decimals differ from the stored ones
 *   2. resolveCurrencyScales agree on each currency's ledger scale (rescaling stored integers up)
 *   3. loadState             everything the in-memory state is rebuilt from
 */

import { ConfigError } from "../config/config-error.ts";
import type { ExchangeConfig } from "../config/exchange-config.ts";
import type { OrderState } from "../core/command.ts";
import type { Ledger } from "../core/ledger.ts";
import { type PairMarket, PERIODS } from "../core/read-models/pair-market.ts";
import { fillTotals, limitHold, type PairUnits, pairUnits } from "../core/risk.ts";
import { EXEC_EPOCH_BUMP } from "../protocol/db/backup-tasks.ts";
import type { Db } from "../protocol/db/db-open.ts";
import {
  CANDLE_COLUMNS,
  type CandleRow,
  ORDER_COLUMNS,
  type OrderRow,
  TRADE_COLUMNS,
  type TradeRow,
  toOrderRow,
} from "../protocol/db/rows.ts";
import { BUY, SELL } from "../protocol/pair/engine.ts";

export interface PairConfig {
  name: string;
  priceDecimals: number;
  amountDecimals: number;
}

/**
 * Records the decimals of pairs seen for the first time, and throws when a configured pair's
 * decimals differ from the stored ones: stored prices and amounts are integers at the stored
 * scale, so a different scale would silently change every value. Nothing is written if it throws.
 */
export function checkPairs(db: Db, pairs: readonly PairConfig[]): void {
  const get = db.prepare<[string], { pd: number; ad: number }>(
    "SELECT price_decimals AS pd, amount_decimals AS ad FROM pairs WHERE name = ?",
  );
  const insert = db.prepare("INSERT INTO pairs (name, price_decimals, amount_decimals) VALUES (?, ?, ?)");
  db.transaction(() => {
    const problems: string[] = [];
    const fresh: PairConfig[] = [];
    for (const p of pairs) {
      const row = get.get(p.name);
      if (row === undefined) fresh.push(p);
      else if (row.pd !== p.priceDecimals || row.ad !== p.amountDecimals) {
        problems.push(
          `pair ${p.name}: configured priceDecimals ${p.priceDecimals}, amountDecimals ${p.amountDecimals}; ` +
            `the database holds priceDecimals ${row.pd}, amountDecimals ${row.ad}`,
        );
      }
    }
    if (problems.length > 0) {
      throw new ConfigError(
        `refusing to start: pair decimals differ from the database (stored prices and amounts are ` +
          `integers at the stored scale): ${problems.join("; ")}`,
      );
    }
    for (const p of fresh) insert.run(p.name, p.priceDecimals, p.amountDecimals);
  }).immediate();
}

/**
 * Decides the ledger scale of each configured currency and returns it.
 * - new currency: the configured scale is stored;
 * - configured > stored: every stored balance and transfer amount of the currency is multiplied by
 *   10^(configured - stored) and the stored scale updated, all in one transaction;
 * - configured < stored: the stored (larger) scale is kept and returned, since shrinking it would
 *   round stored amounts.
 */
export function resolveCurrencyScales(db: Db, configured: ReadonlyMap<string, number>): Map<string, number> {
  const get = db.prepare<[string], { scale: number }>("SELECT scale FROM currencies WHERE name = ?");
  const upsert = db.prepare(
    "INSERT INTO currencies (name, scale) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET scale = excluded.scale",
  );
  const balances = db.prepare<[string], { user_id: number; available: string; reserved: string }>(
    "SELECT user_id, available, reserved FROM balances WHERE currency = ?",
  );
  const setBalance = db.prepare(
    "UPDATE balances SET available = ?, reserved = ? WHERE user_id = ? AND currency = ?",
  );
  const transfers = db.prepare<[string], { id: number; amount: string }>(
    "SELECT id, amount FROM transfers WHERE currency = ?",
  );
  const setTransfer = db.prepare("UPDATE transfers SET amount = ? WHERE id = ?");

  const result = new Map<string, number>();
  db.transaction(() => {
    for (const [name, scale] of configured) {
      if (!Number.isInteger(scale) || scale < 0) throw new Error(`currency ${name}: invalid scale ${scale}`);
      const stored = get.get(name)?.scale;
      if (stored === undefined) {
        upsert.run(name, scale);
        result.set(name, scale);
      } else if (scale > stored) {
        const factor = 10n ** BigInt(scale - stored);
        // .all() first: a statement may not be stepped while the same table is being updated.
        for (const b of balances.all(name)) {
          setBalance.run(
            (BigInt(b.available) * factor).toString(),
            (BigInt(b.reserved) * factor).toString(),
            b.user_id,
            name,
          );
        }
        for (const t of transfers.all(name)) setTransfer.run((BigInt(t.amount) * factor).toString(), t.id);
        upsert.run(name, scale);
        result.set(name, scale);
      } else {
        result.set(name, stored);
      }
    }
  }).immediate();
  return result;
}

export interface RecoveredUser {
  id: number;
  uid: string;
  createdMicro: number;
}

export interface RecoveredApiKey {
  token: string;
  userId: number;
  secret: string;
  revoked: boolean;
  createdMicro: number;
}

export interface RecoveredBalance {
  userId: number;
  currency: string;
  available: bigint;
  reserved: bigint;
  /** The row holds the legs of every trade up to this id, none after (migration 005). */
  throughTrade: number;
}

/** A committed trade after the balance snapshot, as recovery replays it into the balances. */
export interface ReplayTrade {
  id: number;
  pair: string;
  price: number;
  amount: number;
  timeMicro: number;
  takerUserId: number;
  makerUserId: number;
  takerSide: number;
  takerFeeRate: number;
  makerFeeRate: number;
}

export interface RecoveredPair {
  /** The last `recentTrades` (200) trades, newest first. */
  recentTrades: TradeRow[];
  /** Trades with timeMicro > nowMicro - 24 h, oldest first. */
  window: TradeRow[];
  /** Price of the newest trade (ticks), 0 if the pair never traded. */
  lastPrice: number;
  /** timeMicro of the newest trade, 0 if the pair never traded. */
  lastTimeMicro: number;
  /** Per period present in the database: its newest `candleLimit` (1000) candles, oldest first. */
  candles: Map<string, CandleRow[]>;
  /** The book sequence last committed (docs/API.md 12.3; meta 'book_seq:<pair>'), 0 if never changed. */
  bookSeq: number;
  /** Time of that book change (docs/API.md 7.6.1; meta 'book_micro:<pair>'), 0 if never changed. */
  bookMicro: number;
  /** The pair's status (docs/API.md 11; meta 'pair_status:<pair>', src/core/pair-status.ts), 0 trading. */
  status: number;
}

export interface CurrencyTotals {
  /** Sum of transfer amounts: deposits − withdrawals. */
  transfers: bigint;
  /**
   * Sum over users of available + reserved in the stored rows, which are snapshots (migration
   * 005): with the trades committed after each row (`balanceTotals`) it equals `transfers` when
   * the ledger is sound; the rows alone do only as of a snapshot with no trade after it.
   */
  balances: bigint;
}

export interface RecoveredState {
  /** In id order. */
  users: RecoveredUser[];
  apiKeys: RecoveredApiKey[];
  /** token → last accepted nonce. */
  nonces: Map<string, bigint>;
  balances: RecoveredBalance[];
  /**
   * The trades above the last snapshot (the lower of meta 'balances_through' and
   * 'candles_through'), in id order: their legs belong to every balance row whose `throughTrade`
   * is below them, and those above `candlesThrough` to their pair's candles (src/boot.ts).
   */
  tradesAfterSnapshot: ReplayTrade[];
  /** meta 'candles_through': the stored candles hold every trade up to it. */
  candlesThrough: number;
  /** Orders not cancelled and not fully executed, in id order (= time priority). */
  openOrders: OrderRow[];
  /** How many orders have a client order id (`forEachClientOrderId` reads them). */
  clientOrderIdCount: number;
  /** 1 + the largest order id ever stored (1 for an empty database). */
  nextOrderId: number;
  /** 1 + the largest trade id ever stored. */
  nextTradeId: number;
  /** One entry per requested pair (empty values for a pair never traded). */
  pairs: Map<string, RecoveredPair>;
  /** Per currency seen in balances or transfers. */
  currencies: Map<string, CurrencyTotals>;
  /** Stored MMP settings (docs/API.md 8.10, migration 010), `qtyLimit` in lots. */
  mmpSettings: RecoveredMmpSetting[];
  /** Each user's last execution number (docs/API.md 16, migration 011): `[userId, last]`. */
  execSeqs: [number, number][];
}

export interface RecoveredMmpSetting {
  userId: number;
  pair: string;
  intervalSeconds: number;
  qtyLimit: number;
  frozenSeconds: number;
}

export interface LoadOptions {
  /** Default 200. */
  recentTrades?: number;
  /** Default 24 h. */
  windowMicro?: number;
  /** Default 1000. */
  candleLimit?: number;
}

const DAY_MICRO = 86_400_000_000;

/** Reads the whole live state, inside one read transaction (one consistent snapshot). */
export function loadState(
  db: Db,
  pairs: readonly string[],
  nowMicro: number,
  opts: LoadOptions = {},
): RecoveredState {
  const recentN = opts.recentTrades ?? 200;
  const windowStart = nowMicro - (opts.windowMicro ?? DAY_MICRO);
  const candleLimit = opts.candleLimit ?? 1000;

  const tradesDesc = db.prepare<[string], TradeRow>(
    `SELECT ${TRADE_COLUMNS} FROM trades WHERE pair = ? ORDER BY id DESC`,
  );
  // Walks the (pair, period, start_ms) key one period at a time instead of scanning all candles.
  const nextPeriod = db.prepare<[string, string], { period: string }>(
    "SELECT period FROM candles WHERE pair = ? AND period > ? ORDER BY period LIMIT 1",
  );
  const candles = db.prepare<[string, string, number], CandleRow>(
    `SELECT ${CANDLE_COLUMNS} FROM candles WHERE pair = ? AND period = ? ORDER BY start_ms DESC LIMIT ?`,
  );

  return db.transaction((): RecoveredState => {
    const users = db
      .prepare<[], RecoveredUser>("SELECT id, uid, created_micro AS createdMicro FROM users ORDER BY id")
      .all();
    const apiKeys = db
      .prepare<[], Omit<RecoveredApiKey, "revoked"> & { revoked: number }>(
        `SELECT token, user_id AS userId, secret, revoked, created_micro AS createdMicro
         FROM api_keys ORDER BY created_micro, token`,
      )
      .all()
      .map((k) => ({ ...k, revoked: k.revoked !== 0 }));

    const mmpSettings = db
      .prepare<[], RecoveredMmpSetting>(
        `SELECT user_id AS userId, pair, interval_seconds AS intervalSeconds, qty_limit AS qtyLimit,
                frozen_seconds AS frozenSeconds FROM mmp_settings ORDER BY user_id, pair`,
      )
      .all();
    const nonces = new Map<string, bigint>();
    for (const n of db
      .prepare<[], { token: string; last_nonce: string }>("SELECT token, last_nonce FROM nonces")
      .iterate()) {
      nonces.set(n.token, BigInt(n.last_nonce));
    }

    const currencies = new Map<string, CurrencyTotals>();
    const totals = (c: string): CurrencyTotals => {
      let t = currencies.get(c);
      if (t === undefined) {
        t = { transfers: 0n, balances: 0n };
        currencies.set(c, t);
      }
      return t;
    };

    const balances: RecoveredBalance[] = [];
    for (const b of db
      .prepare<
        [],
        { userId: number; currency: string; available: string; reserved: string; throughTrade: number }
      >(
        `SELECT user_id AS userId, currency, available, reserved, through_trade AS throughTrade
         FROM balances ORDER BY user_id, currency`,
      )
      .iterate()) {
      const row = {
        userId: b.userId,
        currency: b.currency,
        available: BigInt(b.available),
        reserved: BigInt(b.reserved),
        throughTrade: b.throughTrade,
      };
      balances.push(row);
      totals(b.currency).balances += row.available + row.reserved;
    }
    // Summed here, not with SQL SUM: the amounts are integers of any size stored as text.
    for (const t of db
      .prepare<[], { currency: string; amount: string }>("SELECT currency, amount FROM transfers")
      .iterate()) {
      totals(t.currency).transfers += BigInt(t.amount);
    }

    const openOrders = db
      .prepare<[], OrderRow>(
        `SELECT ${ORDER_COLUMNS} FROM orders INDEXED BY orders_open
         WHERE is_cancelled = 0 AND amount_used < amount ORDER BY id`,
      )
      .all()
      .map(toOrderRow);
    const clientOrderIdCount = db
      .prepare<[], { n: number }>(
        "SELECT COUNT(*) AS n FROM orders INDEXED BY orders_client_id WHERE client_order_id IS NOT NULL",
      )
      .get()!.n;
    const metaValue = db.prepare<[string], { value: number }>("SELECT value FROM meta WHERE key = ?");
    const balancesThrough = metaValue.get("balances_through")?.value ?? 0;
    const candlesThrough = metaValue.get("candles_through")?.value ?? 0;
    const snapshot = Math.min(balancesThrough, candlesThrough);
    const tradesAfterSnapshot = db
      .prepare<[number], ReplayTrade>(
        `SELECT id, pair, price, amount, time_micro AS timeMicro, taker_user_id AS takerUserId, maker_user_id AS makerUserId,
           taker_side AS takerSide, taker_fee_rate AS takerFeeRate, maker_fee_rate AS makerFeeRate
         FROM trades WHERE id > ? ORDER BY id`,
      )
      .all(snapshot);
    // One look-up per user on the key (a GROUP BY would read every row of the table at each start):
    // the last number of the user's last block (migration 012).
    const lastExecSeq = db
      .prepare<[number], number>(
        "SELECT last_seq FROM execution_blocks WHERE user_id = ? ORDER BY first_seq DESC LIMIT 1",
      )
      .pluck();
    const execSeqs: [number, number][] = [];
    for (const u of users) {
      const last = lastExecSeq.get(u.id);
      if (typeof last === "number") execSeqs.push([u.id, last]);
    }
    const maxOrder = db.prepare<[], { m: number | null }>("SELECT MAX(id) AS m FROM orders").get()!.m;
    const maxTrade = db.prepare<[], { m: number | null }>("SELECT MAX(id) AS m FROM trades").get()!.m;

    const pairState = new Map<string, RecoveredPair>();
    for (const pair of pairs) {
      // Within a pair, id order is time order: one descending walk yields the newest trades and
      // the 24 h window, and stops once both are complete.
      const recentTrades: TradeRow[] = [];
      const windowDesc: TradeRow[] = [];
      for (const t of tradesDesc.iterate(pair)) {
        const inWindow = t.timeMicro > windowStart;
        if (recentTrades.length < recentN) recentTrades.push(t);
        if (inWindow) windowDesc.push(t);
        else if (recentTrades.length >= recentN) break;
      }
      const newest = recentTrades[0] ?? windowDesc[0];
      const byPeriod = new Map<string, CandleRow[]>();
      let period = "";
      for (;;) {
        const next = nextPeriod.get(pair, period);
        if (next === undefined) break;
        period = next.period;
        byPeriod.set(period, candles.all(pair, period, candleLimit).reverse());
      }
      pairState.set(pair, {
        recentTrades,
        window: windowDesc.reverse(),
        lastPrice: newest?.price ?? 0,
        lastTimeMicro: newest?.timeMicro ?? 0,
        candles: byPeriod,
        bookSeq: metaValue.get(`book_seq:${pair}`)?.value ?? 0,
        bookMicro: metaValue.get(`book_micro:${pair}`)?.value ?? 0,
        status: metaValue.get(`pair_status:${pair}`)?.value ?? 0,
      });
    }

    return {
      users,
      apiKeys,
      nonces,
      balances,
      tradesAfterSnapshot,
      candlesThrough,
      openOrders,
      clientOrderIdCount,
      mmpSettings,
      execSeqs,
      nextOrderId: (maxOrder ?? 0) + 1,
      nextTradeId: (maxTrade ?? 0) + 1,
      pairs: pairState,
      currencies,
    };
  })();
}

/** What replaying balances needs of the configuration. */
export interface ReplayConfig {
  pairsByName: ReadonlyMap<
    string,
    { base: string; quote: string; priceDecimals: number; amountDecimals: number }
  >;
  currencies: ReadonlyMap<string, { scale: number }>;
}

/**
 * Each balance's total (available + reserved) as of the last committed trade (migration 005): the
 * snapshot rows, plus the legs of every trade above a row's `throughTrade` (with the fees the trade
 * row keeps), exactly as the core settled them (risk.ts fillTotals). Keyed `user:currencyIndex`;
 * currencies the ledger does not have are left out. `replayed`: trades were added to the row, so
 * the next snapshot must write it (its row no longer holds every trade below the next mark).
 */
export function balanceTotals(
  state: Pick<RecoveredState, "balances" | "tradesAfterSnapshot">,
  config: ReplayConfig,
  ledger: { hasCurrency(name: string): boolean; currencyIndex(name: string): number },
  feeUser: number,
): Map<string, { user: number; c: number; total: bigint; replayed: boolean }> {
  const totals = new Map<
    string,
    { user: number; c: number; total: bigint; through: number; replayed: boolean }
  >();
  for (const b of state.balances) {
    if (!ledger.hasCurrency(b.currency)) continue;
    const c = ledger.currencyIndex(b.currency);
    totals.set(`${b.userId}:${c}`, {
      user: b.userId,
      c,
      total: b.available + b.reserved,
      through: b.throughTrade,
      replayed: false,
    });
  }
  // Units and currency indexes of each pair, worked out once.
  const pairs = new Map<string, PairUnits & { base: number; quote: number }>();
  for (const t of state.tradesAfterSnapshot) {
    let units = pairs.get(t.pair);
    if (units === undefined) {
      const p = config.pairsByName.get(t.pair);
      if (p === undefined)
        throw new Error(
          `trade ${t.id} after the last balance snapshot is on pair ${t.pair}, which the config no longer has`,
        );
      units = {
        ...pairUnits(p, config.currencies.get(p.base)!.scale, config.currencies.get(p.quote)!.scale),
        base: ledger.currencyIndex(p.base),
        quote: ledger.currencyIndex(p.quote),
      };
      pairs.set(t.pair, units);
    }
    const takerBuys = t.takerSide === BUY;
    fillTotals(
      units,
      takerBuys ? t.takerUserId : t.makerUserId,
      takerBuys ? t.makerUserId : t.takerUserId,
      feeUser,
      BigInt(takerBuys ? t.takerFeeRate : t.makerFeeRate),
      BigInt(takerBuys ? t.makerFeeRate : t.takerFeeRate),
      t.price,
      t.amount,
      (user, c, amount) => {
        const key = `${user}:${c}`;
        let row = totals.get(key);
        if (row === undefined) {
          // No snapshot of it yet: the balance was 0 before its first trade.
          row = { user, c, total: 0n, through: 0, replayed: false };
          totals.set(key, row);
        }
        if (t.id > row.through) {
          row.total += amount;
          row.replayed = true;
        }
      },
    );
  }
  return totals;
}

/**
 * Every stored client order id with its user (docs/API.md 8.2), one row at a time off the unique
 * index: the start-up filter (src/core/client-ids.ts) takes them without a list of them all in memory.
 */
export function forEachClientOrderId(db: Db, fn: (userId: number, clientOrderId: string) => void): void {
  const rows = db
    .prepare<[], [number, string]>(
      `SELECT user_id, client_order_id FROM orders INDEXED BY orders_client_id
       WHERE client_order_id IS NOT NULL`,
    )
    .raw()
    .iterate();
  for (const [userId, clientOrderId] of rows) fn(userId, clientOrderId);
}

/**
 * Balances as stored, brought up to the last committed trade, with `reserved` recomputed from the
 * open orders. A balance row is a snapshot (migration 005): it holds the trades up to its
 * `throughTrade`, and the legs of every later committed trade are added to it here, with the fees
 * the trade row keeps. A reservation of an order that was never acknowledged (in flight at a crash)
 * may have been committed with a snapshot, so what open orders hold is the truth and the rest of
 * the user's total is available. The ledger check that follows proves the sums.
 */
export function recoverBalances(
  ledger: Ledger,
  feeUser: number,
  config: ExchangeConfig,
  state: RecoveredState,
): [number, number][] {
  const held = new Map<string, bigint>();
  const add = (user: number, currency: string, amount: bigint) => {
    const key = `${user}:${currency}`;
    held.set(key, (held.get(key) ?? 0n) + amount);
  };
  const open = new Map<number, OrderRow>();
  for (const o of state.openOrders) open.set(o.id, o);
  for (const o of state.openOrders) {
    const p = config.pairsByName.get(o.pair);
    if (p === undefined) continue;
    const units = pairUnits(p, config.currencies.get(p.base)!.scale, config.currencies.get(p.quote)!.scale);
    let hold = limitHold(units, o.side, o.price, o.amount - o.amountUsed);
    // docs/API.md 18: an OCO's waiting stop leg beside its open limit leg holds only what the
    // shared hold takes beyond the limit leg's (a stop-market buy leg: nothing anyway).
    const sibling = ocoSiblingRow(o, open);
    if (sibling !== undefined) {
      const limit = limitHold(units, sibling.side, sibling.price, sibling.amount - sibling.amountUsed);
      hold = hold > limit ? hold - limit : 0n;
    }
    add(o.userId, o.side === SELL ? p.base : p.quote, hold);
  }
  const totals = balanceTotals(state, config, ledger, feeUser);
  const replayed: [number, number][] = [];
  for (const { user, c, total, replayed: changed } of totals.values()) {
    if (changed) replayed.push([user, c]);
    const currency = ledger.currencies[c];
    const reserved = held.get(`${user}:${currency}`) ?? 0n;
    held.delete(`${user}:${currency}`);
    if (reserved > total) {
      throw new Error(
        `user ${user} ${currency}: open orders hold ${reserved}, more than the balance ${total}`,
      );
    }
    ledger.ensureUser(user);
    ledger.load(user, c, total - reserved, reserved);
  }
  if (held.size > 0)
    throw new Error(`open orders hold funds of users without a balance row: ${[...held.keys()]}`);
  return replayed;
}

/**
 * docs/API.md 18: the open limit leg of `o` when `o` is an OCO's waiting stop leg whose limit leg
 * is open too (they share one hold), else undefined.
 */
function ocoSiblingRow(o: OrderRow, open: ReadonlyMap<number, OrderRow>): OrderRow | undefined {
  if (o.ocoId === 0 || o.ocoId === o.id || o.triggerMicro !== 0) return undefined;
  return open.get(o.ocoId);
}

/**
 * docs/API.md 18: links the two open legs of each OCO among `orders` (a start's restored open
 * orders) as the core holds them (OrderState.oco): the limit leg holds its own, the stop leg the
 * rest of the shared hold (`extra`), as recoverBalances reserved it; pairs are `config`'s by index.
 */
export function linkOcoLegs(orders: readonly OrderState[], config: ExchangeConfig): void {
  const units = (i: number): PairUnits => {
    const p = config.pairs[i];
    return pairUnits(p, config.currencies.get(p.base)!.scale, config.currencies.get(p.quote)!.scale);
  };
  const byId = new Map<number, OrderState>();
  for (const o of orders) if (o.ocoId === o.id) byId.set(o.id, o);
  for (const stop of orders) {
    if (stop.ocoId === 0 || stop.ocoId === stop.id || stop.triggerMicro !== 0) continue;
    const limit = byId.get(stop.ocoId);
    if (limit !== undefined) linkOcoPair(limit, stop, units(stop.pair));
  }
}

/**
 * docs/API.md 18: joins an OCO's open limit leg and its waiting stop leg into one hold (OcoLink):
 * the stop leg holds only what its own hold takes beyond the limit leg's (`extra`).
 */
export function linkOcoPair(limit: OrderState, stop: OrderState, u: PairUnits): void {
  const own = limitHold(u, stop.side, stop.price, stop.amount - stop.used);
  const held = limitHold(u, limit.side, limit.price, limit.amount - limit.used);
  const link = { limit, stop, extra: own > held ? own - held : 0n };
  limit.oco = link;
  stop.oco = link;
}

/**
 * A pair's read model as committed: recent trades, last price, the 24-hour window and candles,
 * and the candles brought up to the last committed trade (they hold the trades up to the last
 * snapshot; the later ones go in again).
 */
/**
 * The core's state of a stored open order (`pairIndex`: its pair's index in the config; `session`:
 * the session tag it comes back with), as a start restores it (src/boot.ts) and a follower rebuilds
 * it (src/replication/follower-state.ts).
 */
export function orderStateOfRow(row: OrderRow, pairIndex: number, session: number): OrderState {
  return {
    id: row.id,
    user: row.userId,
    pair: pairIndex,
    side: row.side as 0 | 1,
    type: row.type as 0 | 1,
    price: row.price,
    amount: row.amount,
    used: row.amountUsed,
    cancelled: false,
    createMicro: row.createMicro,
    updateMicro: row.updateMicro,
    budget: 0n,
    executed: BigInt(row.executedQuote),
    flags: row.flags,
    clientOrderId: row.clientOrderId ?? undefined,
    rowSent: true,
    amending: null,
    userSlot: -1,
    restSeq: 0,
    execSeq: row.execSeq,
    stopPrice: row.stopPrice,
    stopDirection: row.stopDirection,
    triggerMicro: row.triggerMicro,
    cancelReason: row.cancelReason,
    trailingDelta: row.trailingDelta,
    ocoId: row.ocoId,
    oco: null,
    session,
  };
}

export function restoreMarket(market: PairMarket, state: RecoveredState): void {
  const name = market.name;
  const rec = state.pairs.get(name);
  if (rec !== undefined) {
    for (const t of rec.recentTrades)
      market.restoreHistory(t.takerSide as 0 | 1, t.takerType as 0 | 1, t.price, t.amount, t.timeMicro, t.id);
    market.restoreLastPrice(rec.lastPrice);
    for (const t of rec.window) market.restoreWindow(t.price, t.amount, t.timeMicro);
    if (rec.lastTimeMicro > market.lastMicro) market.lastMicro = rec.lastTimeMicro;
    PERIODS.forEach((period, i) => {
      for (const c of rec.candles.get(period) ?? []) {
        market.restoreCandle(i, [c.startMs, c.open, c.high, c.low, c.close, c.volume]);
      }
    });
  }
  // The candles hold the trades up to the last snapshot; the later committed ones go in again.
  for (const t of state.tradesAfterSnapshot)
    if (t.pair === name && t.id > state.candlesThrough) market.replayCandles(t.price, t.amount, t.timeMicro);
}

/**
 * The epoch of the execution numbers (docs/API.md 16): 1 on a new database, one higher after each
 * start on a backup copy (which may lack changes clients already saw: their numbers mean nothing on
 * it). A copy carries meta EXEC_EPOCH_BUMP (workers/db/backup-worker.ts); its first start moves the epoch on
 * and drops the mark, in one transaction.
 */
export function resolveExecEpoch(db: Db): number {
  return db
    .transaction(() => {
      const get = db.prepare<[string], number>("SELECT value FROM meta WHERE key = ?").pluck();
      let epoch = get.get("exec_epoch") ?? 1;
      if (get.get(EXEC_EPOCH_BUMP) !== undefined) {
        epoch++;
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('exec_epoch', ?)").run(epoch);
        db.prepare("DELETE FROM meta WHERE key = ?").run(EXEC_EPOCH_BUMP);
      }
      return epoch;
    })
    .immediate();
}
