/**
 * What leader election and shard membership share about their Leases: the
 * timing rules (`leaseDuration > renewDeadline > 1.2 × retryPeriod`), the
 * retry jitter, the name checks and the default identity. One copy, so the
 * two validate alike.
 *
 * @module
 */
import { unit } from "../async/_async.ts";
import { processIdentity } from "../api/_process_identity.ts";

/** The jitter of client-go's retries: up to 20% more than the period. */
export const JITTER = 1.2;

/** The three durations of a Lease holder, in ms. */
export interface LeaseTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * Checks that `value` is a DNS subdomain name.
 *
 * @throws {TypeError} naming `owner` and `field` when it is not.
 */
export function checkName(owner: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.length > 253 || !NAME.test(value)) {
    throw new TypeError(
      `${owner}: ${field} must be a DNS subdomain name, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** A duration in ms in [`min`, 3600000] (`fallback` when `undefined`). */
export function checkMs(
  owner: string,
  field: string,
  value: number | undefined,
  fallback: number,
  min = 100,
): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > 3_600_000) {
    throw new RangeError(
      `${owner}: ${field} must be a number of ms in [${min}, 3600000], got ${v}`,
    );
  }
  return v;
}

/**
 * The three durations, defaults filled in and checked.
 *
 * @throws {RangeError} a duration out of range, or not `leaseDurationMs > renewDeadlineMs > 1.2 × retryPeriodMs`.
 */
export function resolveLeaseTiming(
  owner: string,
  o: Partial<LeaseTiming>,
  defaults: LeaseTiming,
): LeaseTiming {
  const leaseDurationMs = checkMs(
    owner,
    "leaseDurationMs",
    o.leaseDurationMs,
    defaults.leaseDurationMs,
  );
  const renewDeadlineMs = checkMs(
    owner,
    "renewDeadlineMs",
    o.renewDeadlineMs,
    defaults.renewDeadlineMs,
  );
  const retryPeriodMs = checkMs(owner, "retryPeriodMs", o.retryPeriodMs, defaults.retryPeriodMs);
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new RangeError(`${owner}: leaseDurationMs must be greater than renewDeadlineMs`);
  }
  if (!(renewDeadlineMs > JITTER * retryPeriodMs)) {
    throw new RangeError(`${owner}: renewDeadlineMs must be greater than 1.2 × retryPeriodMs`);
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/**
 * The identity given, or a default one (the hostname where the runtime
 * tells it, and 8 random hex digits).
 *
 * @throws {TypeError} an identity that is empty, not a string, or longer than 253 characters.
 */
export function resolveIdentity(owner: string, identity: unknown, random: () => number): string {
  const id = identity ?? processIdentity(random);
  if (typeof id !== "string" || id === "" || id.length > 253) {
    throw new TypeError(
      `${owner}: identity must be a non-empty string of at most 253 characters`,
    );
  }
  return id;
}


/** `retryPeriodMs` with up to 20% jitter (a broken `random` gives the period itself). */
export function jittered(retryPeriodMs: number, random: () => number): number {
  return retryPeriodMs * (1 + (JITTER - 1) * unit(random()));
}
