/**
 * A web-standard handler served by Node's `http` module, without importing
 * it: the request and response are described by their shape.
 *
 * @module
 */

/**
 * What {@linkcode nodeRequestListener} reads of Node's `http.IncomingMessage`
 * (which fits as it is).
 */
export interface NodeIncomingMessageLike extends AsyncIterable<Uint8Array> {
  /** The request method. */
  method?: string;
  /** The request target: a path with its query (or an absolute URL). */
  url?: string;
  /** The request headers, names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The connection: a TLS one (`encrypted`) makes the URL `https:`. */
  socket?: object | null;
}

/**
 * What {@linkcode nodeRequestListener} uses of Node's `http.ServerResponse`
 * (which fits as it is).
 */
export interface NodeServerResponseLike {
  /** Whether the status line and headers went out. */
  readonly headersSent: boolean;
  /** Sends the status and headers. */
  writeHead(statusCode: number, headers: Record<string, string | string[]>): unknown;
  /** Writes a body chunk; `false` means wait for `drain`. */
  write(chunk: Uint8Array): boolean;
  /** Ends the response. */
  end(): unknown;
  /** Listens once for `drain` (the buffer emptied) or `close` (the response is done or the connection gone). */
  once(event: "drain" | "close", listener: () => void): unknown;
  /** Removes a listener. */
  off(event: "drain" | "close", listener: () => void): unknown;
  /** Drops the connection (a failure after the headers went out). */
  destroy(error?: Error): unknown;
}

/**
 * Turns a web-standard handler (`(Request) => Response`, such as
 * {@linkcode healthHandler}'s, or one serving `metricsResponse`) into a
 * listener for Node's `http.createServer` (and `https`): the Node request
 * becomes a `Request` (method, URL from the `Host` header, headers, a
 * streamed body for methods that have one, a signal that aborts when the
 * client goes away), and the `Response` is written back (status, headers,
 * the body streamed with back-pressure; none for HEAD). A handler that
 * throws or rejects gets a bare `500` (its error is not shown), or the
 * connection dropped if the headers already went out; nothing becomes an
 * unhandled rejection. This module imports nothing from Node: the core
 * stays web-only.
 *
 * @example Serve the health endpoint with node:http
 * ```ts
 * import assert from "node:assert/strict";
 * import { createServer } from "node:http";
 * import type { AddressInfo } from "node:net";
 * import { healthHandler, nodeRequestListener } from "../../mod.ts";
 *
 * const informer = {
 *   name: "configmaps",
 *   hasSynced: () => true,
 *   status: { state: "watching" as const, watching: true, since: Date.now() },
 * };
 * const server = createServer(nodeRequestListener(healthHandler({ informers: [informer] })));
 * await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
 * const { port } = server.address() as AddressInfo;
 * const res = await fetch(`http://127.0.0.1:${port}/livez`);
 * assert.equal(res.status, 200);
 * assert.equal(await res.text(), "[+]configmaps ok\nlivez check passed\n");
 * await new Promise((resolve) => server.close(resolve));
 * ```
 *
 * @param handler Answers each request; may return a promise.
 * @returns A `(req, res)` listener for `http.createServer`.
 */
export function nodeRequestListener(
  handler: (request: Request) => Response | Promise<Response>,
): (req: NodeIncomingMessageLike, res: NodeServerResponseLike) => void {
  if (typeof handler !== "function") {
    throw new TypeError("nodeRequestListener: handler must be a function");
  }
  return (req, res) => {
    serve(handler, req, res).catch(() => {
      try {
        res.destroy();
      } catch { /* already gone */ }
    });
  };
}

async function serve(
  handler: (request: Request) => Response | Promise<Response>,
  req: NodeIncomingMessageLike,
  res: NodeServerResponseLike,
): Promise<void> {
  const gone = new AbortController();
  let finished = false;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const onClose = () => {
    if (finished) return;
    gone.abort(new Error("the client closed the connection"));
    reader?.cancel(gone.signal.reason).catch(() => {}); // (a body that waits for data ends now)
  };
  res.once("close", onClose);
  try {
    const method = (req.method ?? "GET").toUpperCase();
    let response: Response;
    try {
      response = await handler(toRequest(req, method, gone.signal));
      if (!(response instanceof Response)) throw new TypeError("the handler returned no Response");
    } catch {
      finished = true;
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.write(new TextEncoder().encode("500 internal error\n"));
        res.end();
      }
      return;
    }
    res.writeHead(response.status, headersOf(response.headers));
    const body = response.body;
    if (body === null || method === "HEAD") {
      await body?.cancel().catch(() => {});
      finished = true;
      res.end();
      return;
    }
    reader = body.getReader();
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (gone.signal.aborted) throw gone.signal.reason;
        if (done) break;
        if (!res.write(value) && !(await drained(res))) throw new Error("closed while writing");
      }
      finished = true;
      res.end();
    } catch (err) {
      await reader.cancel(err).catch(() => {});
      res.destroy();
    }
  } finally {
    res.off("close", onClose);
  }
}

function toRequest(req: NodeIncomingMessageLike, method: string, signal: AbortSignal): Request {
  const encrypted = !!req.socket && (req.socket as { encrypted?: unknown }).encrypted === true;
  const scheme = encrypted ? "https" : "http";
  const host = typeof req.headers.host === "string" ? req.headers.host : "";
  let url: URL;
  try {
    url = new URL(req.url ?? "/", `${scheme}://${host || "localhost"}`);
  } catch { // (a Host header that is no host)
    url = new URL(req.url ?? "/", `${scheme}://localhost`);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue; // (HTTP/2 pseudo-headers)
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const hasBody = method !== "GET" && method !== "HEAD";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (hasBody) {
    init.body = bodyStream(req);
    init.duplex = "half";
  }
  return new Request(url, init);
}

/** The request body as a stream pulled from Node's async iterator. */
function bodyStream(req: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  let it: AsyncIterator<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      it ??= req[Symbol.asyncIterator]();
      const { done, value } = await it.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await it?.return?.();
    },
  });
}

/** Headers for `writeHead`: a repeated one (`set-cookie`) as an array. */
function headersOf(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of headers) {
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Waits for `drain`; false when the response closed first. */
function drained(res: NodeServerResponseLike): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = () => {
      res.off("close", onClose);
      resolve(true);
    };
    const onClose = () => {
      res.off("drain", onDrain);
      resolve(false);
    };
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}
