/**
 * A follower's link to its leader (docs/OPERATIONS.md, "A second box: follower"; the protocol:
 * protocol.ts). At start (`position`, src/boot.ts stage 2) it says where its database is and, when
 * it has nothing or is too far behind, takes the leader's copy in place of its database file
 * before anything opens it. From then on every batch the leader journaled goes, as the leader
 * wrote it, into this server's own writer (DbWriter.appendBatch) with meta 'replication_through'
 * set to the batch's key (the batches of one connection that arrive during a commit share the
 * next one): the follower's commit makes them durable and its crash recovery is the ordinary one. After each commit the read models take the batch in place
 * and the stream is told (follower-state.ts). A lost leader is asked again every RETRY_MS; meanwhile the server
 * serves what it has. A link that hears nothing for SILENT_MS (the leader sends a head every
 * HEAD_EVERY_MS) is taken for lost: a cut network ends no connection by itself. A follower with a
 * database of its own starts without its leader when the leader cannot be reached, and a follower
 * whose leader no longer holds what it lacks takes a new copy by a restart in the process
 * (docs/OPERATIONS.md, "A second box: follower").
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import type { DbWriter } from "../db/writer.ts";
import { EXEC_EPOCH_BUMP } from "../protocol/db/backup-tasks.ts";
import { REPLICATION_SETTLED } from "../protocol/db/batch-apply.ts";
import { openDatabase } from "../protocol/db/db-open.ts";
import { type DecodedRow, decode, type JournalRow, journalPath } from "../protocol/db/journal.ts";
import { log } from "../util/log.ts";
import { asFollowerCopy, REPLICATION_THROUGH, readEpochs, storedHistory } from "./epoch.ts";
import {
  FRAME_BATCH,
  FRAME_BYTES,
  FrameReader,
  HEAD_EVERY_MS,
  jsonFrame,
  PROTOCOL_VERSION,
  parseBatch,
  parseMessage,
  SILENT_MS,
  type ToFollower,
} from "./protocol.ts";

export { REPLICATION_THROUGH };
/** Between two attempts to reach the leader. */
const RETRY_MS = 500;
/** At most one line per this long about a leader that cannot be reached. */
const WARN_EVERY_MS = 30_000;
/** An `async` leader hears this follower's `durable` at most this often (it only shows it). */
const ASYNC_DURABLE_MS = 100;
/** From the leader's welcome to its first head or copy: a copy takes the leader a backup first. */
const COPY_WAIT_MS = 120_000;
/** Leader batches handed to the writer and not committed yet, at most (a follower far behind catches up in commits of this many). */
const HANDED_MAX = 256;

export interface FollowerOptions {
  host: string;
  port: number;
  token: string;
  /** Speak TLS to the leader (FOLLOW `tls://HOST:PORT`); the certificate is checked as node does. */
  tls: boolean;
  dbPath: string;
}

export class FollowerLink {
  /** The last key handed to the writer (every key up to it commits unless the process dies). */
  private position = 0;
  /** The last key committed to this database. */
  committed = 0;
  /** The last key whose state the read models show (follower-state.ts sets it). */
  visible = 0;
  /** The leader's epoch, from its welcome and heads. */
  epoch = 1;
  /** What the hello says of this database: its epoch, and whether it led it (an old leader's). */
  private dbEpoch = 1;
  private led = false;
  /** The leader's mode, from its welcome. */
  mode: "async" | "sync" = "async";
  /**
   * When this process started following, until the leader's first welcome (Date.now()), then null:
   * a follower started while its leader could not be reached does not know what the leader
   * answered meanwhile.
   */
  private unheardSince: number | null = Date.now();
  /**
   * `sync`: the leader counts this follower's acks for its answers, and it holds every answered
   * change once it has this key; null: it does not (the leader said so, or this follower has been
   * away from it since `unsyncedAt`).
   */
  private syncFrom: number | null = null;
  private unsyncedAt = Date.now();
  /** When the link was last lost (Date.now()). */
  private lostAt: number | null = null;
  /** Since when it cannot vouch for holding every change its leader answered (null: it can). */
  private behindAt: number | null = null;
  /** Following is paused for a promotion: no reconnect. */
  private paused = false;
  /** The last key this connection's leader was told is durable. */
  private durableSent = 0;
  /** When a `durable` was last written (Date.now()). */
  private sentAt = 0;
  /** The leader's head: its last committed key, and when it was heard (Date.now()). */
  headKey = -1;
  private headAt = 0;
  /** When the link last saw the follower caught up (Date.now()), for the lag. */
  private caughtUpAt = Date.now();
  /**
   * The first head after the start, once visible, or a start without the leader on a database of
   * its own: /health turns ok.
   */
  ready = false;
  /** The leader welcomed this connection and it is not silent. */
  connected = false;
  private socket: net.Socket | null = null;
  private syms: string[] = [];
  /** Batches received and not handed to the writer yet, each with the symbol table of its connection. */
  private queue: { r: JournalRow; syms: string[] }[] = [];
  private writer: DbWriter | null = null;
  /** Some batches handed to the writer are not committed yet (`handed` > 0). */
  private draining = false;
  /** Leader batches handed to the writer and not committed yet, and the symbol table they share. */
  private handed = 0;
  private handedSyms: string[] | null = null;
  /** Batches committed whose `durable` and read models are still to come (afterCommits). */
  private done: { b: DecodedRow; syms: string[] }[] = [];
  private onCommitted: ((batch: DecodedRow, syms: readonly string[]) => void) | null = null;
  /** The leader said to take a copy while the server runs on the database (stage 4 on). */
  private onCopy: (() => void) | null = null;
  private copyAsked = false;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** When a failed try was last logged (Date.now()). */
  private warnedAt = 0;
  /** At start: resolves once the leader answered the hello (after its copy, when one came). */
  private positioned: { resolve: () => void; reject: (err: Error) => void } | null = null;
  private copy: { fd: number; file: string; position: number; bytes: number; got: number } | null = null;

  constructor(private readonly opts: FollowerOptions) {}

  /**
   * Stage 2 of the start: where the database is, with the leader's copy in its place first when
   * the leader says so. Resolves once the leader has answered; a leader that cannot be reached
   * is asked again until it answers, unless the database holds a state already: then the server
   * starts on it, serves what it has and goes on asking. A refusal (wrong token, another version)
   * rejects.
   */
  start(): Promise<void> {
    const stored = storedHistory(this.opts.dbPath);
    this.position = stored.position;
    this.dbEpoch = stored.epoch;
    this.led = stored.led;
    this.epoch = stored.epoch;
    this.committed = this.position;
    this.visible = this.position;
    return new Promise((resolve, reject) => {
      this.positioned = { resolve, reject };
      this.connect();
    });
  }

  /**
   * Stage 4: batches go to `writer` from now on; `onCommitted` runs after each commit, with the
   * batch and its leader's symbol table.
   */
  attach(
    writer: DbWriter,
    onCommitted: (batch: DecodedRow, syms: readonly string[]) => void,
    onFatal: (reason: string) => void,
    onCopy: () => void,
  ): void {
    this.writer = writer;
    this.onCommitted = onCommitted;
    this.onFatal = onFatal;
    this.onCopy = onCopy;
    if (this.copyAsked) onCopy();
    this.kick();
  }

  private onFatal: (reason: string) => void = () => undefined;

  private kick(): void {
    this.drain().catch((err: Error) => {
      this.close();
      this.onFatal(`replication: ${err.message}`);
    });
  }

  /**
   * Milliseconds the read models are behind the leader's last known commit (0: caught up with a
   * head heard within SILENT_MS); otherwise since they last showed the leader's head (the start,
   * for a follower that has not heard its leader since).
   */
  lagMs(now = Date.now()): number {
    if (
      this.connected &&
      now - this.headAt <= SILENT_MS &&
      this.headKey >= 0 &&
      this.visible >= this.headKey &&
      this.queue.length === 0
    )
      return 0;
    return Math.max(0, now - this.caughtUpAt);
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.socket?.destroy();
  }

  /**
   * Promotion's first step (docs/OPERATIONS.md, "Promoting a follower"): stops taking the leader's
   * batches and resolves once every batch received is committed to this database.
   */
  async pause(): Promise<void> {
    this.paused = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.socket?.destroy();
    while (this.queue.length > 0 || this.draining) await new Promise((r) => setTimeout(r, 5));
    this.noteBehind();
  }

  /** Follows again after a promotion that was refused. */
  resume(): void {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.connect();
  }

  /**
   * Why this follower cannot vouch for holding every change its leader answered, or null: the
   * leader told it of commits past what it received, or a `sync` leader does not count it (it went
   * on alone without it). Promotion refuses then, unless forced.
   */
  behind(): string | null {
    if (this.unheardSince !== null)
      return `it has not heard from its leader since it started (${new Date(this.unheardSince).toISOString()}): what the leader answered meanwhile is unknown to it`;
    if (this.headKey > this.position)
      return `the leader's last commit it heard of is journal key ${this.headKey}; it received up to key ${this.position}`;
    if (this.mode === "sync") {
      if (this.syncFrom === null)
        return `the leader went on without it (answers did not wait for it since ${new Date(this.unsyncedAt).toISOString()})`;
      if (this.position < this.syncFrom)
        return `it has not received every change the leader answered without it (up to key ${this.syncFrom})`;
    }
    return null;
  }

  /** Since when `behind()` says something (Date.now()), or null. */
  behindSince(): number | null {
    return this.behindAt;
  }

  /** `sync`: the leader's answers wait for this follower. */
  get synchronous(): boolean {
    return this.mode === "sync" && this.syncFrom !== null && this.connected;
  }

  private noteBehind(): void {
    if (this.behind() === null) this.behindAt = null;
    else if (this.unheardSince !== null) this.behindAt = this.unheardSince;
    else if (this.mode === "sync" && this.syncFrom === null) this.behindAt = this.unsyncedAt;
    else this.behindAt ??= Date.now();
  }
  /** The read models show the database through `key` (follower-state.ts). */
  shown(key: number): void {
    if (key > this.visible) this.visible = key;
    if (this.headKey >= 0 && this.visible >= this.headKey) {
      this.caughtUpAt = Date.now();
      if (!this.ready) {
        this.ready = true;
        log().info({ key }, `follower caught up with its leader at journal key ${key}`);
      }
    }
  }

  private connect(): void {
    if (this.closed) return;
    const { host, port } = this.opts;
    // SNI carries a name only (RFC 6066); an address is checked against the certificate all the same.
    const socket = this.opts.tls
      ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined })
      : net.connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    // Silent for SILENT_MS, connecting included: lost (the leader sends a head every HEAD_EVERY_MS),
    // except while the leader may be making a copy for it (from its `welcome` to the next frame).
    socket.setTimeout(SILENT_MS, () => socket.destroy(new Error(`nothing heard for ${socket.timeout} ms`)));
    const reader = new FrameReader((type, payload) => this.onFrame(type, payload));
    let why: string | null = null;
    socket.once(this.opts.tls ? "secureConnect" : "connect", () => {
      this.durableSent = 0;
      // A new table per connection: the batches still queued keep the one they came with.
      this.syms = [];
      socket.write(
        jsonFrame({
          t: "hello",
          version: PROTOCOL_VERSION,
          token: this.opts.token,
          position: this.position,
          epoch: this.dbEpoch,
          led: this.led,
        }),
      );
    });
    socket.on("data", (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (err) {
        log().error({ err: (err as Error).message }, `replication: ${(err as Error).message}`);
        socket.destroy();
      }
    });
    socket.on("error", (err) => {
      // The first failed try and then one every WARN_EVERY_MS: a leader away for long writes few lines.
      const now = Date.now();
      why = err.message;
      if (this.connected || now - this.warnedAt < WARN_EVERY_MS) return;
      this.warnedAt = now;
      log().warn({ leader: `${host}:${port}` }, `leader ${host}:${port}: ${err.message}`);
    });
    socket.on("close", () => {
      if (this.connected)
        log().warn(
          { leader: `${host}:${port}`, reason: why },
          `lost the leader ${host}:${port} (${why ?? "the connection closed"}); reconnecting`,
        );
      this.connected = false;
      this.socket = null;
      this.lostAt = Date.now();
      if (this.copy !== null) {
        closeSync(this.copy.fd);
        rmSync(this.copy.file, { force: true });
        this.copy = null;
      }
      // A database of its own: the start goes on without the leader (docs/OPERATIONS.md).
      if (this.positioned !== null && this.position > 0 && !this.closed) this.startAlone();
      if (!this.closed && !this.paused) this.retry = setTimeout(() => this.connect(), RETRY_MS);
    });
  }

  /** The start goes on with what the database holds; the link goes on asking the leader. */
  private startAlone(): void {
    log().warn(
      { leader: `${this.opts.host}:${this.opts.port}`, position: this.position },
      `the leader cannot be reached: serving this database's state at journal key ${this.position} meanwhile`,
    );
    this.ready = true;
    this.noteBehind();
    this.answered();
  }

  private onFrame(type: number, payload: Buffer): void {
    // Whatever comes after the welcome ends the wait for a copy: silence counts again (connect).
    if (this.socket?.timeout === COPY_WAIT_MS) this.socket.setTimeout(SILENT_MS);
    if (type === FRAME_BATCH) {
      this.batch(parseBatch(payload));
      this.noteBehind();
      return;
    }
    if (type === FRAME_BYTES) {
      const c = this.copy;
      if (c === null) throw new Error("copy bytes outside a copy");
      writeSync(c.fd, payload);
      c.got += payload.length;
      return;
    }
    const m = parseMessage(payload) as ToFollower;
    this.onMessage(m);
    this.noteBehind();
  }

  private onMessage(m: ToFollower): void {
    switch (m.t) {
      case "refused":
        this.refused(m.reason);
        return;
      case "welcome":
        this.socket?.setTimeout(COPY_WAIT_MS);
        this.connected = true;
        this.unheardSince = null;
        this.epoch = m.epoch;
        this.mode = m.mode;
        // Away from the leader: whatever it answered meanwhile did not wait for this follower.
        if (this.syncFrom !== null) {
          this.syncFrom = null;
          this.unsyncedAt = this.lostAt ?? Date.now();
        }
        return;
      case "sync":
        if (m.on) this.syncFrom = m.from;
        else if (this.syncFrom !== null) {
          this.syncFrom = null;
          this.unsyncedAt = Date.now();
        }
        log().info(
          { synchronous: m.on, from: m.from },
          m.on
            ? `the leader's answers wait for this follower from journal key ${m.from}`
            : "the leader goes on without this follower's acks",
        );
        return;
      case "copy":
        this.beginCopy(m.position, m.bytes);
        return;
      case "copyEnd":
        this.endCopy();
        return;
      case "syms":
        for (const name of m.names) this.syms.push(name);
        this.answered();
        return;
      case "head": {
        this.answered();
        // What it holds from before this connection (its database, a copy) is durable too: a
        // `sync` leader counts this follower once its acks reach where it caught up. An `async`
        // leader only shows the acks: at most one per ASYNC_DURABLE_MS. And one per HEAD_EVERY_MS
        // at least: a leader takes a follower silent for SILENT_MS for lost.
        const now = Date.now();
        const since = now - this.sentAt;
        if (
          (this.committed > this.durableSent && (this.mode === "sync" || since >= ASYNC_DURABLE_MS)) ||
          since >= HEAD_EVERY_MS
        )
          this.sendDurable(Math.max(this.committed, this.durableSent));
        this.headKey = m.key;
        this.headAt = now;
        this.epoch = m.epoch;
        this.shown(this.visible);
        return;
      }
    }
  }

  /** A BATCH frame: one journal row of the leader (its `slots` a view into the frame). */
  private batch(r: JournalRow): void {
    this.answered();
    if (r.seq <= this.position) return;
    this.queue.push({ r, syms: this.syms });
    this.position = r.seq;
    this.kick();
  }

  private sendDurable(key: number): void {
    this.durableSent = key;
    this.sentAt = Date.now();
    this.socket?.write(jsonFrame({ t: "durable", key }));
  }

  private answered(): void {
    const p = this.positioned;
    if (p === null) return;
    this.positioned = null;
    p.resolve();
  }

  private refused(reason: string): void {
    log().error({ reason }, `the leader refused this follower: ${reason}`);
    // Behind, or a copy that failed, may go when asked again; anything else would only repeat.
    if (/^behind|^copy failed/.test(reason)) return;
    this.closed = true;
    const p = this.positioned;
    if (p !== null) {
      this.positioned = null;
      p.reject(new Error(`the leader refused this follower: ${reason}`));
    }
  }

  private beginCopy(position: number, bytes: number): void {
    if (this.positioned === null) {
      // Running on its database already: it cannot be swapped under the server, which starts
      // again in this process and takes the copy then (src/boot.ts).
      log().warn(
        { position },
        "the leader no longer holds what this follower lacks: starting again to take a new copy",
      );
      this.closed = true;
      this.socket?.destroy();
      this.copyAsked = true;
      this.onCopy?.();
      return;
    }
    const file = `${this.opts.dbPath}.copy`;
    this.copy = { fd: openSync(file, "w"), file, position, bytes, got: 0 };
  }

  /** The copy is whole: synced, then in place of the database (and its journal), as the leader's state. */
  private endCopy(): void {
    const c = this.copy;
    if (c === null) throw new Error("copyEnd outside a copy");
    this.copy = null;
    fsyncSync(c.fd);
    closeSync(c.fd);
    if (c.got !== c.bytes) throw new Error(`copy of ${c.got} bytes, the leader said ${c.bytes}`);
    const db = this.opts.dbPath;
    for (const f of [
      db,
      `${db}-wal`,
      `${db}-shm`,
      journalPath(db),
      `${journalPath(db)}-wal`,
      `${journalPath(db)}-shm`,
    ])
      rmSync(f, { force: true });
    renameSync(c.file, db);
    const conn = openDatabase(db);
    try {
      conn
        .transaction(() => {
          // The copy is the leader's present, not an old state: the execution numbers keep their epoch.
          conn.prepare("DELETE FROM meta WHERE key = ?").run(EXEC_EPOCH_BUMP);
          conn
            .prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
            .run(REPLICATION_THROUGH, c.position);
          // The copy's orders above its own mark may lack records still to come in later batches.
          conn
            .prepare(
              "INSERT OR REPLACE INTO meta (key, value) SELECT ?, value FROM meta WHERE key = 'user_orders_through'",
            )
            .run(REPLICATION_SETTLED);
          asFollowerCopy(conn);
        })
        .immediate();
      this.dbEpoch = readEpochs(conn).epoch;
      this.led = false;
    } finally {
      conn.close();
    }
    log().info(
      { position: c.position, bytes: c.bytes },
      `took the leader's copy at journal key ${c.position}`,
    );
    this.position = c.position;
    this.committed = c.position;
    this.visible = c.position;
  }

  /**
   * Hands the queued batches to the writer, each as its own records with meta
   * 'replication_through' set to its key, without waiting for a commit in between: those that
   * arrive while a commit is in flight go into the writer's next batch together (its group
   * commit), so the follower commits as often as its disk allows, not once per leader batch.
   * Batches of another connection (another symbol table, perhaps another leader run) wait until
   * those handed before them are committed: two leader runs' batches never share a commit. After
   * each commit, `afterCommits` sends one `durable` for the last key it holds, then the read
   * models take its batches in order.
   */
  private async drain(): Promise<void> {
    const writer = this.writer;
    if (writer === null) return;
    while (this.queue.length > 0 && this.handed < HANDED_MAX) {
      const { r, syms } = this.queue[0];
      if (this.handed > 0 && syms !== this.handedSyms) return;
      const b = decode(r);
      if (b.legacy) throw new Error(`leader batch ${r.seq} is of an older layout`);
      this.queue.shift();
      writer.appendBatch(b.counts, b.slots, b.strs, syms, b.settledBelow);
      writer.meta(REPLICATION_THROUGH, b.seq);
      if (b.settledBelow > 0) writer.meta(REPLICATION_SETTLED, b.settledBelow - 1);
      this.handed++;
      this.handedSyms = syms;
      this.draining = true;
      writer.afterCommit(() => {
        // The callbacks of one commit run together: the last of them has the key to acknowledge.
        if (this.done.push({ b, syms }) === 1) queueMicrotask(this.afterCommits);
      });
    }
  }

  /** The batches of a commit are durable: one `durable` for the last, then the read models. */
  private readonly afterCommits = (): void => {
    const done = this.done;
    this.done = [];
    this.handed -= done.length;
    this.draining = this.handed > 0;
    const last = done[done.length - 1].b.seq;
    this.committed = last;
    // An `async` leader answers without it: the next head's answer carries it (see "head").
    if (this.mode === "sync") this.sendDurable(last);
    try {
      for (const { b, syms } of done) this.onCommitted?.(b, syms);
    } catch (err) {
      this.close();
      this.onFatal(`replication: ${(err as Error).message}`);
      return;
    }
    if (this.queue.length > 0) this.kick();
  };
}
