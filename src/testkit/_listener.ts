/**
 * The loopback HTTP listener of the fake API server, on `node:http` (the
 * same code on Node and Deno): it tracks every socket so that going down
 * or closing drops them all at once, and can listen again on the same port.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** An HTTP server that can be stopped and restarted on the same port. */
export class Listener {
  readonly #server: Server;
  readonly #hostname: string;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(hostname: string, handler: (req: IncomingMessage, res: ServerResponse) => void) {
    this.#hostname = hostname;
    this.#server = createServer(handler);
    this.#server.on("connection", (socket: Socket) => {
      socket.setNoDelay(true);
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /** The port, once listening (it stays the same across restarts). */
  get port(): number {
    return this.#port;
  }

  /** True while accepting connections. */
  get listening(): boolean {
    return this.#server.listening;
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

  /** Closes the kept-alive connections that wait for a request. */
  closeIdleConnections(): void {
    this.#server.closeIdleConnections();
  }

  /** Stops listening and destroys every open connection; resolves once closed. */
  async stop(): Promise<void> {
    if (!this.#server.listening) {
      for (const socket of this.#sockets) socket.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }
}
