/**
 * The trading page in a real browser (Debian's chromium driven by playwright-core) against the
 * real server (test/e2e/harness.ts): a user pastes a key, places a limit order that trades and
 * one that rests, cancels it, and the page shows the book, trades, candle, open orders, own
 * trades and balances change. Every signed call of the page is in the form bound to the time, the
 * method and the path (docs/API.md 3). The pair status badge follows the admin's changes live. At
 * 800, 1366 and 1920 px every column and button fits the window and its panel; the order form
 * shows the exact total and the balance it spends; the best bid and ask show once; a pair that
 * never traded shows "-"; the chart's time labels are drawn whole. The order form's tabs place stop
 * orders (a stop-limit that a trade triggers; a trailing stop whose stop price the page shows moving
 * after a trade) and OCOs (both legs shown as one, cancelled together; docs/API.md 18). Screenshots go
 * to test-artifacts/web/.
 *
 * Without chromium the file is skipped with a message, unless CI is set: then it fails (CI
 * installs chromium in .ci/run).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { type CreatedOrder, type MmpState, type Order, ok } from "../../src/client/index.ts";
import {
  expectOk,
  limit,
  REPO_ROOT,
  TestServer as Server,
  type TestServer,
  type TestUser,
} from "../e2e/harness.ts";
import { read as readOrder, tradeAt } from "../e2e/stop-helpers.ts";
import { waitFor } from "../wait.ts";
import { ensureWebBuilt } from "./build.ts";

const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
const chromiumPath = CHROMIUM_CANDIDATES.find((p) => p !== undefined && p !== "" && existsSync(p));
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
const skip =
  chromiumPath === undefined && !inCi
    ? "no chromium found (apt-get install chromium, or set CHROMIUM_PATH); CI is not set, so skipped"
    : false;

/** Flags that keep chromium off the network beyond localhost (node.md: this machine's closed network). */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const ARTIFACTS = join(REPO_ROOT, "test-artifacts", "web");
const OPEN_ORDER_COLUMNS = ["Id", "Pair", "Side", "Type", "Price", "Amount", "Filled", "Created", ""];
const MARKET_COLUMNS = ["Pair", "Last", "Change", "Volume"];
/** Window widths the layout tests check: a small laptop or tablet, the common laptop, a desktop. */
const WIDTHS = [800, 1366, 1920];
/** A time label the chart drew (WATCH_TIME_LABELS): its text and its ends on its canvas, in pixels. */
interface TimeLabel {
  text: string;
  left: number;
  right: number;
  canvas: number;
}
/**
 * Page function (JavaScript: the page has the DOM, this file's types do not): why each element a
 * selector finds is not wholly visible, side to side: no box, outside the window, or cut by an
 * ancestor that clips its overflow (its client box, borders and scroll bar excluded).
 */
const HIDDEN = `(selector) => [...document.querySelectorAll(selector)].flatMap((e) => {
  const r = e.getBoundingClientRect();
  const what = e.tagName + ' "' + (e.textContent ?? "").trim() + '"';
  if (r.width === 0 || r.height === 0) return [what + " has no box"];
  const view = document.documentElement.clientWidth;
  if (r.left < 0 || r.right > view + 0.5) return [what + " at " + r.left + ".." + r.right + ", window 0.." + view];
  for (let a = e.parentElement; a !== null && a !== document.body; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === "visible") continue;
    const left = a.getBoundingClientRect().left + a.clientLeft;
    if (r.left < left - 0.5 || r.right > left + a.clientWidth + 0.5)
      return [what + " at " + r.left + ".." + r.right + ", cut by ." + a.className + " " + left + ".." + (left + a.clientWidth)];
  }
  return [];
})`;
/**
 * Page script (JavaScript, as HIDDEN) recording every time label the chart draws and where it lands
 * on its canvas: the labels are pixels on a canvas, so its drawing call is watched. `timeLabels`
 * keeps the last 500.
 */
const WATCH_TIME_LABELS = `{
  const drawn = [];
  window.timeLabels = drawn;
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, maxWidth) {
    if (String(text).includes(":")) {
      const width = this.measureText(text).width;
      const align = this.textAlign;
      const start = align === "center" ? x - width / 2 : align === "right" || align === "end" ? x - width : x;
      const t = this.getTransform();
      drawn.push({ text, left: t.a * start + t.e, right: t.a * (start + width) + t.e, canvas: this.canvas.width });
      if (drawn.length > 500) drawn.splice(0, drawn.length - 500);
    }
    return fillText.call(this, text, x, y, maxWidth);
  };
}`;
/** Generous: waiting for a condition, never asserting on how long it took. */
const WAIT = { timeout: 15_000 };

describe("the trading page in chromium", { skip }, () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let maker: TestUser;
  let me: TestUser;
  const pageErrors: string[] = [];
  /** Method, path and the auth headers of every signed call the page made. */
  const signedCalls: { method: string; path: string; headers: Record<string, string> }[] = [];

  before(async () => {
    if (chromiumPath === undefined) {
      throw new Error(
        "CI is set but no chromium was found: .ci/run must install it (apt-get install chromium)",
      );
    }
    ensureWebBuilt();
    await mkdir(ARTIFACTS, { recursive: true });
    server = await Server.start();
    maker = await server.newUser({ btc: "10", usdt: "100000" });
    me = await server.newUser({ btc: "1", usdt: "50000" });
    const placed = await maker.client.createOrder(limit("btc_usdt", "sell", "25000", "0.5"));
    assert.equal(placed.status, 200, placed.text);
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("request", (r) => {
      const headers = r.headers();
      if (headers.authorization === undefined) return;
      signedCalls.push({ method: r.method(), path: new URL(r.url()).pathname, headers });
    });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await server?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const cell = async (selector: string) =>
    ((await page.locator(selector).first().textContent(WAIT)) ?? "").trim();
  const balance = (currency: string, column: 2 | 3) =>
    cell(`#balances tr[data-currency="${currency}"] td:nth-child(${column})`);
  // Waits go through locators: the page's CSP forbids the string evaluation waitForFunction uses.
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const waitText = (selector: string, expected: string) =>
    page
      .locator(selector, { hasText: new RegExp(`^\\s*${literal(expected)}\\s*$`) })
      .first()
      .waitFor(WAIT);
  /** Chooses a tab of the order form (Limit, Market, Stop, OCO). */
  const tab = async (name: string) => {
    const button = page.getByRole("tab", { name, exact: true });
    await button.click();
    await page.locator(`[role=tab][aria-selected=true]`, { hasText: name }).waitFor(WAIT);
  };
  const waitStatus = (pattern: RegExp) => page.locator("#order-status", { hasText: pattern }).waitFor(WAIT);
  /** Why each element `selector` finds is not wholly visible side to side (HIDDEN); [] when all are. */
  const hidden = async (selector: string) =>
    (await page.evaluate(`(${HIDDEN})(${JSON.stringify(selector)})`)) as string[];

  test("shows the market: pairs, the book from the stream, live changes", async () => {
    await page.goto(`${server!.origin}/`);
    await page.waitForSelector("body[data-ready='1']", WAIT);
    const pairs = await page.locator("#pair option").allTextContents();
    assert.deepEqual(pairs, ["BTC/USDT", "ETH/USDT", "ETH/BTC"]);
    await page.waitForSelector('#asks .level[data-price="25000"][data-amount="0.5"]', WAIT);
    // A change made elsewhere arrives through orders:btc_usdt.
    const more = await maker.client.createOrder(limit("btc_usdt", "sell", "25100", "1.2"));
    assert.equal(more.status, 200, more.text);
    await page.waitForSelector('#asks .level[data-price="25100"][data-amount="1.2"]', WAIT);
    await shot("1-market");
  });

  test("shows the best bid and offer from bbo:{pair} (docs/API.md 7.6.1)", async () => {
    const rest = await server!.public.bbo("btc_usdt");
    assert.equal(rest.status, 200, rest.text);
    await page.waitForSelector('#bbo[data-ask="25000"][data-bid="0"]', WAIT);
    assert.match(await cell("#bbo"), /^BBO bid — · ask 25000(\.0+)? × 0\.50*$/);
    const bid = await maker.client.createOrder(limit("btc_usdt", "buy", "24900", "0.3"));
    assert.equal(bid.status, 200, bid.text);
    await page.waitForSelector('#bbo[data-bid="24900"]', WAIT);
    assert.equal(await page.locator("#book-note").isHidden(), true, "no resync note without a mismatch");
    assert.equal((await maker.client.cancelOrder((bid.body as CreatedOrder).id)).status, 200);
    await page.waitForSelector('#bbo[data-bid="0"]', WAIT);
  });

  test("takes a pasted key and shows my balances", async () => {
    await page.fill("[name=uid]", me.uid);
    await page.fill("[name=apiToken]", me.apiToken);
    await page.fill("[name=secretKey]", me.secretKey);
    await page.click("#key-use");
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(2)', "50000");
    assert.equal(await balance("btc", 2), "1");
    // Kept for this tab only.
    const stored = await page.evaluate('[sessionStorage.length, localStorage.getItem("exchange.apiKey")]');
    assert.deepEqual(stored, [1, null]);
    await page.waitForSelector("body[data-user-stream='open']", WAIT);
  });

  test("a signed limit buy trades: book, trades, candle, my trades and balances update", async () => {
    await page.check("input[name=side][value=buy]");
    await tab("Limit");
    await page.fill("[name=price]", "25000");
    await page.fill("[name=amount]", "0.2");
    await page.click("#submit");
    // What it executed (docs/API.md 5.1 executedQuote): 0.2 × 25,000.
    await waitStatus(/filled 0\.2 for 5000 USDT\b/);
    await page.waitForSelector('#asks .level[data-price="25000"][data-amount="0.3"]', WAIT);
    // Prices show the pair's decimals (priceDecimals 2, from GET /1.0/info).
    await waitText("#trades .row .price", "25000.00");
    await page.waitForSelector('#chart[data-last-close="25000"]:not([data-candles="0"])', WAIT);
    await page.waitForSelector("#my-trades tr.buy", WAIT);
    await waitText('#balances tr[data-currency="btc"] td:nth-child(2)', "1.2");
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(2)', "45000");
    assert.equal(await cell("#my-trades tr td:nth-child(4)"), "25000.00");
    await shot("2-traded");
  });

  test("a resting order shows in my open orders and the book, and its cancel button cancels it", async () => {
    await page.fill("[name=price]", "24000");
    await page.fill("[name=amount]", "0.1");
    await page.click("#submit");
    const row = page.locator("#open-orders tr").first();
    await row.waitFor(WAIT);
    const id = await row.getAttribute("data-order-id");
    assert.ok(id !== null);
    await page.waitForSelector('#bids .level[data-price="24000"][data-amount="0.1"]', WAIT);
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(3)', "2400");
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(2)', "42600");
    await shot("3-open-order");

    await row.locator("button.cancel").click();
    await page.waitForSelector(`#open-orders tr[data-order-id="${id}"]`, { state: "detached", ...WAIT });
    await page.waitForSelector('#bids .level[data-price="24000"]', { state: "detached", ...WAIT });
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(2)', "45000");
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(3)', "0");
    // The server agrees: the order is cancelled.
    const orders = await me.client.userOrders("btc_usdt", { page: 1, pageSize: 10 });
    assert.equal(orders.status, 200);
    const cancelled = (orders.body as { items: { id: number; isCancelled: boolean }[] }).items.find(
      (o) => o.id === Number(id),
    );
    assert.equal(cancelled?.isCancelled, true);
    await shot("4-cancelled");
  });

  test("a stop-limit order from the form waits in my open orders, out of the book, and a trade triggers it (docs/API.md 18)", async () => {
    await page.check("input[name=side][value=sell]");
    await tab("Stop");
    await page.selectOption("select[name=stopType]", "limit");
    await page.locator("[name=stopPrice]").waitFor({ state: "visible", ...WAIT });
    await page.fill("[name=stopPrice]", "24950");
    await page.selectOption("select[name=stopDirection]", "down");
    await page.fill("[name=price]", "24900");
    await page.fill("[name=amount]", "0.1");
    assert.equal(await page.locator("[name=postOnly]").isDisabled(), true, "a stop is never post-only");
    await page.click("#submit");
    await waitStatus(/waiting for a trade at or below 24950/);
    const row = page.locator("#open-orders tr", { has: page.locator(".badge.stop") }).first();
    await row.waitFor(WAIT);
    const id = Number(await row.getAttribute("data-order-id"));
    assert.deepEqual(await row.locator(".badge").allTextContents(), ["STOP ≤ 24950.00"]);
    const waiting = ok(await me.client.order(id)) as { triggered: boolean; stopPrice: number };
    assert.deepEqual([waiting.triggered, waiting.stopPrice], [false, 24950]);
    // It holds its 0.1 BTC, and is in no book.
    await waitText('#balances tr[data-currency="btc"] td:nth-child(3)', "0.1");
    assert.equal(await page.locator('#asks .level[data-price="24900"]').count(), 0);
    await shot("4a-stop-waiting");
    // A trade at 24950 between two others triggers it: a sell at 24900 that rests, now in the book.
    const [buyer, seller] = [await server!.newUser({ usdt: "10000" }), await server!.newUser({ btc: "1" })];
    assert.equal((await buyer.client.createOrder(limit("btc_usdt", "buy", "24950", "0.05"))).status, 200);
    assert.equal((await seller.client.createOrder(limit("btc_usdt", "sell", "24950", "0.05"))).status, 200);
    await page.waitForSelector('#asks .level[data-price="24900"][data-amount="0.1"]', WAIT);
    await page.locator(`#open-orders tr[data-order-id="${id}"] .badge.stop.triggered`).waitFor(WAIT);
    assert.equal((ok(await me.client.order(id)) as { triggered: boolean }).triggered, true);
    await shot("4a-stop-triggered");
    await page.locator(`#open-orders tr[data-order-id="${id}"] button.cancel`).click();
    await page.waitForSelector(`#open-orders tr[data-order-id="${id}"]`, { state: "detached", ...WAIT });
    await tab("Limit");
    await page.check("input[name=side][value=buy]");
    await page.locator("[name=stopPrice]").waitFor({ state: "hidden", ...WAIT });
  });

  test("marks quote orders in my open orders (docs/API.md 8.12), and shows no MMP banner when not frozen", async () => {
    const q = await me.client.quote("btc_usdt", [["24000", "0.01"]], []);
    assert.equal(q.status, 200, q.text);
    const id = (q.body as { placed: { id: number }[] }).placed[0].id;
    const row = page.locator(`#open-orders tr[data-order-id="${id}"]`);
    await row.waitFor(WAIT);
    assert.deepEqual(await row.locator(".badge").allTextContents(), ["Q", "MMP"]);
    assert.equal(await page.locator("#mmp-banner").isHidden(), true);
    await shot("4b-quote-order");
    const pulled = await me.client.quote("btc_usdt", [], []);
    assert.equal(pulled.status, 200, pulled.text);
    await page.waitForSelector(`#open-orders tr[data-order-id="${id}"]`, { state: "detached", ...WAIT });
  });

  test("shows the MMP frozen banner once a fill freezes me on the pair, and hides it after a reset (docs/API.md 8.10)", async () => {
    const set = await me.client.setMmp({
      pairName: "btc_usdt",
      intervalSeconds: 60,
      qtyLimit: "0.01",
      frozenSeconds: 0,
    });
    assert.equal(set.status, 200, set.text);
    const mine = await me.client.createOrder({ ...limit("btc_usdt", "buy", "24000", "0.01"), mmp: true });
    assert.equal(mine.status, 200, mine.text);
    // The maker's sell fills the protected bid: 0.01 reaches the limit and freezes me on btc_usdt.
    const taker = await maker.client.createOrder(limit("btc_usdt", "sell", "24000", "0.01"));
    assert.equal(taker.status, 200, taker.text);
    assert.equal((ok(await me.client.getMmp("btc_usdt")) as MmpState).frozen, true);
    // The page reads the state when the pair is chosen.
    await page.selectOption("#pair", "eth_usdt");
    await page.selectOption("#pair", "btc_usdt");
    await page
      .locator("#mmp-banner", { hasText: /froze your quotes on this pair until a reset/ })
      .waitFor(WAIT);
    await shot("4c-mmp-frozen");
    assert.equal((await me.client.resetMmp("btc_usdt")).status, 200);
    const off = await me.client.setMmp({
      pairName: "btc_usdt",
      intervalSeconds: 0,
      qtyLimit: "0",
      frozenSeconds: 0,
    });
    assert.equal(off.status, 200, off.text);
    await page.selectOption("#pair", "eth_usdt");
    await page.selectOption("#pair", "btc_usdt");
    await page.locator("#mmp-banner").waitFor({ state: "hidden", ...WAIT });
  });

  test("a refused order shows the server's error and changes nothing", async () => {
    await page.fill("[name=price]", "25000");
    await page.fill("[name=amount]", "100");
    await page.click("#submit");
    await waitStatus(/amount:/);
    assert.equal(await page.locator("#order-status.bad").count(), 1);
    assert.equal(await page.locator("#open-orders tr").count(), 0);
  });

  test("signs every call in the bound form: X-Timestamp, the method and the path", async () => {
    assert.ok(signedCalls.length >= 4, `signed calls seen: ${signedCalls.length}`);
    const methods = new Set(signedCalls.map((c) => c.method));
    assert.deepEqual([...methods].sort(), ["GET", "POST"]);
    for (const c of signedCalls) {
      const ts = c.headers["x-timestamp"];
      assert.match(ts ?? "", /^\d{13}$/, `${c.method} ${c.path}: X-Timestamp`);
      assert.ok(Math.abs(Number(ts) - Date.now()) < 600_000, `${c.method} ${c.path}: a recent timestamp`);
    }
    // The server checked each of them: every order placed above was answered, so none was refused.
  });

  test("shows the pair's status live, both ways, as the admin changes it (docs/API.md 11, 12.2)", async () => {
    const setStatus = async (pairName: string, status: string) =>
      assert.equal((await server!.admin.setPairStatus(pairName, status)).status, 200);
    await page.selectOption("#pair", "btc_usdt");
    await page.locator("#pair-status").waitFor({ state: "hidden", ...WAIT });
    await setStatus("btc_usdt", "halted");
    await waitText("#pair-status", "Halted");
    await shot("6-halted");
    await setStatus("btc_usdt", "cancelOnly");
    await waitText("#pair-status", "Cancel only");
    // Another pair's change does not touch this pair's badge; the page knows it when it gets there.
    await setStatus("eth_usdt", "halted");
    await setStatus("btc_usdt", "trading");
    await page.locator("#pair-status").waitFor({ state: "hidden", ...WAIT });
    await page.selectOption("#pair", "eth_usdt");
    await waitText("#pair-status", "Halted");
    await setStatus("eth_usdt", "trading");
    await page.locator("#pair-status").waitFor({ state: "hidden", ...WAIT });
    await page.selectOption("#pair", "btc_usdt");
  });

  test("says when a pair is halted (docs/API.md 11)", async () => {
    const res = await server!.admin.setPairStatus("eth_btc", "halted");
    assert.equal(res.status, 200, res.text);
    // The statuses come with /info when the page loads: load it again, on the halted pair.
    await page.goto(`${server!.origin}/#eth_btc`);
    await page.reload();
    await page.waitForSelector("body[data-ready='1']", WAIT);
    await waitText("#pair-status", "Halted");
    await page.selectOption("#pair", "btc_usdt");
    await page.locator("#pair-status").waitFor({ state: "hidden", ...WAIT });
    assert.equal((await server!.admin.setPairStatus("eth_btc", "trading")).status, 200);
  });

  test("at 800, 1366 and 1920 px every column and Cancel button of my open orders and every column of the markets are visible, and the page is no wider than the window", async () => {
    // A book with a best bid and ask of their own, and my open orders: a plain limit order and a
    // quote (whose type cell carries the widest badges).
    expectOk(await maker.client.createOrder(limit("btc_usdt", "buy", "24000.5", "0.01")));
    expectOk(await maker.client.createOrder(limit("btc_usdt", "sell", "24999", "0.01")));
    expectOk(await me.client.createOrder(limit("btc_usdt", "buy", "22000.5", "0.01")));
    expectOk(await me.client.quote("btc_usdt", [["23000", "0.01"]], [["26000", "0.01"]]));
    await page.waitForSelector('#bbo[data-bid="24000.5"][data-ask="24999"]', WAIT);
    await page.locator("#open-orders button.cancel").nth(2).waitFor(WAIT);
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w, height: 900 });
      const [docWidth, view] = (await page.evaluate(
        "[document.documentElement.scrollWidth, innerWidth]",
      )) as [number, number];
      assert.ok(docWidth <= view, `${w} px: the page is ${docWidth} px wide`);
      assert.deepEqual(
        await page.locator(".mine table").first().locator("thead th").allTextContents(),
        OPEN_ORDER_COLUMNS,
      );
      assert.equal(await page.locator("#open-orders button.cancel").count(), 3);
      assert.deepEqual(await page.locator(".tickers thead th").allTextContents(), MARKET_COLUMNS);
      for (const selector of [
        ".mine table:first-of-type thead th",
        "#open-orders td",
        "#open-orders button.cancel",
        ".tickers thead th",
        "#tickers td",
      ])
        assert.deepEqual(await hidden(selector), [], `${w} px: ${selector}`);
      await shot(`7-layout-${w}`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  test("the order form shows the order's exact total and the available balance of the currency it spends, at every width", async () => {
    const usdt = expectOk(await me.client.balances("btc_usdt")).find((b) => b.currency === "usdt")!;
    await waitText('#balances tr[data-currency="usdt"] td:nth-child(2)', usdt.balance);
    const btc = await cell('#balances tr[data-currency="btc"] td:nth-child(2)');
    await page.check("input[name=side][value=buy]");
    await tab("Limit");
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w, height: 900 });
      // price × amount exactly (in floating point it is 7500.002999999999), in the quote currency.
      await page.fill("[name=price]", "25000.01");
      await page.fill("[name=amount]", "0.3");
      await waitText("#order-total", "7500.003 USDT");
      await waitText("#order-available", `${usdt.balance} USDT`);
      // A sell spends the base currency.
      await page.check("input[name=side][value=sell]");
      await waitText("#order-available", `${btc} BTC`);
      await page.check("input[name=side][value=buy]");
      await page.fill("[name=amount]", "2");
      await waitText("#order-total", "50000.02 USDT");
      // A market order has no price to multiply.
      await tab("Market");
      await waitText("#order-total", "-");
      await tab("Limit");
      assert.deepEqual(await hidden("#order-total, #order-available, #submit"), [], `${w} px: the form`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.fill("[name=price]", "");
    await page.fill("[name=amount]", "");
    await waitText("#order-total", "-");
  });

  test("shows the best bid and ask once, how far apart they are, and '-' for the price and change of a pair that never traded", async () => {
    await page.waitForSelector('#bbo[data-bid="24000.5"][data-ask="24999"]', WAIT);
    const count = (text: string, part: string) => text.split(part).length - 1;
    const neverTraded = ["ETH/BTC", "-", "-", "0.0000"];
    // The volume counts the 0.05 traded at 24950 to trigger the stop order above.
    const traded = ["BTC/USDT", "24000.00", "-4.00%", "0.260000"];
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w, height: 900 });
      // Above the book: the spread, the BBO line, and the header's ticker.
      const shown = [await cell("#spread"), await cell("#bbo"), await cell("#ticker")].join("\n");
      assert.equal(count(shown, "24000.50"), 1, `${w} px, the best bid in:\n${shown}`);
      assert.equal(count(shown, "24999.00"), 1, `${w} px, the best ask in:\n${shown}`);
      assert.equal(await cell("#spread"), "Spread 998.50");
      // ETH/BTC never traded; BTC/USDT last traded at 24000 after opening at 25000 in these 24 h.
      assert.deepEqual(
        await page.locator('#tickers tr[data-pair="eth_btc"] td').allTextContents(),
        neverTraded,
      );
      assert.deepEqual(await page.locator('#tickers tr[data-pair="btc_usdt"] td').allTextContents(), traded);
      assert.deepEqual(await hidden("#spread, #bbo"), [], `${w} px: the lines above the book`);
    }
    await page.selectOption("#pair", "eth_btc");
    await waitText("#ticker", "last - · no trades yet");
    await page.selectOption("#pair", "btc_usdt");
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  test("draws every time label of the chart whole, as hh:mm inside its canvas, at every width", async () => {
    // The chart's drawing is watched (WATCH_TIME_LABELS) from the reload on; the key stays in this
    // tab's sessionStorage, so the reloaded page signs in again by itself. The window starts at a
    // width none of WIDTHS has, so each one below is a change the chart redraws for.
    await page.addInitScript({ content: WATCH_TIME_LABELS });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.reload();
    await page.waitForSelector("body[data-ready='1'][data-user-stream='open']", WAIT);
    await page.waitForSelector('#chart[data-candles]:not([data-candles="0"])', WAIT);
    for (const w of WIDTHS) {
      // The chart redraws for its new width: the labels it draws from here are this width's.
      await page.evaluate("timeLabels.length = 0");
      await page.setViewportSize({ width: w, height: 900 });
      const labels = await waitFor(
        async () => {
          const list = (await page.evaluate("timeLabels")) as TimeLabel[];
          return list.length > 0 && list;
        },
        { what: `${w} px: the chart's time labels` },
      );
      for (const l of labels) {
        assert.match(l.text, /^\d{2}:\d{2}$/, `${w} px: label ${l.text}`);
        assert.ok(
          l.left >= 0 && l.right <= l.canvas,
          `${w} px: label ${l.text} at ${l.left}..${l.right} of ${l.canvas}`,
        );
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  test("a trailing stop from the Stop tab shows in my open orders with its current stop price and delta, which a trade moves on the page (docs/API.md 18)", async () => {
    // eth_usdt last traded at 2000: a trailing buy 50 above the lowest price since it arrived.
    const [seller, buyer] = [await server!.newUser({ eth: "1" }), await server!.newUser({ usdt: "10000" })];
    await tradeAt(seller, buyer, "eth_usdt", "2000", "0.1");
    await page.selectOption("#pair", "eth_usdt");
    await page.check("input[name=side][value=buy]");
    await tab("Stop");
    await page.selectOption("select[name=stopType]", "limit");
    await page.check("[name=trailing]");
    // The delta takes the stop price's place.
    await page.locator("[name=stopPrice]").waitFor({ state: "hidden", ...WAIT });
    await page.fill("[name=trailingDelta]", "50");
    await page.selectOption("select[name=stopDirection]", "up");
    await page.fill("[name=price]", "2100");
    await page.fill("[name=amount]", "0.5");
    await page.click("#submit");
    await waitStatus(/waiting for a trade at or above 2050 \(trailing 50\)/);
    const row = page.locator("#open-orders tr", { has: page.locator(".badge.trail") }).first();
    await row.waitFor(WAIT);
    const id = Number(await row.getAttribute("data-order-id"));
    assert.deepEqual(await row.locator(".badge").allTextContents(), ["STOP ≥ 2050.00", "TRAIL 50.00"]);
    const placed = await readOrder(me, id);
    assert.deepEqual(
      [placed.stopPrice, placed.trailingDelta, placed.stopDirection, placed.triggered],
      [2050, 50, "up", false],
    );
    await shot("8-trailing-waiting");
    // A trade lower down moves it down (1980 + 50): no stream message says so; the page reads it.
    await tradeAt(seller, buyer, "eth_usdt", "1980", "0.1");
    assert.equal((await readOrder(me, id)).stopPrice, 2030);
    await page
      .locator(`#open-orders tr[data-order-id="${id}"] .badge.stop`, { hasText: /^STOP ≥ 2030\.00$/ })
      .waitFor(WAIT);
    assert.deepEqual(await row.locator(".badge").allTextContents(), ["STOP ≥ 2030.00", "TRAIL 50.00"]);
    await shot("8-trailing-moved");
    await row.locator("button.cancel").click();
    await page.waitForSelector(`#open-orders tr[data-order-id="${id}"]`, { state: "detached", ...WAIT });
    await page.uncheck("[name=trailing]");
    await page.locator("[name=stopPrice]").waitFor({ state: "visible", ...WAIT });
    await tab("Limit");
  });

  test("an OCO sell from the OCO tab shows both legs in my open orders as one OCO, and cancelling one cancels both (docs/API.md 18)", async () => {
    // eth_usdt last traded at 1980 (the test above): the limit order above it, the stop below.
    await server!.deposit(me, "eth", "1");
    await page.selectOption("#pair", "btc_usdt");
    await page.selectOption("#pair", "eth_usdt");
    await waitText('#balances tr[data-currency="eth"] td:nth-child(2)', "1");
    await page.check("input[name=side][value=sell]");
    await tab("OCO");
    for (const hidden of ["[name=trailingDelta]", "select[name=stopDirection]", "[name=postOnly]"])
      await page.locator(hidden).waitFor({ state: "hidden", ...WAIT });
    await page.fill("[name=price]", "2100");
    await page.fill("[name=stopPrice]", "1900");
    await page.fill("[name=stopLimitPrice]", "1890");
    await page.fill("[name=amount]", "0.4");
    await waitText("#order-total", "840.00 USDT");
    const answered = page.waitForResponse((r) => r.url().endsWith("/1.0/trade/create-oco"), WAIT);
    await page.click("#submit");
    const answer = await answered;
    assert.equal(answer.status(), 200, `create-oco answered ${answer.status()}: ${await answer.text()}`);
    // Signed as create-order is: the body exactly as the form has it.
    assert.deepEqual(answer.request().postDataJSON(), {
      pairName: "eth_usdt",
      directionType: "sell",
      amount: "0.4",
      price: "2100",
      stopPrice: "1900",
      stopLimitPrice: "1890",
    });
    const { ocoId, orders } = (await answer.json()) as { ocoId: number; orders: Order[] };
    await waitStatus(new RegExp(`^OCO ${ocoId}: sell 0\\.4 @ 2100`));
    const legs = page.locator(`#open-orders tr.oco[data-oco-id="${ocoId}"]`);
    await legs.nth(1).waitFor(WAIT);
    // The two legs sit together, the limit order first, each marked with the OCO's id.
    assert.deepEqual(
      [await legs.nth(0).getAttribute("data-order-id"), await legs.nth(1).getAttribute("data-order-id")],
      orders.map((o) => String(o.id)),
    );
    assert.deepEqual(await legs.nth(0).locator(".badge").allTextContents(), [`OCO ${ocoId}`]);
    assert.deepEqual(await legs.nth(1).locator(".badge").allTextContents(), [
      "STOP ≤ 1900.00",
      `OCO ${ocoId}`,
    ]);
    // One hold for both legs: 0.4 ETH.
    await waitText('#balances tr[data-currency="eth"] td:nth-child(3)', "0.4");
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w, height: 900 });
      assert.deepEqual(await hidden("#open-orders td, #open-orders button.cancel"), [], `${w} px: my orders`);
      assert.deepEqual(await hidden("#order-form [role=tab], #submit"), [], `${w} px: the form`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await shot("9-oco");
    // Cancelling the stop leg cancels the limit leg too, and the page shows neither.
    await legs.nth(1).locator("button.cancel").click();
    await page.waitForSelector(`#open-orders tr[data-oco-id="${ocoId}"]`, { state: "detached", ...WAIT });
    const sibling = await readOrder(me, orders[0].id);
    assert.deepEqual(
      [sibling.isCancelled, (sibling as Order & { cancelReason?: string }).cancelReason],
      [true, "OCO"],
    );
    await waitText('#balances tr[data-currency="eth"] td:nth-child(3)', "0");
    // A refused OCO (the limit sell below the last trade) says why, as a refused order does.
    await page.fill("[name=price]", "1950");
    await page.click("#submit");
    await waitStatus(/price:/);
    assert.equal(await page.locator("#order-status.bad").count(), 1);
    assert.equal(await page.locator("#open-orders tr.oco").count(), 0);
    await tab("Limit");
    await page.check("input[name=side][value=buy]");
    await page.selectOption("#pair", "btc_usdt");
  });

  test("switches to the light theme", async () => {
    await page.click("#theme");
    await page.waitForSelector("html[data-theme='light']", WAIT);
    await shot("5-light");
    assert.deepEqual(pageErrors, [], "no script errors in the page");
  });
});
