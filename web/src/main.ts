/**
 * The trading page, wired in one place:
 *
 *   market    GET /trade/pairs (pair list) → stream `exchanges,status,orders:P,history:P`
 *             (reconnects) → the pair status badge, book (LiveBook, by seq and checksum: a
 *             mismatch re-reads the REST book and says so under the book), trades, 24 h tickers; candles from the REST chart plus the live
 *             trades; a second stream `bbo:P` → the best bid and offer line (its own connection,
 *             so a server without the channels of docs/API.md 12.5 still serves the rest)
 *   account   the pasted key (sessionStorage) → signed listen key → stream
 *             `user_orders:U,user_history:U&listenKey=K` → open orders, my trades; balances
 *             re-read (signed REST) after each of my events
 *   orders    the form's tabs (Limit, Market, Stop with its trailing option, OCO) sign create-order
 *             or create-oco with WebCrypto HMAC; cancel buttons sign cancel-order. A trailing stop's
 *             moves are not streamed (docs/API.md 18): a trade on the pair re-reads its open orders
 *
 * Numbers are shown as the server sent them (their JSON text is exact); what the page computes
 * from money (the order total, the spread, the 24 h change) is exact decimal arithmetic
 * (./decimal.ts); floats are used only to size depth bars and draw the chart.
 */
import {
  CandlestickSeries,
  ColorType,
  createChart,
  type IChartApi,
  type ISeriesApi,
  type UTCTimestamp,
} from "lightweight-charts";
import { LiveBook, type ResyncReason } from "../../src/client/local-book.ts";
import {
  type Balance,
  type Bbo,
  type Book,
  type Candle,
  errorText,
  getPublic,
  getSigned,
  isOpen,
  type Key,
  type Order,
  type PairInfo,
  type PairStatusUpdate,
  type PublicTrade,
  postSigned,
  streamUrl,
  type Ticker,
  type UserTrade,
} from "./api.ts";
import { formatDecimal, multiply, parseDecimal, percentChange, subtract } from "./decimal.ts";
import "./style.css";

/** What the page uses of a pair's `/info` entry (decimals -1: unknown, without `/info`). */
type PairView = Pick<PairInfo, "name" | "base" | "quote" | "priceDecimals" | "amountDecimals"> &
  Partial<Pick<PairInfo, "status">>;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const KEY_STORAGE = "exchange.apiKey";
const THEME_STORAGE = "exchange.theme";
const LISTEN_KEY_RENEW_MS = 30 * 60 * 1000;
const RECONNECT_MS = 1500;
const MAX_ROWS = 100;
const BOOK_ROWS = 14;
/** A failed REST read of the book during a resync is retried after this pause. */
const BOOK_RETRY_MS = 500;

const state = {
  pairs: [] as PairView[],
  pair: null as PairView | null,
  period: "1m",
  tickers: new Map<string, Ticker>(),
  trades: [] as PublicTrade[],
  key: null as Key | null,
  openOrders: new Map<number, Order>(),
  myTrades: [] as UserTrade[],
  balances: [] as Balance[],
};

// ---------------------------------------------------------------- formatting

/**
 * A server number with the pair's decimals (the value already has at most that many, so toFixed
 * only pads). With unknown decimals (-1, no /info): the number's own exact text, without exponent.
 */
function fmt(value: number, decimals: number): string {
  if (decimals >= 0) return value.toFixed(decimals);
  const s = String(value);
  const m = /^-?(\d)(?:\.(\d+))?e-(\d+)$/.exec(s);
  if (m === null) return s;
  return value.toFixed(Math.min(100, (m[2]?.length ?? 0) + Number(m[3])));
}

/** Running totals of decimal amounts, added exactly (as scaled BigInts), as decimal text. */
function runningTotals(amounts: number[], decimals: number): string[] {
  const texts = amounts.map((a) => fmt(a, decimals));
  const scale = Math.max(0, ...texts.map((t) => (t.includes(".") ? t.length - t.indexOf(".") - 1 : 0)));
  let total = 0n;
  return texts.map((t) => {
    const [int, frac = ""] = t.split(".");
    total += BigInt(int + frac.padEnd(scale, "0"));
    const digits = total.toString().padStart(scale + 1, "0");
    return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  });
}

function el(tag: string, text: string, cls?: string): HTMLElement {
  const e = document.createElement(tag);
  e.textContent = text;
  if (cls !== undefined) e.className = cls;
  return e;
}

function row(cells: (string | HTMLElement)[], cls?: string): HTMLTableRowElement {
  const tr = document.createElement("tr");
  if (cls !== undefined) tr.className = cls;
  for (const c of cells) {
    const td = document.createElement("td");
    if (typeof c === "string") td.textContent = c;
    else td.append(c);
    tr.append(td);
  }
  return tr;
}

function pairInfo(name: string): PairView {
  const known = state.pairs.find((p) => p.name === name);
  if (known !== undefined) return known;
  const [base, quote] = name.split("_");
  return { name, base, quote, priceDecimals: -1, amountDecimals: -1 };
}

// ---------------------------------------------------------------- theme

function applyTheme(theme: string): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(THEME_STORAGE, theme);
  chart?.applyOptions(chartColors());
  renderBook();
}

// ---------------------------------------------------------------- chart

let chart: IChartApi | null = null;
let candles: ISeriesApi<"Candlestick"> | null = null;
let lastBar: { time: number; open: number; high: number; low: number; close: number } | null = null;
let candleCount = 0;

function chartColors() {
  const css = getComputedStyle(document.documentElement);
  return {
    layout: {
      background: { type: ColorType.Solid, color: css.getPropertyValue("--panel").trim() },
      textColor: css.getPropertyValue("--text").trim(),
    },
    grid: {
      vertLines: { color: css.getPropertyValue("--grid").trim() },
      horzLines: { color: css.getPropertyValue("--grid").trim() },
    },
  };
}

function initChart(): void {
  const box = $("chart");
  // The newest bar sits a few bars in from the price scale, so its time label ("11:05") is drawn
  // whole instead of cut at the pane's edge ("11:").
  chart = createChart(box, {
    autoSize: true,
    timeScale: { timeVisible: true, secondsVisible: false, rightOffset: 6 },
    ...chartColors(),
  });
  candles = chart.addSeries(CandlestickSeries, {
    upColor: "#26a69a",
    downColor: "#ef5350",
    borderVisible: false,
    wickUpColor: "#26a69a",
    wickDownColor: "#ef5350",
  });
}

/** Seconds per chart period; a Map, since the period is the select's value (page text, not code). */
const PERIOD_SECONDS: ReadonlyMap<string, number> = new Map([
  ["1m", 60],
  ["5m", 300],
  ["15m", 900],
  ["30m", 1800],
  ["1h", 3600],
  ["2h", 7200],
  ["4h", 14400],
  ["6h", 21600],
  ["12h", 43200],
  ["1d", 86400],
  ["1w", 604800],
]);
/** 1970-01-05 was the first Monday: weeks start there (docs/API.md 7.5). */
const FIRST_MONDAY = 4 * 86400;

function bucketOf(seconds: number, period: string): number {
  const len = PERIOD_SECONDS.get(period) ?? 60;
  if (period === "1w") return Math.floor((seconds - FIRST_MONDAY) / len) * len + FIRST_MONDAY;
  return Math.floor(seconds / len) * len;
}

function showCandleState(): void {
  const box = $("chart");
  box.dataset.candles = String(candleCount);
  box.dataset.lastClose = lastBar === null ? "" : String(lastBar.close);
}

async function loadCandles(): Promise<void> {
  const pair = state.pair;
  if (pair === null || candles === null) return;
  const period = state.period;
  const res = await getPublic<Candle[]>(`/trade/pairs/${pair.name}/chart/${period}?limit=500`);
  if (res.status !== 200 || state.pair !== pair || state.period !== period) return;
  const bars = res.body.map(([ms, open, low, high, close]) => ({
    time: (ms / 1000) as UTCTimestamp,
    open,
    high,
    low,
    close,
  }));
  candles.setData(bars);
  candleCount = bars.length;
  lastBar = bars.length > 0 ? { ...bars[bars.length - 1] } : null;
  chart?.timeScale().scrollToRealTime();
  showCandleState();
}

/** A live trade moves the last candle or opens the next one. */
function candleTrade(t: PublicTrade): void {
  if (candles === null) return;
  const time = bucketOf(t.tradeTime, state.period);
  if (lastBar !== null && time < lastBar.time) return;
  if (lastBar === null || time > lastBar.time) {
    lastBar = { time, open: t.price, high: t.price, low: t.price, close: t.price };
    candleCount++;
  } else {
    lastBar.high = Math.max(lastBar.high, t.price);
    lastBar.low = Math.min(lastBar.low, t.price);
    lastBar.close = t.price;
  }
  candles.update({ ...lastBar, time: lastBar.time as UTCTimestamp });
  showCandleState();
}

// ---------------------------------------------------------------- market stream

let book: LiveBook | null = null;
/** eventTimeMicro of the newest trade in the REST history read (null before it). */
let newestMicro: bigint | null = null;
let marketWs: WebSocket | null = null;
let marketGen = 0;
let bboWs: WebSocket | null = null;
/** After this many failed `bbo:` connections in a row the page stops trying (an older server). */
const BBO_TRIES = 5;

/** The best bid and offer line (docs/API.md 7.6.1); "—" for an empty side. */
function renderBbo(bbo: Bbo | null): void {
  const p = state.pair;
  const line = $("bbo");
  if (bbo === null || p === null) {
    line.textContent = "";
    delete line.dataset.seq;
    return;
  }
  const side = (price: number, amount: number) =>
    price === 0 ? "—" : `${fmt(price, p.priceDecimals)} × ${fmt(amount, p.amountDecimals)}`;
  line.textContent = `BBO bid ${side(bbo.bid, bbo.bidAmount)} · ask ${side(bbo.ask, bbo.askAmount)}`;
  line.dataset.bid = String(bbo.bid);
  line.dataset.ask = String(bbo.ask);
  line.dataset.seq = String(bbo.seq);
}

/** Says under the book that it was re-read from the server, and why. */
function bookResynced(reason: ResyncReason, seq: number | null): void {
  const note = $("book-note");
  const at = new Date().toISOString().slice(11, 19);
  note.textContent =
    reason === "checksum"
      ? `Book checksum mismatch after seq ${seq ?? "?"}: re-read from the server (${at} UTC)`
      : `Book message missed after seq ${seq ?? "?"}: re-read from the server (${at} UTC)`;
  note.dataset.reason = reason;
  note.hidden = false;
}

function connectBbo(gen: number, pairName: string, failures = 0): void {
  bboWs?.close();
  let opened = false;
  const ws = new WebSocket(streamUrl([`bbo:${pairName}`]));
  bboWs = ws;
  ws.onopen = () => {
    opened = true;
  };
  ws.onmessage = (ev) => {
    if (gen !== marketGen) return;
    const msg = JSON.parse(String(ev.data)) as { stream: string; data: Bbo };
    renderBbo(msg.data);
  };
  ws.onclose = () => {
    if (gen !== marketGen) return;
    const next = opened ? 0 : failures + 1;
    if (next >= BBO_TRIES) return;
    setTimeout(() => {
      if (gen === marketGen) connectBbo(gen, pairName, next);
    }, RECONNECT_MS);
  };
}

function renderBook(): void {
  const pair = state.pair;
  if (book === null || pair === null) return;
  const p: PairView = pair;
  const asks = book.levels("sell").slice(0, BOOK_ROWS);
  const bids = book.levels("buy").slice(0, BOOK_ROWS);
  // Depth: each row's bar is the cumulative amount from the best price, against the deeper side.
  const cum = (levels: [number, number][]) => {
    let total = 0;
    return levels.map(([, a]) => {
      total += a;
      return total;
    });
  };
  const askCum = cum(asks);
  const bidCum = cum(bids);
  const max = Math.max(askCum[askCum.length - 1] ?? 0, bidCum[bidCum.length - 1] ?? 0, 1e-18);
  const rows = (levels: [number, number][], totals: number[], cls: string) => {
    const exact = runningTotals(
      levels.map(([, a]) => a),
      p.amountDecimals,
    );
    return levels.map(([price, amount], i) => {
      const div = document.createElement("div");
      div.className = `level ${cls}`;
      div.dataset.price = String(price);
      div.dataset.amount = String(amount);
      div.style.setProperty("--depth", `${((totals[i] / max) * 100).toFixed(2)}%`);
      div.append(
        el("span", fmt(price, p.priceDecimals), "price"),
        el("span", fmt(amount, p.amountDecimals)),
        el("span", exact[i]),
      );
      div.addEventListener("click", () => {
        ($("order-form").querySelector("[name=price]") as HTMLInputElement).value = fmt(
          price,
          p.priceDecimals,
        );
        renderOrderInfo();
      });
      return div;
    });
  };
  $("asks").replaceChildren(...rows(asks, askCum, "ask").reverse());
  $("bids").replaceChildren(...rows(bids, bidCum, "bid"));
  // The best bid and ask are on the BBO line below; this line says how far apart they are.
  const bestAsk = asks[0]?.[0];
  const bestBid = bids[0]?.[0];
  const ask = bestAsk === undefined ? null : parseDecimal(fmt(bestAsk, pair.priceDecimals));
  const bid = bestBid === undefined ? null : parseDecimal(fmt(bestBid, pair.priceDecimals));
  $("spread").textContent =
    ask !== null && bid !== null
      ? `Spread ${formatDecimal(subtract(ask, bid), Math.max(0, pair.priceDecimals))}`
      : "Spread —";
  $("asks").parentElement!.dataset.seq = book.seq === null ? "" : String(book.seq);
  drawDepth(book.levels("buy").slice(0, DEPTH_LEVELS), book.levels("sell").slice(0, DEPTH_LEVELS));
}

const DEPTH_LEVELS = 50;

/** Cumulative amount against price, bids left and asks right of the spread (drawing only). */
function drawDepth(bids: [number, number][], asks: [number, number][]): void {
  const canvas = $("depth") as HTMLCanvasElement;
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const h = canvas.clientHeight;
  if (w === 0 || h === 0) return;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  const g = canvas.getContext("2d");
  if (g === null) return;
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  if (bids.length === 0 && asks.length === 0) return;
  const prices = [...bids, ...asks].map(([p]) => p);
  // Each side runs on to its edge at its full depth, so a single level still shows as an area.
  const pad = Math.max((Math.max(...prices) - Math.min(...prices)) * 0.08, Math.max(...prices) * 0.0005);
  const lo = Math.min(...prices) - pad;
  const hi = Math.max(...prices) + pad;
  const span = hi - lo || 1;
  const steps = (levels: [number, number][]) => {
    let total = 0;
    return levels.map(([p, a]) => {
      total += a;
      return [p, total] as const;
    });
  };
  const bidSteps = steps(bids);
  const askSteps = steps(asks);
  const top = Math.max(bidSteps.at(-1)?.[1] ?? 0, askSteps.at(-1)?.[1] ?? 0) || 1;
  const x = (p: number) => 4 + ((p - lo) / span) * (w - 8);
  const y = (v: number) => h - 2 - (v / top) * (h - 6);
  const css = getComputedStyle(document.documentElement);
  const area = (s: readonly (readonly [number, number])[], edge: number, color: string, fill: string) => {
    if (s.length === 0) return;
    g.beginPath();
    g.moveTo(x(s[0][0]), h);
    let prev = y(0);
    for (const [p, v] of s) {
      g.lineTo(x(p), prev);
      prev = y(v);
      g.lineTo(x(p), prev);
    }
    g.lineTo(x(edge), prev);
    g.lineTo(x(edge), h);
    g.closePath();
    g.fillStyle = fill;
    g.fill();
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.stroke();
  };
  area(bidSteps, lo, css.getPropertyValue("--buy").trim(), css.getPropertyValue("--buy-bg").trim());
  area(askSteps, hi, css.getPropertyValue("--sell").trim(), css.getPropertyValue("--sell-bg").trim());
}

function renderTrades(): void {
  const pair = state.pair;
  if (pair === null) return;
  const rows = state.trades.slice(0, MAX_ROWS).map((t) => {
    const div = document.createElement("div");
    div.className = `row ${t.directionType}`;
    div.append(
      el("span", fmt(t.price, pair.priceDecimals), "price"),
      el("span", fmt(t.amount, pair.amountDecimals)),
      el("span", new Date(t.tradeTime * 1000).toLocaleTimeString([], { hour12: false })),
    );
    return div;
  });
  $("trades").replaceChildren(...rows);
}

function renderTickers(): void {
  const body = $("tickers");
  const rows: HTMLTableRowElement[] = [];
  for (const p of state.pairs) {
    const t = state.tickers.get(p.name);
    if (t === undefined) continue;
    const change = changeText(t, p);
    const tr = row(
      [p.name.replace("_", "/").toUpperCase(), lastText(t, p), change, fmt(t.volume, p.amountDecimals)],
      p.name === state.pair?.name ? "selected" : undefined,
    );
    tr.dataset.pair = p.name;
    tr.children[2].className = change === "-" ? "" : change.startsWith("+") ? "up" : "down";
    tr.addEventListener("click", () => selectPair(p.name));
    rows.push(tr);
  }
  body.replaceChildren(...rows);
  const p = state.pair;
  const cur = p === null ? undefined : state.tickers.get(p.name);
  $("ticker").textContent =
    cur === undefined || p === null
      ? ""
      : neverTraded(cur)
        ? "last - · no trades yet"
        : `last ${fmt(cur.closeValue, p.priceDecimals)} · 24h high ${fmt(cur.maxValue, p.priceDecimals)} · low ${fmt(cur.minValue, p.priceDecimals)} · vol ${fmt(cur.volume, p.amountDecimals)}`;
}

/**
 * A pair that never traded has no last price: its record says 0 (prices are always above 0), and
 * the page shows "-" for its price and change rather than a price of 0.
 */
function neverTraded(t: Ticker): boolean {
  return t.closeValue === 0;
}

function lastText(t: Ticker, p: PairView): string {
  return neverTraded(t) ? "-" : fmt(t.closeValue, p.priceDecimals);
}

/** The 24 h change in percent, exact from the decimal texts ("-" when there is no price). */
function changeText(t: Ticker, p: PairView): string {
  const open = parseDecimal(fmt(t.openValue, p.priceDecimals));
  const close = parseDecimal(fmt(t.closeValue, p.priceDecimals));
  if (neverTraded(t) || open === null || close === null) return "-";
  return percentChange(open, close) ?? "-";
}

function connectMarket(): void {
  const pair = state.pair;
  if (pair === null) return;
  const gen = ++marketGen;
  marketWs?.close();
  book = new LiveBook(
    async () => {
      const r = await getPublic<Book>(`/trade/pairs/${pair.name}/orders`);
      if (r.status !== 200) throw new Error(`book ${r.status}`);
      return r.body;
    },
    renderBook,
    {
      retryDelayMs: BOOK_RETRY_MS,
      onResync: (reason) => {
        if (gen === marketGen) bookResynced(reason, book?.seq ?? null);
      },
    },
  );
  $("book-note").hidden = true;
  renderBbo(null);
  connectBbo(gen, pair.name);
  const ws = new WebSocket(streamUrl(["exchanges", "status", `orders:${pair.name}`, `history:${pair.name}`]));
  marketWs = ws;
  const conn = $("conn");
  ws.onopen = () => {
    conn.className = "conn up";
    conn.title = "Market stream connected";
  };
  ws.onmessage = (ev) => {
    if (gen !== marketGen) return;
    const msg = JSON.parse(String(ev.data)) as { stream: string; data: unknown };
    if (msg.stream === "exchanges") {
      for (const t of msg.data as Ticker[]) state.tickers.set(t.pairName, t);
      renderTickers();
    } else if (msg.stream === "status") {
      // Every pair's status on connect, then each change (docs/API.md 12.2): the badge follows it.
      const data = msg.data as PairStatusUpdate[] | PairStatusUpdate;
      for (const u of Array.isArray(data) ? data : [data]) {
        const p = state.pairs.find((x) => x.name === u.pairName);
        if (p !== undefined) p.status = u.status;
      }
      if (state.pair !== null) showPairStatus(state.pair);
    } else if (msg.stream.startsWith("orders:")) {
      book?.receive(msg.data as Book);
    } else if (msg.stream.startsWith("history:")) {
      const trades = msg.data as PublicTrade[];
      for (const t of trades) {
        // A trade the REST history already showed (read after subscribing) is not added twice.
        if (newestMicro !== null && t.eventTimeMicro !== undefined && BigInt(t.eventTimeMicro) <= newestMicro)
          continue;
        state.trades.unshift(t);
        candleTrade(t);
      }
      state.trades.length = Math.min(state.trades.length, MAX_ROWS);
      renderTrades();
      if (trades.length > 0) trailingSoon(pair.name);
    }
  };
  ws.onclose = () => {
    if (gen !== marketGen) return;
    conn.className = "conn down";
    conn.title = "Market stream disconnected; reconnecting";
    // A new connection brings a new snapshot; trades and candles are reloaded to fill the gap.
    setTimeout(() => {
      if (gen === marketGen) void loadMarket();
    }, RECONNECT_MS);
  };
}

async function loadMarket(): Promise<void> {
  const pair = state.pair;
  if (pair === null) return;
  connectMarket();
  const hist = await getPublic<PublicTrade[]>(`/trade/pairs/${pair.name}/history`);
  if (hist.status === 200 && state.pair === pair) {
    // Trades the stream delivered while the history was read are in it, or newer than it.
    const newest = hist.body[0]?.eventTimeMicro;
    const later = state.trades.filter(
      (t) =>
        newest === undefined || t.eventTimeMicro === undefined || BigInt(t.eventTimeMicro) > BigInt(newest),
    );
    state.trades = [...later, ...hist.body].slice(0, MAX_ROWS);
    if (newest !== undefined && (newestMicro === null || BigInt(newest) > newestMicro))
      newestMicro = BigInt(newest);
    renderTrades();
  }
  await loadCandles();
}

function selectPair(name: string): void {
  const next = state.pairs.find((p) => p.name === name);
  if (next === undefined || next === state.pair) return;
  state.pair = next;
  ($("pair") as HTMLSelectElement).value = name;
  showPairStatus(next);
  syncForm();
  location.hash = name;
  state.trades = [];
  newestMicro = null;
  renderTrades();
  renderTickers();
  void loadMarket();
  void loadBalances();
  void loadMmp();
  renderOpenOrders();
  // Its trailing stops may have moved while another pair was on screen.
  trailingSoon(name);
}

/**
 * A pair that is not trading says so beside its name (docs/API.md 11): from `/info` at load, then
 * live from the `status` channel.
 */
function showPairStatus(pair: PairView): void {
  const el = $("pair-status");
  const status = pair.status ?? "trading";
  el.hidden = status === "trading";
  el.textContent = status === "halted" ? "Halted" : status === "cancelOnly" ? "Cancel only" : "";
  el.dataset.status = status;
}

// ---------------------------------------------------------------- market maker protection

/** docs/API.md 8.10 `GET /trade/mmp` (the fields the banner needs). */
interface MmpState {
  pairName: string;
  frozen: boolean;
  frozenUntil: number;
}

let mmpTimer: ReturnType<typeof setTimeout> | null = null;
let mmpGen = 0;

/**
 * Reads the caller's MMP state of the selected pair and shows the frozen banner: on a key, on a
 * pair change and after an order refused with MMP_FROZEN. A server without the call (404) or a
 * failed read shows no banner.
 */
async function loadMmp(): Promise<void> {
  const gen = ++mmpGen;
  if (mmpTimer !== null) clearTimeout(mmpTimer);
  mmpTimer = null;
  const key = state.key;
  const pair = state.pair;
  if (key === null || pair === null) return showMmp(null);
  const res = await getSigned<MmpState>(key, "/trade/mmp", `pairName=${encodeURIComponent(pair.name)}`).catch(
    () => null,
  );
  if (gen !== mmpGen) return;
  showMmp(res !== null && res.status === 200 ? res.body : null);
}

/** An MMP state of the selected pair (a read, or a stream's `mmp` event) on the banner. */
function showMmp(m: MmpState | null): void {
  const banner = $("mmp-banner");
  const now = Date.now();
  const frozen = m?.frozen === true && (m.frozenUntil === 0 || m.frozenUntil > now);
  banner.hidden = !frozen;
  document.body.dataset.mmp = frozen ? "frozen" : "";
  if (!frozen) return;
  banner.textContent =
    m.frozenUntil === 0
      ? "Market maker protection froze your quotes on this pair until a reset"
      : `Market maker protection froze your quotes on this pair until ${new Date(m.frozenUntil).toLocaleTimeString()}`;
  // Read again when the freeze ends.
  if (m.frozenUntil > 0) mmpTimer = setTimeout(() => void loadMmp(), m.frozenUntil - now + 100);
}

/** Whether an error body carries the code MMP_FROZEN. */
function isMmpFrozen(body: unknown): boolean {
  const codes = (body as { codes?: Record<string, string[]> } | null)?.codes;
  return codes !== undefined && Object.values(codes).some((c) => c.includes("MMP_FROZEN"));
}

// ---------------------------------------------------------------- account

let userWs: WebSocket | null = null;
let userGen = 0;
let listenKey: string | null = null;
let renewTimer: ReturnType<typeof setInterval> | null = null;

function keyStatus(text: string, bad = false): void {
  const s = $("key-status");
  s.textContent = text;
  s.className = bad ? "status bad" : "status";
}

function readKeyForm(): Key | null {
  const form = $("key-form") as HTMLFormElement;
  const get = (n: string) => (form.elements.namedItem(n) as HTMLInputElement).value.trim();
  const key = { uid: get("uid"), apiToken: get("apiToken"), secretKey: get("secretKey") };
  return key.uid !== "" && key.apiToken !== "" && key.secretKey !== "" ? key : null;
}

function fillKeyForm(key: Partial<Key>): void {
  const form = $("key-form") as HTMLFormElement;
  for (const n of ["uid", "apiToken", "secretKey"] as const) {
    const v = key[n];
    if (typeof v === "string") (form.elements.namedItem(n) as HTMLInputElement).value = v;
  }
}

async function useKey(key: Key): Promise<void> {
  // The key is checked with a signed read before it is kept.
  state.key = key;
  const check = await loadBalances();
  if (!check) {
    state.key = null;
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, JSON.stringify(key));
  keyStatus(`Using key ${key.apiToken.slice(0, 6)}… for ${key.uid}`);
  document.body.classList.add("signed-in");
  void loadMmp();
  // The stream first, then the REST reads (on open): nothing that happens in between is missed.
  await connectUser();
}

function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  const key = state.key;
  state.key = null;
  userGen++;
  userWs?.close();
  userWs = null;
  if (renewTimer !== null) clearInterval(renewTimer);
  if (key !== null && listenKey !== null) void postSigned(key, "/trade/listen-key/close", { listenKey });
  listenKey = null;
  state.openOrders.clear();
  state.myTrades = [];
  state.balances = [];
  fillKeyForm({ uid: "", apiToken: "", secretKey: "" });
  document.body.classList.remove("signed-in");
  renderOpenOrders();
  renderMyTrades();
  renderBalances();
  void loadMmp();
  keyStatus("Key forgotten");
}

/** Re-reads the balances of the selected pair; false (and a message) when the key is refused. */
async function loadBalances(): Promise<boolean> {
  const key = state.key;
  const pair = state.pair;
  if (key === null || pair === null) return false;
  const res = await getSigned<Balance[]>(key, `/trade/pairs/${pair.name}/user-balances`);
  if (res.status !== 200) {
    keyStatus(`Key refused: ${errorText(res.body)}`, true);
    return false;
  }
  if (state.key === key && state.pair === pair) {
    state.balances = res.body;
    renderBalances();
  }
  return true;
}

const trailingTimers = new Map<string, ReturnType<typeof setTimeout>>();
/**
 * A trade on a pair may move the stop price of my waiting trailing stops there, and such a move is
 * not streamed (docs/API.md 18: reads show the current value): shortly after a trade, the pair's
 * open orders are read again, once for a burst of trades.
 */
function trailingSoon(pairName: string): void {
  if (trailingTimers.has(pairName)) return;
  const trailing = [...state.openOrders.values()].some(
    (o) => o.pairName === pairName && o.trailingDelta !== undefined && o.triggered === false,
  );
  if (!trailing) return;
  trailingTimers.set(
    pairName,
    setTimeout(() => {
      trailingTimers.delete(pairName);
      void reloadWaiting(pairName);
    }, 150),
  );
}

/**
 * The current records of my open orders on a pair, for those the page shows: one whose change the
 * stream delivered while the read was under way (a higher execSeq) keeps the stream's record.
 */
async function reloadWaiting(pairName: string): Promise<void> {
  const key = state.key;
  if (key === null) return;
  const res = await getSigned<Order[]>(key, `/trade/pairs/${pairName}/open-orders`, "");
  if (res.status !== 200 || state.key !== key) return;
  for (const o of res.body) {
    const shown = state.openOrders.get(o.id);
    if (shown === undefined || o.execSeq < shown.execSeq) continue;
    state.openOrders.set(o.id, o);
    if (streamOrders.has(o.id)) streamOrders.set(o.id, o);
  }
  renderOpenOrders();
}

let balancesTimer: ReturnType<typeof setTimeout> | null = null;
/** Balances are not streamed: re-read them shortly after my orders or trades change. */
function balancesSoon(): void {
  if (balancesTimer !== null) return;
  balancesTimer = setTimeout(() => {
    balancesTimer = null;
    void loadBalances();
  }, 150);
}

/** Every order state the current user stream delivered, by id (merged into the REST read). */
const streamOrders = new Map<number, Order>();

async function loadMine(): Promise<void> {
  const key = state.key;
  if (key === null) return;
  // Every open order, pair by pair (GET /trade/pairs/{pair}/open-orders, docs/API.md 8.6).
  const perPair = await Promise.all(
    state.pairs.map((p) => getSigned<Order[]>(key, `/trade/pairs/${p.name}/open-orders`, "")),
  );
  if (perPair.every((r) => r.status === 200) && state.key === key) {
    // Merged with what the stream already said: the later state of an order wins.
    const progress = (o: Order) => (o.isCancelled ? Number.POSITIVE_INFINITY : o.amountUsed);
    const merged = new Map(streamOrders);
    for (const r of perPair) {
      for (const o of r.body) {
        const seen = merged.get(o.id);
        // At the same change (execSeq) the read is the later one: a trailing stop's current stop
        // price (docs/API.md 18: its moves are not streamed).
        if (
          seen === undefined ||
          progress(o) > progress(seen) ||
          (progress(o) === progress(seen) && o.execSeq >= seen.execSeq)
        )
          merged.set(o.id, o);
      }
    }
    state.openOrders.clear();
    for (const o of merged.values()) if (isOpen(o)) state.openOrders.set(o.id, o);
    renderOpenOrders();
  }
  const trades = await getSigned<{ items: UserTrade[] }>(
    key,
    "/trade/pairs/user-history",
    "page=1&pageSize=50",
  );
  if (trades.status === 200 && state.key === key) {
    const byId = new Map(trades.body.items.map((t) => [t.id, t]));
    for (const t of state.myTrades) byId.set(t.id, t);
    state.myTrades = [...byId.values()].sort((a, b) => b.id - a.id).slice(0, MAX_ROWS);
    renderMyTrades();
  }
}

async function connectUser(): Promise<void> {
  const key = state.key;
  if (key === null) return;
  const gen = ++userGen;
  const res = await postSigned<{ listenKey: string; expiresAt: number }>(key, "/trade/listen-key", {});
  if (res.status !== 200 || gen !== userGen) {
    if (res.status !== 200) keyStatus(`Listen key refused: ${errorText(res.body)}`, true);
    return;
  }
  listenKey = res.body.listenKey;
  if (renewTimer !== null) clearInterval(renewTimer);
  renewTimer = setInterval(() => {
    if (state.key !== null && listenKey !== null)
      void postSigned(state.key, "/trade/listen-key", { listenKey });
  }, LISTEN_KEY_RENEW_MS);
  userWs?.close();
  const ws = new WebSocket(streamUrl([`user_orders:${key.uid}`, `user_history:${key.uid}`], listenKey));
  userWs = ws;
  streamOrders.clear();
  ws.onopen = () => {
    document.body.dataset.userStream = "open";
    void loadMine();
  };
  ws.onmessage = (ev) => {
    if (gen !== userGen) return;
    const msg = JSON.parse(String(ev.data)) as { stream?: string; event?: string; data: unknown };
    if (msg.event === "mmp") {
      // A stream that tells the MMP state (docs/API.md 8.10's event) updates the banner at once.
      const m = msg.data as MmpState;
      if (m.pairName === state.pair?.name) showMmp(m);
      return;
    }
    if (msg.stream === undefined) return;
    if (msg.stream.startsWith("user_orders:")) {
      const o = msg.data as Order;
      streamOrders.set(o.id, o);
      if (isOpen(o)) state.openOrders.set(o.id, o);
      else state.openOrders.delete(o.id);
      renderOpenOrders();
    } else if (msg.stream.startsWith("user_history:")) {
      const t = msg.data as UserTrade;
      // The REST read may already hold it (it can land before or after the stream message).
      if (!state.myTrades.some((m) => m.id === t.id)) state.myTrades.unshift(t);
      state.myTrades.length = Math.min(state.myTrades.length, MAX_ROWS);
      renderMyTrades();
      // My trades on another pair than the one on screen move my trailing stops there too.
      trailingSoon(t.pairName);
    }
    balancesSoon();
  };
  ws.onclose = () => {
    if (gen !== userGen) return;
    document.body.dataset.userStream = "closed";
    // A new listen key and a fresh read cover whatever happened while disconnected.
    setTimeout(() => {
      if (gen !== userGen || state.key === null) return;
      void connectUser();
    }, RECONNECT_MS);
  };
}

function renderBalances(): void {
  $("balances").replaceChildren(
    ...state.balances.map((b) => {
      const tr = row([b.currency.toUpperCase(), b.balance, b.reserved ?? "0"]);
      tr.dataset.currency = b.currency;
      return tr;
    }),
  );
  renderOrderInfo();
}

function renderOpenOrders(): void {
  // Newest first, the two legs of an OCO together (the limit leg, whose id is the ocoId, first).
  const group = (o: Order) => ocoOf(o) ?? o.id;
  const orders = [...state.openOrders.values()].sort((a, b) => group(b) - group(a) || a.id - b.id);
  $("open-orders").replaceChildren(
    ...orders.map((o) => {
      const p = pairInfo(o.pairName);
      const cancel = el("button", "Cancel", "cancel");
      cancel.setAttribute("type", "button");
      cancel.addEventListener("click", () => void cancelOrder(o.id, cancel as HTMLButtonElement));
      const tr = row(
        [
          String(o.id),
          o.pairName,
          o.directionType,
          orderType(o, p),
          fmt(o.price, p.priceDecimals),
          fmt(o.amount, p.amountDecimals),
          filledCell(o, p),
          o.createTime,
          cancel,
        ],
        o.directionType,
      );
      tr.dataset.orderId = String(o.id);
      const oco = ocoOf(o);
      if (oco !== undefined) {
        tr.classList.add("oco");
        tr.dataset.ocoId = String(oco);
      }
      return tr;
    }),
  );
}

/** docs/API.md 18: the OCO an order is a leg of (the id of its limit leg). */
function ocoOf(o: Order): number | undefined {
  return (o as Order & { ocoId?: number }).ocoId;
}

/**
 * The filled cell of an open order: the amount, and once something executed, what it executed in
 * the quote currency (docs/API.md 5.1 `executedQuote`) as its title.
 */
function filledCell(o: Order, p: PairView): HTMLElement {
  const cell = el("span", fmt(o.amountUsed, p.amountDecimals));
  if (o.amountUsed > 0) cell.title = `Executed ${executedText(o, p)}`;
  return cell;
}

/** `executedQuote` with its currency, as the server wrote it (`7500.002 USDT`). */
function executedText(o: Order, p: PairView): string {
  return `${fmt(o.executedQuote, -1)} ${p.quote.toUpperCase()}`;
}

/**
 * The type cell of an open order: a quote order (docs/API.md 8.12) and a protected one (8.10) carry a
 * marker, with a title saying what it means.
 */
function orderType(o: Order, p: PairView): HTMLElement {
  const cell = el("span", o.tradeType);
  const marks = o as Order & { quote?: true; mmp?: true };
  if (marks.quote === true)
    cell.append(" ", badge("Q", "quote", "Placed by a mass quote (replaced by the next quote)"));
  if (marks.mmp === true) cell.append(" ", badge("MMP", "mmp", "Protected by market maker protection"));
  // docs/API.md 18: a stop order waits outside the book until a trade reaches its stop price; a
  // trailing one's stop price is the current one (none before the pair's first trade).
  if (o.stopDirection !== undefined) {
    const stop = o.stopPrice === undefined ? "-" : fmt(o.stopPrice, p.priceDecimals);
    const when = `${o.stopDirection === "up" ? "at or above" : "at or below"} ${stop}`;
    cell.append(
      " ",
      o.triggered === true
        ? badge("STOP", "stop triggered", `Triggered by a trade ${when}`)
        : badge(
            `STOP ${o.stopDirection === "up" ? "≥" : "≤"} ${stop}`,
            "stop",
            o.stopPrice === undefined
              ? "Waits for the pair's first trade, from which its stop price starts"
              : `Waits for a trade ${when}`,
          ),
    );
    if (o.trailingDelta !== undefined && o.triggered !== true) {
      const delta = fmt(o.trailingDelta, p.priceDecimals);
      cell.append(
        " ",
        badge(
          `TRAIL ${delta}`,
          "trail",
          `Trailing: the stop price is the ${o.stopDirection === "up" ? "lowest trade price plus" : "highest trade price minus"} ${delta}`,
        ),
      );
    }
  }
  const oco = ocoOf(o);
  if (oco !== undefined) {
    const other = [...state.openOrders.values()].find((x) => x.id !== o.id && ocoOf(x) === oco);
    cell.append(
      " ",
      badge(
        `OCO ${oco}`,
        "oco",
        `One cancels the other${other === undefined ? "" : `: with order ${other.id}`}; cancelling either cancels both`,
      ),
    );
  }
  return cell;
}

function badge(text: string, kind: string, title: string): HTMLElement {
  const b = el("span", text, `badge ${kind}`);
  b.title = title;
  return b;
}

function renderMyTrades(): void {
  $("my-trades").replaceChildren(
    ...state.myTrades.map((t) => {
      const p = pairInfo(t.pairName);
      const tr = row(
        [
          String(t.id),
          t.pairName,
          t.directionType,
          fmt(t.price, p.priceDecimals),
          fmt(t.amount, p.amountDecimals),
          t.tradeTime,
        ],
        t.directionType,
      );
      tr.dataset.tradeId = String(t.id);
      return tr;
    }),
  );
}

// ---------------------------------------------------------------- orders

function orderStatus(text: string, bad = false): void {
  const s = $("order-status");
  s.textContent = text;
  s.className = bad ? "status bad" : "status";
  // A long answer can reach below the form's panel: the panel (not the window, which may show the
  // open orders whose button said this) scrolls it into sight.
  const panel = s.closest<HTMLElement>(".panel");
  if (panel !== null) {
    const below = s.getBoundingClientRect().bottom - panel.getBoundingClientRect().bottom;
    if (below > 0) panel.scrollTop += below + 8;
  }
}

async function cancelOrder(id: number, button: HTMLButtonElement): Promise<void> {
  if (state.key === null) return;
  button.disabled = true;
  const res = await postSigned(state.key, "/trade/cancel-order", { orderId: id });
  if (res.status === 200) {
    orderStatus(`Order ${id} cancelled`);
    state.openOrders.delete(id);
    renderOpenOrders();
    balancesSoon();
  } else {
    button.disabled = false;
    orderStatus(`Cancel ${id}: ${errorText(res.body)}`, true);
  }
}

/** The order form's tabs, in their order on the page. */
type FormTab = "limit" | "market" | "stop" | "oco";
const FORM_TABS: readonly FormTab[] = ["limit", "market", "stop", "oco"];

/**
 * What the form places: the tab (`limit`, `market`, `stop`: a limit or market order that waits
 * until a trade on the pair reaches its stop price, docs/API.md 18, with a fixed stop price or a
 * trailing delta; `oco`: a limit order and a stop, one cancelling the other), and whether the order
 * has no price (a market order, or a stop that becomes one).
 */
function formType(form: HTMLFormElement): {
  tab: FormTab;
  market: boolean;
  stop: boolean;
  trailing: boolean;
} {
  const f = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const tab = (FORM_TABS as readonly string[]).includes(f("type").value)
    ? (f("type").value as FormTab)
    : "limit";
  const stop = tab === "stop";
  const stopMarket = stop && (f("stopType") as unknown as HTMLSelectElement).value === "market";
  return { tab, market: tab === "market" || stopMarket, stop, trailing: stop && f("trailing").checked };
}

/** Shows the fields of a tab (a click on it, or the arrow keys along the tab list). */
function selectTab(tab: FormTab, focus = false): void {
  const form = $("order-form") as HTMLFormElement;
  (form.elements.namedItem("type") as HTMLInputElement).value = tab;
  for (const b of form.querySelectorAll<HTMLButtonElement>(".tabs [role=tab]")) {
    const chosen = b.dataset.type === tab;
    b.setAttribute("aria-selected", String(chosen));
    b.tabIndex = chosen ? 0 : -1;
    if (chosen && focus) b.focus();
  }
  syncForm();
}

function syncForm(): void {
  const form = $("order-form") as HTMLFormElement;
  const f = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const { tab, market, stop, trailing } = formType(form);
  const oco = tab === "oco";
  const side = (form.querySelector("[name=side]:checked") as HTMLInputElement).value;
  form.classList.toggle("market", market);
  form.classList.toggle("stop", stop);
  form.classList.toggle("trailing", trailing);
  form.classList.toggle("oco", oco);
  f("price").disabled = market;
  $("price-name").textContent = oco ? "Limit price" : "Price";
  f("stopPrice").disabled = !(oco || (stop && !trailing));
  f("trailingDelta").disabled = !trailing;
  f("stopLimitPrice").disabled = !oco;
  (f("stopDirection") as unknown as HTMLSelectElement).disabled = !stop;
  // A stop order cannot be post-only (docs/API.md 18); an OCO's limit order always is.
  if (stop) f("postOnly").checked = false;
  f("postOnly").disabled = market || stop || oco || f("ioc").checked;
  f("ioc").disabled = market || oco || f("postOnly").checked;
  const btn = $("submit");
  btn.textContent = `${side === "buy" ? "Buy" : "Sell"} ${state.pair?.base.toUpperCase() ?? ""}${oco ? " (OCO)" : ""}`;
  btn.className = side;
  renderOrderInfo();
}

/**
 * Under the amount: the order's total, price × amount exactly (./decimal.ts), in the quote
 * currency, and the available balance of the currency the order spends (the quote for a buy, the
 * base for a sell). "-" where there is nothing to show: no price (a market order) or no valid
 * number yet, no key.
 */
function renderOrderInfo(): void {
  const pair = state.pair;
  const form = $("order-form") as HTMLFormElement;
  const f = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const { market } = formType(form);
  const buy = (form.querySelector("[name=side]:checked") as HTMLInputElement).value === "buy";
  const total = $("order-total");
  const available = $("order-available");
  if (pair === null) {
    total.textContent = "-";
    available.textContent = "-";
    return;
  }
  const price = parseDecimal(f("price").value);
  const amount = parseDecimal(f("amount").value);
  total.textContent =
    market || price === null || amount === null
      ? "-"
      : `${formatDecimal(multiply(price, amount), Math.max(0, pair.priceDecimals))} ${pair.quote.toUpperCase()}`;
  const spends = buy ? pair.quote : pair.base;
  const balance = state.key === null ? undefined : state.balances.find((b) => b.currency === spends);
  available.textContent = balance === undefined ? "-" : `${balance.balance} ${spends.toUpperCase()}`;
  available.dataset.currency = spends;
}

async function submitOrder(ev: SubmitEvent): Promise<void> {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const pair = state.pair;
  if (pair === null) return;
  if (state.key === null) {
    orderStatus("Paste an API key first (right panel)", true);
    return;
  }
  const f = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const { tab, market, stop, trailing } = formType(form);
  const directionType = (form.querySelector("[name=side]:checked") as HTMLInputElement).value;
  const btn = $("submit") as HTMLButtonElement;
  btn.disabled = true;
  try {
    if (tab === "oco") await submitOco(pair, directionType, f);
    else {
      const body: Record<string, unknown> = {
        pairName: pair.name,
        tradeType: market ? "market" : "limit",
        directionType,
        amount: f("amount").value.trim(),
      };
      if (!market) {
        body.price = f("price").value.trim();
        // Sent only when chosen, so a server without them sees exactly the old request (docs/API.md 8).
        if (f("postOnly").checked && !stop) body.postOnly = true;
        if (f("ioc").checked) body.timeInForce = "IOC";
      }
      if (stop) {
        // docs/API.md 18: a fixed stop price, or a trailing delta the stop price follows the trades at.
        if (trailing) body.trailingDelta = f("trailingDelta").value.trim();
        else body.stopPrice = f("stopPrice").value.trim();
        body.stopDirection = (f("stopDirection") as unknown as HTMLSelectElement).value;
      }
      const res = await postSigned<Order>(state.key, "/trade/create-order", body);
      if (res.status === 200) {
        const o = res.body;
        const executed = o.amountUsed > 0 ? ` for ${executedText(o, pairInfo(o.pairName))}` : "";
        orderStatus(
          o.triggered === false
            ? `Order ${o.id}: ${o.directionType} ${o.amount} @ ${o.tradeType === "market" ? "market" : o.price}, waiting for a trade ${waitText(o)}`
            : `Order ${o.id}: ${o.directionType} ${o.amount} @ ${o.price}, filled ${o.amountUsed}${executed}${o.isCancelled ? ", rest cancelled" : ""}`,
        );
        if (isOpen(o)) state.openOrders.set(o.id, o);
        renderOpenOrders();
        balancesSoon();
      } else {
        orderStatus(errorText(res.body), true);
        if (isMmpFrozen(res.body)) void loadMmp();
      }
    }
  } catch (err) {
    orderStatus((err as Error).message, true);
  } finally {
    btn.disabled = false;
  }
}

/** "at or below 24500 (trailing 500)": when a waiting stop triggers. */
function waitText(o: Order): string {
  const at = `${o.stopDirection === "up" ? "at or above" : "at or below"} ${o.stopPrice ?? "-"}`;
  return o.trailingDelta === undefined ? at : `${at} (trailing ${o.trailingDelta})`;
}

/**
 * docs/API.md 18: an OCO, a post-only limit order at `price` and a stop at `stopPrice` (stop-limit
 * at `stopLimitPrice`, else stop-market) on the other side of the last trade; the answer has both
 * legs, each carrying the OCO's id.
 */
async function submitOco(
  pair: PairView,
  directionType: string,
  f: (n: string) => HTMLInputElement,
): Promise<void> {
  const key = state.key;
  if (key === null) return;
  const body: Record<string, unknown> = {
    pairName: pair.name,
    directionType,
    amount: f("amount").value.trim(),
    price: f("price").value.trim(),
    stopPrice: f("stopPrice").value.trim(),
  };
  const stopLimit = f("stopLimitPrice").value.trim();
  if (stopLimit !== "") body.stopLimitPrice = stopLimit;
  const res = await postSigned<{ ocoId: number; orders: Order[] }>(key, "/trade/create-oco", body);
  if (res.status !== 200) {
    orderStatus(errorText(res.body), true);
    if (isMmpFrozen(res.body)) void loadMmp();
    return;
  }
  const [limitLeg, stopLeg] = res.body.orders;
  orderStatus(
    `OCO ${res.body.ocoId}: ${directionType} ${limitLeg.amount} @ ${limitLeg.price}, or on a trade ${waitText(stopLeg)} @ ${stopLeg.tradeType === "market" ? "market" : stopLeg.price}`,
  );
  for (const o of res.body.orders) if (isOpen(o)) state.openOrders.set(o.id, o);
  renderOpenOrders();
  balancesSoon();
}

// ---------------------------------------------------------------- start

async function start(): Promise<void> {
  const theme =
    localStorage.getItem(THEME_STORAGE) ??
    (matchMedia("(prefers-color-scheme: light)").matches ? "light" : "dark");
  document.documentElement.dataset.theme = theme;
  initChart();
  $("theme").addEventListener("click", () =>
    applyTheme(document.documentElement.dataset.theme === "dark" ? "light" : "dark"),
  );

  const list = await getPublic<Ticker[]>("/trade/pairs");
  if (list.status !== 200) {
    orderStatus(`Cannot read pairs: ${errorText(list.body)}`, true);
    return;
  }
  const info = await getPublic<{ pairs: PairInfo[] }>("/info");
  const decimals = new Map((info.status === 200 ? info.body.pairs : []).map((p) => [p.name, p]));
  state.pairs = list.body.map((t) => {
    const d = decimals.get(t.pairName);
    const [base, quote] = t.pairName.split("_");
    // Without /info (docs/API.md 9) numbers are shown as their own exact text.
    return d ?? { name: t.pairName, base, quote, priceDecimals: -1, amountDecimals: -1 };
  });
  for (const t of list.body) state.tickers.set(t.pairName, t);
  const select = $("pair") as HTMLSelectElement;
  select.replaceChildren(
    ...state.pairs.map((p) => {
      const o = document.createElement("option");
      o.value = p.name;
      o.textContent = p.name.replace("_", "/").toUpperCase();
      return o;
    }),
  );
  select.addEventListener("change", () => selectPair(select.value));
  ($("period") as HTMLSelectElement).addEventListener("change", (e) => {
    state.period = (e.target as HTMLSelectElement).value;
    void loadCandles();
  });

  const form = $("order-form") as HTMLFormElement;
  const tabs = [...form.querySelectorAll<HTMLButtonElement>(".tabs [role=tab]")];
  for (const b of tabs) {
    b.addEventListener("click", () => selectTab(b.dataset.type as FormTab));
    // The tab list is one stop of the Tab key; the arrow keys move along it.
    b.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (step === 0) return;
      e.preventDefault();
      const next = tabs[(tabs.indexOf(b) + step + tabs.length) % tabs.length];
      selectTab(next.dataset.type as FormTab, true);
    });
  }
  form.addEventListener("change", syncForm);
  form.addEventListener("input", renderOrderInfo);
  form.addEventListener("submit", (e) => void submitOrder(e));

  const keyForm = $("key-form") as HTMLFormElement;
  keyForm.addEventListener("paste", (e) => {
    // The admin API answers {"uid","apiToken","secretKey"}: pasting that fills every field.
    const text = e.clipboardData?.getData("text") ?? "";
    try {
      const parsed = JSON.parse(text) as Partial<Key>;
      if (typeof parsed === "object" && parsed !== null && "secretKey" in parsed) {
        e.preventDefault();
        fillKeyForm(parsed);
      }
    } catch {
      // plain text: pasted into the field as usual
    }
  });
  keyForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const key = readKeyForm();
    if (key === null) keyStatus("Fill in the user id, the API token and the secret key", true);
    else void useKey(key);
  });
  $("key-forget").addEventListener("click", forgetKey);

  const wanted = location.hash.slice(1);
  state.pair = state.pairs.find((p) => p.name === wanted) ?? state.pairs[0] ?? null;
  if (state.pair !== null) {
    select.value = state.pair.name;
    showPairStatus(state.pair);
  }
  syncForm();
  renderTickers();
  await loadMarket();

  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved !== null) {
    try {
      const key = JSON.parse(saved) as Key;
      fillKeyForm({ uid: key.uid, apiToken: key.apiToken });
      await useKey(key);
    } catch {
      sessionStorage.removeItem(KEY_STORAGE);
    }
  }
  document.body.dataset.ready = "1";
}

void start();
