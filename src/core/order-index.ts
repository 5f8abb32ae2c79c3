/**
 * The core's open orders by id (Exchange.open). Ids are given in sequence as commands enter the
 * pair workers, so the orders live in pages of PAGE_SIZE consecutive ids: a lookup is a page
 * lookup (the page of the last access first, then a small map of pages) and an array read, and an
 * insert never rehashes a table of every open order, as a Map of a few hundred thousand resting
 * orders does each time it grows (BENCHMARKS.md, "Changes kept"). A page goes once its last order
 * leaves.
 */

/** Ids per page. */
const PAGE_SIZE = 4096;

interface Page<T> {
  readonly slots: (T | undefined)[];
  /** Orders in `slots`. */
  count: number;
}

export class OrderIndex<T> {
  private readonly pages = new Map<number, Page<T>>();
  /** The page of the last access, and its number (-1: none). */
  private lastPage: Page<T> | null = null;
  private lastNo = -1;
  /** Orders held. */
  size = 0;

  get(id: number): T | undefined {
    const no = Math.floor(id / PAGE_SIZE);
    const page = no === this.lastNo ? this.lastPage : this.find(no);
    return page === null ? undefined : page.slots[id - no * PAGE_SIZE];
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, order: T): void {
    const no = Math.floor(id / PAGE_SIZE);
    let page = no === this.lastNo ? this.lastPage : this.find(no);
    if (page === null) {
      page = { slots: new Array<T | undefined>(PAGE_SIZE).fill(undefined), count: 0 };
      this.pages.set(no, page);
      this.lastPage = page;
      this.lastNo = no;
    }
    const at = id - no * PAGE_SIZE;
    if (page.slots[at] === undefined) {
      page.count++;
      this.size++;
    }
    page.slots[at] = order;
  }

  /** Removes the order of `id`; true when there was one. */
  delete(id: number): boolean {
    const no = Math.floor(id / PAGE_SIZE);
    const page = no === this.lastNo ? this.lastPage : this.find(no);
    if (page === null) return false;
    const at = id - no * PAGE_SIZE;
    if (page.slots[at] === undefined) return false;
    page.slots[at] = undefined;
    this.size--;
    if (--page.count === 0) {
      this.pages.delete(no);
      if (this.lastNo === no) {
        this.lastPage = null;
        this.lastNo = -1;
      }
    }
    return true;
  }

  /** Every order held (in no particular order). */
  *values(): IterableIterator<T> {
    for (const page of this.pages.values()) for (const o of page.slots) if (o !== undefined) yield o;
  }

  /** Page `no` (remembered as the last one), or null. */
  private find(no: number): Page<T> | null {
    const page = this.pages.get(no);
    if (page === undefined) return null;
    this.lastPage = page;
    this.lastNo = no;
    return page;
  }
}
