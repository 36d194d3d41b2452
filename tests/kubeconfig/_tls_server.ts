/**
 * A loopback HTTPS server (node:https, on Deno and Node) that answers like a
 * tiny API server: bearer tokens or basic credentials are checked against
 * an accepted set (401 otherwise), client certificates are verified against
 * the test CA and reported, and every request is logged.
 *
 * @module
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Pair, Pki } from "./_pki.ts";

/** One logged request. */
export interface Seen {
  path: string;
  authorization?: string;
  clientCn?: string;
}

/** A running test server. */
export interface TlsServer {
  url: string;
  port: number;
  seen: Seen[];
  /** Credentials accepted (`Bearer x`, `Basic y`); empty = anything. Mutable. */
  accept: Set<string>;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with `cert` (default: the PKI's server certificate). */
export async function startTlsServer(
  pki: Pki,
  options: { cert?: Pair; accept?: string[] } = {},
): Promise<TlsServer> {
  const cert = options.cert ?? pki.server;
  const seen: Seen[] = [];
  const accept = new Set(options.accept ?? []);
  const server: Server = createServer(
    {
      key: cert.key,
      cert: cert.cert,
      ca: pki.ca.cert,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
      const clientCn = peer?.subject?.CN as string | undefined;
      const authorization = req.headers.authorization;
      seen.push({ path: req.url ?? "", authorization, clientCn });
      req.resume();
      const ok = clientCn !== undefined || accept.size === 0 ||
        (authorization !== undefined && accept.has(authorization));
      res.setHeader("content-type", "application/json");
      if (!ok) {
        res.statusCode = 401;
        res.end(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "Unauthorized",
            code: 401,
          }),
        );
        return;
      }
      res.end(
        JSON.stringify({
          kind: "ConfigMapList",
          apiVersion: "v1",
          metadata: { resourceVersion: "7" },
          items: [],
        }),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    seen,
    accept,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
