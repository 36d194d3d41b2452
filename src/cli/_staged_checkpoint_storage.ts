/**
 * A checkpoint storage that holds its writes back: `changes` runs
 * `catchUp` over it, prints the changes, and only once every line is
 * written commits the checkpoint to the real storage (at least once: a run
 * that fails to print does not advance the checkpoint).
 *
 * @module
 */
import type { CheckpointStorage } from "../checkpoint/checkpoint_storage.ts";
import { abortableForEach } from "../async/_abortable.ts";

/** A recorded write: a put (its bytes) or a delete (`undefined`). */
interface Operation {
  key: string;
  chunks: Uint8Array[] | undefined;
}

/**
 * Wraps `real`: reads come from `real` and from the writes staged here
 * (the newest wins); `put` and `delete` are recorded in order instead of
 * being performed; {@linkcode StagedCheckpointStorage.commit} replays them
 * on `real`, in order (so a commit cut short leaves `real` as a crash of
 * the same saves would have: each put is `real`'s own all-or-nothing put).
 */
export class StagedCheckpointStorage implements CheckpointStorage {
  readonly #real: CheckpointStorage;
  #operations: Operation[] = [];
  /** The value each written key holds once committed (`undefined`: deleted). */
  #values = new Map<string, Uint8Array[] | undefined>();

  /** Stages the writes meant for `real`. */
  constructor(real: CheckpointStorage) {
    this.#real = real;
  }

  /** How many writes wait for {@linkcode StagedCheckpointStorage.commit}. */
  get pending(): number {
    return this.#operations.length;
  }

  /** The staged value of `key`, else `real`'s. */
  // deno-lint-ignore require-await
  async get(
    key: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<AsyncIterable<Uint8Array> | undefined> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (!this.#values.has(key)) return this.#real.get(key, options);
    const chunks = this.#values.get(key);
    if (chunks === undefined) return undefined;
    return (async function* () {
      for (const chunk of chunks) {
        signal?.throwIfAborted();
        yield chunk.slice();
      }
    })();
  }

  /** Records the put (once all of `data` is read; data that throws records nothing). */
  async put(
    key: string,
    data: AsyncIterable<Uint8Array>,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const { signal } = options;
    signal?.throwIfAborted();
    const chunks: Uint8Array[] = [];
    await abortableForEach(data, signal, (chunk) => void chunks.push(chunk.slice()));
    signal?.throwIfAborted();
    this.#operations.push({ key, chunks });
    this.#values.set(key, chunks);
  }

  /** Records the delete. */
  // deno-lint-ignore require-await
  async delete(key: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    options.signal?.throwIfAborted();
    this.#operations.push({ key, chunks: undefined });
    this.#values.set(key, undefined);
  }

  /**
   * Performs the staged writes on the real storage, in the order they were
   * made. Rejects with the first failure (the writes after it stay staged).
   */
  async commit(options: { signal?: AbortSignal } = {}): Promise<void> {
    while (this.#operations.length > 0) {
      options.signal?.throwIfAborted();
      const { key, chunks } = this.#operations[0];
      if (chunks === undefined) await this.#real.delete(key, options);
      else {
        await this.#real.put(
          key,
          (async function* () {
            yield* chunks;
          })(),
          options,
        );
      }
      this.#operations.shift();
    }
    this.#values.clear();
  }
}
