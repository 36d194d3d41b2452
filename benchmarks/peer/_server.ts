/**
 * A minimal Kubernetes list/watch API server for the peer benchmark, run in
 * its own process (so its heap is never counted as a contender's) by
 * `scripts/bench_peer.mjs`. It serves one resource (`/api/v1/configmaps`
 * or `/api/v1/pods`, every namespace) the way kube-apiserver does, from
 * pre-serialized objects so that it is never the bottleneck:
 *
 * - LIST with `limit`/`continue` (also at `resourceVersion=0`, as the
 *   reflector's default paginated list expects) and `metadata.resourceVersion`;
 *   without `limit`, one list written in chunks with backpressure;
 * - WATCH (`watch=1|true`) from a `resourceVersion`, with `timeoutSeconds`,
 *   and a BOOKMARK every `--bookmark-ms` (default 1000) when
 *   `allowWatchBookmarks=true`; a watch from before the last "expire" gets
 *   an ERROR 410 event;
 * - a streaming list as kube-apiserver ≥ 1.27 serves it
 *   (`sendInitialEvents=true`, which needs `resourceVersionMatch=NotOlderThan`
 *   and `allowWatchBookmarks=true`, else 422 Invalid): an ADDED event per
 *   object, written with backpressure, then a BOOKMARK annotated
 *   `k8s.io/initial-events-end: "true"` at the list's version, then the
 *   watch goes on (no other bookmark before that one).
 *
 * Objects come from `_objects.ts`; up to {@linkcode TEMPLATE_CACHE} of them
 * are kept as templates, beyond that each is generated as it is written (1M
 * ConfigMaps would take about 1 GB here), so no list or stream is ever held
 * whole.
 *
 * Control endpoints (POST, JSON answers), used by the contenders:
 * - `/bench/reset?resource=configmaps|pods&objects=N`: N objects at versions
 *   1..N, every watch closed; answers the mean JSON size of one object;
 * - `/bench/modify?count=E&rate=R`: once a watch is open, writes E MODIFIED
 *   events (cycling over the objects) at R events/s (0: as fast as the
 *   watchers read, with backpressure); each carries its emission time in
 *   the `bench/sent` annotation; answers at once;
 * - `/bench/expire`: changes object 0 (not sent), then ends every watch
 *   with an ERROR 410 event and expires every older version (a relist
 *   storm); answers the new version of object 0 (`markerRv`).
 *
 * Prints `LISTENING <url>` once ready. Run: `node npm/esm/benchmarks/peer/_server.js [--port 0]`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import process from "node:process";
import { Buffer } from "node:buffer";
import { type Template, templateOf } from "./_objects.ts";

interface Watch {
  res: ServerResponse;
  from: number;
  bookmarks: boolean;
  /** Chunks written by the as-fast-as-read emitter, until the kernel takes them. */
  inFlight: Promise<void>[];
  /** Resolves when the response closes. */
  closed: Promise<void>;
  timer?: ReturnType<typeof setTimeout>;
}

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const bookmarkMs = opt("bookmark-ms", 1000);

/** Objects kept as templates (per resource); objects past this are generated as they are written. */
const TEMPLATE_CACHE = 200_000;
const templates: Record<string, Template[]> = { configmaps: [], pods: [] };
let resource = "configmaps";
let count = 0;
let rvs = new Float64Array(0);
let rv = 0;
let compacted = 0;
let cursor = 0;
let generation = 0;
let emitted = 0;
const watches = new Set<Watch>();

const epochMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const kindOf = () => (resource === "pods" ? "Pod" : "ConfigMap");
const templateAt = (i: number): Template =>
  i < TEMPLATE_CACHE ? templates[resource][i] : templateOf(resource, i);
const itemJson = (i: number, sent = "0") => {
  const t = templateAt(i);
  return t.a + rvs[i] + t.b + sent + t.c;
};

function reset(res: string, n: number): Record<string, number> {
  if (res !== "configmaps" && res !== "pods") throw new Error(`unknown resource ${res}`);
  for (const w of watches) endWatch(w);
  generation++;
  resource = res;
  count = n;
  const list = templates[res];
  for (let i = list.length; i < Math.min(n, TEMPLATE_CACHE); i++) list.push(templateOf(res, i));
  rvs = new Float64Array(n);
  for (let i = 0; i < n; i++) rvs[i] = i + 1;
  rv = n;
  compacted = 0;
  cursor = 0;
  emitted = 0;
  // every object's size, or (above the template cache) 10,000 of them spread evenly
  const step = n > TEMPLATE_CACHE ? Math.ceil(n / 10_000) : 1;
  let bytes = 0;
  let sampled = 0;
  for (let i = 0; i < n; i += step, sampled++) bytes += itemJson(i).length;
  // deno-lint-ignore no-explicit-any
  const managed = n ? (JSON.parse(itemJson(0)) as any).metadata.managedFields : undefined;
  return {
    objects: n,
    bytesPerObject: sampled ? bytes / sampled : 0,
    managedFieldsBytesPerObject: managed ? JSON.stringify(managed).length : 0,
    resourceVersion: rv,
  };
}

function endWatch(w: Watch): void {
  clearTimeout(w.timer);
  watches.delete(w);
  w.res.end();
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  }));
}

/**
 * How many chunks of MODIFIED events may wait in a watch's socket buffers
 * (written, not yet taken by the kernel) before the emitter waits. Waiting for
 * `drain` after every chunk (which is over the response's 16 KiB high-water
 * mark) let the kernel buffer run empty while the next chunk was built: the
 * reader idled about a fifth of the time, so the server, not the reader, set
 * the pace.
 */
const IN_FLIGHT_CHUNKS = 16;

/** Writes `chunk`; resolves once it has been handed to the kernel or the watch has closed. */
function written(w: Watch, chunk: string): Promise<void> {
  return Promise.race([
    new Promise<void>((resolve) => w.res.write(chunk, () => resolve())),
    w.closed,
  ]);
}

function writeAsync(res: ServerResponse, chunk: string): Promise<void> | undefined {
  if (res.write(chunk)) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

async function list(url: URL, res: ServerResponse): Promise<void> {
  const limit = Number(url.searchParams.get("limit") || 0);
  const token = url.searchParams.get("continue") || "";
  let start = 0;
  let listRv = rv;
  if (token) {
    const m = /^(\d+):(\d+)$/.exec(Buffer.from(token, "base64url").toString());
    if (!m) return status(res, 400, "BadRequest", "invalid continue token");
    start = Number(m[1]);
    listRv = Number(m[2]);
  }
  const end = limit > 0 ? Math.min(count, start + limit) : count;
  const more = end < count;
  const cont = more
    ? `,"continue":"${
      Buffer.from(`${end}:${listRv}`).toString("base64url")
    }","remainingItemCount":${count - end}`
    : "";
  res.writeHead(200, { "content-type": "application/json" });
  const head =
    `{"kind":"${kindOf()}List","apiVersion":"v1","metadata":{"resourceVersion":"${listRv}"${cont}},"items":[`;
  const gen = generation;
  let chunk = head;
  for (let i = start; i < end; i++) {
    chunk += (i > start ? "," : "") + itemJson(i);
    if (chunk.length > 256 * 1024) {
      await writeAsync(res, chunk);
      chunk = "";
      if (gen !== generation || res.destroyed) return void res.destroy();
    }
  }
  res.end(chunk + "]}");
}

async function watch(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const p = url.searchParams;
  const streaming = p.get("sendInitialEvents") === "true";
  const bookmarks = p.get("allowWatchBookmarks") === "true";
  if (streaming && (p.get("resourceVersionMatch") !== "NotOlderThan" || !bookmarks)) {
    // kube-apiserver's answer (its message names each missing parameter)
    return status(
      res,
      422,
      "Invalid",
      "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan and allowWatchBookmarks to true",
    );
  }
  if (!streaming && p.get("resourceVersionMatch")) {
    return status(res, 422, "Invalid", "resourceVersionMatch is forbidden for watch");
  }
  let from = Number(p.get("resourceVersion") || 0);
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  res.flushHeaders();
  if (!streaming && from > 0 && from < compacted) {
    res.end(expiredLine(from));
    return;
  }
  if (streaming) {
    // The state at this version, as ADDED events in chunks, then the end bookmark.
    const gen = generation;
    const listRv = rv;
    const n = count;
    let chunk = "";
    for (let i = 0; i < n; i++) {
      chunk += `{"type":"ADDED","object":${itemJson(i)}}\n`;
      if (chunk.length > 256 * 1024) {
        await writeAsync(res, chunk);
        chunk = "";
        if (gen !== generation || res.destroyed) return void res.destroy();
      }
    }
    res.write(
      chunk +
        `{"type":"BOOKMARK","object":{"kind":"${kindOf()}","apiVersion":"v1","metadata":{"resourceVersion":"${listRv}","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}\n`,
    );
    from = listRv;
    if (res.destroyed) return;
  }
  const w: Watch = {
    res,
    from,
    bookmarks,
    inFlight: [],
    closed: new Promise((resolve) => res.once("close", () => resolve())),
  };
  const timeout = Number(p.get("timeoutSeconds") || 0);
  if (timeout > 0) w.timer = setTimeout(() => endWatch(w), timeout * 1000);
  watches.add(w);
  req.on("close", () => {
    clearTimeout(w.timer);
    watches.delete(w);
  });
}

function expiredLine(from: number): string {
  return JSON.stringify({
    type: "ERROR",
    object: {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `too old resource version: ${from} (${compacted})`,
      reason: "Expired",
      code: 410,
    },
  }) + "\n";
}

/** Writes `total` MODIFIED events at `rate`/s (0: as fast as the watchers read). */
async function emit(total: number, rate: number): Promise<void> {
  const gen = generation;
  const start = epochMs();
  let sent = 0;
  while (sent < total && gen === generation) {
    let due: number;
    if (rate > 0) {
      due = Math.min(total, Math.floor(((epochMs() - start) * rate) / 1000) + 1) - sent;
      if (due <= 0) {
        await sleep(1);
        continue;
      }
      due = Math.min(due, 512);
    } else due = Math.min(total - sent, 64);
    const now = String(epochMs());
    let chunk = "";
    for (let k = 0; k < due; k++) {
      const i = cursor++ % count;
      rvs[i] = ++rv;
      const t = templateAt(i);
      chunk += `{"type":"MODIFIED","object":${t.a}${rv}${t.b}${now}${t.c}}\n`;
    }
    sent += due;
    emitted += due;
    if (rate === 0) {
      // As fast as the watchers read: keep IN_FLIGHT_CHUNKS chunks ahead of
      // every reader, so that a reader never waits for the next chunk to be built.
      const waits: Promise<void>[] = [];
      for (const w of watches) {
        w.inFlight.push(written(w, chunk));
        if (w.inFlight.length > IN_FLIGHT_CHUNKS) waits.push(w.inFlight.shift()!);
      }
      if (waits.length) await Promise.all(waits);
    } else {
      // Paced: never wait for a slow reader (its backlog is its latency).
      for (const w of watches) w.res.write(chunk);
      if (due < 512) await sleep(1);
    }
  }
}

async function waitForWatchers(n: number, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (watches.size < n) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`no watch open after ${timeoutMs} ms`);
    await sleep(2);
  }
}

async function control(url: URL, res: ServerResponse): Promise<void> {
  const p = url.searchParams;
  const answer = (body: Record<string, number>) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  switch (url.pathname) {
    case "/bench/reset":
      return answer(reset(p.get("resource") || "configmaps", Number(p.get("objects") || 0)));
    case "/bench/modify": {
      const total = Number(p.get("count") || 0);
      const rate = Number(p.get("rate") || 0);
      await waitForWatchers(Number(p.get("watchers") || 1));
      answer({ fromResourceVersion: rv + 1, count: total });
      setImmediate(() => emit(total, rate).catch((e) => console.error("emit:", e)));
      return;
    }
    case "/bench/expire": {
      rvs[0] = ++rv;
      compacted = rv;
      for (const w of [...watches]) {
        w.res.write(expiredLine(w.from));
        endWatch(w);
      }
      return answer({ markerRv: rvs[0], resourceVersion: rv });
    }
    case "/bench/stats":
      return answer({ watches: watches.size, resourceVersion: rv, emitted, objects: count });
  }
  status(res, 404, "NotFound", `no control endpoint ${url.pathname}`);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname;
  const run = async () => {
    if (path.startsWith("/bench/")) return await control(url, res);
    if (path === "/version") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ major: "1", minor: "33", gitVersion: "v1.33.0-bench-peer" }));
    }
    if (req.method === "GET" && path === `/api/v1/${resource}`) {
      const w = url.searchParams.get("watch");
      if (w === "1" || w === "true") return await watch(url, req, res);
      return await list(url, res);
    }
    status(res, 404, "NotFound", `${path} not found`);
  };
  run().catch((e) => {
    if (!res.headersSent) status(res, 500, "InternalError", String(e));
    else res.destroy();
  });
});
server.keepAliveTimeout = 60_000;
setInterval(() => {
  if (bookmarkMs <= 0) return;
  const line =
    `{"type":"BOOKMARK","object":{"kind":"${kindOf()}","apiVersion":"v1","metadata":{"resourceVersion":"${rv}"}}}\n`;
  for (const w of watches) if (w.bookmarks) w.res.write(line);
}, Math.max(bookmarkMs, 10)).unref();
server.listen(opt("port", 0), "127.0.0.1", () => {
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  process.stdout.write(`LISTENING http://127.0.0.1:${port}\n`);
});
process.on("SIGTERM", () => process.exit(0));
