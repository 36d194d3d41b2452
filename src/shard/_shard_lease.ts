/**
 * Names of a shard group's Leases: one per member, named after the group
 * and a hash of the member's identity, labelled with the group, and
 * annotated with the member's renew deadline and retry period.
 *
 * @module
 */
import { fmix32, fnv1a } from "./_rendezvous.ts";

/** The label that marks a member's Lease with its group. */
export const SHARD_GROUP_LABEL = "kube-reflector.dev/shard-group";

/** The annotation in which a member writes its renew deadline, in ms (read by members that join). */
export const RENEW_DEADLINE_ANNOTATION = "kube-reflector.dev/renew-deadline-ms";

/** The annotation in which a member writes its retry period, in ms. */
export const RETRY_PERIOD_ANNOTATION = "kube-reflector.dev/retry-period-ms";

/**
 * The duration in ms written in annotation `name`: `0` when it is absent
 * or not a whole number of ms in [0, 3600000] (as the options allow).
 */
export function timingAnnotation(annotations: unknown, name: string): number {
  const value = annotations && typeof annotations === "object"
    ? (annotations as Record<string, unknown>)[name]
    : undefined;
  if (typeof value !== "string" || !/^\d{1,7}$/.test(value)) return 0;
  const ms = Number(value);
  return ms <= 3_600_000 ? ms : 0;
}

/** 16 hex digits (64 bits) of hash of `s`. */
export function hex16(s: string): string {
  const a = fmix32(fnv1a(s));
  const b = fmix32(fnv1a(s, 0x9747b28c));
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

/** `s` cut to `max` characters, without a trailing `-` or `.` (names end with a letter or digit). */
function cut(s: string, max: number): string {
  return s.slice(0, max).replace(/[-.]+$/, "");
}

/**
 * The name of `identity`'s Lease in group `name`: `${name}-${16 hex digits}`,
 * the group cut so that it stays a DNS subdomain name of at most 253
 * characters.
 */
export function shardLeaseName(name: string, identity: string): string {
  return `${cut(name, 253 - 17)}-${hex16(identity)}`;
}

/**
 * The value of the group label: the group's name when it fits a label
 * value (63 characters), else its start and a hash of it.
 */
export function shardGroupLabel(name: string): string {
  return name.length <= 63 ? name : `${cut(name, 63 - 17)}-${hex16(name)}`;
}
