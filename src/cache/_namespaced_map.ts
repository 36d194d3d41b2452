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

/** The values of a namespace with several (a class of its own: a stored value is never one). */
class Names<T> extends Map<string, T> {}

/**
 * Values by namespace, then by name; namespaces with no value are dropped.
 *
 * Given `nameOf` (the name a value is stored under, read from the value
 * itself), a namespace with one value holds it bare, and a `Map` of its
 * values only from its second (as `IndexTable` does for buckets): many
 * namespaces hold one object of a kind (`kube-root-ca.crt`, the `default`
 * ServiceAccount, a tenant's quota), and a `Map` costs about 180 bytes
 * more than its one entry. Without `nameOf` every namespace is a `Map`.
 */
export class NamespacedMap<T> {
  #byNamespace = new Map<string, T | Names<T>>();
  #size = 0;
  readonly #nameOf: ((value: T) => string) | undefined;

  /**
   * @param nameOf The name `value` is stored under (it must give it for
   *   every stored value, and values must not be `Map`s). Default: none
   *   (no value is held bare).
   */
  constructor(nameOf?: (value: T) => string) {
    this.#nameOf = nameOf;
  }

  /** How many values it holds. */
  get size(): number {
    return this.#size;
  }

  /** The value at `namespace`, `name`. */
  get(namespace: string, name: string): T | undefined {
    const held = this.#byNamespace.get(namespace);
    if (held instanceof Names) return held.get(name);
    return held !== undefined && this.#nameOf!(held) === name ? held : undefined;
  }

  /** Stores `value` at `namespace`, `name`; returns the value it replaced. */
  set(namespace: string, name: string, value: T): T | undefined {
    const held = this.#byNamespace.get(namespace);
    if (held instanceof Names) {
      const old = held.get(name);
      held.set(name, value);
      if (old === undefined) this.#size++;
      return old;
    }
    const nameOf = this.#nameOf;
    if (held === undefined) {
      this.#byNamespace.set(namespace, nameOf ? value : new Names([[name, value]]));
      this.#size++;
      return undefined;
    }
    // one value, held bare
    const heldName = nameOf!(held);
    if (heldName === name) {
      this.#byNamespace.set(namespace, value); // (keeps the namespace's place)
      return held;
    }
    const names = new Names<T>();
    names.set(heldName, held);
    names.set(name, value);
    this.#byNamespace.set(namespace, names);
    this.#size++;
    return undefined;
  }

  /** Removes the value at `namespace`, `name`; returns it. */
  delete(namespace: string, name: string): T | undefined {
    const held = this.#byNamespace.get(namespace);
    if (held === undefined) return undefined;
    if (!(held instanceof Names)) {
      if (this.#nameOf!(held) !== name) return undefined;
      this.#byNamespace.delete(namespace);
      this.#size--;
      return held;
    }
    const old = held.get(name);
    if (old === undefined) return undefined;
    held.delete(name);
    this.#size--;
    if (held.size === 0) this.#byNamespace.delete(namespace);
    else if (held.size === 1 && this.#nameOf) {
      this.#byNamespace.set(namespace, held.values().next().value!); // bare again
    }
    return old;
  }

  /** Calls `fn` with each value of `namespace` and its name, in the order of {@linkcode values}. */
  forEachIn(namespace: string, fn: (value: T, name: string) => void): void {
    const held = this.#byNamespace.get(namespace);
    if (held instanceof Names) held.forEach(fn);
    else if (held !== undefined) fn(held, this.#nameOf!(held));
  }

  /** The values of `namespace`, in the order of {@linkcode values}. */
  valuesIn(namespace: string): T[] {
    const held = this.#byNamespace.get(namespace);
    if (held === undefined) return [];
    return held instanceof Names ? [...held.values()] : [held];
  }

  /** The names in `namespace`, in the order of {@linkcode values}. */
  namesIn(namespace: string): string[] {
    const held = this.#byNamespace.get(namespace);
    if (held === undefined) return [];
    return held instanceof Names ? [...held.keys()] : [this.#nameOf!(held)];
  }

  /** Whether `namespace` holds its one value bare (no `Map`). Internal, for tests. */
  holdsBare(namespace: string): boolean {
    const held = this.#byNamespace.get(namespace);
    return held !== undefined && !(held instanceof Names);
  }

  /** The namespaces that hold a value, in the order they got their first. */
  namespaces(): string[] {
    return [...this.#byNamespace.keys()];
  }

  /** Every value: namespace by namespace, each in the order of its names' first store. */
  values(): T[] {
    const out: T[] = [];
    for (const held of this.#byNamespace.values()) {
      if (held instanceof Names) held.forEach((v) => out.push(v));
      else out.push(held);
    }
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
    const nameOf = this.#nameOf;
    this.#byNamespace.forEach((held, namespace) => {
      if (held instanceof Names) held.forEach((value, name) => fn(joinKey(namespace, name), value));
      else fn(joinKey(namespace, nameOf!(held)), held);
    });
  }
}
