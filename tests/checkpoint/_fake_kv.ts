/**
 * A Workers-KV-like namespace in memory for the kvCheckpointStorage tests:
 * it refuses values above a limit, records every put (with the time on a
 * fake clock), and can be made to fail or hang.
 *
 * @module
 */
import type { KeyValueNamespaceLike } from "../../src/checkpoint/kv_checkpoint_storage.ts";
import type { ManualClock } from "../../src/testkit/manual_clock.ts";
import { never } from "./_helpers.ts";

/** The value limit of the fake store in most tests. */
export const MAX = 1024;

/** An in-memory Workers-KV-like namespace that refuses values above `max` and can be made to fail. */
export class FakeKv implements KeyValueNamespaceLike {
  readonly map = new Map<string, Uint8Array>();
  puts = 0;
  /** Every put's key and the time it was issued on `clock` (when one is set). */
  readonly putLog: { key: string; at: number }[] = [];
  clock: ManualClock | undefined;
  /** Fails the n-th put from now (1 = the next one), and every operation after it when `dead`. */
  failAt: number | undefined;
  dead = false;
  /** Every operation from now on never answers (a binding that ignores every deadline). */
  hang = false;
  readonly max: number;
  constructor(max = MAX) {
    this.max = max;
  }
  #check() {
    if (this.dead) throw new Error("process crashed");
  }
  get(key: string, _type: "arrayBuffer"): Promise<ArrayBuffer | null> {
    this.#check();
    if (this.hang) return never();
    const v = this.map.get(key);
    return Promise.resolve(v ? v.slice().buffer : null);
  }
  put(key: string, value: ArrayBuffer | Uint8Array): Promise<void> {
    this.#check();
    if (this.hang) return never();
    this.puts++;
    this.putLog.push({ key, at: this.clock?.now() ?? NaN });
    if (this.failAt !== undefined && --this.failAt === 0) {
      this.failAt = undefined;
      return Promise.reject(new Error("KV put failed"));
    }
    const bytes = new Uint8Array(value instanceof Uint8Array ? value.slice() : value.slice(0));
    if (bytes.byteLength > this.max) {
      return Promise.reject(new RangeError(`value of ${bytes.byteLength} bytes over ${this.max}`));
    }
    this.map.set(key, bytes);
    return Promise.resolve();
  }
  delete(key: string): Promise<void> {
    this.#check();
    if (this.hang) return never();
    this.map.delete(key);
    return Promise.resolve();
  }
}
