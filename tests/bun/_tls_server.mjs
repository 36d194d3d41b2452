// The kubeconfig tests' TLS server (tests/kubeconfig/_tls_server.ts), redone
// on node:tls for Bun: Bun's node:https server sets `socket.authorized` but
// its request sockets have no getPeerCertificate(), so the client CN cannot
// be read there. node:tls sockets have it. One request per connection
// (`connection: close`); GET only, which is all the checks send.
import tls from "node:tls";

/** Same shape as startTlsServer: { url, port, seen, accept, close() }. */
export async function startTlsServer(pki, options = {}) {
  const cert = options.cert ?? pki.server;
  const seen = [];
  const accept = new Set(options.accept ?? []);
  const sockets = new Set();
  const server = tls.createServer(
    {
      key: cert.key,
      cert: cert.cert,
      ca: pki.ca.cert,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
      let head = "";
      socket.on("data", (chunk) => {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        socket.removeAllListeners("data");
        const [requestLine, ...lines] = head.slice(0, end).split("\r\n");
        const headers = Object.fromEntries(lines.map((l) => {
          const i = l.indexOf(":");
          return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()];
        }));
        const clientCn = socket.authorized ? socket.getPeerCertificate()?.subject?.CN : undefined;
        const authorization = headers.authorization;
        seen.push({ path: requestLine.split(" ")[1] ?? "", authorization, clientCn });
        const ok = clientCn !== undefined || accept.size === 0 ||
          (authorization !== undefined && accept.has(authorization));
        const body = JSON.stringify(
          ok
            ? {
              kind: "ConfigMapList",
              apiVersion: "v1",
              metadata: { resourceVersion: "7" },
              items: [],
            }
            : {
              kind: "Status",
              apiVersion: "v1",
              status: "Failure",
              reason: "Unauthorized",
              code: 401,
            },
        );
        socket.end(
          `HTTP/1.1 ${ok ? "200 OK" : "401 Unauthorized"}\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      });
    },
  );
  server.on("tlsClientError", () => {}); // the must-fail checks abort handshakes
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    seen,
    accept,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
