/**
 * The admin interface (docs/API.md 11): users, API keys, deposits and withdrawals. Mounted only when
 * ADMIN_TOKEN is set. Every change is persisted and answered after its commit, like orders.
 *
 * Every admin call is logged at `info` (docs/OPERATIONS.md "Logs"): what it did, as fields (`uid`,
 * `currency`, `amount`, the first 8 characters of an API token), or why it was refused; never the
 * admin token, a secret key or a whole API token.
 */
import type { HttpResponse, TemplatedApp } from "@trufflesuite/uws-js-unofficial";
import { secretsEqual } from "../accounts/hmac.ts";
import { Users } from "../accounts/users.ts";
import type { ExchangeConfig } from "../config/exchange-config.ts";
import { MAX_LEDGER_VALUE } from "../config/ledger-bounds.ts";
import type { CommitListener } from "../core/exchange.ts";
import type { Ledger } from "../core/ledger.ts";
import { PAIR_STATUS_NAMES, type PairStatuses, pairStatusKey, pairStatusOf } from "../core/pair-status.ts";
import type { Backups } from "../db/backup.ts";
import type { DbWriter } from "../db/writer.ts";
import { unknownFields } from "../entry/fields.ts";
import { decimalsSaid } from "../entry/validate.ts";
import { multiErrorBody } from "../errors/bodies.ts";
import { Code } from "../errors/catalogue.ts";
import { log, tokenPrefix } from "../util/log.ts";
import { formatDecimal, parseDecimal } from "../util/numbers.ts";
import { nowMicro } from "../util/time.ts";
import { isJsonObject, parseJsonBody, unreadableBodyCode } from "../wire/json-body.ts";
import {
  type Finish,
  isJsonMediaType,
  MAX_BODY,
  type RequestInfo,
  readBody,
  readRequest,
  send,
  sendError,
  sendMethodNotAllowed,
} from "../wire/request.ts";
import { UUID_RE } from "../wire/request-schemas.ts";
import { serialize } from "../wire/schemas.ts";
import { parseAuthorization } from "./auth.ts";

/** What admin operations persist. */
export type AdminSink = Pick<
  DbWriter,
  "user" | "apiKey" | "revokeKey" | "transfer" | "balance" | "meta" | "afterCommit"
>;

const TRANSFER_FIELDS = ["uid", "currency", "amount"];

export class Admin {
  private readonly token: string;
  private readonly users: Users;
  private readonly ledger: Ledger;
  private readonly db: AdminSink;
  private readonly config: ExchangeConfig;
  private readonly statuses: PairStatuses;

  constructor(
    token: string,
    users: Users,
    ledger: Ledger,
    db: AdminSink,
    config: ExchangeConfig,
    statuses: PairStatuses,
  ) {
    this.token = token;
    this.users = users;
    this.ledger = ledger;
    this.db = db;
    this.config = config;
    this.statuses = statuses;
  }

  /** The fee account's user id (docs/API.md 9): it gets no API key; -1 until the server sets it. */
  feeUser = -1;

  /**
   * Told of each pair status change once it is committed: the stream hub and the trading sessions
   * (docs/API.md 11); null until the server sets it.
   */
  statusListener: Pick<CommitListener, "pairStatusChanged"> | null = null;

  /** What `POST /admin/backup` runs (docs/API.md 11); null until the server sets it (then 404). */
  backups: Backups | null = null;
  /** A follower (docs/OPERATIONS.md, "A second box: follower"): every admin write but a backup is refused. */
  readOnly = false;
  /**
   * What `POST /admin/promote` runs (src/boot.ts; docs/OPERATIONS.md, "Promoting a follower"): it
   * resolves once this server is the leader, or with the code it refused with.
   */
  promote:
    | ((
        force: boolean,
      ) => Promise<{ epoch: number; began: number; forced: boolean } | { refused: number; reason?: string }>)
    | null = null;

  /** Creates a user (with a first API key unless `key` is null). Admin API, config users, fee account. */
  createUser(uid: string, key: { apiToken: string; secretKey: string } | null): number {
    const id = this.users.nextId();
    const micro = nowMicro();
    this.users.add(id, uid);
    this.ledger.ensureUser(id);
    this.db.user(id, uid, micro);
    if (key !== null) this.addKey(id, key);
    return id;
  }

  addKey(userId: number, key: { apiToken: string; secretKey: string }): void {
    this.users.addKey(key.apiToken, userId, key.secretKey, false);
    this.db.apiKey(key.apiToken, userId, key.secretKey, nowMicro());
  }

  /** Credits `amount` (ledger units) to a user's available balance. */
  deposit(userId: number, currency: string, amount: bigint): void {
    const c = this.ledger.currencyIndex(currency);
    this.ledger.deposit(userId, c, amount);
    this.db.transfer(userId, currency, amount, "deposit", nowMicro());
    this.db.balance(userId, currency, this.ledger.available(userId, c), this.ledger.reserved(userId, c));
  }

  mount(app: TemplatedApp, routeFinish: Finish): void {
    // A refused call is logged here, one line each (a 500 is logged where it is answered, with its
    // request id); a call that did something is logged by its handler, below.
    const finish: Finish = (info, status) => {
      if (status !== 200 && status !== 500) {
        const fields = { route: info.route, status };
        if (status === 401) log().warn(fields, `admin call ${info.route} refused: bad admin token`);
        else log().info(fields, `admin call ${info.route} refused (${status})`);
      }
      routeFinish(info, status);
    };
    // Each admin path and its methods, as mounted below: the `Allow` of its 405 (RFC 9110).
    const methods = new Map<string, string[]>();
    const allow = (path: string, method: string) => {
      const list = methods.get(path);
      if (list === undefined) methods.set(path, [method]);
      else list.push(method);
    };
    const post = (
      route: string,
      fields: readonly string[],
      handle: (res: HttpResponse, info: RequestInfo, body: Record<string, unknown>) => void,
    ) => {
      const allowed = new Set(fields);
      allow(route, "POST");
      app.post(route, (res, req) => {
        const info = readRequest(res, req, route);
        if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
        if (info.contentLength > MAX_BODY) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
        if (!isJsonMediaType(info.contentType))
          return sendError(res, info, Code.UNSUPPORTED_MEDIA_TYPE, finish);
        readBody(res, info, (raw) => {
          if (raw === null) return sendError(res, info, Code.BODY_TOO_LARGE, finish);
          if (!secretsEqual(this.token, parseAuthorization(info.authorization) ?? undefined)) {
            return sendError(res, info, Code.AUTH_ADMIN_INVALID, finish);
          }
          // A follower's database takes only its leader's changes; a backup changes nothing.
          if (this.readOnly && route !== "/admin/backup" && route !== "/admin/promote")
            return sendError(res, info, Code.FOLLOWER_READ_ONLY, finish);
          let body: unknown;
          try {
            body = parseJsonBody(raw.toString("utf8"));
          } catch (err) {
            return sendError(res, info, unreadableBodyCode(err), finish);
          }
          if (!isJsonObject(body)) {
            return sendError(res, info, Code.BODY_NOT_OBJECT, finish);
          }
          const unknown = unknownFields(body as Record<string, unknown>, allowed);
          if (unknown.length > 0) return send(res, info, 400, multiErrorBody(unknown, info.lang), finish);
          handle(res, info, body as Record<string, unknown>);
        });
      });
    };
    const committed = (res: HttpResponse, info: RequestInfo, body: string) => {
      this.db.afterCommit(() => send(res, info, 200, body, finish));
    };
    const userOf = (res: HttpResponse, info: RequestInfo, uid: unknown): number | undefined => {
      if (uid === undefined || uid === null) return void sendError(res, info, Code.UID_REQUIRED, finish);
      if (typeof uid !== "string" || !UUID_RE.test(uid))
        return void sendError(res, info, Code.UID_INVALID, finish);
      const id = this.users.idOf(uid);
      if (id === undefined) return void sendError(res, info, Code.UID_UNKNOWN, finish);
      return id;
    };

    post("/admin/users", ["uid"], (res, info, body) => {
      // Only an absent uid asks for a new one: null is not a uid (docs/API.md 1, 11).
      let uid = body.uid;
      if (uid === undefined) uid = Users.newUid();
      else if (typeof uid !== "string" || !UUID_RE.test(uid))
        return sendError(res, info, Code.UID_INVALID, finish);
      const norm = (uid as string).toLowerCase();
      if (this.users.idOf(norm) !== undefined) return sendError(res, info, Code.UID_EXISTS, finish);
      const key = Users.newKeyPair();
      this.createUser(norm, key);
      log().info({ uid: norm, apiTokenPrefix: tokenPrefix(key.apiToken) }, "admin: user created");
      committed(res, info, serialize.newUser({ uid: norm, ...key }));
    });

    post("/admin/api-keys", ["uid"], (res, info, body) => {
      const id = userOf(res, info, body.uid);
      if (id === undefined) return;
      if (id === this.feeUser) return sendError(res, info, Code.UID_FEE_ACCOUNT, finish);
      const key = Users.newKeyPair();
      this.addKey(id, key);
      log().info({ uid: body.uid, apiTokenPrefix: tokenPrefix(key.apiToken) }, "admin: API key created");
      committed(res, info, serialize.newKey(key));
    });

    post("/admin/api-keys/revoke", ["apiToken"], (res, info, body) => {
      const token = body.apiToken;
      if (typeof token !== "string" || token === "")
        return sendError(res, info, Code.API_TOKEN_REQUIRED, finish);
      if (!this.users.revoke(token)) return sendError(res, info, Code.API_TOKEN_UNKNOWN, finish);
      this.users.nonces.forget(token);
      this.db.revokeKey(token);
      log().info({ apiTokenPrefix: tokenPrefix(token) }, "admin: API key revoked");
      committed(res, info, "[]");
    });

    const transfer =
      (kind: "deposit" | "withdraw") =>
      (res: HttpResponse, info: RequestInfo, body: Record<string, unknown>) => {
        const id = userOf(res, info, body.uid);
        if (id === undefined) return;
        const currency = body.currency;
        if (currency === undefined || currency === null)
          return sendError(res, info, Code.CURRENCY_REQUIRED, finish);
        const cur = typeof currency === "string" ? this.config.currencies.get(currency) : undefined;
        if (cur === undefined) return sendError(res, info, Code.CURRENCY_UNKNOWN, finish);
        if (body.amount === undefined || body.amount === null)
          return sendError(res, info, Code.AMOUNT_REQUIRED, finish);
        const amount = parseDecimal(body.amount, cur.scale);
        if (typeof amount !== "bigint") {
          const [code, extra] = decimalsSaid(Code.AMOUNT_REQUIRED + amount, amount, cur.scale);
          return sendError(res, info, code, finish, extra);
        }
        const c = this.ledger.currencyIndex(cur.name);
        if (kind === "deposit") {
          // The ledger's bound (config.ts MAX_LEDGER_VALUE) holds for the currency's total, so
          // every balance, hold and fee stays within it whatever the trades; a balance past it
          // is named as such.
          if (this.ledger.available(id, c) + this.ledger.reserved(id, c) + amount > MAX_LEDGER_VALUE) {
            return sendError(res, info, Code.BALANCE_TOO_LARGE, finish);
          }
          if (this.ledger.sum(c) + amount > MAX_LEDGER_VALUE) {
            return sendError(res, info, Code.LEDGER_TOTAL_TOO_LARGE, finish);
          }
          this.deposit(id, cur.name, amount);
        } else {
          if (!this.ledger.withdraw(id, c, amount))
            return sendError(res, info, Code.INSUFFICIENT_FUNDS, finish);
          this.db.transfer(id, cur.name, -amount, "withdraw", nowMicro());
          this.db.balance(id, cur.name, this.ledger.available(id, c), this.ledger.reserved(id, c));
        }
        log().info(
          {
            uid: body.uid,
            currency: cur.name,
            amount: formatDecimal(amount, cur.scale),
            balance: formatDecimal(this.ledger.available(id, c), cur.scale),
          },
          kind === "deposit" ? "admin: deposit" : "admin: withdrawal",
        );
        committed(
          res,
          info,
          serialize.balance({
            currency: cur.name,
            balance: formatDecimal(this.ledger.available(id, c), cur.scale),
          }),
        );
      };
    post("/admin/deposit", TRANSFER_FIELDS, transfer("deposit"));
    post("/admin/withdraw", TRANSFER_FIELDS, transfer("withdraw"));

    // docs/API.md 11: a pair's status, decided at R1 from the next command on; kept in meta and
    // answered after its commit.
    post("/admin/pairs/status", ["pairName", "status"], (res, info, body) => {
      const name = body.pairName;
      if (name === undefined || name === null) return sendError(res, info, Code.PAIR_REQUIRED, finish);
      if (typeof name !== "string") return sendError(res, info, Code.PAIR_NOT_STRING, finish);
      const pair = this.config.pairsByName.get(name);
      if (pair === undefined) return sendError(res, info, Code.PAIR_UNKNOWN, finish);
      const status = pairStatusOf(body.status);
      if (status < 0) return sendError(res, info, Code.PAIR_STATUS_INVALID, finish);
      const before = this.statuses.get(pair.index);
      this.statuses.set(pair.index, status);
      this.db.meta(pairStatusKey(pair.name), status);
      const statusName = PAIR_STATUS_NAMES[status];
      log().info(
        { pairName: pair.name, status: statusName, was: PAIR_STATUS_NAMES[before] },
        "admin: pair status set",
      );
      const answer = serialize.pairStatus({ pairName: pair.name, status: statusName });
      // Published like every stream message, after its commit, and only when it changed something
      // (docs/API.md 11, DECISIONS.md "Pair status published"); the answer follows.
      const listener = status === before ? null : this.statusListener;
      this.db.afterCommit(() => {
        try {
          listener?.pairStatusChanged?.(pair.index, pair.name, statusName);
        } catch (err) {
          log().error({ pairName: pair.name, err }, "admin: publishing the pair status failed");
        }
        send(res, info, 200, answer, finish);
      });
    });

    // docs/API.md 11: a consistent copy of the database, answered once it is whole on disk. The
    // copy runs on a reader thread (src/db/backup.ts); orders go on meanwhile.
    post("/admin/backup", [], (res, info) => {
      const backups = this.backups;
      if (backups === null) return sendError(res, info, Code.UNKNOWN_PATH, finish);
      // `send` writes corked and not at all once the client went away (readRequest's onAborted).
      // A failure is a 500: logged at `error` with its cause under the request id the answer names.
      backups.take().then(
        (made) => {
          log().info(made, "admin: backup made");
          send(res, info, 200, serialize.backup(made), finish);
        },
        (err: unknown) => sendError(res, info, Code.BACKUP_FAILED, finish, undefined, err),
      );
    });

    // docs/API.md 11: a follower becomes the leader. The answer goes once the server runs as the
    // leader (on this connection, which the restart of the listener leaves open).
    post("/admin/promote", ["force"], (res, info, body) => {
      const force = body.force;
      if (force !== undefined && typeof force !== "boolean")
        return sendError(res, info, Code.PROMOTE_FORCE_INVALID, finish);
      const promote = this.promote;
      if (promote === null || !this.readOnly) return sendError(res, info, Code.NOT_A_FOLLOWER, finish);
      promote(force === true).then(
        (done) => {
          if ("refused" in done) return sendError(res, info, done.refused, finish, done.reason);
          log().info(done, "admin: promoted");
          send(res, info, 200, serialize.promote({ role: "leader", ...done }), finish);
        },
        (err: unknown) => sendError(res, info, Code.INTERNAL, finish, undefined, err),
      );
    });

    // docs/API.md 9: the fee account's balances, one per configured currency (the account never
    // reserves anything, so its balance is its available amount). Taken out with /admin/withdraw.
    allow("/admin/fees", "GET");
    app.get("/admin/fees", (res, req) => {
      const info = readRequest(res, req, "/admin/fees");
      if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
      if (!secretsEqual(this.token, parseAuthorization(info.authorization) ?? undefined)) {
        return sendError(res, info, Code.AUTH_ADMIN_INVALID, finish);
      }
      const fee = this.feeUser;
      const out = [...this.config.currencies.values()].map((cur) => {
        const c = this.ledger.currencyIndex(cur.name);
        const has = fee >= 0 && this.ledger.hasUser(fee);
        return {
          currency: cur.name,
          balance: formatDecimal(has ? this.ledger.available(fee, c) : 0n, cur.scale),
        };
      });
      log().info({ route: "/admin/fees" }, "admin: fee balances read");
      send(res, info, 200, serialize.fees(out), finish);
    });
    // docs/API.md 11: one user as the operator sees it: balances of every configured currency (in
    // config order) and the keys by their first 8 characters (never a whole token or a secret).
    const userPath = "/admin/users/:uid";
    allow(userPath, "GET");
    app.get(userPath, (res, req) => {
      const info = readRequest(res, req, "/admin/users/{uid}");
      if (info.overLimit !== 0) return sendError(res, info, info.overLimit, finish);
      const uid = req.getParameter(0) ?? "";
      if (!secretsEqual(this.token, parseAuthorization(info.authorization) ?? undefined)) {
        return sendError(res, info, Code.AUTH_ADMIN_INVALID, finish);
      }
      const id = UUID_RE.test(uid) ? this.users.idOf(uid) : undefined;
      if (id === undefined) return sendError(res, info, Code.USER_NOT_FOUND_PATH, finish);
      const has = this.ledger.hasUser(id);
      const balances = [...this.config.currencies.values()].map((cur) => {
        const c = this.ledger.currencyIndex(cur.name);
        return {
          currency: cur.name,
          balance: formatDecimal(has ? this.ledger.available(id, c) : 0n, cur.scale),
          reserved: formatDecimal(has ? this.ledger.reserved(id, c) : 0n, cur.scale),
        };
      });
      const apiKeys = this.users
        .keysOf(id)
        .map((k) => ({ apiTokenPrefix: tokenPrefix(k.token), revoked: k.revoked }));
      log().info({ route: "/admin/users/{uid}", uid: this.users.uids[id] }, "admin: user read");
      send(res, info, 200, serialize.adminUser({ uid: this.users.uids[id], balances, apiKeys }), finish);
    });
    for (const [path, list] of methods) {
      const allowHeader = list.join(", ");
      app.any(path, (res, req) =>
        sendMethodNotAllowed(res, readRequest(res, req, path), allowHeader, finish),
      );
    }
    app.any("/admin/*", (res, req) => {
      const info = readRequest(res, req, "/admin");
      sendError(res, info, info.overLimit !== 0 ? info.overLimit : Code.UNKNOWN_PATH, finish);
    });
  }
}
