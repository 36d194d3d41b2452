import { describeDifference, firstDifference } from "./_identity.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";

/**
 * What a checkpoint is for: the API server, the resource and the exact
 * query whose results it holds. A checkpoint is used only where every field
 * matches ({@linkcode identityMismatch}): resourceVersions of another etcd,
 * or objects of another selector, would silently corrupt a store.
 *
 * The same shape as a lister-watcher's {@linkcode ResourceIdentity}
 * (`resourceListerWatcher(...).identity()` gives one).
 */
export type CheckpointIdentity = ResourceIdentity;

/**
 * Which field differs between a saved identity and the expected one, as a
 * sentence naming the field and both values (never a credential: `server`
 * is shown normalized), or `undefined` when they match. Selectors and the
 * namespace are compared trimmed, with `undefined` equal to `""`;
 * `metadataOnly` with `undefined` equal to `false`; `cluster` only when
 * both sides have one. Fields are checked in the order `server`, `cluster`,
 * `apiVersion`, `resource`, `namespace`, `labelSelector`, `fieldSelector`,
 * `metadataOnly`; the first difference is reported.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { identityMismatch } from "../../checkpoint.ts";
 *
 * const saved = {
 *   server: "https://k8s.example.com/",
 *   apiVersion: "v1",
 *   resource: "pods",
 *   labelSelector: " app=web ",
 * };
 * const expected = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * assert.equal(identityMismatch(saved, { ...expected, labelSelector: "app=web" }), undefined);
 * assert.equal(
 *   identityMismatch(saved, expected),
 *   'labelSelector differs: the checkpoint has "app=web", expected ""',
 * );
 * ```
 */
export function identityMismatch(
  saved: CheckpointIdentity,
  expected: CheckpointIdentity,
): string | undefined {
  const difference = firstDifference(saved, expected);
  return difference && describeDifference(difference);
}
