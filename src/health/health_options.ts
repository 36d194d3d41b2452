/**
 * Options of {@linkcode healthHandler}, and their one source of defaults.
 *
 * @module
 */
import { type Clock, systemClock } from "../async/clock.ts";
import type { Reflector } from "../reflector/reflector.ts";

/**
 * What the health endpoint reads of an informer: an {@linkcode Informer}
 * or a {@linkcode Reflector} fits as it is, and so does anything with the
 * same three members.
 */
export type HealthInformer = Readonly<Pick<Reflector, "name" | "hasSynced" | "status">>;

/** What an extra check answers: `ok`, and a short reason (shown in the body; never a secret). */
export interface HealthCheckResult {
  /** Whether the check passes. */
  ok: boolean;
  /** Why (or a note when it passes), at most about 200 characters are shown. */
  message?: string;
}

/**
 * An extra named check, for state that is not an informer's (a leader
 * elector's, a shard's, a work queue's). It is called on every probe, so it
 * must be quick and must not do I/O: read state that is kept current
 * elsewhere. A check that throws fails, with the error's message.
 */
export interface HealthCheck {
  /** Its name in the body (`[+]leader ok`): non-empty, no whitespace or control characters. */
  name: string;
  /** Judges, synchronously. */
  check(): HealthCheckResult;
  /**
   * Also judge liveness with it (`/livez` fails when it fails, so the
   * process gets restarted); by default it is a readiness check only.
   * Default: `false`.
   */
  live?: boolean;
}

/** Options of {@linkcode healthHandler}. */
export interface HealthOptions {
  /** The informers (or reflectors) judged: read on every probe. Required (may be empty). */
  informers: readonly HealthInformer[];
  /**
   * An informer not watching for longer than this, in ms, is not live (nor
   * ready). Default: `300_000` (5 minutes): the reflector's backoff is capped
   * at 30 s, so this is about ten failed attempts in a row, while a healthy
   * informer is never away from a watch that long (a watch that times out
   * is restarted at once, a relist takes a list's time, and a paged list
   * cannot take longer than its continue token lives, about 5 minutes).
   * Raise it when an initial list of yours takes longer. Range: 1 s to 1 day.
   */
  staleAfterMs?: number;
  /**
   * The informers' clock: the times in their `status` are in its
   * milliseconds. Default: the system clock (the informers' default).
   */
  clock?: Clock;
  /** Extra named checks, for example a leader elector's state. Default: none. */
  checks?: readonly HealthCheck[];
  /**
   * A prefix of the routes: `"/health"` serves `/health/livez`,
   * `/health/readyz` and `/health/healthz`. Starts with `/`, does not end
   * with one. Default: `""` (`/livez`, `/readyz`, `/healthz`).
   */
  path?: string;
}

/** Every default of {@linkcode HealthOptions}, in one frozen object. */
export const HEALTH_DEFAULTS: Readonly<{
  /** Not watching for longer than this, in ms, is not live. */
  staleAfterMs: number;
  /** The routes' prefix. */
  path: string;
}> = Object.freeze({
  staleAfterMs: 300_000,
  path: "",
});

/** The shortest and longest `staleAfterMs` taken. */
const STALE_RANGE = [1_000, 86_400_000] as const;

/** {@linkcode HealthOptions} validated, with every default filled in. */
export interface ResolvedHealthOptions {
  informers: readonly HealthInformer[];
  staleAfterMs: number;
  clock: Clock;
  checks: readonly HealthCheck[];
  path: string;
}

// deno-lint-ignore no-control-regex
const BAD_NAME = /[\s\u0000-\u001f\u007f]/;

/**
 * Validates the options and fills in defaults; the arrays are copied.
 *
 * @throws {TypeError} an option of the wrong type or shape.
 * @throws {RangeError} `staleAfterMs` outside [1 s, 1 day].
 */
export function resolveHealthOptions(options: HealthOptions): ResolvedHealthOptions {
  if (options === null || typeof options !== "object") {
    throw new TypeError("healthHandler: options must be an object");
  }
  const o = options;
  if (!Array.isArray(o.informers)) {
    throw new TypeError("healthHandler: informers must be an array (of informers or reflectors)");
  }
  o.informers.forEach((inf, i) => {
    if (
      inf === null || typeof inf !== "object" || typeof inf.name !== "string" ||
      typeof inf.hasSynced !== "function" || !("status" in inf)
    ) {
      throw new TypeError(
        `healthHandler: informers[${i}] must have a name, hasSynced() and status (an Informer or a Reflector)`,
      );
    }
  });
  const staleAfterMs = o.staleAfterMs ?? HEALTH_DEFAULTS.staleAfterMs;
  if (typeof staleAfterMs !== "number") {
    throw new TypeError(`healthHandler: staleAfterMs must be a number, got ${typeof staleAfterMs}`);
  }
  if (!(staleAfterMs >= STALE_RANGE[0] && staleAfterMs <= STALE_RANGE[1])) {
    throw new RangeError(
      `healthHandler: staleAfterMs must be in [${STALE_RANGE[0]}, ${
        STALE_RANGE[1]
      }] ms, got ${staleAfterMs}`,
    );
  }
  const clock = o.clock ?? systemClock;
  if (clock === null || typeof clock !== "object" || typeof clock.now !== "function") {
    throw new TypeError("healthHandler: clock must be a Clock (with now())");
  }
  const checks = o.checks ?? [];
  if (!Array.isArray(checks)) throw new TypeError("healthHandler: checks must be an array");
  checks.forEach((c, i) => {
    if (c === null || typeof c !== "object" || typeof c.check !== "function") {
      throw new TypeError(`healthHandler: checks[${i}] must have a check() function`);
    }
    if (typeof c.name !== "string" || c.name === "" || BAD_NAME.test(c.name)) {
      throw new TypeError(
        `healthHandler: checks[${i}].name must be a non-empty string without whitespace, got ${
          JSON.stringify(c.name)
        }`,
      );
    }
    if (c.live !== undefined && typeof c.live !== "boolean") {
      throw new TypeError(`healthHandler: checks[${i}].live must be a boolean`);
    }
  });
  const path = o.path ?? HEALTH_DEFAULTS.path;
  if (typeof path !== "string") throw new TypeError("healthHandler: path must be a string");
  if (path !== "" && (!/^\/[^?#\s]*$/.test(path) || path.endsWith("/"))) {
    throw new TypeError(
      `healthHandler: path must be "" or start with "/" and not end with one (like "/health"), got ${
        JSON.stringify(path)
      }`,
    );
  }
  return { informers: [...o.informers], staleAfterMs, clock, checks: [...checks], path };
}
