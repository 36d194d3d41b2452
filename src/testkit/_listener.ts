/**
 * The loopback listener of the fake API server (the same code on Node and
 * Deno): plain HTTP/1.1 on `node:http`, or TLS on `node:https` (HTTP/1.1
 * only) or `node:http2` (h2 by ALPN, HTTP/1.1 for clients that do not
 * offer h2). It tracks every connection so that going down or closing
 * drops them all at once, reports them (accepted, open, protocol), and can
 * listen again on the same port.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { ServerConnection } from "./server_connection.ts";

/** How the listener speaks: plain HTTP, or TLS with or without h2. */
export interface ListenerTransport {
  /** PEM certificate and key: serve HTTPS. Absent: plain HTTP. */
  tls?: { cert: string; key: string };
  /** With `tls`: offer h2 by ALPN (HTTP/1.1 still served). */
  http2: boolean;
  /** With `http2`: the SETTINGS_MAX_CONCURRENT_STREAMS advertised. */
  maxConcurrentStreams?: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TrackedConnection extends ServerConnection {
  open: boolean;
  requests: number;
  streams: number;
}

/** A server that can be stopped and restarted on the same port. */
export class Listener {
  readonly #server: Server | Http2SecureServer;
  readonly #hostname: string;
  readonly #sockets = new Set<Socket>();
  readonly #connections: TrackedConnection[] = [];
  /** Open connections by the client's port (unique per loopback connection while open). */
  readonly #byPeerPort = new Map<number, TrackedConnection>();
  readonly #onChange: () => void;
  /** Open h2 sessions, each with the highest stream id it took (for a graceful GOAWAY). */
  readonly #sessions = new Map<ServerHttp2Session, number>();
  #port = 0;

  constructor(
    hostname: string,
    handler: Handler,
    transport: ListenerTransport = { http2: false },
    onChange: () => void = () => {},
  ) {
    this.#hostname = hostname;
    this.#onChange = onChange;
    const counted: Handler = (req, res) => this.#serve(handler, req, res);
    const { tls } = transport;
    if (!tls) {
      this.#server = createServer(counted);
    } else if (!transport.http2) {
      this.#server = createHttpsServer(
        { cert: tls.cert, key: tls.key, ALPNProtocols: ["http/1.1"] },
        counted,
      );
    } else {
      const settings = transport.maxConcurrentStreams === undefined
        ? {}
        : { maxConcurrentStreams: transport.maxConcurrentStreams };
      this.#server = createSecureServer(
        { cert: tls.cert, key: tls.key, allowHTTP1: true, settings },
        counted as unknown as Parameters<typeof createSecureServer>[1],
      );
    }
    this.#server.on("connection", (socket: Socket) => {
      socket.setNoDelay(true);
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
      if (!tls) this.#track(socket, "http/1.1");
    });
    if (tls) {
      this.#server.on("secureConnection", (socket: TLSSocket) => {
        // A TLS socket cannot `resetAndDestroy()` (its handle is not TCP): the fault's
        // reset goes to the TCP socket beneath (h2 responses reach this through their socket proxy).
        const raw = [...this.#sockets].find((s) => s.remotePort === socket.remotePort);
        if (raw) {
          Object.defineProperty(socket, "resetAndDestroy", { value: () => resetSocket(raw) });
        }
        this.#track(socket, socket.alpnProtocol === "h2" ? "h2" : "http/1.1");
      });
    }
    if (tls && transport.http2) {
      (this.#server as Http2SecureServer).on("session", (session: ServerHttp2Session) => {
        this.#sessions.set(session, 0);
        session.on("stream", (stream: { id?: number }) => {
          if (typeof stream.id === "number") this.#sessions.set(session, stream.id);
        });
        session.once("close", () => this.#sessions.delete(session));
      });
    }
  }

  #track(socket: Socket, protocol: "h2" | "http/1.1"): void {
    const connection: TrackedConnection = {
      id: this.#connections.length + 1,
      protocol,
      open: true,
      requests: 0,
      streams: 0,
    };
    this.#connections.push(connection);
    const port = socket.remotePort;
    if (port !== undefined) this.#byPeerPort.set(port, connection);
    socket.once("close", () => {
      connection.open = false;
      connection.streams = 0;
      if (port !== undefined && this.#byPeerPort.get(port) === connection) {
        this.#byPeerPort.delete(port);
      }
      this.#onChange();
    });
    this.#onChange();
  }

  #serve(handler: Handler, req: IncomingMessage, res: ServerResponse): void {
    // h2 (the compatibility API): the socket is a proxy of the session's; `:authority` is the host.
    if (req.httpVersionMajor === 2 && req.headers.host === undefined) {
      const authority = req.headers[":authority"];
      if (typeof authority === "string") req.headers.host = authority;
    }
    const connection = this.#byPeerPort.get(req.socket?.remotePort ?? -1);
    if (connection) {
      connection.requests++;
      connection.streams++;
      res.once("close", () => {
        if (connection.streams > 0) connection.streams--;
        this.#onChange();
      });
    }
    handler(req, res);
  }

  /** The port, once listening (it stays the same across restarts). */
  get port(): number {
    return this.#port;
  }

  /** True while accepting connections. */
  get listening(): boolean {
    return this.#server.listening;
  }

  /** Every connection accepted so far, oldest first (copies). */
  get connections(): ServerConnection[] {
    return this.#connections.map((c) => ({ ...c }));
  }

  /** Starts listening on `port` (0: any free port); resolves with the port. */
  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once("error", onError);
      this.#server.listen(port, this.#hostname, () => {
        this.#server.off("error", onError);
        this.#port = (this.#server.address() as AddressInfo).port;
        resolve(this.#port);
      });
    });
  }

  /** Closes the kept-alive HTTP/1.1 connections that wait for a request. */
  closeIdleConnections(): void {
    const server = this.#server as { closeIdleConnections?: () => void };
    if (typeof server.closeIdleConnections === "function") server.closeIdleConnections();
  }

  /** Drops every open connection abruptly (a TCP reset where the runtime supports it). */
  resetConnections(): void {
    for (const socket of this.#sockets) resetSocket(socket);
  }

  /**
   * Sends a graceful GOAWAY (NO_ERROR, the last stream id the session took)
   * on every open h2 connection, as Go's server does when kube-apiserver's
   * `--goaway-chance` filter picks a request; streams already open are
   * still served. Returns how many connections got one.
   */
  goAwayConnections(): number {
    let sent = 0;
    for (const [session, lastStreamId] of this.#sessions) {
      if (session.closed || session.destroyed) continue;
      session.goaway(0, lastStreamId);
      sent++;
    }
    return sent;
  }

  /** Stops listening and destroys every open connection; resolves once closed. */
  async stop(): Promise<void> {
    if (!this.#server.listening) {
      for (const socket of this.#sockets) socket.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const server = this.#server as { closeAllConnections?: () => void };
    if (typeof server.closeAllConnections === "function") server.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }
}

/** A TCP reset where the runtime supports it, else a plain destroy. */
function resetSocket(socket: Socket): void {
  const s = socket as Socket & { resetAndDestroy?: () => void };
  if (typeof s.resetAndDestroy !== "function") return void s.destroy();
  try {
    s.resetAndDestroy();
  } catch {
    s.destroy();
  }
}
