/**
 * The fake API server's storage, modelled on etcd: one global, strictly
 * increasing resourceVersion across all objects, a bounded history of
 * change events (what the watch cache replays), compaction, and reads at
 * an older resourceVersion (what `resourceVersionMatch=Exact` serves).
 *
 * Stored objects are never mutated: a write stores a new object, so lists,
 * continue snapshots and queued watch events can share references.
 *
 * Deletion follows the finalizer rules of `_deletion.ts`: a delete of an
 * object with finalizers marks it (`deletionTimestamp`), and the update that
 * leaves it without finalizers deletes it.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObject, ObjectMeta, Status } from "../api/types.ts";
import {
  deletionFieldsForUpdate,
  endsDeletion,
  hasFinalizers,
  markAsDeleting,
} from "./_deletion.ts";
import type { Resource } from "./_resources.ts";
import { alreadyExists, conflict, failure, objectNotFound } from "./_status.ts";

/** One change, as stored in the history. */
export interface StoredEvent {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  resource: Resource;
  key: string;
  /** The object after the change; for DELETED, the last state at the deletion's resourceVersion. */
  object: KubeObject;
  /** The object before the change (absent for ADDED). */
  prev?: KubeObject;
}

/** Options of {@linkcode ObjectStore}. */
export interface ObjectStoreOptions {
  /** Events kept for watches and exact reads. */
  historySize: number;
  /** The resourceVersion before the first write. */
  startResourceVersion: number;
}

/** The key of an object within its resource: `namespace/name`, or `name` when cluster-scoped. */
export function objectKey(resource: Resource, namespace: string | undefined, name: string): string {
  return resource.namespaced ? `${namespace ?? ""}/${name}` : name;
}

/** Options of one write. */
export interface WriteOptions {
  /** Check and answer, but store nothing (`dryRun=All`): no new resourceVersion, no event. */
  dryRun?: boolean;
}

/** Options of a delete. */
export interface DeleteOptions extends WriteOptions {
  /** Delete only an object with this uid and/or resourceVersion, else 409 Conflict. */
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** What {@linkcode ObjectStore.delete} did. */
export interface DeleteResult {
  /** The object: its last state at the deletion's resourceVersion, or, when not deleted, as marked. */
  object: KubeObject;
  /** False when finalizers keep the object (it is only marked with a `deletionTimestamp`). */
  deleted: boolean;
}

/** Objects by resource, a global resourceVersion, and the change history. */
export class ObjectStore {
  #rv: number;
  #compactedRv: number;
  #watchCacheStartRv = 0;
  #historySize: number;
  #history: StoredEvent[] = [];
  #byResource = new Map<string, Map<string, KubeObject>>();
  #listeners = new Set<(event: StoredEvent) => void>();

  constructor(options: ObjectStoreOptions) {
    this.#rv = options.startResourceVersion;
    this.#compactedRv = options.startResourceVersion;
    this.#historySize = options.historySize;
  }

  /** The latest resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Watches and exact reads from a resourceVersion below this one are gone (410). */
  get compactedResourceVersion(): number {
    return this.#compactedRv;
  }

  /** Calls `listener` synchronously after every write; returns the unsubscribe function. */
  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The stored object, or undefined. */
  get(resource: Resource, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#objects(resource).get(objectKey(resource, namespace, name));
  }

  /** Current objects of a resource (in one namespace when given), sorted by key. */
  list(resource: Resource, namespace?: string): KubeObject[] {
    return sortAndFilter(this.#objects(resource), namespace);
  }

  /** The objects as they were at `rv`, or undefined when history no longer reaches back there. */
  listAt(resource: Resource, namespace: string | undefined, rv: number): KubeObject[] | undefined {
    if (rv >= this.#rv) return this.list(resource, namespace);
    const events = this.eventsSince(rv);
    if (!events) return undefined;
    const state = new Map(this.#objects(resource));
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i];
      if (event.resource.id !== resource.id) continue;
      if (event.prev) state.set(event.key, event.prev);
      else state.delete(event.key);
    }
    return sortAndFilter(state, namespace);
  }

  /** Every event after `rv`, oldest first, or undefined when some were dropped. */
  eventsSince(rv: number): StoredEvent[] | undefined {
    if (rv < this.#compactedRv) return undefined;
    const start = this.#history.findIndex((e) => e.rv > rv);
    return start < 0 ? [] : this.#history.slice(start);
  }

  /**
   * Events after `rv` for a watch: like {@linkcode eventsSince}, but the
   * watch cache also forgets everything before its last restart.
   */
  watchEventsSince(rv: number): StoredEvent[] | undefined {
    return rv < this.#watchCacheStartRv ? undefined : this.eventsSince(rv);
  }

  /**
   * Like an API server restart: the watch cache starts empty at the current
   * version (older watches get 410) while etcd keeps its history (exact
   * lists at older versions still work).
   */
  restartWatchCache(): void {
    this.#watchCacheStartRv = this.#rv;
  }

  /** Drops the whole history (like an etcd compaction at the current revision). */
  compact(): void {
    this.#history = [];
    this.#compactedRv = this.#rv;
  }

  /** Stores a new object (without deletion fields, as the server wipes them); 409 AlreadyExists when the key is taken. */
  create(resource: Resource, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const {
      deletionTimestamp: _dt,
      deletionGracePeriodSeconds: _dg,
      ...meta
    } = input.metadata ?? {};
    input = { ...input, metadata: meta };
    const name = meta.name || generateName(meta.generateName);
    if (!name) {
      throw statusError(failure(
        422,
        "Invalid",
        `${resource.kind} "" is invalid: metadata.name: ` +
          "Required value: name or generateName is required",
      ));
    }
    const namespace = resource.namespaced ? meta.namespace || "default" : undefined;
    if (this.get(resource, namespace, name)) {
      throw statusError(alreadyExists(resource.resource, name, resource.group));
    }
    const object = normalize(resource, input, {
      name,
      namespace,
      uid: meta.uid || crypto.randomUUID(),
      // a dry run stores nothing, so no version (as the real server answers)
      resourceVersion: options.dryRun ? undefined : String(this.#rv + 1),
      creationTimestamp: meta.creationTimestamp || timestamp(),
    });
    if (options.dryRun) return object;
    return this.#commit(resource, "ADDED", object);
  }

  /**
   * Replaces an object, keeping its uid, creationTimestamp and deletion
   * fields; 404 when missing, 409 Conflict when `metadata.resourceVersion`
   * is set and stale, 422 when it adds a finalizer to an object being
   * deleted or sets `deletionTimestamp`. An update that leaves an object
   * being deleted without finalizers deletes it (a DELETED event) and
   * returns the updated object, as the real server answers.
   */
  update(resource: Resource, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const meta = input.metadata ?? {};
    const namespace = resource.namespaced ? meta.namespace || "default" : undefined;
    const name = meta.name ?? "";
    const existing = this.get(resource, namespace, name);
    if (!existing) throw statusError(objectNotFound(resource.resource, name, resource.group));
    if (meta.resourceVersion && meta.resourceVersion !== existing.metadata.resourceVersion) {
      throw statusError(conflict(resource.resource, name, resource.group));
    }
    const metadata = deletionFieldsForUpdate(resource, existing.metadata, meta);
    const ending = endsDeletion(existing.metadata, metadata);
    const object = normalize(resource, { ...input, metadata }, {
      ...existing.metadata,
      resourceVersion: options.dryRun || ending
        ? existing.metadata.resourceVersion
        : String(this.#rv + 1),
    });
    if (options.dryRun) return object;
    if (ending) {
      this.#commit(resource, "DELETED", this.#nextVersion(existing), existing);
      return object;
    }
    return this.#commit(resource, "MODIFIED", object, existing);
  }

  /**
   * Removes an object (its last state at the deletion's resourceVersion is
   * returned), or, when it has finalizers, marks it as being deleted
   * (`deletionTimestamp`, a MODIFIED event; nothing changes when it already
   * is).
   */
  delete(
    resource: Resource,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): DeleteResult {
    const existing = this.get(resource, namespace, name);
    if (!existing) throw statusError(objectNotFound(resource.resource, name, resource.group));
    const { uid, resourceVersion } = options.preconditions ?? {};
    for (
      const [field, wanted, actual] of [
        ["UID", uid, existing.metadata.uid],
        ["ResourceVersion", resourceVersion, existing.metadata.resourceVersion],
      ]
    ) {
      if (wanted !== undefined && wanted !== actual) {
        const why = `Precondition failed: ${field} in precondition: ${wanted}, ` +
          `${field} in object meta: ${actual}`;
        throw statusError(conflict(resource.resource, name, resource.group, why));
      }
    }
    if (hasFinalizers(existing.metadata)) {
      const marked = markAsDeleting(existing, timestamp());
      if (!marked || options.dryRun) return { object: marked ?? existing, deleted: false };
      const object = normalize(resource, marked, {
        ...existing.metadata,
        resourceVersion: String(this.#rv + 1),
      });
      this.#commit(resource, "MODIFIED", object, existing);
      return { object, deleted: false };
    }
    if (options.dryRun) return { object: existing, deleted: true };
    return {
      object: this.#commit(resource, "DELETED", this.#nextVersion(existing), existing),
      deleted: true,
    };
  }

  /** `object` at the resourceVersion of the next write. */
  #nextVersion(object: KubeObject): KubeObject {
    return { ...object, metadata: { ...object.metadata, resourceVersion: String(this.#rv + 1) } };
  }

  #objects(resource: Resource): Map<string, KubeObject> {
    let objects = this.#byResource.get(resource.id);
    if (!objects) this.#byResource.set(resource.id, objects = new Map());
    return objects;
  }

  #commit(
    resource: Resource,
    type: StoredEvent["type"],
    object: KubeObject,
    prev?: KubeObject,
  ): KubeObject {
    const rv = ++this.#rv;
    const key = objectKey(resource, object.metadata.namespace, object.metadata.name ?? "");
    if (type === "DELETED") this.#objects(resource).delete(key);
    else this.#objects(resource).set(key, object);
    const event: StoredEvent = { rv, type, resource, key, object, prev };
    this.#history.push(event);
    while (this.#history.length > this.#historySize) {
      this.#compactedRv = this.#history.shift()!.rv;
    }
    for (const listener of [...this.#listeners]) listener(event);
    return object;
  }
}

/** A `KubeStatusError` carrying a Status, as the real server would answer it. */
export function statusError(status: Status): KubeStatusError {
  return new KubeStatusError({ code: status.code ?? 500, status });
}

function sortAndFilter(objects: Map<string, KubeObject>, namespace?: string): KubeObject[] {
  const keys = [...objects.keys()].sort();
  const out: KubeObject[] = [];
  for (const key of keys) {
    const object = objects.get(key)!;
    if (namespace === undefined || object.metadata.namespace === namespace) out.push(object);
  }
  return out;
}

/** A deep copy with `kind`, `apiVersion`, `metadata` first and metadata in the server's field order. */
function normalize(resource: Resource, input: KubeObject, identity: ObjectMeta): KubeObject {
  const { kind: _kind, apiVersion: _apiVersion, metadata = {}, ...rest } = JSON.parse(
    JSON.stringify(input),
  ) as KubeObject;
  const {
    name: _n,
    generateName,
    namespace: _ns,
    uid: _u,
    resourceVersion: _rv,
    generation,
    creationTimestamp: _ct,
    deletionTimestamp,
    deletionGracePeriodSeconds,
    ...otherMeta
  } = metadata;
  const meta: ObjectMeta = { name: identity.name };
  if (generateName) meta.generateName = generateName;
  if (identity.namespace) meta.namespace = identity.namespace;
  meta.uid = identity.uid;
  if (identity.resourceVersion !== undefined) meta.resourceVersion = identity.resourceVersion;
  if (generation !== undefined) meta.generation = generation;
  meta.creationTimestamp = identity.creationTimestamp;
  if (deletionTimestamp) meta.deletionTimestamp = deletionTimestamp;
  if (deletionGracePeriodSeconds != null) {
    meta.deletionGracePeriodSeconds = deletionGracePeriodSeconds;
  }
  Object.assign(meta, otherMeta);
  return { kind: resource.kind, apiVersion: resource.apiVersion, metadata: meta, ...rest };
}

/** RFC 3339 in seconds, as Kubernetes writes times: `2026-12-02T15:31:32Z`. */
function timestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

/** `generateName` plus five random characters from the API server's alphabet. */
function generateName(prefix: string | undefined): string {
  if (!prefix) return "";
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
  return prefix + suffix;
}
