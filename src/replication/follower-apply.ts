/**
 * A follower's read models, moved by each committed leader batch in place (docs/OPERATIONS.md, "A
 * second box: follower"; DECISIONS.md "Live streams on a follower"), and its stream told as the
 * leader's was:
 *
 *   BOOK_STEP + L3_EVENT   each book change of the batch, in the order the leader numbered them:
 *                          its L3 events move the pair's L3 book and give its level totals, then
 *                          the market takes the levels with the change's `seq` and time, then its
 *                          trades (the next TRADE records of that pair); levels, BBO, L3 and
 *                          trades go to the stream, as results.ts publishes them on the leader
 *   EXECUTION              in commit order: each trade side and each order change, the order
 *                          taking its record of that number (ORDER, ORDER_UPDATE); the user
 *                          channels get what the leader's got, at the same execSeq
 *   the rest               users and keys, transfers, balances, MMP settings, pair statuses
 *
 * Balances follow the rule of the start's recovery (src/db/recovery.ts recoverBalances): a
 * user's total moves with each trade's legs and transfer, and is taken from a balance record when
 * one comes (the leader's snapshot, as of the end of the batch); what is reserved is what the open
 * orders hold. So the reads equal those of a server started on the same database, without reading
 * it. A batch that does not fit (a book change with no step record, an update of an order this
 * follower does not hold, a book seq that ends elsewhere than the batch's) is refused before
 * anything moves, or detected after: the caller rebuilds from the database (follower-state.ts).
 */
import type { Users } from "../accounts/users.ts";
import type { ExchangeConfig } from "../config/exchange-config.ts";
import { isWaitingStop, type OrderState } from "../core/command.ts";
import type { Exchange } from "../core/exchange.ts";
import type { Ledger } from "../core/ledger.ts";
import { PAIR_STATUS_NAMES, type PairStatuses, pairStatusKey } from "../core/pair-status.ts";
import { L3_CHANGE, L3_DONE, L3_FIELDS, L3_OPEN, L3Book } from "../core/read-models/l3-view.ts";
import type { PairMarket, PublicTrade } from "../core/read-models/pair-market.ts";
import { fillTotals, limitHold, type PairUnits, pairUnits } from "../core/risk.ts";
import { orderView, userTradeView } from "../core/views.ts";
import { linkOcoPair } from "../db/recovery.ts";
import type { DecodedRow } from "../protocol/db/journal.ts";
import { EXEC_TRADE } from "../protocol/db/rows.ts";
import {
  API_KEY,
  BALANCE,
  BOOK_STEP,
  EXECUTION,
  L3_EVENT,
  META,
  MMP_SETTING,
  ORDER,
  ORDER_UPDATE,
  REVOKE_KEY,
  slotsOf,
  TRADE,
  TRANSFER,
  USER,
} from "../protocol/db/writer-batch.ts";
import { BUY } from "../protocol/pair/engine.ts";

export interface FollowerApplyDeps {
  config: ExchangeConfig;
  users: Users;
  ledger: Ledger;
  exchange: Exchange;
  /** The markets array the stream hub reads (src/boot.ts). */
  markets: PairMarket[];
  statuses: PairStatuses;
  feeUser: number;
}

/** A pair's units and currency indexes, for holds and trade legs. */
type Units = PairUnits & { base: number; quote: number };

/** Where the records of one kind start in a batch, and how many there are. */
interface Run {
  at: number;
  n: number;
}

export class FollowerApply {
  private readonly units: Units[];
  /** Per pair name, its index. */
  private readonly pairOf: ReadonlyMap<string, number>;
  /** Per pair, book seq key and status key of meta. */
  private readonly seqKey: Map<string, number>;
  private readonly statusKey: Map<string, number>;
  /**
   * Per pair, trades committed whose book change is not applied yet (TRADE_FIELDS numbers each):
   * a command's trades are recorded as its fills come and its step when it ends, so a batch sealed
   * in between holds the trades and the next one the step. Their legs count at once (the balance
   * snapshot of their batch holds them), the market takes them with their step.
   */
  private readonly pending: number[][];
  /** Batches applied in place since the last rebuild (metrics, tests). */
  applied = 0;

  constructor(private readonly deps: FollowerApplyDeps) {
    const { config, ledger } = deps;
    this.units = config.pairs.map((p) => ({
      ...pairUnits(p, config.currencies.get(p.base)!.scale, config.currencies.get(p.quote)!.scale),
      base: ledger.currencyIndex(p.base),
      quote: ledger.currencyIndex(p.quote),
    }));
    this.pairOf = new Map(config.pairs.map((p) => [p.name, p.index]));
    this.pending = config.pairs.map(() => []);
    this.seqKey = new Map(config.pairs.map((p) => [`book_seq:${p.name}`, p.index]));
    this.statusKey = new Map(config.pairs.map((p) => [pairStatusKey(p.name), p.index]));
  }

  /**
   * After a rebuild: each pair's L3 book from the open orders (in their order, which the rebuild
   * gives by id: time priority as a start restores it), kept from now on for the levels and the
   * `orders_l3` channel.
   */
  reset(): void {
    const { markets, exchange } = this.deps;
    const books = markets.map(() => new L3Book());
    // The rebuilt markets hold every committed trade.
    for (const list of this.pending) list.length = 0;
    for (const o of exchange.open.values()) {
      if (isWaitingStop(o)) continue;
      books[o.pair].open(o.id, o.side, o.price, o.amount - o.used);
    }
    for (let i = 0; i < markets.length; i++) {
      const m = markets[i];
      const old = m.l3;
      books[i].from = m.seq;
      // Subscribers of the book it replaces hold this one now (the stream counts them on close).
      if (old !== null) books[i].subscribers = old.subscribers;
      m.l3 = books[i];
    }
  }

  /**
   * This server stops following (a promotion, or its stop): the core follows the L3 books from now
   * on (Exchange.wantL3, carrying their subscribers) and numbers book changes on from each market's
   * `seq` and time.
   */
  handOver(): void {
    const { markets, exchange } = this.deps;
    for (let i = 0; i < markets.length; i++) {
      const m = markets[i];
      exchange.replaceMarket(i, m);
      const book = m.l3;
      if (book === null) continue;
      m.l3 = null;
      if (book.subscribers > 0) exchange.wantL3(i).subscribers += book.subscribers;
    }
  }

  /**
   * Applies leader batch `b` (symbols `syms`). False when it does not fit: found before anything
   * moves (counts, pairs, orders), or after for a book seq; either way the caller rebuilds.
   */
  apply(b: DecodedRow, syms: readonly string[]): boolean {
    const run = (k: { id: number }): Run => ({ at: slotsOf(b.counts, k.id), n: b.counts[k.id] });
    const steps = run(BOOK_STEP);
    const trades = run(TRADE);
    const orders = run(ORDER);
    const updates = run(ORDER_UPDATE);
    if (!this.fits(b, syms, steps, trades, orders, updates)) return false;
    const s = b.slots;
    const strs = b.strs;
    const { users, ledger, exchange, markets } = this.deps;
    const listener = exchange.listener;

    // Users and keys first: a user's first balance or order may come in the same batch.
    for (let r = 0, o = slotsOf(b.counts, USER.id); r < b.counts[USER.id]; r++, o += USER.stride) {
      const id = s[o + USER.at.id];
      const uid = strs[s[o + USER.at.uid]];
      if (users.idOf(uid) === undefined) users.add(id, uid);
      ledger.ensureUser(id);
    }
    for (let r = 0, o = slotsOf(b.counts, API_KEY.id); r < b.counts[API_KEY.id]; r++, o += API_KEY.stride) {
      const token = strs[s[o + API_KEY.at.token]];
      if (!users.hasToken(token))
        users.addKey(token, s[o + API_KEY.at.user_id], strs[s[o + API_KEY.at.secret]], false);
    }
    for (
      let r = 0, o = slotsOf(b.counts, REVOKE_KEY.id);
      r < b.counts[REVOKE_KEY.id];
      r++, o += REVOKE_KEY.stride
    )
      users.revoke(strs[s[o + REVOKE_KEY.at.token]]);
    for (
      let r = 0, o = slotsOf(b.counts, TRANSFER.id);
      r < b.counts[TRANSFER.id];
      r++, o += TRANSFER.stride
    ) {
      const user = s[o + TRANSFER.at.user_id];
      const currency = syms[s[o + TRANSFER.at.currency]];
      if (!ledger.hasCurrency(currency)) continue;
      this.addTotal(user, ledger.currencyIndex(currency), BigInt(strs[s[o + TRANSFER.at.amount]]));
    }

    // Trades by id (the user channels' views); each one's legs now, its market entry with its step.
    const tradeAt = new Map<number, number>();
    const ids = exchange.ids;
    for (let r = 0, o = trades.at; r < trades.n; r++, o += TRADE.stride) {
      const id = s[o + TRADE.at.id];
      tradeAt.set(id, o);
      // The next ids as the leader's (a promotion goes on from them).
      if (id >= ids.nextTradeId) ids.nextTradeId = id + 1;
      const pair = this.pairOf.get(syms[s[o + TRADE.at.pair]])!;
      this.legs(pair, s, o);
      const list = this.pending[pair];
      for (const c of MARKET_COLUMNS) list.push(s[o + c]);
    }

    // Book changes, in number order.
    let l3At = slotsOf(b.counts, L3_EVENT.id);
    for (let r = 0, o = steps.at; r < steps.n; r++, o += BOOK_STEP.stride) {
      const pair = this.pairOf.get(syms[s[o + BOOK_STEP.at.pair]])!;
      const m = markets[pair];
      const book = m.l3!;
      const n = s[o + BOOK_STEP.at.l3_events];
      const events = Array.from(s.subarray(l3At, l3At + n * L3_FIELDS));
      l3At += n * L3_FIELDS;
      const levels = levelsOf(m, book, events);
      book.apply(events);
      const seq = s[o + BOOK_STEP.at.seq];
      book.from = seq;
      const bbo = m.applyChange(levels, seq, s[o + BOOK_STEP.at.micro]);
      const published: PublicTrade[] = [];
      const wanted = listener?.wantsTrades(pair) === true;
      const list = this.pending[pair];
      const taken = s[o + BOOK_STEP.at.trades] * MARKET_COLUMNS.length;
      for (let t = 0; t < taken; t += MARKET_COLUMNS.length) {
        m.addTrade(
          list[t] as 0 | 1,
          list[t + 1] as 0 | 1,
          list[t + 2],
          list[t + 3],
          list[t + 4],
          list[t + 5],
        );
        if (wanted) published.push(m.latestTrade());
      }
      list.splice(0, taken);
      if (listener === null) continue;
      if (levels.length > 0) listener.levelsChanged(pair, levels, seq);
      if (bbo) listener.bboChanged(pair);
      if (events.length > 0) listener.l3Changed(pair, seq, events);
      if (published.length > 0) listener.publicTrades(pair, published);
    }

    // Each order's records of the batch, in order (its ORDER records come before its updates).
    const recordsOf = new Map<number, number[]>();
    const list = (id: number): number[] => {
      let l = recordsOf.get(id);
      if (l === undefined) {
        l = [];
        recordsOf.set(id, l);
      }
      return l;
    };
    // ORDER records as their offsets, ORDER_UPDATE ones as their offsets negated minus 1.
    for (let r = 0, o = orders.at; r < orders.n; r++, o += ORDER.stride) {
      const id = s[o + ORDER.at.id];
      list(id).push(o);
      if (id >= ids.nextOrderId) ids.nextOrderId = id + 1;
    }
    for (let r = 0, o = updates.at; r < updates.n; r++, o += ORDER_UPDATE.stride)
      list(s[o + ORDER_UPDATE.at.id]).push(-o - 1);
    const done = new Map<number, number>();
    /** Applies the records of order `id` with numbers up to `seq` not applied yet; its state after. */
    const advance = (id: number, seq: number): { o: OrderState; created: boolean } | undefined => {
      const l = recordsOf.get(id);
      if (l === undefined) return undefined;
      let i = done.get(id) ?? 0;
      let o = exchange.openOrders.get(id) ?? exchange.openOrders.closing.get(id);
      let created = false;
      for (; i < l.length; i++) {
        const at = l[i];
        const recSeq = at >= 0 ? s[at + ORDER.at.exec_seq] : s[-at - 1 + ORDER_UPDATE.at.exec_seq];
        if (recSeq > seq) break;
        if (at >= 0) {
          if (o === undefined) {
            o = this.orderOf(s, at, strs, syms);
            created = true;
          } else this.wholeRow(o, s, at, strs);
        } else if (o !== undefined) this.updateRow(o, s, -at - 1, strs);
        if (o !== undefined) this.placed(o);
      }
      done.set(id, i);
      return o === undefined ? undefined : { o, created };
    };

    for (
      let r = 0, o = slotsOf(b.counts, EXECUTION.id);
      r < b.counts[EXECUTION.id];
      r++, o += EXECUTION.stride
    ) {
      const user = s[o + EXECUTION.at.user_id];
      const seq = s[o + EXECUTION.at.exec_seq];
      const ref = s[o + EXECUTION.at.ref_id];
      exchange.execSeqs.restore(user, seq);
      if (s[o + EXECUTION.at.kind] === EXEC_TRADE) {
        const t = tradeAt.get(ref);
        if (t === undefined || listener === null || !listener.wantsUserTrades(user)) continue;
        const pair = this.pairOf.get(syms[s[t + TRADE.at.pair]])!;
        const taker = s[t + TRADE.at.taker_user_id] === user && s[t + TRADE.at.taker_exec_seq] === seq;
        const takerSide = s[t + TRADE.at.taker_side];
        const orderId = s[t + (taker ? TRADE.at.taker_order_id : TRADE.at.maker_order_id)];
        const view = userTradeView(this.deps.config.pairs[pair], {
          id: ref,
          side: taker ? takerSide : 1 - takerSide,
          type: s[t + (taker ? TRADE.at.taker_type : TRADE.at.maker_type)],
          price: s[t + TRADE.at.price],
          amount: s[t + TRADE.at.amount],
          timeMicro: s[t + TRADE.at.time_micro],
          feeRate: s[t + (taker ? TRADE.at.taker_fee_rate : TRADE.at.maker_fee_rate)],
          execSeq: seq,
          orderId,
          maker: !taker,
        });
        listener.userTrade(user, view, orderId, !taker);
        continue;
      }
      const changed = advance(ref, seq);
      if (changed === undefined || listener === null || !listener.wantsOrders(user)) continue;
      const { o: order, created } = changed;
      listener.orderChanged(user, orderView(this.deps.config.pairs[order.pair], order, false), created);
    }
    // Records no number points at (a trailing stop's move, DECISIONS.md "Trailing stops").
    for (const id of recordsOf.keys()) advance(id, Number.POSITIVE_INFINITY);
    for (const o of exchange.openOrders.closing.values()) exchange.openOrders.committed(o);

    for (
      let r = 0, o = slotsOf(b.counts, MMP_SETTING.id);
      r < b.counts[MMP_SETTING.id];
      r++, o += MMP_SETTING.stride
    ) {
      const pair = this.pairOf.get(syms[s[o + MMP_SETTING.at.pair]]);
      if (pair === undefined) continue;
      exchange.mmp.put(s[o + MMP_SETTING.at.user_id], pair, {
        intervalSeconds: s[o + MMP_SETTING.at.interval_seconds],
        qtyLimit: s[o + MMP_SETTING.at.qty_limit],
        frozenSeconds: s[o + MMP_SETTING.at.frozen_seconds],
      });
    }
    let seqsMatch = true;
    for (let r = 0, o = slotsOf(b.counts, META.id); r < b.counts[META.id]; r++, o += META.stride) {
      const key = syms[s[o + META.at.key]];
      const value = s[o + META.at.value];
      const pair = this.seqKey.get(key);
      if (pair !== undefined && markets[pair].seq !== value) seqsMatch = false;
      const statusPair = this.statusKey.get(key);
      if (statusPair !== undefined && this.deps.statuses.get(statusPair) !== value) {
        this.deps.statuses.set(statusPair, value);
        const name = this.deps.config.pairs[statusPair].name;
        listener?.pairStatusChanged?.(statusPair, name, PAIR_STATUS_NAMES[value]);
      }
    }
    // The leader's snapshot of a balance, as of the end of the batch: its total.
    for (let r = 0, o = slotsOf(b.counts, BALANCE.id); r < b.counts[BALANCE.id]; r++, o += BALANCE.stride) {
      const currency = syms[s[o + BALANCE.at.currency]];
      if (!ledger.hasCurrency(currency)) continue;
      const user = s[o + BALANCE.at.user_id];
      const c = ledger.currencyIndex(currency);
      ledger.ensureUser(user);
      const total = BigInt(strs[s[o + BALANCE.at.available]]) + BigInt(strs[s[o + BALANCE.at.reserved]]);
      const reserved = ledger.reserved(user, c);
      ledger.load(user, c, total - reserved, reserved);
    }
    // A follower writes no candle snapshot: what a leader would write is dropped, not kept.
    for (const m of markets) m.drainCandles(ignore);
    this.applied++;
    return seqsMatch;
  }

  /** Whether the batch can be applied in place: every book change has its step, every update its order. */
  private fits(
    b: DecodedRow,
    syms: readonly string[],
    steps: Run,
    trades: Run,
    orders: Run,
    updates: Run,
  ): boolean {
    const s = b.slots;
    // Per pair, the trades its steps take: those left from earlier batches and this one's.
    const available = this.pending.map((list) => list.length / MARKET_COLUMNS.length);
    for (let r = 0, o = trades.at; r < trades.n; r++, o += TRADE.stride) {
      const pair = this.pairOf.get(syms[s[o + TRADE.at.pair]]);
      if (pair === undefined) return false;
      available[pair]++;
    }
    let events = 0;
    for (let r = 0, o = steps.at; r < steps.n; r++, o += BOOK_STEP.stride) {
      const pair = this.pairOf.get(syms[s[o + BOOK_STEP.at.pair]]);
      if (pair === undefined) return false;
      available[pair] -= s[o + BOOK_STEP.at.trades];
      if (available[pair] < 0) return false;
      events += s[o + BOOK_STEP.at.l3_events];
    }
    if (events !== b.counts[L3_EVENT.id]) return false;
    // A leader that journals no steps leaves the pairs' book seqs elsewhere: `apply` sees it after.
    const known = new Set<number>();
    for (let r = 0, o = orders.at; r < orders.n; r++, o += ORDER.stride) {
      if (!this.pairOf.has(syms[s[o + ORDER.at.pair]])) return false;
      known.add(s[o + ORDER.at.id]);
    }
    const open = this.deps.exchange.openOrders;
    for (let r = 0, o = updates.at; r < updates.n; r++, o += ORDER_UPDATE.stride) {
      const id = s[o + ORDER_UPDATE.at.id];
      if (!known.has(id) && !open.has(id)) return false;
    }
    return true;
  }

  /** Trade record `t` of `pair`: its legs move the totals (risk.ts fillTotals, as recovery adds them). */
  private legs(pair: number, s: Float64Array, t: number): void {
    const takerBuys = s[t + TRADE.at.taker_side] === BUY;
    const taker = s[t + TRADE.at.taker_user_id];
    const maker = s[t + TRADE.at.maker_user_id];
    const takerRate = BigInt(s[t + TRADE.at.taker_fee_rate]);
    const makerRate = BigInt(s[t + TRADE.at.maker_fee_rate]);
    fillTotals(
      this.units[pair],
      takerBuys ? taker : maker,
      takerBuys ? maker : taker,
      this.deps.feeUser,
      takerBuys ? takerRate : makerRate,
      takerBuys ? makerRate : takerRate,
      s[t + TRADE.at.price],
      s[t + TRADE.at.amount],
      (user, c, v) => this.addTotal(user, c, v),
    );
  }

  /** `user`'s total of currency `c` moves by `v` (what is reserved stays). */
  private addTotal(user: number, c: number, v: bigint): void {
    const ledger = this.deps.ledger;
    ledger.ensureUser(user);
    ledger.load(user, c, ledger.available(user, c) + v, ledger.reserved(user, c));
  }

  /** What open order `o` holds, as the start's recovery counts it (0 once closed). */
  private holdOf(o: OrderState): bigint {
    if (o.cancelled || o.used >= o.amount) return 0n;
    // docs/API.md 18: an OCO's waiting stop leg beside its open limit leg holds only the part of
    // the shared hold beyond the limit leg's (OcoLink.extra), as the leader's core holds it.
    const link = o.oco;
    if (link !== null && link.stop === o && o.triggerMicro === 0) return link.extra;
    return limitHold(this.units[o.pair], o.side, o.price, o.amount - o.used);
  }

  /**
   * docs/API.md 18: a waiting OCO stop leg joins its open limit leg (whose record comes first: its
   * id is the OCO's and it was created first) before its hold is taken.
   */
  private linkOco(o: OrderState): void {
    if (o.oco !== null || o.ocoId === 0 || o.ocoId === o.id || o.triggerMicro !== 0 || o.cancelled) return;
    const limit = this.deps.exchange.openOrders.get(o.ocoId);
    if (limit === undefined || limit.oco !== null) return;
    linkOcoPair(limit, o, this.units[o.pair]);
  }

  /** The currency `o` holds. */
  private heldCurrency(o: OrderState): number {
    const u = this.units[o.pair];
    return o.side === BUY ? u.quote : u.base;
  }

  /** Before a record changes `o`: its hold goes back to available (`placed` takes the new one). */
  private unhold(o: OrderState): void {
    const hold = this.holdOf(o);
    if (hold === 0n) return;
    const ledger = this.deps.ledger;
    const c = this.heldCurrency(o);
    ledger.load(o.user, c, ledger.available(o.user, c) + hold, ledger.reserved(o.user, c) - hold);
  }

  /** After a record changed `o`: it holds what it now holds, and is open or closed accordingly. */
  private placed(o: OrderState): void {
    const open = this.deps.exchange.openOrders;
    this.linkOco(o);
    const hold = this.holdOf(o);
    if (hold !== 0n) {
      const ledger = this.deps.ledger;
      const c = this.heldCurrency(o);
      ledger.ensureUser(o.user);
      ledger.load(o.user, c, ledger.available(o.user, c) - hold, ledger.reserved(o.user, c) + hold);
    }
    const isOpen = !o.cancelled && o.used < o.amount;
    // A stop leg that triggered or ended leaves its OCO (its limit leg ends in the same step).
    const link = o.oco;
    if (link !== null && link.stop === o && (!isOpen || o.triggerMicro !== 0)) {
      link.limit.oco = null;
      o.oco = null;
    }
    if (isOpen && !open.has(o.id)) open.setOpen(o);
    else if (!isOpen && !open.isClosing(o)) open.close(o);
  }

  /** A new order's state from its ORDER record at `at`. */
  private orderOf(s: Float64Array, at: number, strs: readonly string[], syms: readonly string[]): OrderState {
    const A = ORDER.at;
    const client = s[at + A.client_order_id];
    const o: OrderState = {
      id: s[at + A.id],
      user: s[at + A.user_id],
      pair: this.pairOf.get(syms[s[at + A.pair]])!,
      side: s[at + A.side] as 0 | 1,
      type: s[at + A.type] as 0 | 1,
      price: 0,
      amount: 0,
      used: 0,
      cancelled: false,
      createMicro: s[at + A.create_micro],
      updateMicro: 0,
      budget: 0n,
      executed: 0n,
      flags: s[at + A.flags],
      clientOrderId: client < 0 ? undefined : strs[client],
      rowSent: true,
      amending: null,
      userSlot: -1,
      restSeq: 0,
      execSeq: 0,
      stopPrice: 0,
      stopDirection: s[at + A.stop_direction],
      triggerMicro: 0,
      cancelReason: 0,
      trailingDelta: 0,
      ocoId: s[at + A.oco_id],
      oco: null,
      session: 0,
    };
    this.wholeRow(o, s, at, strs, false);
    return o;
  }

  /** An ORDER record (an upsert) over `o`: the columns it may change. */
  private wholeRow(o: OrderState, s: Float64Array, at: number, strs: readonly string[], held = true): void {
    if (held) this.unhold(o);
    this.changes(o, s, at, strs, ORDER.at);
    o.stopPrice = s[at + ORDER.at.stop_price];
    o.trailingDelta = s[at + ORDER.at.trailing_delta];
  }

  /** An ORDER_UPDATE record over `o`. */
  private updateRow(o: OrderState, s: Float64Array, at: number, strs: readonly string[]): void {
    this.unhold(o);
    this.changes(o, s, at, strs, ORDER_UPDATE.at);
  }

  /** The columns an ORDER and an ORDER_UPDATE record both carry (`A`: the record's layout). */
  private changes(
    o: OrderState,
    s: Float64Array,
    at: number,
    strs: readonly string[],
    A: typeof ORDER_UPDATE.at,
  ): void {
    o.price = s[at + A.price];
    o.amount = s[at + A.amount];
    o.used = s[at + A.amount_used];
    o.cancelled = s[at + A.is_cancelled] !== 0;
    o.updateMicro = s[at + A.update_micro];
    o.execSeq = s[at + A.exec_seq];
    o.executed = BigInt(strs[s[at + A.executed_quote]]);
    o.triggerMicro = s[at + A.trigger_micro];
    o.cancelReason = s[at + A.cancel_reason];
  }
}

function ignore(): void {}

/** What the market keeps of a trade (PairMarket.addTrade's arguments), in that order. */
const MARKET_COLUMNS = [
  TRADE.at.taker_side,
  TRADE.at.taker_type,
  TRADE.at.price,
  TRADE.at.amount,
  TRADE.at.time_micro,
  TRADE.at.id,
] as const;

/**
 * The level changes of L3 `events` on `m` whose L3 book is `book` (before the events): per event,
 * `side, price, total` with the total its price reaches, as the engine reports them.
 */
function levelsOf(m: PairMarket, book: L3Book, events: readonly number[]): number[] {
  const levels: number[] = [];
  const running = [new Map<number, number>(), new Map<number, number>()];
  // Amounts as the events leave them, before the book takes them.
  const left = new Map<number, number>();
  for (let i = 0; i < events.length; i += L3_FIELDS) {
    const type = events[i];
    const id = events[i + 1];
    const side = events[i + 2] as 0 | 1;
    const price = events[i + 3];
    const amount = events[i + 4];
    const before = left.get(id) ?? (type === L3_OPEN ? 0 : book.amountOf(id));
    const delta = type === L3_OPEN ? amount : type === L3_CHANGE ? amount - before : -before;
    left.set(id, type === L3_DONE ? 0 : amount);
    const totals = running[side];
    const total = (totals.get(price) ?? (side === 0 ? m.bids : m.asks).total(price)) + delta;
    totals.set(price, total);
    levels.push(side, price, total);
  }
  return levels;
}
