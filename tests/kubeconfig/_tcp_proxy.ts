/**
 * A TCP proxy in front of a test server, for the HTTP/2 reconnect tests: it
 * counts the connections it accepts, can hold new ones (their bytes wait,
 * so their TLS handshake does not progress) until released, and can reset
 * every connection. `target: undefined`: a server that accepts TCP and
 * never answers (a TLS handshake that never completes).
 *
 * @module
 */
import net from "node:net";

/** A running proxy. */
export interface TcpProxy {
  /** `https://127.0.0.1:PORT`. */
  url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Client connections open now. */
  readonly open: number;
  /** While true, new connections are held (nothing forwarded) until `release()`. */
  holding: boolean;
  /** Forwards every held connection. */
  release(): void;
  /** Destroys every client connection (and its upstream): a reset. */
  resetAll(): void;
  /** Stops forwarding on every connection open now, both ways, and keeps it open: a black hole (new ones are forwarded). */
  silence(): void;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`host:port` of a server), or a silent TCP server when undefined. */
export async function startTcpProxy(target: URL | undefined): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  const held: (() => void)[] = [];
  let accepted = 0;
  const forward = (client: net.Socket) => {
    if (client.destroyed) return;
    if (!target) return void client.resume(); // silent: read and drop (so that its close is seen)
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
    client.resume();
    pairs.push([client, upstream]);
  };
  const pairs: [net.Socket, net.Socket][] = [];
  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    accepted++;
    sockets.add(client);
    clients.add(client);
    client.on("close", () => (sockets.delete(client), clients.delete(client)));
    client.on("error", () => {});
    if (proxy.holding) held.push(() => forward(client));
    else forward(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const proxy: TcpProxy = {
    url: `https://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return clients.size;
    },
    holding: false,
    release() {
      for (const go of held.splice(0)) go();
    },
    resetAll() {
      for (const s of sockets) s.resetAndDestroy();
    },
    silence() {
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        // read and drop: nothing reaches the other side, and no close is missed
        client.on("data", () => {});
        upstream.on("data", () => {});
      }
    },
    async close() {
      held.length = 0;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
