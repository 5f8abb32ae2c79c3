/**
 * End-to-end harness: runs the real server as a child process on a fresh temp directory (SQLite
 * file + config written here), exactly as an operator would start it:
 *
 *   node dist/src/main.js --host 127.0.0.1 --port 0 --db <tmp>/exchange.db --config <tmp>/config.json
 *
 * (or `node --import tsx src/main.ts` when the build in dist/ is older than the sources:
 * test/support/built.ts),
 * with `ADMIN_TOKEN` (unless disabled) and `RATE_LIMIT=0` / `--rate-limit 0`. The port is read
 * from the `listening on http://127.0.0.1:<port>` line on stdout. Every wait has a timeout, so a
 * missing or broken server fails the test file quickly with its stderr in the message.
 *
 * The harness also keeps the books of money it put in: deposits − withdrawals per user and per
 * currency, which the audits (audit.ts) compare with what the server reports.
 *
 * Set `E2E_SERVER_LOG=1` to see the server's output live, `E2E_KEEP_DIR=1` to keep the temp dir,
 * `E2E_SERVER_ENTRY=<path>` to run another entry script (`src/main.ts` for the sources under tsx).
 */

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, afterEach, before, beforeEach } from "node:test";
import {
  type ApiResponse,
  type Balance,
  type CreatedOrder,
  type CreateOrderRequest,
  type DirectionType,
  ExchangeClient,
  errorsOf,
  type Order,
  ok,
  type StreamMessage,
  type UserTrade,
} from "../../src/client/index.ts";
import { StreamClient } from "../../src/client/stream.ts";
import { serverEntry } from "../support/built.ts";
import { type RawHttpAnswer, rawHttp as rawHttpRequest } from "../support/raw-http.ts";
import { runToExit as runScriptToExit, ServerProcess } from "../support/server-process.ts";
import { waitFor } from "../wait.ts";
import { asyncApi } from "./asyncapi-check.ts";
import { dec, fmt } from "./decimal.ts";
import { assertOpenApi, openApiMismatch } from "./openapi-check.ts";
import { CONFIG_PAIRS, PAIRS, type PairSpec } from "./pairs.ts";

export { REPO_ROOT } from "../support/server-process.ts";
/**
 * A start takes 1-2 s on an idle 2-core machine; with several test files and builds at once (load
 * average about 12) a restart was seen to take over 15 s. Only a server that never starts waits
 * this long.
 */
export const START_TIMEOUT_MS = 30_000;
export const STOP_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 3_000;
const LOG_LIMIT = 256 * 1024;

// ---- the exchange configuration used by every test file -------------------------------------------

export { CONFIG_PAIRS, PAIR_NAMES, PAIRS, type PairSpec, TEST_CONFIG } from "./pairs.ts";

/** Every currency, in order of first appearance in PAIRS. */
export const CURRENCIES: readonly string[] = [...new Set(PAIRS.flatMap((p) => [p.base, p.quote]))];

export function pairSpec(name: string): PairSpec {
  const spec = PAIRS.find((p) => p.name === name);
  if (spec === undefined) throw new Error(`unknown pair ${name}`);
  return spec;
}

/** Pairs whose user-balances together cover every currency (btc_usdt + eth_usdt here). */
const BALANCE_PAIRS: readonly string[] = (() => {
  const covered = new Set<string>();
  const chosen: string[] = [];
  for (const p of PAIRS) {
    if (!covered.has(p.base) || !covered.has(p.quote)) {
      chosen.push(p.name);
      covered.add(p.base);
      covered.add(p.quote);
    }
  }
  return chosen;
})();

// ---- users ------------------------------------------------------------------------------------------

export interface TestUser {
  uid: string;
  apiToken: string;
  secretKey: string;
  /** A client signed with this user's key. */
  client: ExchangeClient;
  /** Deposits − withdrawals per currency (scaled, decimal.ts). */
  net: Map<string, bigint>;
}

export interface AvailableReserved {
  available: bigint;
  reserved: bigint;
}

export type Balances = Map<string, AvailableReserved>;

export interface StartOptions {
  /** ADMIN_TOKEN; default a random one; `null` starts without it (admin interface off). */
  adminToken?: string | null;
  /** `--rate-limit`; default 0 (off). */
  rateLimit?: number;
  /** Users written into the config file, with these balances (README.md "Running it"). */
  configUsers?: ReadonlyArray<Record<string, string>>;
  /** Fee rates per pair written into the config (docs/API.md 9); default none (zero fees). */
  pairFees?: Readonly<Record<string, { makerFee?: string; takerFee?: string }>>;
  /** `minNotional` per pair written into the config (docs/API.md 20.5); default none. */
  pairMinNotional?: Readonly<Record<string, string>>;
  /** Extra flags for the server. */
  args?: readonly string[];
  env?: Record<string, string>;
  /** Entry script (default `serverEntry()`: test/support/built.ts); a `.js` entry runs without tsx. */
  entry?: string;
  /**
   * The PEM certificate a server started with `--tls-cert` presents: the start-up health check
   * trusts it (node's fetch cannot be given a CA, so the test talks https itself).
   */
  tlsCa?: string;
}

/** A GET over https trusting `ca` (a PEM certificate), for servers started with `--tls-cert`. */
export function httpsGet(
  url: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolveGet, reject) => {
    const req = httpsRequest(url, { ca, headers, timeout: 5000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolveGet({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}

export class TestServer {
  readonly dir: string;
  /** The `--db` of the next start: `<dir>/exchange.db` unless `restartOn` changed it. */
  dbPath: string;
  readonly configPath: string;
  readonly adminToken: string | null;
  readonly options: StartOptions;
  /** Every user created through the harness or the config file, in creation order. */
  readonly users: TestUser[] = [];
  /** Deposits − withdrawals per currency over all users (scaled). */
  readonly totals = new Map<string, bigint>(CURRENCIES.map((c) => [c, 0n]));
  /** Admin client (docs/API.md 11). */
  readonly admin: ExchangeClient;
  /** Client without credentials. */
  readonly public: ExchangeClient;
  port = 0;
  /** The replication port the readiness line named (0: none). */
  replicationPort = 0;
  host = "127.0.0.1";
  /** `https` when the server said it listens with TLS. */
  scheme = "http";
  /**
   * Stream messages that matched no message of the AsyncAPI document (asyncapi-check.ts); the
   * test fails after it (sharedServer) or at `close`.
   */
  readonly asyncApiMismatches: string[] = [];
  private process: ServerProcess | null = null;
  /** The last process started (still there after it exited, for its output). */
  private last: ServerProcess | null = null;
  /** Every process started, for `output()`. */
  private readonly started: ServerProcess[] = [];

  private constructor(dir: string, options: StartOptions) {
    this.dir = dir;
    this.dbPath = join(dir, "exchange.db");
    this.configPath = join(dir, "config.json");
    this.options = options;
    this.adminToken =
      options.adminToken === null ? null : (options.adminToken ?? randomBytes(24).toString("hex"));
    // Every answer a test receives is checked against the OpenAPI document (openapi-check.ts).
    this.admin = new ExchangeClient({
      baseUrl: () => this.origin,
      adminToken: this.adminToken ?? undefined,
      onResponse: assertOpenApi,
    });
    this.public = new ExchangeClient({ baseUrl: () => this.origin, onResponse: assertOpenApi });
  }

  /** Writes the config and starts the server; rejects within START_TIMEOUT_MS with its stderr. */
  static async start(options: StartOptions = {}): Promise<TestServer> {
    const dir = await mkdtemp(join(tmpdir(), "exchange-e2e-"));
    const server = new TestServer(dir, options);
    const configUsers = (options.configUsers ?? []).map((balances) => ({
      uid: randomUUID(),
      apiToken: randomBytes(16).toString("hex"),
      secretKey: randomBytes(32).toString("hex"),
      balances,
    }));
    await writeFile(
      server.configPath,
      `${JSON.stringify(
        {
          pairs: CONFIG_PAIRS.map((rest) => ({
            ...rest,
            ...options.pairFees?.[rest.name],
            ...(options.pairMinNotional?.[rest.name] === undefined
              ? {}
              : { minNotional: options.pairMinNotional[rest.name] }),
          })),
          users: configUsers,
        },
        null,
        2,
      )}\n`,
    );
    for (const u of configUsers) {
      const user = server.register(u.uid, u.apiToken, u.secretKey);
      for (const [currency, amount] of Object.entries(u.balances)) server.credit(user, currency, dec(amount));
    }
    try {
      await server.launch();
    } catch (error) {
      await server.close().catch(() => {});
      throw error;
    }
    return server;
  }

  get origin(): string {
    return `${this.scheme}://${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.process !== null;
  }

  /** The running server's process id (to pause it with SIGSTOP in a test), or null. */
  get pid(): number | null {
    return this.process?.pid ?? null;
  }

  /** Everything the server printed (stdout then stderr), for failure messages. */
  logs(): string {
    return this.last?.logs() ?? "--- server stdout ---\n\n--- server stderr ---\n";
  }

  /** What every process of this server wrote to stdout and stderr that is kept (each bounded). */
  output(): { stdout: string; stderr: string } {
    const all = this.started.map((p) => p.streams());
    return { stdout: all.map((o) => o.stdout).join(""), stderr: all.map((o) => o.stderr).join("") };
  }

  private async launch(): Promise<void> {
    if (this.process !== null) throw new Error("server already running");
    const rateLimit = String(this.options.rateLimit ?? 0);
    const entry = this.options.entry ?? serverEntry();
    const env: NodeJS.ProcessEnv = { ...process.env, RATE_LIMIT: rateLimit, ...this.options.env };
    delete env.ADMIN_TOKEN;
    delete env.NODE_TEST_CONTEXT; // the child is a server, not a test file
    if (this.adminToken !== null) env.ADMIN_TOKEN = this.adminToken;
    const echo = process.env.E2E_SERVER_LOG === "1";
    let started: ServerProcess | null = null;
    const proc = await ServerProcess.start({
      name: "server",
      script: entry,
      args: [
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        this.dbPath,
        "--config",
        this.configPath,
        "--rate-limit",
        rateLimit,
        // Backups beside the test's database, never in the checkout's data/backups (a test's own
        // `--backup-dir` comes later and wins).
        "--backup-dir",
        join(dirname(this.dbPath), "backups"),
        ...(this.options.args ?? []),
      ],
      env,
      startTimeoutMs: START_TIMEOUT_MS,
      logLimit: LOG_LIMIT,
      onOutput: echo
        ? (stream, chunk) => process.stderr.write(`[server ${stream === "stdout" ? "out" : "err"}] ${chunk}`)
        : undefined,
      onUnexpectedExit: (exit) => {
        process.stderr.write(
          `\n[e2e] server exited unexpectedly (code ${exit.code}, signal ${exit.signal})\n${started?.logs() ?? ""}\n`,
        );
      },
    });
    started = proc;
    this.started.push(proc);
    this.last = proc;
    this.process = proc;
    void proc.exited.then(() => {
      if (this.process === proc) this.process = null;
    });
    this.host = proc.host;
    this.port = proc.port;
    this.replicationPort = proc.replicationPort;
    this.scheme = proc.scheme;
    try {
      // Asked again until the start deadline: on a loaded machine one answer can take over 5 s.
      const state = await waitFor(
        async () => {
          if (!proc.running) return "exited";
          const health =
            this.options.tlsCa === undefined
              ? await this.public.health({ timeoutMs: 5000 })
              : await httpsGet(`${this.origin}/health`, this.options.tlsCa);
          if (health.status !== 200) throw new Error(`/health answered ${health.status} ${health.text}`);
          return "ready";
        },
        { what: "the started server's /health to answer 200", timeoutMs: START_TIMEOUT_MS, intervalMs: 100 },
      );
      if (state === "exited") throw new Error("the server exited before /health answered 200");
    } catch (error) {
      await proc.kill().catch(() => {});
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}\n${proc.logs()}`);
    }
  }

  /** SIGTERM and wait for the exit; returns the exit code (README.md "Running it": 0 on a graceful stop). */
  async stop(graceMs = STOP_TIMEOUT_MS): Promise<number | null> {
    const proc = this.process;
    if (proc === null) return null;
    const exit = await proc.terminate(graceMs);
    if (exit.killed) {
      throw new Error(
        `graceful stop after SIGTERM: timed out after ${graceMs} ms (killed with SIGKILL)\n${proc.logs()}`,
      );
    }
    return exit.code;
  }

  /** SIGKILL (`kill -9`) and wait for the process to be gone. */
  async kill(): Promise<void> {
    await this.process?.kill();
  }

  /** Starts again on the same database and config (a new port; clients follow it). */
  async restart(): Promise<void> {
    let code: number | null = 0;
    let stopError: unknown = null;
    if (this.process !== null) {
      try {
        code = await this.stop();
      } catch (error) {
        stopError = error;
      }
    }
    const logs = this.logs();
    // Start again even after a bad stop, so that one failure does not take the rest of the file down.
    await this.launch();
    if (stopError !== null) throw stopError;
    assert.equal(code, 0, `graceful stop (SIGTERM) should exit 0\n${logs}`);
  }

  /**
   * Stops the server (SIGTERM, exit 0 checked) and starts a fresh process on another database
   * file (a backup, docs/API.md 11), with the same config, users and books of money.
   */
  async restartOn(dbPath: string): Promise<void> {
    this.dbPath = dbPath;
    await this.restart();
  }

  /** Stops the server if running and removes the temp directory. */
  async close(): Promise<void> {
    const mismatches = this.asyncApiMismatches.splice(0);
    try {
      // Clean-up, not a test of shutdown: a short grace, then SIGKILL.
      await this.process?.terminate(CLOSE_GRACE_MS).catch(() => this.kill());
    } finally {
      if (process.env.E2E_KEEP_DIR !== "1") await rm(this.dir, { recursive: true, force: true });
    }
    assertNoAsyncApiMismatch(mismatches);
  }

  // ---- users and money ------------------------------------------------------------------------------

  /** A client for a user (or any key), following restarts. */
  client(user: { apiToken: string; secretKey: string }, extra: { bearer?: boolean; lang?: string } = {}) {
    return new ExchangeClient({
      baseUrl: () => this.origin,
      apiToken: user.apiToken,
      secretKey: user.secretKey,
      onResponse: assertOpenApi,
      ...extra,
    });
  }

  private register(uid: string, apiToken: string, secretKey: string): TestUser {
    const user: TestUser = {
      uid,
      apiToken,
      secretKey,
      client: this.client({ apiToken, secretKey }),
      net: new Map(CURRENCIES.map((c) => [c, 0n])),
    };
    this.users.push(user);
    return user;
  }

  private credit(user: TestUser, currency: string, amount: bigint): void {
    user.net.set(currency, (user.net.get(currency) ?? 0n) + amount);
    this.totals.set(currency, (this.totals.get(currency) ?? 0n) + amount);
  }

  /** A new user through the admin API, funded with `balances` (decimal strings). */
  async newUser(balances: Record<string, string> = {}): Promise<TestUser> {
    const created = ok(await this.admin.createUser(), "admin create user");
    const user = this.register(created.uid, created.apiToken, created.secretKey);
    for (const [currency, amount] of Object.entries(balances)) await this.deposit(user, currency, amount);
    return user;
  }

  /** Several funded users, created concurrently. */
  newUsers(count: number, balances: Record<string, string> = {}): Promise<TestUser[]> {
    return Promise.all(Array.from({ length: count }, () => this.newUser(balances)));
  }

  async deposit(user: TestUser, currency: string, amount: string): Promise<void> {
    ok(await this.admin.deposit(user.uid, currency, amount), `deposit ${amount} ${currency}`);
    this.credit(user, currency, dec(amount));
  }

  /** Withdraws through the admin API; the books of money change only on a 200. */
  async withdraw(user: TestUser, currency: string, amount: string): Promise<ApiResponse<unknown>> {
    const res = await this.admin.withdraw(user.uid, currency, amount);
    if (res.status === 200) this.credit(user, currency, -dec(amount));
    return res;
  }

  /** Available and reserved of every currency for a user (two user-balances reads). */
  async balances(user: TestUser): Promise<Balances> {
    const out: Balances = new Map();
    for (const pair of BALANCE_PAIRS) {
      const items = ok(await user.client.balances(pair), `user-balances ${pair}`) as Balance[];
      for (const item of items) {
        out.set(item.currency, { available: dec(item.balance), reserved: dec(item.reserved) });
      }
    }
    return out;
  }

  /** `{currency: [available, reserved]}` as canonical decimal strings, every currency. */
  async balanceTable(user: TestUser): Promise<Record<string, [string, string]>> {
    const b = await this.balances(user);
    const table: Record<string, [string, string]> = {};
    for (const c of CURRENCIES) table[c] = [fmt(b.get(c)?.available ?? 0n), fmt(b.get(c)?.reserved ?? 0n)];
    return table;
  }

  /** Every order of a user, newest first, read page by page (pageSize 100). */
  async allOrders(user: TestUser): Promise<Order[]> {
    return readAllPages((page) => user.client.userOrders(PAIRS[0].name, { page, pageSize: 100 }));
  }

  /** Every trade of a user, newest first. */
  async allTrades(user: TestUser): Promise<UserTrade[]> {
    return readAllPages((page) => user.client.userHistory({ page, pageSize: 100 }));
  }

  /** Cancels every open limit order of these users (test isolation on a shared book). */
  async cancelOpenOrders(users: readonly TestUser[] = this.users): Promise<void> {
    await Promise.all(
      users.map(async (user) => {
        for (const order of await this.allOrders(user)) {
          if (isOpen(order)) {
            const res = await user.client.cancelOrder(order.id);
            // 400 is fine: it may have been filled or cancelled in between.
            if (res.status !== 200 && res.status !== 400)
              throw new Error(`cleanup cancel: ${res.status} ${res.text}`);
          }
        }
      }),
    );
  }

  /** A stream connection; signed with the user's key when a user is given. */
  stream(streams: readonly string[], user?: TestUser): Promise<StreamClient> {
    return StreamClient.connect({
      baseUrl: this.origin,
      streams,
      apiToken: user?.apiToken,
      secretKey: user?.secretKey,
      // Every message is checked against the AsyncAPI document, as every answer against OpenAPI.
      onMessage: (message) => {
        const mismatch = asyncApi.streamMismatch(message);
        if (mismatch !== null) this.asyncApiMismatches.push(mismatch);
      },
    });
  }
}

function assertNoAsyncApiMismatch(mismatches: readonly string[]): void {
  if (mismatches.length > 0)
    throw new Error(
      `AsyncAPI check failed (${mismatches.length} messages): ${mismatches.slice(0, 3).join("\n")}`,
    );
}

/**
 * One server for the `describe` it is called in: started before its tests, closed after them; the
 * users each test creates get their open orders cancelled after it, so every test starts from empty
 * books. `onStart` receives the server once it runs.
 */
export function sharedServer(onStart: (server: TestServer) => void, options: StartOptions = {}): void {
  let server: TestServer | undefined;
  let firstUserOfTest = 0;
  before(async () => {
    server = await TestServer.start(options);
    onStart(server);
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(() => {
    firstUserOfTest = server?.users.length ?? 0;
  });
  afterEach(async () => {
    const mismatches = server?.asyncApiMismatches.splice(0) ?? [];
    if (server?.running) await server.cancelOpenOrders(server.users.slice(firstUserOfTest));
    assertNoAsyncApiMismatch(mismatches);
  });
}

/**
 * The stream messages of every channel kind (exchanges, orders, history, user_orders, user_history)
 * that a trade, a resting order and its cancel by two new users bring, up to the cancel's
 * user_orders message; the users' orders are cancelled afterwards.
 */
export async function messagesOfEveryChannelKind(server: TestServer): Promise<StreamMessage[]> {
  const [maker, taker] = await server.newUsers(2, { usdt: "10000", btc: "10" });
  const channels = [
    "exchanges",
    "orders:btc_usdt",
    "history:btc_usdt",
    `user_orders:${taker.uid}`,
    `user_history:${taker.uid}`,
  ];
  const stream = await server.stream(channels, taker);
  try {
    await maker.client.createOrder(limit("btc_usdt", "sell", "100", "1"));
    await taker.client.createOrder(market("btc_usdt", "buy", "0.4"));
    const last = await taker.client.createOrder(limit("btc_usdt", "buy", "99", "0.1"));
    await taker.client.cancelOrder((last.body as { id: number }).id);
    for (const kind of ["exchanges", "orders:", "history:", "user_orders:", "user_history:"]) {
      await stream.next((m) => m.stream.startsWith(kind));
    }
    await stream.next(
      (m) => m.stream.startsWith("user_orders:") && (m.data as { isCancelled: boolean }).isCancelled,
    );
    return [...stream.messages];
  } finally {
    await stream.close();
    await server.cancelOpenOrders();
  }
}

/**
 * Runs the server (`serverEntry`) with `args` to its exit, for servers expected to refuse to start;
 * a server still running after START_TIMEOUT_MS is killed and the test fails.
 */
export function runToExit(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_TEST_CONTEXT;
  return runScriptToExit(serverEntry(), args, childEnv, START_TIMEOUT_MS);
}

/** Places a limit order and answers it, failing the test on anything but a 200. */
export async function placeLimit(user: TestUser, ...args: Parameters<typeof limit>): Promise<CreatedOrder> {
  return expectOk(await user.client.createOrder(limit(...args)), `create ${args.join(" ")}`);
}

/** A limit order request with decimal-string price and amount. */
export function limit(
  pairName: string,
  directionType: DirectionType,
  price: string,
  amount: string,
): CreateOrderRequest {
  return { pairName, tradeType: "limit", directionType, price, amount };
}

/** A market order request (`price` only to check that it is ignored). */
export function market(
  pairName: string,
  directionType: DirectionType,
  amount: string,
  price?: string,
): CreateOrderRequest {
  return price === undefined
    ? { pairName, tradeType: "market", directionType, amount }
    : { pairName, tradeType: "market", directionType, amount, price };
}

/** Open: not cancelled and not fully executed. */
export function isOpen(order: Order): boolean {
  return !order.isCancelled && dec(order.amountUsed) < dec(order.amount);
}

/** Reads a paginated list until `total` items are collected (at most 1000 pages). */
export async function readAllPages<T>(
  fetchPage: (page: number) => Promise<ApiResponse<{ total: number; items: T[] }>>,
): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= 1000; page++) {
    const body = ok(await fetchPage(page), `page ${page}`) as { total: number; items: T[] };
    items.push(...body.items);
    if (body.items.length === 0 || items.length >= body.total) return items;
  }
  throw new Error("readAllPages: more than 1000 pages");
}

/**
 * Asserts an error answer: the status, and `errors` holding exactly `field` (or at least `field`
 * when `exact` is false) with non-empty message strings. Returns the messages.
 */
export function expectError(
  res: ApiResponse<unknown>,
  status: number,
  field: string,
  what = "request",
  exact = true,
): string[] {
  assert.equal(
    res.status,
    status,
    `${what}: expected HTTP ${status} errors.${field}, got ${res.status} ${res.text}`,
  );
  const errors = errorsOf(res);
  assert.ok(errors !== undefined, `${what}: body is not {"errors": {...}}: ${res.text}`);
  if (exact) assert.deepEqual(Object.keys(errors), [field], `${what}: error keys in ${res.text}`);
  const messages = errors[field];
  assert.ok(
    Array.isArray(messages) && messages.length > 0,
    `${what}: no messages for ${field} in ${res.text}`,
  );
  for (const m of messages)
    assert.ok(typeof m === "string" && m.length > 0, `${what}: bad message in ${res.text}`);
  return messages;
}

/** The body of a 200 answer, failing the test with the status and text otherwise. */
export function expectOk<T>(res: ApiResponse<T>, what = "request"): T {
  assert.equal(res.status, 200, `${what}: expected 200, got ${res.status} ${res.text}`);
  return res.body as T;
}

// ---- raw HTTP over a socket (bodies the server may refuse before reading them) --------------------

export type { RawHttpAnswer };

/**
 * One HTTP/1.1 request over a plain socket, `Connection: close` (test/support/raw-http.ts), its
 * answer checked against the OpenAPI document like every client answer (openapi-check.ts).
 */
export function rawHttp(
  server: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer = Buffer.alloc(0),
  timeoutMs = 10_000,
): Promise<RawHttpAnswer> {
  return rawHttpRequest(server, method, path, headers, body, {
    timeoutMs,
    check: (answer) => {
      const mismatch = openApiMismatch({
        method,
        pathAndQuery: path,
        status: answer.status,
        headers: new Headers(answer.headers),
        text: answer.text,
        body: answer.body,
      });
      return mismatch === null ? null : `OpenAPI check failed: ${mismatch}`;
    },
  });
}

/**
 * A fixed pause. No test uses it any more: wait on the condition with `waitFor` (test/wait.ts), or
 * where time itself is the condition, `sleepUntil` the instant and say why. Kept for branches that
 * still import it.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
