/**
 * The net changes a reflector applied since its checkpoint was last saved
 * (or loaded), so that the next save writes only those: each changed key
 * once, with the object now, or `undefined` once deleted. Knows nothing of
 * storages.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";

/** The changes taken for one save. */
export interface ChangesSnapshot<T> {
  /** The version they are since; undefined when unknown (a list replaced everything). */
  since: string | undefined;
  objects: [string, T | undefined][];
  /** How many lists had replaced everything when it was taken. */
  lists: number;
}

/** Net changes since a version; see the module. */
export class ChangesSince<T extends KubeObjectLike> {
  #changes = new Map<string, T | undefined>();
  #since: string | undefined;
  #lists = 0;

  /** Starts over from the objects at `since` (a checkpoint loaded). */
  restored(since: string): void {
    this.#changes.clear();
    this.#since = since;
  }

  /** A list replaced everything: the changes since the last save are unknown until the next. */
  listed(): void {
    this.#changes.clear();
    this.#since = undefined;
    this.#lists++;
  }

  /** Records an object added, updated (`deleted` false) or deleted. */
  record(object: T, deleted: boolean): void {
    if (this.#since === undefined) return; // the next save writes everything anyway
    let key: string;
    try {
      key = metaNamespaceKeyFunc(object);
    } catch {
      return this.listed(); // no key to record it by: the next save writes everything
    }
    this.#changes.set(key, deleted ? undefined : object);
  }

  /** The changes now, for a save. */
  snapshot(): ChangesSnapshot<T> {
    return { since: this.#since, objects: [...this.#changes], lists: this.#lists };
  }

  /**
   * The save of `taken` succeeded with the objects at `resourceVersion`:
   * what it wrote is no longer a change, unless it changed again since.
   */
  saved(taken: ChangesSnapshot<T>, resourceVersion: string): void {
    if (taken.lists !== this.#lists) return; // a list since: still unknown
    for (const [key, object] of taken.objects) {
      if (this.#changes.has(key) && this.#changes.get(key) === object) this.#changes.delete(key);
    }
    this.#since = resourceVersion;
  }
}
