/**
 * The one uWebSockets.js app and listening socket of the process, which outlive a promotion
 * (src/boot.ts; docs/OPERATIONS.md, "Promoting a follower"). A promotion stops the follower's
 * exchange and starts a leader on the same database in this process; its front end mounts the same
 * routes again. The port cannot be let go and taken again in between: every connection the server
 * closed first stays in TIME_WAIT on it for a minute, which refuses the new listen. So the app and
 * its socket stay, and each route is mounted on the real app once, as a handler that calls the one
 * the latest start mounted: requests in between reach the stopping exchange's handlers, which answer
 * 503 as during any stop, and the leader's take over as they are mounted.
 *
 * A WebSocket belongs to the start that opened it (its messages and close go to that start's
 * handlers); a stop ends every one of its sockets anyway.
 */
import type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  WebSocket,
  WebSocketBehavior,
} from "@trufflesuite/uws-js-unofficial";

type Handler = (res: HttpResponse, req: HttpRequest) => void | Promise<void>;
type Method = "get" | "post" | "any" | "options" | "del" | "put" | "patch" | "head";
// biome-ignore lint/suspicious/noExplicitAny: the behaviors of every ws route, whatever their user data.
type AnyBehavior = WebSocketBehavior<any>;
// biome-ignore lint/suspicious/noExplicitAny: a socket of any ws route.
type Socket = WebSocket<any>;

export class FrontDoor {
  /** The real app, made by the first start (createApp). */
  app: TemplatedApp | null = null;
  /** Its listening socket once listening; null before, and after the last stop closed it. */
  listenSocket: us_listen_socket | null = null;
  port = 0;
  /** A promotion is under way: a stop leaves the socket listening. */
  keepListening = false;
  private readonly handlers = new Map<string, Handler>();
  private readonly behaviors = new Map<string, AnyBehavior>();
  private readonly owner = new WeakMap<Socket, AnyBehavior>();

  /**
   * The app one start mounts its routes on: each (method, pattern) is mounted on the real app the
   * first time, and from then on calls what the latest start mounted. Everything else is the app's.
   */
  view(): TemplatedApp {
    const app = this.app!;
    const on =
      (method: Method) =>
      (pattern: string, handler: Handler): TemplatedApp => {
        const key = `${method} ${pattern}`;
        if (!this.handlers.has(key)) {
          const mount = app[method] as (p: string, h: Handler) => TemplatedApp;
          mount.call(app, pattern, (res, req) => this.handlers.get(key)!(res, req));
        }
        this.handlers.set(key, handler);
        return view;
      };
    const view: TemplatedApp = Object.create(app, {
      get: { value: on("get") },
      post: { value: on("post") },
      any: { value: on("any") },
      options: { value: on("options") },
      del: { value: on("del") },
      put: { value: on("put") },
      patch: { value: on("patch") },
      head: { value: on("head") },
      ws: { value: (pattern: string, behavior: AnyBehavior) => this.ws(pattern, behavior, view) },
      publish: { value: app.publish.bind(app) },
      numSubscribers: { value: app.numSubscribers.bind(app) },
      listen: { value: app.listen.bind(app) },
    });
    return view;
  }

  private ws(pattern: string, behavior: AnyBehavior, view: TemplatedApp): TemplatedApp {
    const app = this.app!;
    if (!this.behaviors.has(pattern)) {
      const current = () => this.behaviors.get(pattern)!;
      const mine = (ws: Socket) => this.owner.get(ws) ?? current();
      const real: AnyBehavior = { ...behavior };
      for (const [name, value] of Object.entries(behavior)) {
        if (typeof value !== "function") continue;
        const fn = name as keyof AnyBehavior;
        if (fn === "upgrade") real.upgrade = (res, req, context) => current().upgrade?.(res, req, context);
        else if (fn === "open")
          real.open = (ws) => {
            this.owner.set(ws, current());
            return current().open?.(ws);
          };
        else {
          // Every other handler takes the socket first.
          const table = real as unknown as Record<string, (ws: Socket, ...rest: unknown[]) => unknown>;
          table[fn] = (ws, ...rest) =>
            (mine(ws) as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>)[fn]?.(
              ws,
              ...rest,
            );
        }
      }
      app.ws(pattern, real);
    }
    this.behaviors.set(pattern, behavior);
    return view;
  }
}
