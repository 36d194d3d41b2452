/**
 * A finalizer helper for reconcilers (kube-rs's `finalizer`): run cleanup
 * before Kubernetes deletes an object, and never lose a delete.
 *
 * @module
 */
import { KubeConflictError } from "../api/kube_conflict_error.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObjectLike } from "../api/types.ts";
import type { ResourceClient } from "../transport/resource_client.ts";
import { type FinalizerMeta, finalizerStep, isQualifiedName } from "./_finalizer_step.ts";

/** What {@linkcode finalizer}'s handlers receive besides the object. */
export interface FinalizerContext {
  /** The `signal` of the call (one that never aborts when none was given): pass it to your requests. */
  signal: AbortSignal;
}

/**
 * The two halves of a reconcile that owns a finalizer. Both must be
 * idempotent: each may run again for the same object (after a restart, a
 * conflict, a failure), and `cleanup` may run without `apply` ever having
 * succeeded.
 */
export interface FinalizerHandlers<T, R> {
  /** Makes the world match the object; runs only while the object carries the finalizer and is not being deleted. */
  apply(obj: T, context: FinalizerContext): R | Promise<R>;
  /** Undoes what `apply` did outside the object; runs when the object is being deleted and still carries the finalizer. */
  cleanup(obj: T, context: FinalizerContext): R | Promise<R>;
}

/** Options of {@linkcode finalizer}. */
export interface FinalizerOptions {
  /** Aborts the requests (they reject with `signal.reason`) and is handed to the handlers. Default: none. */
  signal?: AbortSignal;
}

/**
 * What {@linkcode finalizer} did:
 * - `"added"`: the finalizer was added (`object` is the patched object);
 *   `apply` did not run: the write is a change that brings the object back
 *   to the reconciler, which then applies (kube-rs returns here too);
 * - `"applied"`: `apply` ran and resolved to `value`;
 * - `"cleaned-up"`: `cleanup` ran and resolved to `value`, then the
 *   finalizer was removed (or the object was already gone);
 * - `"deleted"`: the object is being deleted and no longer carries the
 *   finalizer (its cleanup is done), or vanished before the finalizer could
 *   be added: nothing was done.
 */
export type FinalizerResult<T, R> =
  | { action: "added"; object: T }
  | { action: "applied"; value: R }
  | { action: "cleaned-up"; value: R }
  | { action: "deleted" };

/**
 * Adding or removing the finalizer lost a race: the object changed since it
 * was read (a 409, or a 422 from the JSON patch's `test` precondition, or
 * because its deletion began so no finalizer may be added). Nothing was
 * changed: let the reconcile fail, and retry with the object as it is now
 * (a `Controller` requeues the key; the informer's next event brings the new
 * version). A {@linkcode KubeConflictError}, so `isConflict` is true; `code`
 * is the server's (409 or 422) and `status` its answer.
 */
export class FinalizerConflictError extends KubeConflictError {
  /** The finalizer's name. */
  readonly finalizer: string;
  /** What lost the race: adding the finalizer or removing it (after a successful cleanup). */
  readonly step: "add" | "remove";

  /** Wraps the server's refusal `cause` of adding or removing `finalizer`. */
  constructor(finalizer: string, step: "add" | "remove", cause: KubeStatusError) {
    super({
      code: cause.code,
      request: cause.request,
      status: cause.status,
      retryAfterMs: cause.retryAfterMs,
    });
    this.name = "FinalizerConflictError";
    this.message = `finalizer ${finalizer}: ${
      step === "add" ? "adding" : "removing"
    } it conflicted with a change of the object: ${cause.message}`;
    this.finalizer = finalizer;
    this.step = step;
    Object.defineProperty(this, "cause", { value: cause, configurable: true, writable: true });
  }
}

/**
 * Reconciles `obj` with a finalizer named `name` on it, so that `cleanup`
 * runs before Kubernetes deletes the object (kube-rs's `finalizer`). Call it
 * from a reconcile with the object just read (from a `Lister` or a `get`):
 *
 * 1. not being deleted, finalizer absent: adds it with a JSON patch guarded
 *    by a `test` of `metadata.resourceVersion`, and returns `"added"`
 *    without calling `apply` (the write brings the object back);
 * 2. not being deleted, finalizer present: `apply(obj)`, `"applied"`;
 * 3. being deleted (`deletionTimestamp`), finalizer present:
 *    `cleanup(obj)`; once it resolves, removes this finalizer only, with a
 *    JSON patch guarded by a `test` of the whole finalizers array (so the
 *    index names ours, whatever others did meanwhile), `"cleaned-up"`; a
 *    404 then means the object is already gone: also `"cleaned-up"`;
 * 4. being deleted, finalizer absent: nothing, `"deleted"` (a finalizer is
 *    never added to an object being deleted).
 *
 * A throwing `apply` or `cleanup` rejects with its error as is, and a
 * failed cleanup leaves the finalizer, so the object stays until a cleanup
 * succeeds: a delete is never lost. A lost race on the patch rejects with a
 * {@linkcode FinalizerConflictError}; other failures reject with the
 * client's error. `name` must be unique among the controllers that handle
 * the object; both handlers must be idempotent (see
 * {@linkcode FinalizerHandlers}). RBAC: `patch` on the resource.
 *
 * Caveat: an object's deletion waits for its controller: while it is not
 * running, or while `cleanup` keeps failing, the object stays
 * (`kubectl delete` waits). To give up, remove the finalizer by hand.
 *
 * @param client The resource of `obj`. A client for every namespace patches in `obj`'s namespace.
 * @param name The finalizer, a qualified name, best with a domain you own (`"example.com/cleanup"`).
 * @throws {TypeError} (as a rejection) when `name` is not a qualified name,
 *   `obj` has no `metadata.name`, or an add is needed and it has no
 *   `metadata.resourceVersion`.
 *
 * @example A reconcile that reads from a Lister and owns a finalizer
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Controller,
 *   finalizer,
 *   Informer,
 *   KubeClient,
 *   type KubeObject,
 *   resourceClient,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * const client = new KubeClient({ server: server.url });
 * const ref = { apiVersion: "v1", resource: "configmaps", namespace: "default" };
 * const configMaps = resourceClient<KubeObject>(client, ref);
 * const informer = new Informer(resourceListerWatcher(client, ref), { name: "configmaps" });
 * const lister = informer.lister();
 * const log: string[] = [];
 * const ac = new AbortController();
 * const controller = new Controller({
 *   name: "demo",
 *   informers: [informer],
 *   reconcile: async (key, { signal }) => {
 *     const [namespace, name] = key.split("/");
 *     const obj = lister.get(namespace, name);
 *     if (!obj) return; // gone: its cleanup ran before the finalizer came off
 *     const done = await finalizer(configMaps, "example.com/cleanup", obj, {
 *       apply: (cm) => log.push(`apply ${cm.metadata.name}`),
 *       cleanup: (cm) => log.push(`cleanup ${cm.metadata.name}`),
 *     }, { signal });
 *     if (done.action === "applied") await configMaps.delete(name, { signal }); // for this example
 *     if (done.action === "cleaned-up") ac.abort(); // done for this example
 *   },
 * });
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } });
 * const informing = informer.run({ signal: ac.signal });
 * await controller.run({ signal: ac.signal });
 * await informing;
 * assert.deepEqual(log, ["apply a", "cleanup a"]);
 * assert.equal(server.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "default", name: "a" }), undefined);
 * await server.close();
 * ```
 */
export async function finalizer<T extends KubeObjectLike, R>(
  client: ResourceClient<T>,
  name: string,
  obj: T,
  handlers: FinalizerHandlers<T, R>,
  options: FinalizerOptions = {},
): Promise<FinalizerResult<T, R>> {
  if (typeof name !== "string" || !isQualifiedName(name)) {
    throw new TypeError(
      `finalizer: name must be a qualified name such as "example.com/cleanup", got ${
        JSON.stringify(name)
      }`,
    );
  }
  if (!handlers || typeof handlers.apply !== "function" || typeof handlers.cleanup !== "function") {
    throw new TypeError("finalizer: handlers must be { apply, cleanup } functions");
  }
  const meta = obj?.metadata as (FinalizerMeta & { name?: string; namespace?: string }) | undefined;
  const objectName = meta?.name;
  if (typeof objectName !== "string" || objectName === "") {
    throw new TypeError("finalizer: obj has no metadata.name");
  }
  const { signal } = options;
  signal?.throwIfAborted();
  const step = finalizerStep(meta!, name);
  const context: FinalizerContext = { signal: signal ?? new AbortController().signal };
  const patchOptions = {
    type: "json" as const,
    namespace: client.ref.namespace === undefined ? meta?.namespace || undefined : undefined,
    signal,
  };

  switch (step.kind) {
    case "none":
      return { action: "deleted" };
    case "apply":
      return { action: "applied", value: await handlers.apply(obj, context) };
    case "add":
      try {
        const object = await client.patch(objectName, step.patch, patchOptions);
        return { action: "added", object };
      } catch (err) {
        if (err instanceof KubeStatusError && err.code === 404) return { action: "deleted" };
        throw lostRace(err, name, "add");
      }
    case "cleanup": {
      const value = await handlers.cleanup(obj, context);
      try {
        await client.patch(objectName, step.removal, patchOptions);
      } catch (err) {
        if (!(err instanceof KubeStatusError && err.code === 404)) {
          throw lostRace(err, name, "remove");
        }
      }
      return { action: "cleaned-up", value };
    }
  }
}

/** A 409 or 422 as a {@linkcode FinalizerConflictError}; anything else as is. */
function lostRace(err: unknown, name: string, step: "add" | "remove"): unknown {
  if (err instanceof KubeStatusError && (err.code === 409 || err.code === 422)) {
    return new FinalizerConflictError(name, step, err);
  }
  return err;
}
