import { isConflict } from "../api/kube_conflict_error.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { delay } from "../async/_async.ts";
import { Backoff } from "../async/backoff.ts";

/**
 * The pause between attempts of {@linkcode retryOnConflict}: `initialMs`
 * times `factor` per attempt, capped at `capMs`, plus up to `jitter` times
 * itself at random. The defaults are client-go's `retry.DefaultRetry`.
 */
export interface RetryOnConflictBackoff {
  /** The first pause. Default: `10` ms. */
  initialMs?: number;
  /** Growth per attempt (`1`: the same pause each time). Default: `1`. */
  factor?: number;
  /** The longest pause before jitter. Default: `1_000` ms. */
  capMs?: number;
  /** Adds up to `jitter × pause` at random. Default: `0.1`. */
  jitter?: number;
}

/**
 * Options of {@linkcode retryOnConflict}.
 */
export interface RetryOnConflictOptions {
  /** Calls of `fn` at most (the first one included). Default: `5`. */
  attempts?: number;
  /** The pauses between attempts. Default: {@linkcode RetryOnConflictBackoff}'s. */
  backoff?: RetryOnConflictBackoff;
  /** Stops the retries: a pause or the next attempt rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
  /** The clock the pauses run on (a fake one in tests). Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for the jitter. Default: `Math.random`. */
  random?: () => number;
}

/** What each call of `fn` is told. */
export interface RetryOnConflictAttempt {
  /** 1 for the first call, 2 for the first retry... */
  attempt: number;
  /** The caller's signal, to hand to the requests `fn` makes. */
  signal?: AbortSignal;
}

function check(name: string, value: number, min: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new RangeError(
      `retryOnConflict: ${name} must be a finite number >= ${min}, got ${value}`,
    );
  }
  return value;
}

/**
 * Runs `fn` and, while it fails with a conflict ({@linkcode isConflict}: a
 * 409 because the object changed since it was read), runs it again after a
 * short jittered pause, up to `attempts` calls in all: client-go's
 * `retry.RetryOnConflict`. `fn` must read the object afresh on each call
 * and apply its change to what it read; replaying a stale object would
 * just conflict again. Any other error (404, 422, 500, a network failure)
 * is thrown at once, unretried; after the last attempt the last conflict
 * is thrown as it is. An abort rejects with `signal.reason` at once, even
 * mid-pause. This is the only retry of a write the library makes: a
 * client's writes are never retried silently.
 *
 * @throws {TypeError} when `fn` is not a function; {@linkcode RangeError}
 *   when `attempts` is not an integer >= 1 or a backoff number is out of
 *   range (both before `fn` is called).
 *
 * @example Increment a counter that someone else changes meanwhile
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, type KubeObject, resourceClient, retryOnConflict } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * type ConfigMap = KubeObject & { data: Record<string, string> };
 * const server = await FakeApiServer.start();
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "counter", namespace: "fx" },
 *   data: { n: "0" },
 * });
 * const client = new KubeClient({ server: server.url });
 * const ref = { apiVersion: "v1", resource: "configmaps", namespace: "fx" };
 * const configMaps = resourceClient<ConfigMap>(client, ref);
 * const saved = await retryOnConflict(async ({ attempt }) => {
 *   const current = await configMaps.get("counter"); // read afresh on every attempt
 *   if (attempt === 1) server.update({ ...current, data: { n: "10" } }); // another writer
 *   const n = Number(current.data.n) + 1;
 *   return await configMaps.replace({ ...current, data: { n: String(n) } });
 * });
 * assert.equal(saved.data.n, "11"); // the first replace conflicted; the retry read 10
 * await server.close();
 * ```
 */
export async function retryOnConflict<T>(
  fn: (attempt: RetryOnConflictAttempt) => T | Promise<T>,
  options: RetryOnConflictOptions = {},
): Promise<T> {
  const {
    attempts = 5,
    backoff = {},
    signal,
    clock = systemClock,
    random = Math.random,
  } = options;
  const {
    initialMs = 10,
    factor = 1,
    capMs = Math.max(1_000, typeof initialMs === "number" ? initialMs : 0),
    jitter = 0.1,
  } = backoff;
  if (typeof fn !== "function") throw new TypeError("retryOnConflict: fn must be a function");
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new RangeError(`retryOnConflict: attempts must be an integer >= 1, got ${attempts}`);
  }
  check("backoff.initialMs", initialMs, 0);
  check("backoff.factor", factor, 1);
  check("backoff.capMs", capMs, initialMs);
  check("backoff.jitter", jitter, 0);
  // the same pauses as `Backoff`, but never reset: one sequence per call
  const pauses = new Backoff({
    initialMs,
    factor,
    capMs,
    jitter,
    resetAfterMs: Infinity,
    clock,
    random,
  });
  for (let attempt = 1;; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn({ attempt, signal });
    } catch (err) {
      signal?.throwIfAborted();
      if (!isConflict(err) || attempt >= attempts) throw err;
    }
    await delay(pauses.next(), signal, clock);
  }
}
