import { WatchDecodeError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { bodyText, InvalidUtf8Error } from "./_body_text.ts";
import type { KubeObject, KubeObjectLike, WatchEvent } from "../api/types.ts";

/**
 * Options of {@linkcode watchStream}.
 */
export interface WatchStreamOptions {
  /** Cancels the body and rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
  /**
   * The longest event line accepted, in UTF-16 code units. A longer run
   * without a newline is taken for garbage (etcd refuses objects above
   * 1.5 MiB). Default: `33_554_432` (32 Mi).
   */
  maxEventLength?: number;
}

const TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

function decodeLine<T extends KubeObjectLike>(
  text: string,
  line: number,
): WatchEvent<T> | undefined {
  if (text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text: never pass it on.
    throw new WatchDecodeError("syntax", line, text.length);
  }
  const ev = parsed as { type?: unknown; object?: unknown; kind?: unknown };
  if (
    ev !== null && typeof ev === "object" && !Array.isArray(ev) && ev.type === undefined &&
    ev.kind === "Status"
  ) {
    // A bare Status where an event belongs: the server (or a proxy) failed the watch.
    throw KubeStatusError.fromStatus(ev, { request: "watch stream" });
  }
  if (
    ev === null || typeof ev !== "object" || typeof ev.type !== "string" || !TYPES.has(ev.type) ||
    ev.object === null || typeof ev.object !== "object" || Array.isArray(ev.object)
  ) {
    throw new WatchDecodeError("shape", line, text.length);
  }
  if (ev.type !== "ERROR") {
    const meta = (ev.object as { metadata?: unknown }).metadata;
    if (meta === null || typeof meta !== "object" || Array.isArray(meta)) {
      throw new WatchDecodeError("shape", line, text.length);
    }
    const rv = (meta as { resourceVersion?: unknown }).resourceVersion;
    if (rv !== undefined && rv !== null && typeof rv !== "string") {
      throw new WatchDecodeError("shape", line, text.length);
    }
  }
  return ev as WatchEvent<T>;
}

/**
 * Decodes a Kubernetes watch response body (one JSON object per line) into
 * events, whatever the chunk boundaries: inside a multi-byte UTF-8
 * character, inside a line, many KB without a newline. Work is linear in the
 * body size. A line that is not a watch event (including an object whose
 * `metadata` is not an object or whose `metadata.resourceVersion` is
 * neither a string nor `null`), a body that ends mid-line, a line longer
 * than `maxEventLength`, or bytes that are not valid UTF-8 (never replaced
 * with U+FFFD) throws a {@linkcode WatchDecodeError}, which never quotes
 * the line. A line that is a bare `Status` (`{"kind":"Status",...}`
 * instead of an event) throws a {@linkcode KubeStatusError} carrying it
 * (see `KubeStatusError.fromStatus`). A byte order mark at the very start
 * of the body is skipped; every other U+FEFF is kept. A connection that
 * fails mid-body throws a {@linkcode KubeNetworkError}. The generator owns
 * the body: `break`, an abort or an error cancels it.
 *
 * @example Decode a watch response
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, WatchDecodeError, watchStream } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "fx" },
 * });
 * const client = new KubeClient({ server: server.url });
 * const query = { watch: "1", resourceVersion: "0" };
 * const res = await client.request("/api/v1/namespaces/fx/configmaps", { query });
 * for await (const ev of watchStream(res.body!)) {
 *   assert.equal(ev.type, "ADDED");
 *   break; // leaving the loop cancels the body: the watch closes
 * }
 * const garbage = new Response('{"type":"ADDED","object":{"metadata":{}}}\n<html>\n').body!;
 * await assert.rejects(async () => {
 *   for await (const _ of watchStream(garbage));
 * }, WatchDecodeError);
 * await server.close();
 * ```
 */
export async function* watchStream<T extends KubeObjectLike = KubeObject>(
  body: ReadableStream<Uint8Array>,
  options: WatchStreamOptions = {},
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  for await (const batch of watchBatches<T>(body, options)) {
    for (const ev of batch) yield ev;
  }
}

/**
 * {@linkcode watchStream}, one array per piece of the body as it arrived:
 * the events of one network read come out together, so a consumer pays the
 * per-step cost of an async iterator once per read, not once per event. A
 * bad line ends the stream with its error after the events before it have
 * been handed out. Same options, errors and body ownership as `watchStream`.
 *
 * @example One array per read
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchBatches } from "../../mod.ts";
 *
 * const line = (name: string) =>
 *   JSON.stringify({ type: "ADDED", object: { metadata: { name } } }) + "\n";
 * const reads = [line("a") + line("b") + line("c").slice(0, 9), line("c").slice(9)];
 * const body = new ReadableStream<Uint8Array>({
 *   start(controller) {
 *     for (const read of reads) controller.enqueue(new TextEncoder().encode(read));
 *     controller.close();
 *   },
 * });
 * const sizes: number[] = [];
 * for await (const batch of watchBatches(body)) sizes.push(batch.length);
 * assert.deepEqual(sizes, [2, 1]); // "c" is complete only in the second read
 * ```
 */
export async function* watchBatches<T extends KubeObjectLike = KubeObject>(
  body: ReadableStream<Uint8Array>,
  options: WatchStreamOptions = {},
): AsyncGenerator<WatchEvent<T>[], void, undefined> {
  const { signal, maxEventLength = 33_554_432 } = options;
  let pending: string[] = [];
  let pendingLength = 0;
  let line = 0;
  try {
    for await (const text of bodyText(body, signal, "watch body")) {
      const batch: WatchEvent<T>[] = [];
      let start = 0;
      let newline: number;
      try {
        while ((newline = text.indexOf("\n", start)) !== -1) {
          let lineText = text.slice(start, newline);
          start = newline + 1;
          line++;
          if (pending.length > 0) {
            pending.push(lineText);
            lineText = pending.join("");
            pending = [];
            pendingLength = 0;
          }
          if (lineText.length > maxEventLength) {
            throw new WatchDecodeError("line-too-long", line, lineText.length);
          }
          const ev = decodeLine<T>(lineText, line);
          if (ev) batch.push(ev);
        }
      } catch (err) {
        // what came before the bad line is delivered first
        if (batch.length > 0) yield batch;
        throw err;
      }
      if (batch.length > 0) yield batch;
      if (start < text.length) {
        pending.push(start === 0 ? text : text.slice(start));
        pendingLength += text.length - start;
        if (pendingLength > maxEventLength) {
          throw new WatchDecodeError("line-too-long", line + 1, pendingLength);
        }
      }
    }
  } catch (err) {
    if (err instanceof InvalidUtf8Error) {
      throw new WatchDecodeError("encoding", line + 1, pendingLength);
    }
    throw err;
  }
  const rest = pending.join("");
  if (rest.trim() !== "") throw new WatchDecodeError("truncated", line + 1, rest.length);
}
