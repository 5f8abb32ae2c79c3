/**
 * A follower's read models (docs/OPERATIONS.md, "A second box: follower"). Each leader batch, once
 * committed here, moves them in place and tells the stream what the leader's told it
 * (follower-apply.ts): books, BBO, L3, trades, 24 h and candles, users and keys, balances, open
 * orders, execution numbers, MMP settings and pair statuses. At start, and when a batch does not
 * fit the models in place (a leader that journals no book steps), they are rebuilt from the
 * database by the start's own recovery (src/db/recovery.ts: loadState, recoverBalances,
 * restoreMarket), so every read answers what a server started on that database would; the
 * batches committed meanwhile wait and are applied in place after it. Rebuilds never overlap.
 */
import { isWaitingStop, type OrderState } from "../core/command.ts";
import { TRADING } from "../core/pair-status.ts";
import { PairMarket } from "../core/read-models/pair-market.ts";
import { linkOcoLegs, loadState, orderStateOfRow, recoverBalances, restoreMarket } from "../db/recovery.ts";
import type { DbWriter } from "../db/writer.ts";
import { type Db, openDatabase } from "../protocol/db/db-open.ts";
import type { DecodedRow } from "../protocol/db/journal.ts";
import { SELL } from "../protocol/pair/engine.ts";
import { log } from "../util/log.ts";
import { nowMicro } from "../util/time.ts";
import { type FollowerLink, REPLICATION_THROUGH } from "./follower.ts";
import { FollowerApply, type FollowerApplyDeps } from "./follower-apply.ts";

/** What the in-place apply needs (its `markets` replaced entry by entry by a rebuild), and more. */
export interface FollowerStateDeps extends FollowerApplyDeps {
  dbPath: string;
  writer: DbWriter;
  link: FollowerLink;
}

export class FollowerState {
  private db: Db | null = null;
  private running = false;
  private again = false;
  /** Batches committed while a rebuild is due or running, applied in place after it. */
  private waiting: { b: DecodedRow; syms: readonly string[] }[] = [];
  /** The read models in place (follower-apply.ts). */
  readonly inPlace: FollowerApply;
  /** Rebuilds after the start's (a batch that did not fit). */
  rebuilds = 0;
  private closed = false;

  constructor(private readonly deps: FollowerStateDeps) {
    this.inPlace = new FollowerApply(deps);
  }

  /**
   * Batch `b` (the leader's symbols `syms`) committed: the read models take it in place, or, when
   * it does not fit, are rebuilt once its rows are in their tables. Without a batch: rebuilt.
   */
  changed(b?: DecodedRow, syms?: readonly string[]): void {
    if (this.closed) return;
    if (b !== undefined && syms !== undefined) {
      if (this.running || this.waiting.length > 0) {
        this.waiting.push({ b, syms });
        return;
      }
      if (this.applyInPlace(b, syms)) return;
    }
    this.rebuild();
  }

  /** Batch `b` in place; false (and said why) when the read models must be rebuilt. */
  private applyInPlace(b: DecodedRow, syms: readonly string[]): boolean {
    try {
      if (this.inPlace.apply(b, syms)) {
        this.deps.link.shown(b.seq);
        return true;
      }
      log().warn({ key: b.seq }, `follower: leader batch ${b.seq} does not fit the read models; rebuilding`);
    } catch (err) {
      // A half-applied batch: the rebuild reads the whole state again.
      log().error({ err: (err as Error).message }, `follower refresh failed: ${(err as Error).message}`);
    }
    return false;
  }

  private rebuild(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run();
  }

  /** Stops following: no batch moves the read models any more, and the core takes them over. */
  close(): void {
    if (!this.closed) this.inPlace.handOver();
    this.closed = true;
    this.waiting.length = 0;
    this.db?.close();
    this.db = null;
  }

  private async run(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.deps.writer.applied();
        if (this.closed) return;
        const through = this.refresh();
        this.rebuilds++;
        // The batches committed since: those the rebuild did not read, in place.
        while (this.waiting.length > 0 && !this.again) {
          const { b, syms } = this.waiting.shift()!;
          if (b.seq <= through) continue;
          if (!this.applyInPlace(b, syms)) this.again = true;
        }
      } while (this.again);
    } catch (err) {
      // The reads keep what they show; the next batch tries again (the batches waiting are in the
      // database the next rebuild reads).
      this.waiting.length = 0;
      log().error({ err: (err as Error).message }, `follower refresh failed: ${(err as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /** Rebuilds every read model from the database as it is now; returns the leader key it holds. */
  refresh(): number {
    const { config, users, ledger, exchange, markets, statuses, feeUser, link } = this.deps;
    this.db ??= openDatabase(this.deps.dbPath, { readonly: true });
    const db = this.db;
    const state = db
      .transaction(() => ({
        state: loadState(
          db,
          config.pairs.map((p) => p.name),
          nowMicro(),
        ),
        through:
          db
            .prepare<[string], number>("SELECT value FROM meta WHERE key = ?")
            .pluck()
            .get(REPLICATION_THROUGH) ?? 0,
      }))
      .deferred();
    const s = state.state;
    for (const u of s.users) if (users.idOf(u.uid) === undefined) users.add(u.id, u.uid);
    for (const k of s.apiKeys) {
      if (!users.hasToken(k.token)) users.addKey(k.token, k.userId, k.secret, k.revoked);
      else if (k.revoked && users.key(k.token)?.revoked === false) users.revoke(k.token);
    }
    for (const u of s.users) ledger.ensureUser(u.id);
    recoverBalances(ledger, feeUser, config, s);
    for (const [user, last] of s.execSeqs) exchange.execSeqs.restore(user, last);
    // MMP settings as stored (a reset is stored as zeros, which `put` drops); the frozen state is
    // the leader's memory and not replicated (docs/OPERATIONS.md, "A second box: follower").
    for (const m of s.mmpSettings) {
      const p = config.pairsByName.get(m.pair);
      if (p !== undefined)
        exchange.mmp.put(m.userId, p.index, {
          intervalSeconds: m.intervalSeconds,
          qtyLimit: m.qtyLimit,
          frozenSeconds: m.frozenSeconds,
        });
    }
    const open: OrderState[] = [];
    for (const p of config.pairs) {
      const rec = s.pairs.get(p.name);
      statuses.set(p.index, rec?.status ?? TRADING);
      const m = new PairMarket(p.name, p.priceDecimals, p.amountDecimals);
      // Versions go on from the market it replaces: what is cached by version (the book's body,
      // src/http/routes/order-book.ts) is never taken for the new one.
      m.bookVersion = markets[p.index].bookVersion + 1;
      // Its L3 book's subscribers go on with the book `inPlace.reset` makes.
      m.l3 = markets[p.index].l3;
      restoreMarket(m, s);
      m.seq = rec?.bookSeq ?? 0;
      m.bookMicro = rec?.bookMicro ?? 0;
      const bids = new Map<number, number>();
      const asks = new Map<number, number>();
      for (const o of s.openOrders) {
        // A stop order waiting for its trigger is in no book (docs/API.md 18).
        if (o.pair !== p.name || isWaitingStop(o)) continue;
        const side = o.side === SELL ? asks : bids;
        side.set(o.price, (side.get(o.price) ?? 0) + (o.amount - o.amountUsed));
      }
      for (const [price, total] of bids) m.setLevel(0, price, total);
      for (const [price, total] of asks) m.setLevel(1, price, total);
      markets[p.index] = m;
      exchange.replaceMarket(p.index, m);
    }
    for (const row of s.openOrders) {
      const p = config.pairsByName.get(row.pair);
      if (p === undefined) continue;
      open.push(orderStateOfRow(row, p.index, 0));
    }
    // docs/API.md 18: an OCO's two open legs share their hold, as recoverBalances reserved it.
    linkOcoLegs(open, config);
    exchange.replaceOpenOrders(open);
    // The next ids as stored (a promotion goes on from them).
    exchange.ids.nextOrderId = Math.max(exchange.ids.nextOrderId, s.nextOrderId);
    exchange.ids.nextTradeId = Math.max(exchange.ids.nextTradeId, s.nextTradeId);
    this.inPlace.reset();
    link.shown(state.through);
    return state.through;
  }
}
