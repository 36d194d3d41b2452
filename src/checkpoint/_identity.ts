/**
 * Internals of checkpoint identities: normalization, comparison, shape
 * checks and the form saved in a checkpoint's header.
 *
 * @module
 */
// The identity's shape straight from transport/, not from checkpoint_identity.ts
// (which imports this module): no import circle.
import type { ResourceIdentity as CheckpointIdentity } from "../transport/resource_identity.ts";

/**
 * `server` as compared and saved: origin and path, no credentials, query,
 * fragment or trailing slash. A string that is not a URL is kept trimmed,
 * with anything looking like `user:pass@` dropped.
 */
export function normalizeServer(server: string): string {
  const text = String(server).trim();
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, "$1");
  }
}

/** The identity fields, in the order they are compared. */
export type IdentityField = keyof CheckpointIdentity;
const FIELDS: readonly IdentityField[] = [
  "server",
  "cluster",
  "apiVersion",
  "resource",
  "namespace",
  "labelSelector",
  "fieldSelector",
  "metadataOnly",
];

function normalized(
  identity: CheckpointIdentity,
  field: IdentityField,
): string | boolean | undefined {
  const value = identity[field];
  switch (field) {
    case "server":
      return normalizeServer(String(value ?? ""));
    case "metadataOnly":
      return value === true;
    case "cluster":
      return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
    case "apiVersion":
    case "resource":
      return String(value ?? "");
    default:
      return typeof value === "string" ? value.trim() : "";
  }
}

/** One differing field, both values normalized (so `server` carries no credential). */
export interface IdentityDifference {
  field: IdentityField;
  saved: string | boolean | undefined;
  expected: string | boolean | undefined;
}

/** The first field that differs, or `undefined`. */
export function firstDifference(
  saved: CheckpointIdentity,
  expected: CheckpointIdentity,
): IdentityDifference | undefined {
  for (const field of FIELDS) {
    const a = normalized(saved, field);
    const b = normalized(expected, field);
    if (field === "cluster" && (a === undefined || b === undefined)) continue;
    if (a !== b) return { field, saved: a, expected: b };
  }
  return undefined;
}

/** A difference as a sentence naming the field and both values. */
export function describeDifference(d: IdentityDifference): string {
  return `${d.field} differs: the checkpoint has ${JSON.stringify(d.saved)}, expected ${
    JSON.stringify(d.expected)
  }`;
}

/** The identity as saved in a header: normalized server, no empty fields. */
export function savedIdentity(identity: CheckpointIdentity): CheckpointIdentity {
  const out: CheckpointIdentity = {
    server: normalizeServer(identity.server),
    apiVersion: identity.apiVersion,
    resource: identity.resource,
  };
  if (identity.namespace?.trim()) out.namespace = identity.namespace.trim();
  if (identity.labelSelector?.trim()) out.labelSelector = identity.labelSelector.trim();
  if (identity.fieldSelector?.trim()) out.fieldSelector = identity.fieldSelector.trim();
  if (identity.metadataOnly) out.metadataOnly = true;
  if (identity.cluster?.trim()) out.cluster = identity.cluster.trim();
  return out;
}

/** Whether a parsed value has the shape of an identity. */
export function isIdentity(value: unknown): value is CheckpointIdentity {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const optionalString = (k: string) => v[k] === undefined || typeof v[k] === "string";
  return typeof v.server === "string" && typeof v.apiVersion === "string" &&
    typeof v.resource === "string" && optionalString("namespace") &&
    optionalString("labelSelector") && optionalString("fieldSelector") &&
    optionalString("cluster") &&
    (v.metadataOnly === undefined || typeof v.metadataOnly === "boolean");
}

/** Checks an identity given to `saveCheckpoint` (a `TypeError` naming the bad field). */
export function assertIdentity(
  identity: unknown,
  what: string,
): asserts identity is CheckpointIdentity {
  if (!isIdentity(identity)) {
    throw new TypeError(
      `${what}: identity needs string server, apiVersion and resource (and string or absent namespace, selectors and cluster, boolean or absent metadataOnly)`,
    );
  }
  if (identity.server.trim() === "" || identity.apiVersion === "" || identity.resource === "") {
    throw new TypeError(`${what}: identity.server, apiVersion and resource must not be empty`);
  }
}
