/**
 * The API server of the peer benchmark's `informers` workload, run in its
 * own process by `scripts/bench_peer.mjs`: HTTPS with HTTP/2 and the
 * HTTP/1.1 fallback (`node:http2` `createSecureServer` with `allowHTTP1`;
 * ALPN picks), serving many namespaced resources of one API group,
 * `/apis/bench.example.com/v1/namespaces/ns-<n>/res<r>`, each holding a few
 * small objects, the way a controller watching 20 resources in 25
 * namespaces sees a cluster:
 *
 * - LIST (all of a resource's objects in one page) and WATCH from a
 *   version, with a BOOKMARK every `--bookmark-ms` (default 60,000: about
 *   kube-apiserver's pace) when `allowWatchBookmarks=true`;
 * - streaming lists (`sendInitialEvents=true` with
 *   `resourceVersionMatch=NotOlderThan`): ADDED events, then the BOOKMARK
 *   annotated `k8s.io/initial-events-end: "true"`;
 * - HTTP/2 SETTINGS `maxConcurrentStreams` of `--max-streams` (default 100:
 *   what kube-apiserver advertises when `--http2-max-streams-per-connection`
 *   is 0, its default; k8s.io/apiserver `secure_serving.go`).
 *
 * It counts the TCP connections it accepts (and how many of them speak h2),
 * so the benchmark's connection counts come from the server side.
 *
 * Control endpoints, on a second, plain-HTTP port (so that they are never
 * counted): `POST /bench/reset?resources=R&namespaces=N&perWatch=K` (fresh
 * objects, every connection closed, counters zeroed), `/bench/stats`,
 * `/bench/trickle?rate=E` (MODIFIED events at E/s, spread round-robin over
 * every resource and namespace; 0 stops).
 *
 * Prints `LISTENING <https url> <control url>` once ready. Run:
 * `node npm/esm/benchmarks/peer/_h2_server.js --cert F --key F`.
 *
 * @module
 */
import { createSecureServer, type Http2ServerRequest } from "node:http2";
import { createServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { readFileSync } from "node:fs";
import process from "node:process";

/** The API group every resource of this server belongs to. */
export const GROUP = "bench.example.com";

type Req = IncomingMessage | Http2ServerRequest;
/** What is used of a response, HTTP/1.1 (`ServerResponse`) or HTTP/2 (`Http2ServerResponse`). */
interface Res {
  writeHead(code: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  on(event: "close", listener: () => void): unknown;
}

interface Watch {
  key: string;
  res: Res;
  bookmarks: boolean;
}

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const bookmarkMs = Number(opt("bookmark-ms", "60000"));
const maxStreams = Number(opt("max-streams", "100"));

let resources = 0;
let namespaces = 0;
let perWatch = 0;
let rv = 0;
/** Per `res<r>/ns-<n>`: each object's resourceVersion. */
let versions = new Map<string, number[]>();
const watches = new Map<string, Set<Watch>>();
let trickleTimer: ReturnType<typeof setInterval> | undefined;
let trickled = 0;
let cursor = 0;

// Connections, counted as the kernel hands them over (TCP), and by protocol once TLS agreed on one.
const sockets = new Set<Socket>();
let accepted = 0;
let h2Accepted = 0;
let h1Accepted = 0;

function objectJson(res: string, ns: string, j: number, version: number): string {
  return `{"apiVersion":"${GROUP}/v1","kind":"Widget","metadata":{"name":"w-${j}","namespace":"${ns}",` +
    `"uid":"00000000-0000-4000-8000-${
      String(j).padStart(12, "0")
    }","resourceVersion":"${version}",` +
    `"creationTimestamp":"2025-06-01T12:00:00Z","labels":{"app":"app-${
      j % 7
    }","resource":"${res}"}},` +
    `"spec":{"replicas":${1 + (j % 3)},"image":"registry.example.com/${res}:1.${j % 10}.0",` +
    `"config":"${"x".repeat(300)}"}}`;
}

function reset(r: number, n: number, k: number): Record<string, number> {
  for (const s of sockets) s.destroy();
  sockets.clear();
  watches.clear();
  clearInterval(trickleTimer);
  trickleTimer = undefined;
  resources = r;
  namespaces = n;
  perWatch = k;
  versions = new Map();
  for (let i = 0; i < r; i++) {
    for (let ns = 0; ns < n; ns++) {
      versions.set(`res${i}/ns-${ns}`, Array.from({ length: k }, () => ++rv));
    }
  }
  accepted =
    h2Accepted =
    h1Accepted =
    trickled =
    cursor =
      0;
  return { watches: r * n, objects: r * n * k, resourceVersion: rv };
}

function status(res: Res, code: number, reason: string, message: string): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(
    JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code }),
  );
}

function serve(req: Req, res: Res): void {
  const url = new URL(req.url ?? "/", "https://localhost");
  const m = new RegExp(`^/apis/${GROUP.replace(/\./g, "\\.")}/v1/namespaces/([^/]+)/([^/]+)$`)
    .exec(url.pathname);
  const key = m ? `${m[2]}/${m[1]}` : "";
  const objs = versions.get(key);
  if (req.method !== "GET" || !m || !objs) {
    return status(res, 404, "NotFound", `${url.pathname} not found`);
  }
  const [, ns, resource] = m;
  const p = url.searchParams;
  const w = p.get("watch");
  if (w !== "1" && w !== "true") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      `{"kind":"WidgetList","apiVersion":"${GROUP}/v1","metadata":{"resourceVersion":"${rv}"},"items":[${
        objs.map((v, j) => objectJson(resource, ns, j, v)).join(",")
      }]}`,
    );
    return;
  }
  const streaming = p.get("sendInitialEvents") === "true";
  const bookmarks = p.get("allowWatchBookmarks") === "true";
  if (streaming && (p.get("resourceVersionMatch") !== "NotOlderThan" || !bookmarks)) {
    return status(
      res,
      422,
      "Invalid",
      "sendInitialEvents requires resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true",
    );
  }
  res.writeHead(200, { "content-type": "application/json" });
  let initial = "";
  if (streaming) {
    initial = objs.map((v, j) => `{"type":"ADDED","object":${objectJson(resource, ns, j, v)}}\n`)
      .join("") +
      `{"type":"BOOKMARK","object":{"kind":"Widget","apiVersion":"${GROUP}/v1","metadata":{"resourceVersion":"${rv}","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}\n`;
  }
  // (an empty write sends the headers now, on HTTP/1.1 and HTTP/2 alike: a client waits for them)
  res.write(initial);
  const watch: Watch = { key, res, bookmarks };
  let set = watches.get(key);
  if (!set) watches.set(key, set = new Set());
  set.add(watch);
  const timeout = Number(p.get("timeoutSeconds") || 0);
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  res.on("close", () => {
    clearTimeout(timer);
    watches.get(key)?.delete(watch);
  });
}

/** One MODIFIED event on the next resource/namespace in turn. */
function trickleOne(): void {
  const keys = [...versions.keys()];
  const key = keys[cursor % keys.length];
  const objs = versions.get(key)!;
  const j = Math.floor(cursor / keys.length) % objs.length;
  cursor++;
  objs[j] = ++rv;
  const [resource, ns] = key.split("/");
  const line = `{"type":"MODIFIED","object":${objectJson(resource, ns, j, objs[j])}}\n`;
  for (const w of watches.get(key) ?? []) w.res.write(line);
  trickled++;
}

function stats(): Record<string, number> {
  let open = 0;
  for (const set of watches.values()) open += set.size;
  return {
    connections: sockets.size,
    accepted,
    h2Accepted,
    h1Accepted,
    watches: open,
    resources,
    namespaces,
    perWatch,
    trickled,
    resourceVersion: rv,
    maxConcurrentStreams: maxStreams,
  };
}

const server = createSecureServer({
  cert: readFileSync(opt("cert", "")),
  key: readFileSync(opt("key", "")),
  allowHTTP1: true,
  settings: { maxConcurrentStreams: maxStreams },
}, (req, res) => serve(req, res as unknown as Res));
server.on("connection", (socket: Socket) => {
  accepted++;
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});
server.on("secureConnection", (socket: TLSSocket) => {
  if (socket.alpnProtocol === "h2") h2Accepted++;
  else h1Accepted++;
});
server.on("sessionError", () => {});

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  const p = url.searchParams;
  const answer = (body: Record<string, number>) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  switch (url.pathname) {
    case "/bench/reset":
      return answer(
        reset(
          Number(p.get("resources") || 1),
          Number(p.get("namespaces") || 1),
          Number(p.get("perWatch") || 1),
        ),
      );
    case "/bench/stats":
      return answer(stats());
    case "/bench/trickle": {
      const rate = Number(p.get("rate") || 0);
      clearInterval(trickleTimer);
      trickleTimer = undefined;
      // 10 ticks a second at most, each writing its share of the rate
      if (rate > 0) {
        const perTick = rate / 10;
        let owed = 0;
        trickleTimer = setInterval(() => {
          owed += perTick;
          for (; owed >= 1; owed--) trickleOne();
        }, 100);
      }
      return answer(stats());
    }
  }
  res.writeHead(404);
  res.end();
});

setInterval(() => {
  if (bookmarkMs <= 0) return;
  for (const set of watches.values()) {
    for (const w of set) {
      if (!w.bookmarks) continue;
      w.res.write(
        `{"type":"BOOKMARK","object":{"kind":"Widget","apiVersion":"${GROUP}/v1","metadata":{"resourceVersion":"${rv}"}}}\n`,
      );
    }
  }
}, Math.max(bookmarkMs, 100)).unref();

server.listen(0, "127.0.0.1", () => {
  control.listen(0, "127.0.0.1", () => {
    const port = (server.address() as { port: number }).port;
    const cport = (control.address() as { port: number }).port;
    process.stdout.write(`LISTENING https://127.0.0.1:${port} http://127.0.0.1:${cport}\n`);
  });
});
process.on("SIGTERM", () => process.exit(0));
