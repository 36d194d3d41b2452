/**
 * Internals of `Indexer`: its objects by namespace, then by name (the
 * layout client-node's informer cache has). Under `namespace/name` keys
 * this holds no key string per object (the name is the object's own
 * string) and is the namespace index at no cost of its own: at 100k
 * ConfigMaps in 50 namespaces about 60 bytes per object less than a `Map`
 * keyed by `namespace/name` plus a namespace index (the key string, the
 * index's set entry, a hash table sized to the whole store).
 *
 * Any key can be stored: {@linkcode splitKey} and {@linkcode joinKey} are
 * inverse for every string, and agree with `metaNamespaceKeyFunc` for
 * every object it keys.
 *
 * @module
 */

/**
 * The address of `key`: `[namespace, name]` split at its last `/`, or
 * `["", key]` when it has none (a cluster-scoped object) or has its only
 * `/` first. Names never hold a `/`; a namespace may (the key function does
 * not forbid it).
 */
export function splitKey(key: string): [namespace: string, name: string] {
  const slash = key.lastIndexOf("/");
  return slash > 0 ? [key.slice(0, slash), key.slice(slash + 1)] : ["", key];
}

/** The key at an address: `namespace/name`, or `name` in namespace `""`. */
export function joinKey(namespace: string, name: string): string {
  return namespace === "" ? name : `${namespace}/${name}`;
}

/** Values by namespace, then by name; namespaces with no value are dropped. */
export class NamespacedMap<T> {
  #byNamespace = new Map<string, Map<string, T>>();
  #size = 0;

  /** How many values it holds. */
  get size(): number {
    return this.#size;
  }

  /** The value at `namespace`, `name`. */
  get(namespace: string, name: string): T | undefined {
    return this.#byNamespace.get(namespace)?.get(name);
  }

  /** Stores `value` at `namespace`, `name`; returns the value it replaced. */
  set(namespace: string, name: string, value: T): T | undefined {
    let names = this.#byNamespace.get(namespace);
    if (names === undefined) {
      names = new Map();
      this.#byNamespace.set(namespace, names);
    }
    const old = names.get(name);
    names.set(name, value);
    if (old === undefined) this.#size++;
    return old;
  }

  /** Removes the value at `namespace`, `name`; returns it. */
  delete(namespace: string, name: string): T | undefined {
    const names = this.#byNamespace.get(namespace);
    const old = names?.get(name);
    if (old === undefined) return undefined;
    names!.delete(name);
    this.#size--;
    if (names!.size === 0) this.#byNamespace.delete(namespace);
    return old;
  }

  /** The values of `namespace`, by name (the map itself: do not change it). */
  inNamespace(namespace: string): ReadonlyMap<string, T> | undefined {
    return this.#byNamespace.get(namespace);
  }

  /** The namespaces that hold a value, in the order they got their first. */
  namespaces(): string[] {
    return [...this.#byNamespace.keys()];
  }

  /** Every value: namespace by namespace, each in the order of its names' first store. */
  values(): T[] {
    const out: T[] = [];
    for (const names of this.#byNamespace.values()) names.forEach((v) => out.push(v));
    return out;
  }

  /** Every key ({@linkcode joinKey}), in the order of {@linkcode values}. */
  keys(): string[] {
    const out: string[] = [];
    this.forEach((key) => out.push(key));
    return out;
  }

  /** Calls `fn` with each key and value, in the order of {@linkcode values}. */
  forEach(fn: (key: string, value: T) => void): void {
    // (Map#forEach: no entry array per value)
    this.#byNamespace.forEach((names, namespace) =>
      names.forEach((value, name) => fn(joinKey(namespace, name), value))
    );
  }
}
