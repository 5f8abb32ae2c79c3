/**
 * The leader's replication port (docs/OPERATIONS.md, "A second box: follower"; the protocol:
 * protocol.ts). It writes nothing of its own: it reads what the journal file already holds
 * (src/protocol/db/journal.ts) from a read-only connection, after each commit, and ships the rows
 * above each follower's position in key order. A follower with nothing, or behind the journal's
 * trim mark, first gets a copy of the database made by the online backup (src/db/backup.ts).
 *
 * With `--replication sync` it is the writer's release gate (DbWriter.setReleaseGate): a committed
 * batch's answers, reports and stream messages wait until a synchronous follower's `durable`
 * covers its key. A follower becomes synchronous once its acks reach where the journal was when
 * it first caught up; it stops being one when it disconnects or leaves a batch waiting longer than
 * SYNC_TIMEOUT_MS. With none, the leader goes on alone (a `warn` line; `/health`, `/metrics`) and
 * answers at its own commit (docs/OPERATIONS.md, "A second box: follower").
 */
import { timingSafeEqual } from "node:crypto";
import { createReadStream, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import type { Statement } from "better-sqlite3";
import type { Backups } from "../db/backup.ts";
import type { DbWriter, ShippedFrame } from "../db/writer.ts";
import { type Db, openDatabase } from "../protocol/db/db-open.ts";
import { appliedMark, type JournalRow, journalPath, trimOf } from "../protocol/db/journal.ts";
import { log } from "../util/log.ts";
import {
  batchFrame,
  bytesFrame,
  FRAME_JSON,
  FrameReader,
  HEAD_EVERY_MS,
  jsonFrame,
  PROTOCOL_VERSION,
  parseMessage,
  SILENT_MS,
} from "./protocol.ts";

/** Rows read per pull: a follower far behind is fed in steps, each written before the next read. */
const PULL_ROWS = 512;
/** The last rows' frames kept from the writer (DbWriter.shipFrames) for the followers caught up. */
const RECENT_FRAMES = 64;
/** A follower must say hello within this long. */
const HELLO_MS = 10_000;
/** A copy is sent in pieces of this size. */
const COPY_PIECE = 256 * 1024;
/**
 * `sync`: a batch waits this long at most for a follower's `durable`; then the followers that
 * did not cover it stop counting and the leader goes on alone (DECISIONS.md, "Synchronous
 * replication"), so a stalled standby holds the venue up for two seconds, never longer.
 */
export const SYNC_TIMEOUT_MS = 2000;
/** How often a `sync` leader looks for a batch held past SYNC_TIMEOUT_MS. */
const SYNC_CHECK_MS = 100;

export interface LeaderOptions {
  host: string;
  port: number;
  /** REPLICATION_TOKEN; undefined: every follower is refused. */
  token: string | undefined;
  /** The server's certificate and key: the port speaks TLS only. */
  tls?: { cert: Buffer; key: Buffer };
  dbPath: string;
  writer: DbWriter;
  backups: Backups;
  /** The replication epoch of this leader's database (DECISIONS.md, "Promotion and epochs"). */
  epoch: number;
  /** Each epoch above 1 and the journal key of the epoch before it after which it began. */
  epochStarts: ReadonlyMap<number, number>;
  /** `sync`: answers wait for a follower's `durable` (the writer's release gate). */
  mode: "async" | "sync";
}

/** One follower's connection. */
interface Link {
  socket: net.Socket;
  /** Where it is: the last key sent to it (-1: not past its hello yet). */
  sent: number;
  /** Symbols of the leader's run sent to it. */
  syms: number;
  /** The last key it said is durable on its side. */
  durable: number;
  /** Waiting for 'drain' before the next pull. */
  blocked: boolean;
  /** It has heard a head since it caught up last. */
  headSent: boolean;
  /**
   * `sync`: the leader's answers wait for its `durable`; `joinAt`: the key its `durable` must reach
   * to become synchronous (-1: it has not caught up with the journal yet).
   */
  synced: boolean;
  joinAt: number;
  /** Its hello came (one per connection), or it was refused (nothing more is read). */
  greeted: boolean;
  /** When it last sent anything (Date.now()). */
  heardAt: number;
  refused: boolean;
  address: string;
}

export class ReplicationLeader {
  private readonly server: net.Server;
  private journal: Db | null = null;
  private readonly links = new Set<Link>();
  private readonly heads: NodeJS.Timeout;
  private pullScheduled = false;
  private closed = false;
  /** `sync`: since when no follower's acks count (Date.now()); null while one does or under `async`. */
  private aloneSince: number | null = null;
  private readonly syncCheck: NodeJS.Timeout | null = null;
  /**
   * The last RECENT_FRAMES committed rows as the writer thread framed them, in key order: a
   * follower at the row before one of them gets them from here, the others from the journal.
   */
  private readonly recent: ShippedFrame[] = [];

  constructor(private readonly opts: LeaderOptions) {
    const onSocket = (socket: net.Socket) => this.accept(socket);
    this.server =
      opts.tls === undefined
        ? net.createServer(onSocket)
        : tls.createServer({ cert: opts.tls.cert, key: opts.tls.key }, onSocket);
    opts.writer.shipFrames((f) => {
      if (this.recent.push(f) > RECENT_FRAMES) this.recent.shift();
    });
    // `sync`: the answers of the batch just committed wait for a follower's `durable`, so it goes
    // at once; `async`: after this turn's other work, with whatever else committed meanwhile.
    opts.writer.onAck(opts.mode === "sync" ? () => this.pullNow() : () => this.schedulePull());
    this.heads = setInterval(() => {
      const now = Date.now();
      for (const l of this.links) {
        if (l.sent >= 0 && !l.blocked) l.headSent = false;
        // Following, it answers every head: silent this long, it is lost (a cut network closes nothing).
        if (l.sent >= 0 && now - l.heardAt > SILENT_MS) l.socket.destroy();
      }
      this.schedulePull();
    }, HEAD_EVERY_MS);
    this.heads.unref();
    if (opts.mode === "sync") {
      this.aloneSince = Date.now();
      opts.writer.setReleaseGate({
        released: (key) => this.aloneSince !== null || this.syncedThrough() >= key,
      });
      this.syncCheck = setInterval(() => this.checkStall(), SYNC_CHECK_MS);
      this.syncCheck.unref();
    }
  }

  /** Listens on host:port (0: any free port); resolves with the port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen({ host: this.opts.host, port: this.opts.port, exclusive: true }, () => {
        this.server.off("error", reject);
        if (this.aloneSince !== null)
          log().warn(
            { replication: "sync", synchronous: false },
            "replication sync: no follower attached yet; going on alone",
          );
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /**
   * The attached followers, for /health and /metrics; `synchronous`: answers wait for a follower
   * (`sync` with one counting), `aloneSince`: since when a `sync` leader goes on alone.
   */
  status(): { followers: number; durable: number; synchronous: boolean; aloneSince: number | null } {
    let durable = 0;
    for (const l of this.links) if (l.durable > durable) durable = l.durable;
    return {
      followers: [...this.links].filter((l) => l.sent >= 0).length,
      durable,
      synchronous: this.opts.mode === "sync" && this.aloneSince === null,
      aloneSince: this.aloneSince,
    };
  }

  /** The highest key a synchronous follower has durable (-1: none). */
  private syncedThrough(): number {
    let through = -1;
    for (const l of this.links) if (l.synced && l.durable > through) through = l.durable;
    return through;
  }

  /** `durable` from `l`: it may become synchronous, and held answers may go. */
  private acked(l: Link, key: number): void {
    if (key > l.durable) l.durable = key;
    if (this.opts.mode !== "sync" || this.closed) return;
    if (!l.synced && l.joinAt >= 0 && l.durable >= l.joinAt) {
      l.synced = true;
      const from = this.opts.writer.lastRowKey;
      l.socket.write(jsonFrame({ t: "sync", on: true, from }));
      if (this.aloneSince !== null) {
        this.aloneSince = null;
        log().info(
          { follower: l.address, from },
          `replication sync: follower ${l.address} has the changes durable; answers wait for it again`,
        );
      }
    }
    this.opts.writer.releaseHeld();
  }

  /** `l` no longer counts for answers (gone, or stalled); alone when no follower does. */
  private unsync(l: Link, reason: string): void {
    if (!l.synced) return;
    l.synced = false;
    if (![...this.links].some((o) => o.synced)) this.goAlone(reason);
  }

  private goAlone(reason: string): void {
    if (this.aloneSince === null) {
      this.aloneSince = Date.now();
      log().warn(
        { replication: "sync", synchronous: false, reason },
        `replication sync: ${reason}; going on alone`,
      );
    }
    this.opts.writer.releaseHeld();
  }

  /** A batch held past SYNC_TIMEOUT_MS: the followers that did not cover it stop counting. */
  private checkStall(): void {
    const since = this.opts.writer.heldSince();
    if (since === null || performance.now() - since < SYNC_TIMEOUT_MS) return;
    for (const l of this.links) {
      if (!l.synced) continue;
      // It must catch up with what was answered without it before it counts again.
      l.joinAt = this.opts.writer.lastRowKey;
      l.socket.write(jsonFrame({ t: "sync", on: false, from: l.joinAt }));
      this.unsync(l, `follower ${l.address} acknowledged nothing for ${SYNC_TIMEOUT_MS} ms`);
    }
    this.goAlone(`no follower acknowledged for ${SYNC_TIMEOUT_MS} ms`);
  }

  /**
   * Stops listening; every attached follower is first sent what the journal holds (a graceful stop
   * commits its last batches before this, so a follower then has everything and goes on at the
   * next start without a copy), then its connection ends.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.server.close();
    clearInterval(this.heads);
    if (this.syncCheck !== null) clearInterval(this.syncCheck);
    // Nothing more waits for a follower: the last answers go at the writer's commit.
    if (this.opts.mode === "sync") this.opts.writer.setReleaseGate(null);
    for (let i = 0; i < 1000 && this.pull(); i++);
    this.closed = true;
    await Promise.all(
      [...this.links].map(
        (l) =>
          new Promise<void>((resolve) => {
            const done = setTimeout(() => {
              l.socket.destroy();
              resolve();
            }, 2000);
            l.socket.once("close", () => {
              clearTimeout(done);
              resolve();
            });
            l.socket.end();
          }),
      ),
    );
    this.links.clear();
    this.journal?.close();
    this.journal = null;
    this.read = null;
  }

  /**
   * `pull`'s read, prepared once on the journal connection: in one read transaction, the trim mark,
   * the symbols from id `syms` and the rows above key `sent`, all of one moment of the file.
   */
  private read: ((sent: number, syms: number) => PullRead) | null = null;

  private journalDb(): Db {
    if (this.journal === null) {
      const j = openDatabase(journalPath(this.opts.dbPath), { readonly: true });
      this.journal = j;
      const trim = trimOf(j);
      const syms: Statement<[number], string> = j
        .prepare<[number], string>("SELECT name FROM journal_syms WHERE id >= ? ORDER BY id")
        .pluck();
      const rows: Statement<[number, number], JournalRow> = j.prepare<[number, number], JournalRow>(
        "SELECT * FROM journal WHERE seq > ? ORDER BY seq LIMIT ?",
      );
      this.read = j.transaction(
        (sent: number, from: number): PullRead => ({
          trimmed: trim.get(),
          syms: syms.all(from),
          rows: rows.all(sent, PULL_ROWS),
        }),
      );
    }
    return this.journal;
  }

  private accept(socket: net.Socket): void {
    const address = `${socket.remoteAddress}:${socket.remotePort}`;
    const link: Link = {
      socket,
      sent: -1,
      syms: 0,
      durable: 0,
      synced: false,
      joinAt: -1,
      blocked: false,
      headSent: false,
      greeted: false,
      heardAt: Date.now(),
      refused: false,
      address,
    };
    this.links.add(link);
    socket.setNoDelay(true);
    const hello = setTimeout(() => this.refuse(link, "no hello"), HELLO_MS);
    const reader = new FrameReader((type, payload) => {
      if (type !== FRAME_JSON) throw new Error("a follower sends no bytes frames");
      const m = parseMessage(payload);
      if (!link.greeted && m.t === "hello") {
        link.greeted = true;
        clearTimeout(hello);
        this.hello(link, m);
      } else if (m.t === "durable" && typeof m.key === "number") {
        this.acked(link, m.key);
      } else throw new Error(`unexpected message ${String(m.t)}`);
    });
    socket.on("data", (chunk: Buffer) => {
      if (link.refused) return;
      link.heardAt = Date.now();
      try {
        reader.push(chunk);
      } catch (err) {
        this.refuse(link, (err as Error).message);
      }
    });
    socket.on("drain", () => {
      if (!link.blocked) return;
      link.blocked = false;
      this.schedulePull();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(hello);
      if (this.links.delete(link) && link.sent >= 0)
        log().info({ follower: address }, `follower ${address} disconnected`);
      if (!this.closed) this.unsync(link, `follower ${address} disconnected`);
    });
  }

  private refuse(link: Link, reason: string): void {
    if (link.refused) return;
    link.refused = true;
    log().warn({ follower: link.address, reason }, `follower ${link.address} refused: ${reason}`);
    link.socket.end(jsonFrame({ t: "refused", reason }));
    this.links.delete(link);
    this.unsync(link, `follower ${link.address} refused`);
  }

  /** Why the hello `m` is not accepted, or null. */
  private helloRefusal(m: Record<string, unknown>): string | null {
    const token = this.opts.token;
    if (token === undefined) return "this server has no REPLICATION_TOKEN";
    const given = Buffer.from(typeof m.token === "string" ? m.token : "", "utf8");
    const expected = Buffer.from(token, "utf8");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return "wrong REPLICATION_TOKEN";
    if (m.version !== PROTOCOL_VERSION)
      return `protocol version ${String(m.version)}, this leader speaks ${PROTOCOL_VERSION}`;
    const position = m.position;
    if (typeof position !== "number" || !Number.isSafeInteger(position) || position < 0)
      return "bad position";
    if (typeof m.epoch !== "number" || !Number.isSafeInteger(m.epoch) || m.epoch < 1) return "bad epoch";
    if (typeof m.led !== "boolean") return "bad led";
    return this.historyRefusal(m.epoch, m.led, position);
  }

  /**
   * Why a database at `position` of epoch `epoch` (of its own journal when it `led` that epoch)
   * cannot follow this leader, or null (DECISIONS.md, "Promotion and epochs"). A database of an
   * earlier epoch may, if it holds nothing past the key where the next epoch began: it then takes
   * a copy (the epochs' journal keys are different counts).
   */
  private historyRefusal(epoch: number, led: boolean, position: number): string | null {
    const mine = this.opts.epoch;
    if (epoch > mine)
      return `another history: the follower's database is of epoch ${epoch}, this leader of epoch ${mine}`;
    if (epoch === mine)
      return led
        ? `another history: the follower's database led epoch ${epoch} itself, as this leader does`
        : null;
    const began = this.opts.epochStarts.get(epoch + 1);
    if (began === undefined)
      return `another history: this leader does not know where epoch ${epoch + 1} began`;
    if (position > began)
      return (
        `diverged: the follower's database holds journal keys ${began + 1} to ${position} of epoch ${epoch}, ` +
        `which this leader never received (its epoch ${epoch + 1} began after key ${began})`
      );
    return null;
  }

  private hello(link: Link, m: Record<string, unknown>): void {
    const refusal = this.helloRefusal(m);
    if (refusal !== null) {
      this.refuse(link, refusal);
      return;
    }
    const position = m.position as number;
    link.socket.write(
      jsonFrame({
        t: "welcome",
        epoch: this.opts.epoch,
        mode: this.opts.mode,
        epochs: [...this.opts.epochStarts],
      }),
    );
    if ((m.epoch as number) < this.opts.epoch) {
      // Of an earlier epoch and nothing past it: the copy (its keys count another journal).
      void this.sendCopy(link).catch((err: Error) => this.refuse(link, `copy failed: ${err.message}`));
      return;
    }
    const j = this.journalDb();
    const trimmed = trimOf(j).get();
    const last = Math.max(
      trimmed,
      j.prepare<[], number>("SELECT COALESCE(MAX(seq), 0) FROM journal").pluck().get()!,
    );
    if (position > last) {
      // Its database holds keys this leader never committed: following would mix two histories.
      this.refuse(link, `ahead: the follower is at journal key ${position}, this leader at ${last}`);
      return;
    }
    if (position > 0 && position >= trimmed) {
      log().info(
        { follower: link.address, position },
        `follower ${link.address} attached at journal key ${position}`,
      );
      link.sent = position;
      // It said its database holds that much.
      link.durable = position;
      this.schedulePull();
      return;
    }
    void this.sendCopy(link).catch((err: Error) => this.refuse(link, `copy failed: ${err.message}`));
  }

  /** A consistent copy of the database (the online backup), streamed, then the rows above it. */
  private async sendCopy(link: Link): Promise<void> {
    const started = performance.now();
    const copy = await this.opts.backups.take();
    const file = path.join(copy.dir, copy.file);
    try {
      const db = openDatabase(file, { readonly: true });
      let position: number;
      try {
        position = appliedMark(db);
      } finally {
        db.close();
      }
      // The journal keeps the rows above the copy's mark (WriterOptions.journalKeep); a copy that
      // took longer than that many batches is refused and the follower asks again.
      if (position < trimOf(this.journalDb()).get()) throw new Error("the journal moved past the copy");
      if (link.socket.destroyed) return;
      link.socket.write(jsonFrame({ t: "copy", position, bytes: copy.bytes }));
      for await (const piece of createReadStream(file, { highWaterMark: COPY_PIECE })) {
        if (link.socket.destroyed) return;
        if (!link.socket.write(bytesFrame(piece as Buffer))) await drained(link.socket);
      }
      link.socket.write(jsonFrame({ t: "copyEnd" }));
      log().info(
        { follower: link.address, position, bytes: copy.bytes, ms: Math.round(performance.now() - started) },
        `follower ${link.address} took a copy at journal key ${position}`,
      );
      link.sent = position;
      // Nothing was asked of it while the copy went.
      link.heardAt = Date.now();
      this.schedulePull();
    } finally {
      rmSync(file, { force: true });
    }
  }

  private pullNow(): void {
    if (!this.closed && this.links.size > 0) this.pull();
  }

  private schedulePull(): void {
    if (this.pullScheduled || this.closed || this.links.size === 0) return;
    this.pullScheduled = true;
    setImmediate(() => {
      this.pullScheduled = false;
      this.pull();
    });
  }

  /**
   * Sends each ready follower the journal rows above where it is, with the symbols they need, in
   * one socket write per follower. True when a follower has more to read.
   */
  private pull(): boolean {
    if (this.closed) return false;
    this.journalDb();
    const read = this.read!;
    let more = false;
    for (const l of this.links) {
      if (l.sent < 0 || l.blocked || l.socket.destroyed) continue;
      if (this.pullRecent(l)) continue;
      const r = read(l.sent, l.syms);
      if (r.trimmed > l.sent) {
        this.refuse(l, `behind: the journal no longer holds the rows after key ${l.sent}`);
        continue;
      }
      const frames: Buffer[] = [];
      if (r.syms.length > 0) {
        l.syms += r.syms.length;
        frames.push(jsonFrame({ t: "syms", names: r.syms }));
      }
      for (const row of r.rows) {
        frames.push(batchFrame(row));
        l.sent = row.seq;
      }
      // Caught up with what the journal holds: the head says so.
      if (r.rows.length < PULL_ROWS && (r.rows.length > 0 || !l.headSent)) {
        frames.push(this.head(l));
      }
      const ok =
        frames.length === 0 || l.socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
      // `sync`: its acks count once they reach where it first caught up.
      if (r.rows.length < PULL_ROWS && l.joinAt < 0) {
        l.joinAt = l.sent;
        this.acked(l, l.durable);
      }
      if (!ok) l.blocked = true;
      else if (r.rows.length === PULL_ROWS) more = true;
    }
    if (more) this.schedulePull();
    return more;
  }

  /** The head for `l`: the last key sent to it is this leader's last committed row. */
  private head(l: Link): Buffer {
    l.headSent = true;
    return jsonFrame({ t: "head", key: l.sent, ms: Date.now(), epoch: this.opts.epoch });
  }

  /**
   * `pull` for a follower that has caught up once (its `joinAt` is set) and whose last key is the
   * last committed row, or the row before one of the recent frames: those frames, with the
   * symbols they add, and the head in one write; nothing read from the journal. False when it is
   * elsewhere: the journal has what it needs.
   */
  private pullRecent(l: Link): boolean {
    if (l.joinAt < 0) return false;
    const frames: Buffer[] = [];
    if (l.sent !== this.opts.writer.lastRowKey) {
      const recent = this.recent;
      let i = recent.length - 1;
      while (i >= 0 && recent[i].prev > l.sent) i--;
      // The frames from i on follow each other (one per ack since shipFrames).
      if (i < 0 || recent[i].prev !== l.sent || recent.at(-1)!.key !== this.opts.writer.lastRowKey)
        return false;
      let syms = l.syms;
      for (let k = i; k < recent.length; k++) {
        const f = recent[k];
        if (f.symFrom !== syms) return false;
        syms += f.syms.length;
      }
      for (; i < recent.length; i++) {
        const f = recent[i];
        if (f.syms.length > 0) frames.push(jsonFrame({ t: "syms", names: [...f.syms] }));
        frames.push(f.frame);
      }
      l.syms = syms;
      l.sent = this.opts.writer.lastRowKey;
    } else if (l.headSent) return true;
    frames.push(this.head(l));
    if (!l.socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames))) l.blocked = true;
    return true;
  }
}

/** What one `pull` reads for a follower. */
interface PullRead {
  trimmed: number;
  syms: string[];
  rows: JournalRow[];
}

/** Resolves once `socket` drained, or closed (which the next write then sees). */
function drained(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}
