import { KubeStatusError } from "./kube_status_error.ts";
import type { KubeObjectLike } from "./types.ts";

/**
 * True when the error says the requested resourceVersion (or continue token)
 * is gone: HTTP 410, Status reason `Expired` or `Gone`. The reflector then
 * relists.
 *
 * @example A watch from a compacted version
 * ```ts
 * import assert from "node:assert/strict";
 * import { isExpired, KubeClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ expiredWatch: "status" });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "fx" },
 * });
 * server.compact(); // the history before now is gone
 * const client = new KubeClient({ server: server.url });
 * const query = { watch: "1", resourceVersion: "1" };
 * const err = await client.request("/api/v1/configmaps", { query }).catch((e) => e);
 * assert.ok(isExpired(err)); // a reflector relists here
 * await server.close();
 * ```
 */
export function isExpired(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return false;
  // `reason` is always a string (a Status reason that is not one reads as "").
  return err.code === 410 || err.reason === "Expired" || err.reason === "Gone";
}

/**
 * True when the API server rejected a resourceVersion newer than it has seen
 * (504 with Status cause `ResourceVersionTooLarge`; also matches the message
 * text "Too large resource version" that older servers send).
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return false;
  if (err.causes.includes("ResourceVersionTooLarge")) return true;
  const message: unknown = err.status?.message;
  return typeof message === "string" && /too large resource version/i.test(message);
}

/**
 * True for failures worth retrying after a pause: 429, 5xx, request
 * timeouts (408), and every non-HTTP failure (connection refused or reset,
 * a malformed stream). False for 4xx answers that will not change by waiting
 * (400, 401, 403, 404, 422...). A reflector retries everything with backoff
 * anyway; this tells the severity to `onError` users.
 *
 * @example Tell a credentials problem from a passing one
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   isRetriable,
 *   KubeClient,
 *   KubeStatusError,
 *   MemoryStore,
 *   metaNamespaceKeyFunc,
 *   Reflector,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["valid"] });
 * const client = new KubeClient({ server: server.url, token: "revoked" });
 * const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "pods" });
 * let giveUp!: (err: unknown) => void;
 * const fatal = new Promise<unknown>((resolve) => giveUp = resolve);
 * const reflector = new Reflector(lw, new MemoryStore(metaNamespaceKeyFunc), {
 *   onError: (err) => {
 *     if (!isRetriable(err)) giveUp(err); // waiting will not fix it: alert, stop
 *   },
 * });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * const err = await fatal;
 * assert.ok(err instanceof KubeStatusError && err.code === 401);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 */
export function isRetriable(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return true;
  return err.code === 429 || err.code === 408 || err.code >= 500 || isExpired(err);
}

/**
 * True when the object (or the resource) does not exist: HTTP 404. A
 * delete of an object already gone, or a get before a create, often
 * treats this as success.
 */
export function isNotFound(err: unknown): boolean {
  return err instanceof KubeStatusError && err.code === 404;
}

/**
 * True when a create found its name taken: 409 with reason
 * `AlreadyExists` (never a {@linkcode KubeConflictError}: retrying will not
 * help; get and replace, or apply, instead).
 */
export function isAlreadyExists(err: unknown): boolean {
  return err instanceof KubeStatusError && err.code === 409 && err.reason === "AlreadyExists";
}

/**
 * Checks `obj.kind` against `expected`. Objects without a kind pass (list
 * items carry none), and so do `PartialObjectMetadata`: a metadata-only
 * answer (asked for with `metadataOnly`) never names the kind it stands for.
 */
export function kindMatches(obj: KubeObjectLike, expected: string | undefined): boolean {
  return expected === undefined || obj.kind === undefined || obj.kind === expected ||
    obj.kind === "PartialObjectMetadata";
}
