/**
 * What the tests of a second box share (docs/OPERATIONS.md, "A second box: follower"): a free port
 * for a leader's replication port, `/health` and `/metrics` reads, `POST /admin/promote`, the
 * leader's users as clients of a follower, and relays standing for the network between the boxes.
 */

import net from "node:net";
import type { TestServer, TestUser } from "./harness.ts";

/** What each user of the second box's tests starts with (the flows of BURST_PAIRS fit it). */
export const FUNDS = { usdt: "1000000", btc: "100", eth: "1000" };

/** A port free now (a leader's replication port that stays the same across its restart). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function health(server: TestServer): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.origin}/health`);
  return (await res.json()) as Record<string, unknown>;
}

/** One gauge or counter of `/metrics`, undefined when it is not there. */
export async function metric(server: TestServer, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** The answer of POST /admin/promote: the promoted server's figures, or an error body. */
export interface PromoteBody {
  role?: string;
  epoch?: number;
  began?: number;
  forced?: boolean;
  errors?: Record<string, string[]>;
  codes?: Record<string, string[]>;
}

export async function promote(
  server: TestServer,
  body: unknown,
): Promise<{ status: number; body: PromoteBody }> {
  const res = await fetch(`${server.origin}/admin/promote`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${server.adminToken}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as PromoteBody };
}

/** The leader's users as clients of a promoted `follower`, their transfers to be read from it (`net` anew). */
export function adoptPromoted(follower: TestServer, users: readonly TestUser[]): TestUser[] {
  const adopted = users.map((u) => ({ ...u, client: follower.client(u), net: new Map<string, bigint>() }));
  follower.users.push(...adopted);
  return adopted;
}

/** A TCP relay on 127.0.0.1 to a local `target` port, standing for the network between the boxes. */
abstract class RelayBase {
  protected readonly sockets = new Set<net.Socket>();
  protected server: net.Server | null = null;
  port = 0;

  protected async listen(target: number): Promise<void> {
    const server = net.createServer((down) => this.accept(down, target));
    this.server = server;
    this.port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
    );
  }

  protected track(s: net.Socket): void {
    this.sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => this.sockets.delete(s));
  }

  protected abstract accept(down: net.Socket, target: number): void;

  /** Stops listening and closes every connection. */
  drop(): void {
    this.server?.close();
    for (const s of this.sockets) s.destroy();
  }
}

/** `hold()`: the leader's bytes stop reaching the follower (its acks still go); nothing closes. */
export class Relay extends RelayBase {
  private holding = false;

  static async start(target: number): Promise<Relay> {
    const relay = new Relay();
    await relay.listen(target);
    return relay;
  }

  protected accept(down: net.Socket, target: number): void {
    const up = net.connect({ host: "127.0.0.1", port: target });
    for (const s of [down, up]) {
      this.track(s);
      s.on("close", () => {
        down.destroy();
        up.destroy();
      });
    }
    down.on("data", (chunk) => up.write(chunk));
    up.on("data", (chunk) => {
      if (!this.holding) down.write(chunk);
    });
  }

  hold(): void {
    this.holding = true;
  }
}

/**
 * `cut()` makes it a black hole: nothing is forwarded either way and nothing is closed, on the
 * connections it has and on new ones (accepted, never forwarded), as a cable pulled between two
 * routers. `restore()` closes what it holds and forwards new connections again.
 */
export class Network extends RelayBase {
  private cutOff = false;

  static async start(target: number): Promise<Network> {
    const network = new Network();
    await network.listen(target);
    return network;
  }

  protected accept(down: net.Socket, target: number): void {
    this.track(down);
    if (this.cutOff) return;
    const up = net.connect({ host: "127.0.0.1", port: target });
    this.track(up);
    for (const [from, to] of [
      [down, up],
      [up, down],
    ]) {
      from.on("data", (chunk) => {
        if (!this.cutOff) to.write(chunk);
      });
      from.on("close", () => {
        if (!this.cutOff) to.destroy();
      });
    }
  }

  cut(): void {
    this.cutOff = true;
  }

  restore(): void {
    for (const s of this.sockets) s.destroy();
    this.cutOff = false;
  }
}
