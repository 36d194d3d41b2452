/**
 * What the typed clients check when they are given an {@linkcode ApiResource}
 * (or a reference spread from one): its scope, and the verbs they need.
 *
 * @module
 */
import type { ApiResource } from "./api_resource.ts";
import { ResourceVerbError } from "./resource_verb_error.ts";

/**
 * For a reference carrying discovery's `namespaced` (a boolean) and
 * `verbs` (an array), as an {@linkcode ApiResource} does: throws a
 * `TypeError` (naming `what`) when it gives a namespace for a
 * cluster-scoped resource, and a {@linkcode ResourceVerbError} for the
 * first of `verbs` the resource does not serve. A plain reference
 * (`{ apiVersion, resource }`) passes unchecked.
 */
export function checkApiResource(
  what: string,
  ref: { namespace?: string; namespaced?: unknown; verbs?: unknown },
  verbs: readonly string[],
): void {
  if (ref.namespaced === false && ref.namespace) {
    const { resource } = ref as Partial<ApiResource>;
    throw new TypeError(
      `${what}: ${resource} is cluster-scoped: it has no namespace ${
        JSON.stringify(ref.namespace)
      }`,
    );
  }
  if (Array.isArray(ref.verbs)) {
    const missing = verbs.find((v) => !(ref.verbs as unknown[]).includes(v));
    if (missing !== undefined) throw new ResourceVerbError(ref as ApiResource, missing);
  }
}
