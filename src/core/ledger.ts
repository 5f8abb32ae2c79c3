/**
 * The ledger: every user's available and reserved balance per currency, in exact integers at the
 * currency's ledger scale (docs/API.md 5.6). It lives on the main thread only, so a reservation is
 * atomic with respect to every other request: two pairs that share a currency can never both
 * spend the same funds.
 *
 * Operations that move money keep `available + reserved` per currency equal to deposits minus
 * withdrawals (trades move value between users, never create it). Every (user, currency) a
 * command touches is remembered so the caller can persist exactly those balances.
 */

export class Ledger {
  readonly currencies: readonly string[];
  private readonly index = new Map<string, number>();
  private readonly avail: bigint[][] = [];
  private readonly resv: bigint[][] = [];
  /**
   * Per currency, available + reserved summed over every user: deposits − withdrawals once the
   * ledger is sound. Only loads, deposits and withdrawals change it (every other operation moves
   * value between users), so it is kept up to date here instead of summed over the users.
   */
  private readonly sums: bigint[];
  /**
   * (user, currency) pairs changed since the last `drainDirty`, encoded as user * C + currency, in
   * the order they first changed; `isDirty[key]` is 1 while a key is listed. A flag and a list
   * instead of a Set: every reserve, release and trade leg marks one or more keys, and a Set insert
   * hashes its number each time (the list is drained once a second, see Exchange.snapshot).
   */
  private dirtyKeys: number[] = [];
  private isDirty = new Uint8Array(0);

  constructor(currencies: readonly string[]) {
    this.currencies = currencies;
    this.sums = new Array<bigint>(currencies.length).fill(0n);
    currencies.forEach((c, i) => {
      this.index.set(c, i);
    });
  }

  currencyIndex(name: string): number {
    const i = this.index.get(name);
    if (i === undefined) throw new Error(`unknown currency ${name}`);
    return i;
  }

  hasCurrency(name: string): boolean {
    return this.index.has(name);
  }

  ensureUser(user: number): void {
    while (this.avail.length <= user) {
      this.avail.push(new Array<bigint>(this.currencies.length).fill(0n));
      this.resv.push(new Array<bigint>(this.currencies.length).fill(0n));
    }
  }

  /** Room for `keys` flags (`touch` grows them as keys appear). */
  private growDirtyFlags(keys: number): void {
    if (keys <= this.isDirty.length) return;
    const grown = new Uint8Array(Math.max(keys, this.isDirty.length * 2));
    grown.set(this.isDirty);
    this.isDirty = grown;
  }

  hasUser(user: number): boolean {
    return user < this.avail.length;
  }

  available(user: number, c: number): bigint {
    return this.avail[user][c];
  }

  reserved(user: number, c: number): bigint {
    return this.resv[user][c];
  }

  /** Sets both values (recovery only). */
  load(user: number, c: number, available: bigint, reserved: bigint): void {
    this.ensureUser(user);
    this.sums[c] += available + reserved - this.avail[user][c] - this.resv[user][c];
    this.avail[user][c] = available;
    this.resv[user][c] = reserved;
  }

  /** Moves `amount` from available to reserved; false (and nothing changes) when not enough. */
  reserve(user: number, c: number, amount: bigint): boolean {
    const a = this.avail[user];
    if (a[c] < amount) return false;
    a[c] -= amount;
    this.resv[user][c] += amount;
    this.touch(user, c);
    return true;
  }

  /** Moves `amount` from reserved back to available (cancel, better-price fill, unused budget). */
  release(user: number, c: number, amount: bigint): void {
    if (amount === 0n) return;
    const r = this.resv[user];
    if (r[c] < amount) throw new Error(`ledger: release of ${amount} exceeds reserved ${r[c]}`);
    r[c] -= amount;
    this.avail[user][c] += amount;
    this.touch(user, c);
  }

  /** Pays `amount` out of reserved funds to `to`'s available balance (one leg of a trade). */
  transfer(from: number, to: number, c: number, amount: bigint): void {
    const r = this.resv[from];
    if (r[c] < amount) throw new Error(`ledger: transfer of ${amount} exceeds reserved ${r[c]}`);
    r[c] -= amount;
    this.avail[to][c] += amount;
    this.touch(from, c);
    this.touch(to, c);
  }

  /**
   * One leg of a trade with a fee (docs/API.md 9): `amount` leaves `from`'s reserved funds, `to`
   * receives `amount − fee` and `feeUser` (the fee account) `fee`. Nothing is created or lost.
   */
  transferWithFee(from: number, to: number, feeUser: number, c: number, amount: bigint, fee: bigint): void {
    const r = this.resv[from];
    if (r[c] < amount) throw new Error(`ledger: transfer of ${amount} exceeds reserved ${r[c]}`);
    if (fee < 0n || fee > amount) throw new Error(`ledger: fee ${fee} outside 0..${amount}`);
    r[c] -= amount;
    this.avail[to][c] += amount - fee;
    this.avail[feeUser][c] += fee;
    this.touch(from, c);
    this.touch(to, c);
    this.touch(feeUser, c);
  }

  deposit(user: number, c: number, amount: bigint): void {
    this.ensureUser(user);
    this.avail[user][c] += amount;
    this.sums[c] += amount;
    this.touch(user, c);
  }

  /** Available + reserved of currency `c` summed over every user (what `totals` computes, kept). */
  sum(c: number): bigint {
    return this.sums[c];
  }

  /** Takes `amount` from available; false (and nothing changes) when not enough. */
  withdraw(user: number, c: number, amount: bigint): boolean {
    const a = this.avail[user];
    if (a[c] < amount) return false;
    a[c] -= amount;
    this.sums[c] -= amount;
    this.touch(user, c);
    return true;
  }

  /** Counts (user, currency) as changed, so the next drain hands it over (recovery). */
  markDirty(user: number, c: number): void {
    this.touch(user, c);
  }

  /** Calls `fn` for each balance changed since the last drain, then forgets them. */
  drainDirty(fn: (user: number, c: number, available: bigint, reserved: bigint) => void): void {
    const n = this.currencies.length;
    const keys = this.dirtyKeys;
    // A new list first: anything `fn` changes is listed for the next drain.
    this.dirtyKeys = [];
    for (let i = 0; i < keys.length; i++) this.isDirty[keys[i]] = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const user = Math.floor(key / n);
      const c = key - user * n;
      fn(user, c, this.avail[user][c], this.resv[user][c]);
    }
  }

  /** Sum of available + reserved over all users, per currency index. */
  totals(): bigint[] {
    const t = new Array<bigint>(this.currencies.length).fill(0n);
    for (let u = 0; u < this.avail.length; u++) {
      for (let c = 0; c < t.length; c++) t[c] += this.avail[u][c] + this.resv[u][c];
    }
    return t;
  }

  /**
   * The ledger check of docs/API.md 6: per currency, the sum over users equals `expected[c]`
   * (deposits − withdrawals) and no balance is negative. Returns the problems found (empty: ok).
   */
  check(expected: readonly bigint[]): string[] {
    const problems: string[] = [];
    const t = this.totals();
    for (let c = 0; c < t.length; c++) {
      if (t[c] !== expected[c]) {
        problems.push(
          `${this.currencies[c]}: balances sum to ${t[c]}, deposits - withdrawals = ${expected[c]}`,
        );
      }
    }
    for (let u = 0; u < this.avail.length; u++) {
      for (let c = 0; c < t.length; c++) {
        if (this.avail[u][c] < 0n || this.resv[u][c] < 0n) {
          problems.push(`user ${u} ${this.currencies[c]}: negative balance`);
        }
      }
    }
    return problems;
  }

  private touch(user: number, c: number): void {
    const key = user * this.currencies.length + c;
    if (key >= this.isDirty.length) this.growDirtyFlags(key + 1);
    else if (this.isDirty[key] === 1) return;
    this.isDirty[key] = 1;
    this.dirtyKeys.push(key);
  }
}
