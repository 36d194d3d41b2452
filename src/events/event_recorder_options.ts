/**
 * Options of an {@linkcode EventRecorder}, and their one source of defaults.
 *
 * @module
 */
import type { KubeClient } from "../transport/kube_client.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { processIdentity } from "../api/_process_identity.ts";
import type { EventRecordError } from "./event_record_error.ts";

/** Options of an {@linkcode EventRecorder}. */
export interface EventRecorderOptions {
  /** The client the Events are written with. Required. */
  client: KubeClient;
  /**
   * Who reports: the Events' `reportingController` (core v1:
   * `source.component`), such as `"example.com/my-controller"` or
   * `"my-controller"`. Required.
   */
  component: string;
  /**
   * Which instance of the component reports: `reportingInstance` (core v1:
   * `source.host`). Never a secret (anyone who can read Events reads it).
   * Default: the hostname (where the runtime tells it) and 8 random hex
   * digits.
   */
  instance?: string;
  /** Events waiting to be written at most; beyond it an event is dropped and counted. Default: `1000`. */
  maxPending?: number;
  /** Identical events within this span of the previous one update its Event instead of creating one, in ms. Default: `600_000`. */
  windowMs?: number;
  /** Events per object in a burst before the rate limit drops them (client-go's spam filter). Default: `25`. */
  burst?: number;
  /** The rate limit gives one event per object back every this many ms. Default: `300_000`. */
  refillMs?: number;
  /** Objects and series remembered at most, least recently used forgotten first. Default: `4096`. */
  cacheSize?: number;
  /** A request is given up (and counted as a failure) after this many ms. Default: `30_000`. */
  requestTimeoutMs?: number;
  /** Wait before the one retry of a write that failed with a 5xx, a 429 or a network error, in ms. Default: `1_000`. */
  retryDelayMs?: number;
  /** Receives each event that was dropped because the API refused it or could not be reached. Default: none. */
  onError?: (err: EventRecordError) => void;
  /** Injectable time (ms since the epoch: the Events' times are written from it). Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for names and the default instance. Default: `Math.random`. */
  random?: () => number;
}

/** Every default of {@linkcode EventRecorderOptions} (client-go's where it has one), in one frozen object. */
export const EVENT_RECORDER_DEFAULTS: Readonly<{
  /** Events waiting to be written at most. */
  maxPending: number;
  /** The aggregation window, in ms. */
  windowMs: number;
  /** Events per object in a burst. */
  burst: number;
  /** One event per object comes back every this many ms. */
  refillMs: number;
  /** Objects and series remembered at most. */
  cacheSize: number;
  /** Timeout of one request, in ms. */
  requestTimeoutMs: number;
  /** Wait before the one retry, in ms. */
  retryDelayMs: number;
}> = Object.freeze({
  maxPending: 1000,
  windowMs: 600_000,
  burst: 25,
  refillMs: 300_000,
  cacheSize: 4096,
  requestTimeoutMs: 30_000,
  retryDelayMs: 1_000,
});

/** {@linkcode EventRecorderOptions} validated, with every default filled in. */
export interface ResolvedEventRecorderOptions {
  client: KubeClient;
  component: string;
  instance: string;
  maxPending: number;
  windowMs: number;
  burst: number;
  refillMs: number;
  cacheSize: number;
  requestTimeoutMs: number;
  retryDelayMs: number;
  onError?: (err: EventRecordError) => void;
  clock: Clock;
  random: () => number;
}

/** A qualified name (`prefix/name` or `name`), as `reportingController` must be. */
const QUALIFIED = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Validates the options and fills in defaults.
 *
 * @throws {TypeError} a missing client or component, a malformed component or instance, a callback that is not a function.
 * @throws {RangeError} a number out of range.
 */
export function resolveEventRecorderOptions(
  options: EventRecorderOptions,
): ResolvedEventRecorderOptions {
  const o = options ?? ({} as EventRecorderOptions);
  const D = EVENT_RECORDER_DEFAULTS;
  if (!o.client || typeof o.client.requestJson !== "function") {
    throw new TypeError("EventRecorder: client must be a KubeClient");
  }
  const component = o.component;
  if (
    typeof component !== "string" || component.length > 253 || !QUALIFIED.test(component) ||
    component.split("/").pop()!.length > 63
  ) {
    throw new TypeError(
      `EventRecorder: component must be a qualified name ("my-controller" or "example.com/my-controller"), got ${
        JSON.stringify(component)
      }`,
    );
  }
  const int = (
    field: string,
    value: number | undefined,
    fallback: number,
    min: number,
    max: number,
  ) => {
    const v = value ?? fallback;
    if (typeof v !== "number") {
      throw new TypeError(`EventRecorder: ${field} must be a number, got ${typeof v}`);
    }
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new RangeError(
        `EventRecorder: ${field} must be an integer in [${min}, ${max}], got ${v}`,
      );
    }
    return v;
  };
  const day = 86_400_000;
  const maxPending = int("maxPending", o.maxPending, D.maxPending, 1, 1_000_000);
  const windowMs = int("windowMs", o.windowMs, D.windowMs, 0, day);
  const burst = int("burst", o.burst, D.burst, 1, 1_000_000);
  const refillMs = int("refillMs", o.refillMs, D.refillMs, 1, day);
  const cacheSize = int("cacheSize", o.cacheSize, D.cacheSize, 1, 1_000_000);
  const requestTimeoutMs = int("requestTimeoutMs", o.requestTimeoutMs, D.requestTimeoutMs, 1, day);
  const retryDelayMs = int("retryDelayMs", o.retryDelayMs, D.retryDelayMs, 0, day);
  for (const field of ["onError", "random"] as const) {
    if (o[field] !== undefined && typeof o[field] !== "function") {
      throw new TypeError(`EventRecorder: ${field} must be a function`);
    }
  }
  const clock = o.clock ?? systemClock;
  if (typeof clock?.now !== "function" || typeof clock.setTimeout !== "function") {
    throw new TypeError("EventRecorder: clock must be a Clock");
  }
  const random = o.random ?? Math.random;
  const instance = o.instance ?? processIdentity(random);
  if (typeof instance !== "string" || instance === "" || instance.length > 128) {
    throw new TypeError(
      "EventRecorder: instance must be a non-empty string of at most 128 characters",
    );
  }
  return {
    client: o.client,
    component,
    instance,
    maxPending,
    windowMs,
    burst,
    refillMs,
    cacheSize,
    requestTimeoutMs,
    retryDelayMs,
    onError: o.onError,
    clock,
    random,
  };
}

