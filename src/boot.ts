/**
 * The whole exchange wired in one place, so that the order things start and stop in is read here
 * and nowhere else. Start-up runs these stages in order, one function each:
 *
 *   1. settings and config          flags/env, data/config.json, TLS files, the address is free
 *                                   (startExchange)
 *   2. database                     open + migrate, apply the journal, check pair decimals, scales
 *                                   (readDatabase)
 *   3. recover                      users, keys, balances (recoverAccounts)
 *   4. writer and readers, core     the group-committing writer thread, the read-only pool, the
 *                                   read models, the core and what it reports to (buildCore)
 *   5. pair workers                 one thread per pair, open orders replayed into its book
 *                                   (startPairs)
 *   6. config users                 created and credited once (createConfigUsers)
 *   7. front end                    order entry, uWebSockets.js routes, sessions, stream, the FIX
 *                                   gateway's listener; /health turns ok (startFrontEnd)
 *
 * and `close()` runs them backwards: stop accepting, drain the workers, commit, close. A promotion
 * of a follower (`POST /admin/promote`) closes them and runs them again, as a leader, on the same
 * database and listening socket (startExchange).
 */

import { readFileSync } from "node:fs";
import net from "node:net";
import { availableParallelism } from "node:os";
import uws from "@trufflesuite/uws-js-unofficial";
import { Users } from "./accounts/users.ts";
import { ConfigError } from "./config/config-error.ts";
import { loadConfig } from "./config/config-file.ts";
import type { ExchangeConfig } from "./config/exchange-config.ts";
import { FEE_ACCOUNT_UID, MAX_LEDGER_VALUE } from "./config/ledger-bounds.ts";
import type { Settings } from "./config/settings.ts";
import { ClientIds } from "./core/client-ids.ts";
import { NO_REQUEST, type OrderState } from "./core/command.ts";
import { Exchange, pairEventHandler } from "./core/exchange.ts";
import { Ledger } from "./core/ledger.ts";
import { FLAG_CANCEL_ON_DISCONNECT } from "./core/order-options.ts";
import { PairStatuses, TRADING } from "./core/pair-status.ts";
import { PairMarket } from "./core/read-models/pair-market.ts";
import { DeadMansSwitch } from "./core/services/dead-man.ts";
import { Metrics } from "./core/services/metrics.ts";
import { Backups } from "./db/backup.ts";
import { type DbLock, lockDatabase } from "./db/lock.ts";
import { DbReader } from "./db/reader.ts";
import {
  checkPairs,
  forEachClientOrderId,
  linkOcoLegs,
  loadState,
  orderStateOfRow,
  recoverBalances,
  resolveCurrencyScales,
  resolveExecEpoch,
  restoreMarket,
} from "./db/recovery.ts";
import { DbWriter } from "./db/writer.ts";
import { servedDocuments } from "./documents/served.ts";
import { Answers } from "./entry/answers.ts";
import { type EntryContext, entryContext } from "./entry/context.ts";
import { Code, type ErrorCode } from "./errors/catalogue.ts";
import { FixGateway } from "./fix/fix-gateway.ts";
import { Admin } from "./http/admin.ts";
import { CorsPolicy } from "./http/cors.ts";
import { FrontDoor } from "./http/front-door.ts";
import { ListenKeys } from "./http/listen-keys.ts";
import { mountRoutes } from "./http/server.ts";
import { DEFAULT_WEB_DIR, loadStaticFiles, mountStatic } from "./http/static.ts";
import { createApp, loadTls } from "./http/tls.ts";
import { chooseWaitStrategy, PairChannel, workerSpinFor } from "./pair/pair-client.ts";
import { openDatabase } from "./protocol/db/db-open.ts";
import { replayJournal } from "./protocol/db/journal.ts";
import { type Epochs, markLed, promoteDatabase, readEpochs } from "./replication/epoch.ts";
import { FollowerLink } from "./replication/follower.ts";
import { FollowerState } from "./replication/follower-state.ts";
import { ReplicationLeader } from "./replication/leader.ts";
import { bothListeners } from "./session/reports.ts";
import type { SessionDeps, SessionOrders } from "./session/session-conn.ts";
import { SessionHub } from "./session/session-hub.ts";
import { mountSession } from "./session/session-route.ts";
import { StreamHub } from "./stream/hub.ts";
import { mountStream } from "./stream/stream-route.ts";
import { type Logger, log as processLog } from "./util/log.ts";
import { nowMicro } from "./util/time.ts";

export interface RunningExchange {
  readonly port: number;
  /** The FIX gateway's port (docs/API.md 17), null when it is off. */
  readonly fixPort: number | null;
  /** The replication port (docs/OPERATIONS.md, "A second box: follower"), null when it is off. */
  readonly replicationPort: number | null;
  readonly url: string;
  readonly exchange: Exchange;
  /** The edge's map from request id to the waiting response (the core's ResultSink). */
  readonly answers: Answers;
  /** The stream's hub (its counters, for tests and benchmarks). */
  readonly streamHub: StreamHub;
  /** Users and their keys (ids by uid, for tests and benchmarks that drive the core directly). */
  readonly accounts: Users;
  /** How the pair workers wait for commands, as chosen at start (`auto` resolved). */
  readonly waitStrategy: string;
  /** Graceful stop: no new requests, every acknowledged write committed, database closed. */
  close(): Promise<void>;
}

/**
 * True when the native uWebSockets.js binary loaded. The package's pure-JS fallback exports `App`
 * (and, seen through ESM, `us_listen_socket_close`), but not these two native functions.
 */
export function isNativeUws(): boolean {
  const native = uws as { us_socket_local_port?: unknown; getParts?: unknown };
  return typeof native.us_socket_local_port === "function" && typeof native.getParts === "function";
}

/**
 * What to do when a part the exchange cannot run without fails (the database writer, a pair
 * worker): everything acknowledged is already committed, so the default stops the process with
 * exit code 1 rather than leave requests waiting for a commit or a match that never comes.
 */
export type FatalHandler = (reason: string) => void;

const exitOnFatal: FatalHandler = (reason) => {
  processLog().error({ reason }, `fatal: ${reason}; exiting`);
  console.error(`FATAL: ${reason}`);
  process.exit(1);
};

/** The session tag of the recovered cancel-on-disconnect orders (live sessions have positive tags). */
const RECOVERED_SESSION = -1;

/**
 * `log`: where the start-up, recovery and shutdown lines go (src/util/log.ts); by default the
 * process's logger, which src/main.ts installs.
 */
export async function startExchange(
  settings: Settings,
  log: Logger = processLog(),
  onFatal: FatalHandler = exitOnFatal,
): Promise<RunningExchange> {
  let current: Running;
  /** A promotion or a new copy is under way (one at a time). */
  let restarting = false;
  const door = new FrontDoor();
  /**
   * Stops this start and runs another in this process with `changes` to the settings, on the same
   * listening socket (src/http/front-door.ts: meanwhile requests get 503 as in a stop) and the
   * same addresses (a FIX port given as 0 keeps the one it got); `whileStopped` runs between.
   */
  const restart = async <T>(changes: Partial<Settings>, whileStopped: () => T): Promise<T> => {
    door.keepListening = true;
    try {
      await current.close();
      const done = whileStopped();
      current = await startOnce(
        { ...settings, fixPort: current.fixPort ?? settings.fixPort, ...changes },
        log,
        onFatal,
        restarts,
        door,
      );
      return done;
    } finally {
      door.keepListening = false;
    }
  };
  /**
   * `POST /admin/promote` (docs/OPERATIONS.md, "Promoting a follower"): the follower stops taking
   * its leader's batches and commits those it received; unless forced it refuses when it cannot
   * vouch for holding every change its leader answered. Then the server stops as at SIGTERM, the
   * database goes to the next epoch (src/replication/epoch.ts), and the stages run again on it
   * in this process as a leader, on the same listening socket (src/http/front-door.ts): the start's
   * own recovery (the cancel-on-disconnect orders of every session cancelled, dead-man's switches
   * disarmed, nothing in flight). The call is answered once the leader takes orders.
   */
  const promote = async (force: boolean): Promise<PromoteOutcome> => {
    const follower = current.follower;
    if (follower === null || restarting) return { refused: Code.NOT_A_FOLLOWER };
    restarting = true;
    await follower.pause();
    const behind = follower.behind();
    if (behind !== null && !force) {
      follower.resume();
      restarting = false;
      log.warn({ reason: behind }, `promotion refused: ${behind}`);
      return { refused: Code.FOLLOWER_BEHIND, reason: behind };
    }
    log.warn(
      { forced: behind !== null, reason: behind ?? undefined },
      `promotion: this follower becomes the leader${behind === null ? "" : ` (forced: ${behind})`}`,
    );
    try {
      const { epoch, began } = await restart({ follow: undefined }, () => {
        const promoted = promoteDatabase(settings.dbPath);
        log.info(
          promoted,
          `promoted: epoch ${promoted.epoch} begins after the old leader's journal key ${promoted.began}`,
        );
        return promoted;
      });
      log.info(
        { url: current.url, epoch, replicationPort: current.replicationPort },
        `promoted: leader at epoch ${epoch}, listening on ${current.url}`,
      );
      return { epoch, began, forced: behind !== null };
    } catch (err) {
      onFatal(`promotion failed: ${(err as Error).message}`);
      throw err;
    } finally {
      restarting = false;
    }
  };
  const recopy = (): void => {
    if (restarting) return;
    restarting = true;
    // The same settings: the new start's stage 2 takes the copy.
    restart({}, () => undefined)
      .then(() =>
        log.info({ url: current.url }, `following again on a new copy, listening on ${current.url}`),
      )
      .catch((err: Error) => onFatal(`a new copy failed: ${err.message}`))
      .finally(() => {
        restarting = false;
      });
  };
  const restarts: Restarts = { promote, recopy };
  current = await startOnce(settings, log, onFatal, restarts, door);
  return {
    get port() {
      return current.port;
    },
    get fixPort() {
      return current.fixPort;
    },
    get replicationPort() {
      return current.replicationPort;
    },
    get url() {
      return current.url;
    },
    get exchange() {
      return current.exchange;
    },
    get answers() {
      return current.answers;
    },
    get streamHub() {
      return current.streamHub;
    },
    get accounts() {
      return current.accounts;
    },
    get waitStrategy() {
      return current.waitStrategy;
    },
    close: () => current.close(),
  };
}

/** What a promotion did, or the code it was refused with (and why). */
export type PromoteOutcome =
  | { epoch: number; began: number; forced: boolean }
  | { refused: ErrorCode; reason?: string };

/** One start's exchange; a promotion closes it and starts another on the same database. */
interface Running extends RunningExchange {
  /** The link to the leader of a follower, null on a leader. */
  readonly follower: FollowerLink | null;
}

type Promote = (force: boolean) => Promise<PromoteOutcome>;

/** What stops a start and runs another in this process, on the same listening socket. */
interface Restarts {
  promote: Promote;
  /**
   * A follower whose leader no longer holds what it lacks: the start runs again, and takes the
   * leader's copy at its stage 2 (docs/OPERATIONS.md, "A second box: follower").
   */
  recopy: () => void;
}

async function startOnce(
  settings: Settings,
  log: Logger,
  onFatal: FatalHandler,
  restarts: Restarts,
  door: FrontDoor,
): Promise<Running> {
  if (!isNativeUws()) {
    if (!settings.allowSlowUws) {
      throw new ConfigError(
        "uWebSockets.js native binary did not load: refusing to run on the slow pure-JS fallback " +
          "(pass --allow-slow-uws or ALLOW_SLOW_UWS=1 to run anyway)",
      );
    }
    log.warn("uWebSockets.js is running on its pure-JS fallback; performance is degraded");
  }

  // 1. settings and config; the TLS files are checked now, before anything starts.
  const loaded = loadConfig(settings.configPath);
  const tls = loadTls(settings);
  // The address too: a port another process holds is refused now, not after the database was
  // opened, its journal applied and the state recovered (README.md, "Running it").
  // (A promotion's start goes on listening where the follower listened: src/http/front-door.ts.)
  const cannotListen =
    door.listenSocket === null ? await whyCannotListen(settings.host, settings.port) : undefined;
  if (cannotListen !== undefined)
    throw new ConfigError(`cannot listen on ${settings.host}:${settings.port}: ${cannotListen}`);
  if (settings.replicationPort !== undefined && settings.replicationPort !== 0) {
    const refused = await whyCannotListen(settings.host, settings.replicationPort);
    if (refused !== undefined)
      throw new ConfigError(
        `--replication-port: cannot listen on ${settings.host}:${settings.replicationPort}: ${refused}`,
      );
  }
  if (settings.fixPort !== undefined && settings.fixPort !== 0) {
    const fixRefused = await whyCannotListen(settings.host, settings.fixPort);
    if (fixRefused !== undefined)
      throw new ConfigError(
        `--fix-port: cannot listen on ${settings.host}:${settings.fixPort}: ${fixRefused}`,
      );
  }

  // 2. database: one server per file (src/db/lock.ts), taken before anything is read or written.
  const lock = lockDatabase(settings.dbPath);
  try {
    return await startLocked(settings, loaded, tls, lock, log, onFatal, restarts, door);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** What stage 2 read of the database: the config with its stored scales, the state to recover. */
interface StoredState {
  config: ExchangeConfig;
  state: ReturnType<typeof loadState>;
  clientIds: ClientIds;
  journalBatches: number;
  /** The epoch of the execution numbers (docs/API.md 16). */
  execEpoch: number;
  /** The replication epochs (src/replication/epoch.ts). */
  epochs: Epochs;
}

/**
 * The process's own flags the stages share: readiness (/health), whether new requests are taken,
 * the first fatal reason, and the close in progress.
 */
interface Lifecycle {
  ready: boolean;
  accepting: boolean;
  fatal: string | null;
  closing: Promise<void> | null;
  /** Records the first fatal reason and hands it to the FatalHandler. */
  fail(reason: string): void;
}

/** What stage 4 built: the storage threads, the core and the parts it reports to. */
interface Core {
  writer: DbWriter;
  reader: DbReader;
  metrics: Metrics;
  admin: Admin;
  backups: Backups;
  markets: PairMarket[];
  app: uws.TemplatedApp;
  answers: Answers;
  hub: StreamHub;
  sessions: SessionHub;
  sessionDeps: SessionDeps;
  /** The FIX gateway (docs/API.md 17), null without --fix-port. */
  fix: FixGateway | null;
  exchange: Exchange;
  /** Order entry over this core (src/entry/), built with the front end in 7. */
  entry: EntryContext | null;
  /** The epoch of the execution numbers (docs/API.md 16). */
  execEpoch: number;
  users: Users;
  ledger: Ledger;
  statuses: PairStatuses;
  feeUser: number;
}

async function startLocked(
  settings: Settings,
  loaded: ExchangeConfig,
  tls: ReturnType<typeof loadTls>,
  lock: DbLock,
  log: Logger,
  onFatal: FatalHandler,
  restarts: Restarts,
  door: FrontDoor,
): Promise<Running> {
  const startedAt = performance.now();
  // 2. a follower first learns from its leader where its database stands, and takes the leader's
  // copy in its place when it has nothing or is too far behind (src/replication/follower.ts).
  const follower =
    settings.follow === undefined
      ? null
      : new FollowerLink({
          host: settings.follow.host,
          port: settings.follow.port,
          tls: settings.follow.tls,
          token: settings.replicationToken!,
          dbPath: settings.dbPath,
        });
  if (follower !== null) {
    log.info(
      { leader: `${settings.follow!.host}:${settings.follow!.port}` },
      `following ${settings.follow!.host}:${settings.follow!.port}`,
    );
    try {
      await follower.start();
    } catch (err) {
      // Another history, a wrong token, another version: one `config error:` line and exit 1.
      throw new ConfigError(
        `--follow ${settings.follow!.host}:${settings.follow!.port}: ${(err as Error).message}`,
      );
    }
  }
  const stored = readDatabase(settings, loaded, log);
  const { config, state } = stored;
  const { users, ledger } = recoverAccounts(config, state, follower !== null);
  const life: Lifecycle = {
    ready: false,
    accepting: true,
    fatal: null,
    closing: null,
    fail(reason) {
      if (this.fatal !== null) return;
      this.fatal = reason;
      onFatal(reason);
    },
  };
  const core = await buildCore(settings, tls, stored, users, ledger, life, log, door);
  const pairs = await startPairs(settings, stored, core, life, log);
  log.info(
    {
      users: state.users.length,
      apiKeys: state.apiKeys.length,
      openOrders: state.openOrders.length,
      nextOrderId: state.nextOrderId,
      nextTradeId: state.nextTradeId,
      journalBatches: stored.journalBatches,
      tradesAfterSnapshot: state.tradesAfterSnapshot.length,
      ms: Math.round(performance.now() - startedAt),
    },
    `recovered ${state.users.length} users, ${state.openOrders.length} open orders`,
  );
  // A follower's users are its leader's: they come with its batches.
  if (follower === null) await createConfigUsers(config, users, ledger, core);
  return startFrontEnd(settings, tls, lock, stored, users, core, pairs, life, follower, restarts, door);
}

/**
 * 2. database: opened (and migrated), the journal applied, the pair decimals checked, the currency
 * scales resolved, the state to recover loaded and the client order ids put into their filter.
 */
function readDatabase(settings: Settings, loaded: ExchangeConfig, log: Logger): StoredState {
  // Pair decimals must match what is stored; a currency keeps its largest scale.
  let db: ReturnType<typeof openDatabase>;
  try {
    db = openDatabase(settings.dbPath, { synchronous: settings.synchronous });
  } catch (err) {
    const code = (err as { code?: string }).code ?? "";
    if (/^SQLITE_(CANTOPEN|NOTADB|READONLY|PERM|IOERR)/.test(code))
      throw new ConfigError(`database ${settings.dbPath}: cannot open: ${(err as Error).message}`);
    throw err;
  }
  try {
    // The batches the last run acknowledged but had not written to the tables yet, before anything
    // reads them (migration 006).
    const journalBatches = replayJournal(db);
    if (journalBatches > 0)
      log.info({ batches: journalBatches }, `applied ${journalBatches} journaled batches`);
    checkPairs(db, loaded.pairs);
    const execEpoch = resolveExecEpoch(db);
    const epochs = readEpochs(db);
    // A leader with a replication port takes changes of its own in its epoch: a database that
    // later follows another leader says so, and is told apart from a follower's copy.
    if (
      settings.replicationPort !== undefined &&
      settings.follow === undefined &&
      epochs.led !== epochs.epoch
    ) {
      markLed(db, epochs.epoch);
      epochs.led = epochs.epoch;
    }
    const scales = resolveCurrencyScales(
      db,
      new Map([...loaded.currencies.values()].map((c) => [c.name, c.scale])),
    );
    const config: ExchangeConfig = {
      ...loaded,
      currencies: new Map(
        [...loaded.currencies.keys()].map((name) => [name, { name, scale: scales.get(name)! }]),
      ),
    };
    const state = loadState(
      db,
      config.pairs.map((p) => p.name),
      nowMicro(),
    );
    // Every client order id ever goes into the filter only, straight off the index (a few bytes
    // each); the database judges those the filter cannot rule out (src/core/client-ids.ts).
    const started = performance.now();
    const clientIds = new ClientIds(
      settings.clientIdWindow,
      settings.clientIdFilterMb,
      state.clientOrderIdCount,
    );
    forEachClientOrderId(db, (user, id) => clientIds.restore(user, id));
    if (state.clientOrderIdCount > 0)
      log.info(
        {
          clientOrderIds: state.clientOrderIdCount,
          filterBytes: clientIds.filter.bytes,
          ms: Math.round(performance.now() - started),
        },
        `client order ids: ${state.clientOrderIdCount} in a ${(clientIds.filter.bytes / 1048576).toFixed(0)} MiB filter ` +
          `(${(performance.now() - started).toFixed(0)} ms)`,
      );
    return { config, state, clientIds, journalBatches, execEpoch, epochs };
  } finally {
    db.close();
  }
}

/** 3. recover: users and keys, nonces, balances (checked against the transfers). */
function recoverAccounts(
  config: ExchangeConfig,
  state: StoredState["state"],
  follower: boolean,
): { users: Users; ledger: Ledger } {
  const users = new Users();
  for (const u of state.users) users.add(u.id, u.uid);
  for (const k of state.apiKeys) users.addKey(k.token, k.userId, k.secret, k.revoked);
  for (const [token, nonce] of state.nonces) users.nonces.check(token, nonce);
  const currencyNames = [...config.currencies.keys()];
  const ledger = new Ledger(currencyNames);
  for (const u of state.users) ledger.ensureUser(u.id);
  const replayed = recoverBalances(ledger, users.idOf(FEE_ACCOUNT_UID) ?? -1, config, state);
  const problems = ledger.check(currencyNames.map((c) => state.currencies.get(c)?.transfers ?? 0n));
  if (problems.length > 0) throw new Error(`ledger check failed at start:\n  ${problems.join("\n  ")}`);
  // Balances brought up to date from trades go into the first snapshot: from then on the rows hold
  // those trades (migration 005). Nothing else is marked changed: recovery only loads. A follower
  // writes no snapshot of its own: its leader's come with its batches.
  if (!follower) for (const [user, c] of replayed) ledger.markDirty(user, c);
  return { users, ledger };
}

/**
 * 4. writer and readers, then the core: the metrics, the pair statuses, admin and the fee account,
 * backups, the read models, and the parts the core reports to (the answers map, the stream hub,
 * the trading sessions).
 */
async function buildCore(
  settings: Settings,
  tls: ReturnType<typeof loadTls>,
  stored: StoredState,
  users: Users,
  ledger: Ledger,
  life: Lifecycle,
  log: Logger,
  door: FrontDoor,
): Promise<Core> {
  const { config, state, clientIds } = stored;
  const writer = await DbWriter.start(settings.dbPath, {
    synchronous: settings.synchronous,
    // A leader keeps journal rows for its followers to read (src/replication/leader.ts).
    // Journal keys kept below the applied mark for followers (--replication-keep): one further
    // behind takes a copy (docs/OPERATIONS.md, "A second box: follower").
    journalKeep: settings.replicationPort === undefined ? 0 : settings.replicationKeep,
  });
  writer.onFatal((err) => life.fail(`database writer failed: ${err.message}`));
  // Reads of the rows the writer derives wait for it to have written those of every answered batch.
  const reader = DbReader.start(settings.dbPath, { before: () => writer.applied() });

  const metrics = new Metrics(
    () => writer.stats,
    config.pairs.map((p) => p.name),
  );
  metrics.clientIds(() => ({
    dbChecks: clientIds.dbChecks,
    dbDuplicates: clientIds.dbDuplicates,
    held: clientIds.held,
    filterBytes: clientIds.filter.bytes,
  }));
  // Each pair's status as stored (docs/API.md 11): the core decides by it at R1, the admin call sets it.
  const statuses = new PairStatuses();
  for (const p of config.pairs) statuses.set(p.index, state.pairs.get(p.name)?.status ?? TRADING);
  // The fee account (docs/API.md 9): a user without API keys, created once; it holds every fee.
  const admin = new Admin(settings.adminToken ?? "", users, ledger, writer, config, statuses);
  // A follower's fee account is its leader's (its copy holds it).
  const feeUser =
    users.idOf(FEE_ACCOUNT_UID) ??
    (settings.follow !== undefined ? -1 : admin.createUser(FEE_ACCOUNT_UID, null));
  admin.readOnly = settings.follow !== undefined;
  admin.feeUser = feeUser;
  // POST /admin/backup (docs/API.md 11, docs/OPERATIONS.md "Backup and restore") (its thread starts at the first backup).
  const backups = new Backups(settings.dbPath, settings.backupDir, () => writer.applied());
  admin.backups = backups;

  // The read models of the pairs, as committed.
  const markets: PairMarket[] = [];
  for (const p of config.pairs) {
    const market = new PairMarket(p.name, p.priceDecimals, p.amountDecimals);
    markets[p.index] = market;
    restoreMarket(market, state);
  }

  // The edge's map from request id to the waiting response, the stream hub and the trading
  // sessions: the core reports results into them.
  door.app ??= createApp(tls);
  const app = door.view();
  const answers = new Answers();
  const hub = new StreamHub(app, {
    config,
    // The core is built below, with the hub as its listener; a stream connection reaches it only
    // after the start.
    exchange: { market: (pair) => markets[pair], wantL3: (pair) => exchange.wantL3(pair) },
    metrics,
    maxBackpressureBytes: settings.maxBackpressureBytes,
    log: (line) => log.error(line),
    statuses,
  });
  const sessionDeps: SessionDeps = {
    // The sessions run calls through order entry (built in 7 over this core), and cancel through
    // the core: both are read only when a session's message arrives, after the start.
    get ctx(): EntryContext {
      return core.entry!;
    },
    users,
    orders: sessionOrders(() => exchange),
    ready: () => life.ready && life.fatal === null,
    accepting: () => life.accepting,
    maxBackpressureBytes: settings.maxBackpressureBytes,
    logonDeadlineMs: logonDeadlineMs(),
  };
  const sessions = new SessionHub(sessionDeps);
  // The FIX gateway runs its messages through the same order entry and cancels through the same
  // session orders (docs/API.md 17).
  const fix =
    settings.fixPort === undefined
      ? null
      : new FixGateway({
          get ctx(): EntryContext {
            return core.entry!;
          },
          users,
          orders: sessionDeps.orders,
          compId: settings.fixCompId,
          ready: sessionDeps.ready,
          accepting: sessionDeps.accepting,
          maxBackpressureBytes: settings.maxBackpressureBytes,
          logonDeadlineMs: sessionDeps.logonDeadlineMs,
        });
  const sessionListeners = bothListeners(hub, sessions.reports);
  const listener = fix === null ? sessionListeners : bothListeners(sessionListeners, fix.reports);
  // A pair status change reaches the `status` channel and the sessions after its commit.
  admin.statusListener = listener;
  const exchange: Exchange = new Exchange({
    ledger,
    db: writer,
    sink: answers,
    listener,
    statuses,
    nextOrderId: state.nextOrderId,
    nextTradeId: state.nextTradeId,
    clientIds,
    clientIdStored: (user, id) => reader.orderByClientId(user, id).then((row) => row !== undefined),
    feeUser,
    execSeqs: state.execSeqs,
    follower: settings.follow !== undefined,
    // Followers serve live streams from the journaled book changes (src/replication/follower-apply.ts).
    journalSteps: settings.replicationPort !== undefined,
  });
  const core: Core = {
    writer,
    reader,
    metrics,
    admin,
    backups,
    markets,
    app,
    answers,
    hub,
    sessions,
    sessionDeps,
    fix,
    exchange,
    entry: null,
    execEpoch: stored.execEpoch,
    users,
    ledger,
    statuses,
    feeUser,
  };
  return core;
}

/**
 * 5. pair workers, each fed its open orders back in id order and its stored MMP settings; the
 * cancel-on-disconnect orders that outlived their session are cancelled, and everything committed.
 */
async function startPairs(
  settings: Settings,
  stored: StoredState,
  core: Core,
  life: Lifecycle,
  log: Logger,
): Promise<{ channels: PairChannel[]; waitStrategy: string }> {
  const { config, state } = stored;
  const { exchange, markets, metrics, writer } = core;
  const waitStrategy = chooseWaitStrategy(settings.waitStrategy, availableParallelism(), config.pairs.length);
  log.info(
    { waitStrategy, cores: availableParallelism(), pairs: config.pairs.length },
    `pair workers wait for commands: ${waitStrategy} (${availableParallelism()} cores, ${config.pairs.length} pairs)`,
  );
  const channels: PairChannel[] = [];
  for (const p of config.pairs) {
    const rec = state.pairs.get(p.name);
    const channel = new PairChannel({
      pairName: p.name,
      minNotional: p.minNotional,
      lastPrice: markets[p.index].lastTrade,
      onEvent: pairEventHandler(exchange, p.index, () => metrics.trade(p.index)),
      workerSpin: workerSpinFor(waitStrategy),
    });
    channels.push(channel);
    channel.exited.then((code) => {
      if (life.closing === null) life.fail(`pair worker ${p.name} exited (code ${code})`);
    });
    exchange.addPair(
      p,
      markets[p.index],
      channel,
      config.currencies.get(p.base)!.scale,
      config.currencies.get(p.quote)!.scale,
      rec?.bookSeq ?? 0,
      rec?.bookMicro ?? 0,
    );
  }
  await Promise.all(channels.map((c) => c.ready));
  const restored: OrderState[] = [];
  for (const row of state.openOrders) {
    const p = config.pairsByName.get(row.pair);
    if (p === undefined)
      throw new Error(`open order ${row.id} is on pair ${row.pair}, which the config no longer has`);
    // A cancel-on-disconnect order outlived its session (the process ended): it is cancelled below.
    const session = (row.flags & FLAG_CANCEL_ON_DISCONNECT) !== 0 ? RECOVERED_SESSION : 0;
    restored.push(orderStateOfRow(row, p.index, session));
  }
  // docs/API.md 18: an OCO's two open legs share their hold again.
  linkOcoLegs(restored, config);
  for (const o of restored) while (!exchange.restoreOrder(o)) await exchange.room(o.pair);
  // docs/API.md 8.10: the stored MMP settings into the workers (they keep nothing across a restart);
  // the window and the frozen state start empty. A pair no longer configured keeps its rows.
  for (const m of state.mmpSettings) {
    const p = config.pairsByName.get(m.pair);
    if (p === undefined) continue;
    const mmp = {
      intervalSeconds: m.intervalSeconds,
      qtyLimit: m.qtyLimit,
      frozenSeconds: m.frozenSeconds,
    };
    while (!exchange.mmp.restore(m.userId, p.index, mmp)) await exchange.room(p.index);
  }
  while (config.pairs.some((p) => exchange.inFlight(p.index) > 0)) await new Promise((r) => setTimeout(r, 1));
  // docs/API.md 8.9: no session survives a restart, so every open cancel-on-disconnect order is
  // cancelled through the normal path (holds released, rows committed) before /health turns 200.
  exchange.cancelSessionOrders(RECOVERED_SESSION);
  while (config.pairs.some((p) => exchange.inFlight(p.index) > 0)) await new Promise((r) => setTimeout(r, 1));
  await writer.flush();
  return { channels, waitStrategy };
}

/** 6. config users: created with their key and credited once (the fee account was made in 4). */
async function createConfigUsers(
  config: ExchangeConfig,
  users: Users,
  ledger: Ledger,
  core: Core,
): Promise<void> {
  const { admin, writer } = core;
  for (const u of config.users) {
    if (users.idOf(u.uid) !== undefined) continue;
    if (users.hasToken(u.apiToken))
      throw new Error(`config user ${u.uid}: apiToken already belongs to another user`);
    for (const [currency, amount] of u.balances) {
      if (ledger.sum(ledger.currencyIndex(currency)) + amount > MAX_LEDGER_VALUE)
        throw new Error(
          `config user ${u.uid}: balances.${currency} would take the ${currency} total of all accounts past the ledger's bound of 2^127 - 1 units`,
        );
    }
    const id = admin.createUser(u.uid, { apiToken: u.apiToken, secretKey: u.secretKey });
    for (const [currency, amount] of u.balances) if (amount > 0n) admin.deposit(id, currency, amount);
  }
  // The deposits' balances stay marked changed: the next snapshot writes them again. A snapshot
  // may move meta 'balances_through' only when every balance changed since the last one is in it.
  await writer.flush();
}

/**
 * 7. front end: order entry over the core, the REST routes, the page, the sessions and the stream
 * on one uWS app, listening; /health turns ok. Returns the running exchange and its `close`.
 */
async function startFrontEnd(
  settings: Settings,
  tls: ReturnType<typeof loadTls>,
  lock: DbLock,
  stored: StoredState,
  users: Users,
  core: Core,
  pairs: { channels: PairChannel[]; waitStrategy: string },
  life: Lifecycle,
  follower: FollowerLink | null,
  restarts: Restarts,
  door: FrontDoor,
): Promise<Running> {
  const { config, epochs } = stored;
  const { writer, reader, exchange, app, hub, sessions, fix, backups, answers } = core;
  const { channels, waitStrategy } = pairs;
  // A follower records nothing of its own (its routes refuse what carries a nonce; the stream's
  // nonce is checked in memory only).
  const nonceUsed = (token: string, nonce: bigint) => {
    if (follower === null) writer.nonce(token, nonce);
  };
  // Runs after the commit of every record so far, the nonces persisted just before included.
  const afterNonces = (then: () => void) => writer.afterCommit(then);
  const deadMan = new DeadMansSwitch((user) => {
    if (life.accepting) exchange.cancelAll(user, -1, NO_REQUEST, 0, true);
  });
  const listenKeys = new ListenKeys(settings.listenKeyTtlMs);
  // Shared by the REST routes, the stream upgrade and the sessions.
  const isReady = () => life.ready && life.fatal === null && (follower === null || follower.ready);
  // A follower: its read models take each batch of its leader in place and tell the stream.
  const followerState =
    follower === null
      ? null
      : new FollowerState({
          dbPath: settings.dbPath,
          config,
          users,
          ledger: core.ledger,
          exchange,
          markets: core.markets,
          statuses: core.statuses,
          feeUser: core.feeUser,
          writer,
          link: follower,
        });
  // The leader's replication port (src/replication/leader.ts), started once the front end listens;
  // a follower opens it once promoted (docs/OPERATIONS.md, "Promoting a follower").
  const leader =
    settings.replicationPort === undefined || follower !== null
      ? null
      : new ReplicationLeader({
          host: settings.host,
          port: settings.replicationPort,
          token: settings.replicationToken,
          tls:
            tls === undefined
              ? undefined
              : { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
          dbPath: settings.dbPath,
          writer,
          backups,
          epoch: epochs.epoch,
          epochStarts: epochs.starts,
          mode: settings.replication,
        });
  const replicationFigures =
    follower !== null
      ? () => ({
          role: "follower",
          epoch: follower.epoch,
          leader: `${settings.follow!.host}:${settings.follow!.port}`,
          replication: follower.mode,
          connected: follower.connected,
          lagMs: follower.lagMs(),
          lastCommit: follower.visible,
          synchronous: follower.synchronous,
          behindSince: follower.behindSince(),
        })
      : leader !== null
        ? () => {
            const st = leader.status();
            return {
              role: "leader",
              epoch: epochs.epoch,
              replication: settings.replication,
              followers: st.followers,
              synchronous: st.synchronous,
              aloneSince: st.aloneSince,
            };
          }
        : // A promoted database without a replication port: its role and epoch.
          epochs.epoch > 1
          ? () => ({ role: "leader", epoch: epochs.epoch, followers: undefined })
          : null;
  const isAccepting = () => life.accepting;
  core.admin.promote = restarts.promote;
  // One order entry layer under every front end (src/entry/): the REST routes and the sessions.
  const entry = entryContext({
    config,
    exchange,
    answers,
    reader,
    metrics: core.metrics,
    deadMan,
    rateLimit: settings.rateLimit,
    execEpoch: core.execEpoch,
  });
  core.entry = entry;
  mountRoutes(
    app,
    entry,
    {
      users,
      reader,
      admin: settings.adminToken === undefined ? null : core.admin,
      ready: isReady,
      accepting: isAccepting,
      nonceUsed,
      afterNonces,
      listenKeys,
      cors: new CorsPolicy(settings.corsOrigins),
      readOnly: follower !== null,
      replicationHealth: replicationFigures,
    },
    servedDocuments(config),
  );
  mountStatic(app, loadStaticFiles(DEFAULT_WEB_DIR));
  mountSession(app, sessions, core.sessionDeps);
  mountStream(app, {
    hub,
    users,
    readOnly: follower !== null,
    idleTimeoutSeconds: settings.idleTimeoutSeconds,
    ready: isReady,
    accepting: isAccepting,
    nonceUsed,
    afterNonces,
    listenKeys,
  });
  // Exclusive: without it uWebSockets.js sets SO_REUSEPORT, and a second server on the same port
  // starts silently and takes half of the connections. A promotion's start goes on with the socket
  // the follower listened on (src/http/front-door.ts).
  const listenSocket =
    door.listenSocket ??
    (await new Promise<uws.us_listen_socket | false>((resolve) => {
      if (isNativeUws()) exclusiveListen(app, settings.host, settings.port, resolve);
      else app.listen(settings.host, settings.port, resolve);
    }));
  if (listenSocket === false) {
    // Free when checked at the start, taken since (or refused by uWebSockets.js itself).
    const reason = (await whyCannotListen(settings.host, settings.port)) ?? "refused by uWebSockets.js";
    life.accepting = false;
    life.closing = (async () => {
      await Promise.all(channels.map((c) => c.close()));
      await writer.close();
      listenKeys.stop();
      await reader.close();
      await backups.close();
    })();
    await life.closing;
    throw new ConfigError(`cannot listen on ${settings.host}:${settings.port}: ${reason}`);
  }
  const port =
    door.listenSocket !== null
      ? door.port
      : isNativeUws()
        ? uws.us_socket_local_port(listenSocket as unknown as uws.us_socket)
        : settings.port;
  door.listenSocket = listenSocket;
  door.port = port;
  /** Stops listening, unless a promotion keeps the socket for the leader it starts. */
  const stopListening = () => {
    if (door.keepListening || door.listenSocket === null) return;
    uws.us_listen_socket_close(door.listenSocket);
    door.listenSocket = null;
  };
  // The FIX gateway's own listener on the same host, TLS only when the server has a certificate.
  let fixPort: number | null = null;
  /**
   * A listener beside the HTTP one cannot start: what started closes (the FIX gateway too once it
   * listens), then the start fails with `message`.
   */
  const abandonStart = async (message: string): Promise<never> => {
    stopListening();
    life.accepting = false;
    if (fixPort !== null) await fix?.shutdown();
    await Promise.all(channels.map((c) => c.close()));
    await writer.close();
    listenKeys.stop();
    await reader.close();
    await backups.close();
    throw new ConfigError(message);
  };
  if (fix !== null) {
    const files =
      tls === undefined ? undefined : { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) };
    try {
      fixPort = await fix.listen(settings.host, settings.fixPort!, files);
    } catch (err) {
      await abandonStart(
        `--fix-port: cannot listen on ${settings.host}:${settings.fixPort}: ${(err as Error).message}`,
      );
    }
  }
  if (replicationFigures !== null) core.metrics.replication(replicationFigures);
  let replicationPort: number | null = null;
  if (leader !== null) {
    try {
      replicationPort = await leader.listen();
    } catch (err) {
      await abandonStart(
        `--replication-port: cannot listen on ${settings.host}:${settings.replicationPort}: ${(err as Error).message}`,
      );
    }
  }
  if (follower !== null && followerState !== null) {
    // The state as the database holds it now, then after each of the leader's batches.
    followerState.refresh();
    follower.attach(
      writer,
      (batch, syms) => followerState.changed(batch, syms),
      (reason) => life.fail(reason),
      restarts.recopy,
    );
  }
  life.ready = true;
  const url = `${tls === undefined ? "http" : "https"}://${settings.host}:${port}`;

  // close(): the stages backwards.
  const close = (): Promise<void> => {
    life.closing ??= (async () => {
      life.accepting = false;
      deadMan.clear();
      follower?.close();
      // Sessions end first: their cancel-on-disconnect orders are cancelled while the core runs.
      sessions.shutdown();
      const fixClosed = fix?.shutdown();
      stopListening();
      // Let commands already in the workers finish, so their answers commit and go out.
      const deadline = Date.now() + 10_000;
      while (config.pairs.some((p) => exchange.inFlight(p.index) > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1));
      }
      await Promise.all(channels.map((c) => c.close()));
      exchange.snapshot();
      if (leader !== null) {
        // The followers get every batch, the last snapshot's included, before the port closes.
        await writer.flush();
        await leader.close();
      }
      await writer.close();
      followerState?.close();
      // After the last commit's messages went out: timers stop, streams get 1001.
      listenKeys.stop();
      hub.shutdown();
      await reader.close();
      await backups.close();
      await fixClosed;
      lock.release();
    })();
    return life.closing;
  };
  return {
    port,
    fixPort,
    replicationPort,
    url,
    exchange,
    answers,
    streamHub: hub,
    accounts: users,
    waitStrategy,
    close,
    follower,
  };
}

/** The typings' `ListenOptions` is a type only: the module exports no such object at run time. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1 satisfies uws.ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT;

/** `app.listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, cb)`: the native call takes it, the typings only with a port. */
function exclusiveListen(
  app: uws.TemplatedApp,
  host: string,
  port: number,
  cb: (s: uws.us_listen_socket | false) => void,
): void {
  const listen = app.listen as unknown as (
    host: string,
    port: number,
    options: number,
    cb: (s: uws.us_listen_socket | false) => void,
  ) => uws.TemplatedApp;
  listen.call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, cb);
}

/**
 * Why this process cannot listen on `host:port`, or undefined when it can: node's own listen on the
 * same address, closed at once, names the reason (EADDRINUSE: another process has the port;
 * EADDRNOTAVAIL / ENOTFOUND: not an address of this machine), where uWebSockets.js says only that
 * listening failed.
 */
function whyCannotListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") resolve("the port is in use by another process");
      else if (err.code === "EADDRNOTAVAIL") resolve(`${host} is not an address of this machine`);
      else if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN") resolve(`host ${host} is not known`);
      else if (err.code === "EACCES") resolve(`permission denied for port ${port}`);
      else resolve(err.message);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * The core's session orders (docs/API.md 8.9): the tag a created order carries, and the cancels.
 * `core` gives the core, which is built after the sessions (it reports to them).
 */
function sessionOrders(core: () => Exchange): SessionOrders {
  return {
    tag: (v, session) => {
      v.session = session;
    },
    cancelSessionOrders: (session) => core().cancelSessionOrders(session),
  };
}

/** SESSION_LOGON_DEADLINE_MS: a shorter logon deadline, for tests only (default 10 s, docs/API.md 13). */
function logonDeadlineMs(): number | undefined {
  const v = Number(process.env.SESSION_LOGON_DEADLINE_MS);
  return Number.isInteger(v) && v > 0 ? v : undefined;
}
