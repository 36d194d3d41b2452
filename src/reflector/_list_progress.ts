/**
 * The progress of a paginated list, kept across a run's retries and across
 * runs: `catchUp` wraps its lister-watcher in one, so a list that does not
 * fit the budget is saved page by page and goes on from its continue token
 * next time, instead of starting over.
 *
 * @module
 */
import { isExpired } from "../api/predicates.ts";
import type { KubeList, KubeObjectLike } from "../api/types.ts";
import type { ListerWatcher, ListOptions } from "../transport/lister_watcher.ts";

/** A list in progress as saved: the pages so far, the next continue token, the list's version. */
export interface SavedListProgress<T> {
  items: T[];
  continue: string;
  resourceVersion: string;
  remaining?: number;
}

/** The pages of a list in progress that are not saved yet. */
export interface UnsavedPages<T> {
  items: T[];
  /** The continue token of the next page. */
  continue: string;
  /** The list's version. */
  resourceVersion: string;
  /** The continue token these pages were listed from (undefined: from the first page). */
  since?: string;
  /** `remainingItemCount` of the last page, when the server sent it. */
  remaining?: number;
  /** Every item of the list so far, saved ones included. */
  total: number;
}

/**
 * Follows the pages a lister-watcher returns. A new list (a request with
 * no continue token, for the current state) goes on from where the last
 * unfinished one stopped, with the items it had; a continue token the
 * server no longer honours (410) is dropped, and the list starts over.
 */
export class ListProgress<T extends KubeObjectLike> {
  /** Every item of the unfinished list so far (undefined: none in progress). */
  #items: T[] | undefined;
  #continue = "";
  #resourceVersion = "";
  #remaining: number | undefined;
  /** How many of `#items` are saved, and the token they end at. */
  #saved = 0;
  #savedToken: string | undefined;
  readonly #onDropped: (err: unknown) => void;

  /** `onDropped` hears of a saved continue token the server refused (410). */
  constructor(saved: SavedListProgress<T> | undefined, onDropped: (err: unknown) => void) {
    this.#onDropped = onDropped;
    if (saved) {
      this.#items = saved.items.slice();
      this.#continue = saved.continue;
      this.#resourceVersion = saved.resourceVersion;
      this.#remaining = saved.remaining;
      this.#saved = saved.items.length;
      this.#savedToken = saved.continue;
    }
  }

  /** The pages not saved yet, or undefined when there are none. */
  unsaved(): UnsavedPages<T> | undefined {
    const items = this.#items;
    if (items === undefined || items.length === this.#saved) return undefined;
    return {
      items: items.slice(this.#saved),
      continue: this.#continue,
      resourceVersion: this.#resourceVersion,
      since: this.#savedToken,
      remaining: this.#remaining,
      total: items.length,
    };
  }

  /** How many items the unfinished list has so far (0: none in progress). */
  get items(): number {
    return this.#items?.length ?? 0;
  }

  /** `remainingItemCount` of the last page of the unfinished list. */
  get remaining(): number | undefined {
    return this.#items ? this.#remaining : undefined;
  }

  /** Marks the unsaved pages saved. */
  markSaved(pages: UnsavedPages<T>): void {
    if (this.#items && this.#continue === pages.continue) {
      this.#saved = this.#items.length;
      this.#savedToken = pages.continue;
    }
  }

  /** `lw` with its lists followed. */
  wrap(lw: ListerWatcher<T>): ListerWatcher<T> {
    return { ...lw, list: (options) => this.#list(lw, options ?? {}), watch: (o) => lw.watch(o) };
  }

  async #list(lw: ListerWatcher<T>, options: ListOptions): Promise<KubeList<T>> {
    const paged = options.limit !== undefined && options.limit > 0 &&
      (options.resourceVersion ?? "") === "";
    if (!paged) {
      // not a list this can continue; once it is in, an unfinished one is moot
      const whole = await lw.list(options);
      if (options.limit === undefined || options.limit === 0) this.#reset();
      return whole;
    }
    if (options.continue === undefined) {
      if (this.#items !== undefined) {
        // a new list: go on from the unfinished one
        let page: KubeList<T>;
        try {
          page = await lw.list({ ...options, continue: this.#continue });
        } catch (err) {
          if (!isExpired(err)) throw err;
          this.#onDropped(err);
          this.#reset();
          return this.#follow(await lw.list(options), true);
        }
        const prefix = this.#items;
        const followed = this.#follow(page, false);
        // still in progress: the page's items were added to the prefix
        const items = this.#items === prefix ? prefix.slice() : prefix.concat(followed.items);
        return { ...followed, items };
      }
      return this.#follow(await lw.list(options), true);
    }
    return this.#follow(await lw.list(options), false);
  }

  #reset(): void {
    this.#items = undefined;
    this.#saved = 0;
    this.#savedToken = undefined;
    this.#remaining = undefined;
  }

  /** Records a page; returns it. */
  #follow(page: KubeList<T>, first: boolean): KubeList<T> {
    if (first) this.#reset();
    const token = page?.metadata?.continue;
    const items = Array.isArray(page?.items) ? page.items : [];
    if (typeof token !== "string" || token === "") {
      this.#reset(); // the list is complete (or malformed: the pager says so)
      return page;
    }
    if (this.#items === undefined) {
      this.#items = [];
      this.#resourceVersion = page.metadata?.resourceVersion ?? "";
    }
    for (const item of items) this.#items.push(item);
    this.#continue = token;
    const remaining = page.metadata?.remainingItemCount;
    this.#remaining =
      typeof remaining === "number" && Number.isSafeInteger(remaining) && remaining >= 0
        ? remaining
        : undefined;
    return page;
  }
}
