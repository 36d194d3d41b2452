/**
 * The error of a verb a resource does not serve.
 *
 * @module
 */
import type { ApiResource } from "./api_resource.ts";

/** `bindings` (`v1`), `deployments.apps` (`apps/v1`). */
function described(resource: ApiResource): string {
  const qualified = resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
  return `${qualified} (${resource.apiVersion})`;
}

/**
 * A verb the resource does not serve, refused before any request: a watch
 * of `bindings` (only `create`), a list of `tokenreviews`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, resourceListerWatcher, ResourceVerbError } from "../../mod.ts";
 *
 * const bindings = {
 *   apiVersion: "v1",
 *   group: "",
 *   version: "v1",
 *   resource: "bindings",
 *   singular: "binding",
 *   kind: "Binding",
 *   shortNames: [],
 *   categories: [],
 *   namespaced: true,
 *   verbs: ["create"],
 *   subresources: [],
 * };
 * const client = new KubeClient({ server: "http://127.0.0.1:8001" });
 * assert.throws(() => resourceListerWatcher(client, bindings), (err) => {
 *   assert.ok(err instanceof ResourceVerbError);
 *   assert.equal(err.verb, "list");
 *   assert.equal(err.message, 'the server does not allow "list" on bindings (v1): its verbs are create');
 *   return true;
 * });
 * ```
 */
export class ResourceVerbError extends Error {
  /** The resource. */
  readonly resource: ApiResource;
  /** The verb it does not serve (`"watch"`, `"list"`...). */
  readonly verb: string;

  /** Makes the error of `verb` on `resource`. */
  constructor(resource: ApiResource, verb: string) {
    const verbs = resource.verbs.length > 0 ? resource.verbs.join(", ") : "none";
    super(
      `the server does not allow ${JSON.stringify(verb)} on ${
        described(resource)
      }: its verbs are ${verbs}`,
    );
    this.name = "ResourceVerbError";
    this.resource = resource;
    this.verb = verb;
  }
}
