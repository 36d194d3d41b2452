/**
 * The resources the fake API server knows, found by path segments or by
 * `apiVersion` and `kind`.
 *
 * @module
 */
import type { ResourceDefinition } from "./types.ts";

/** A resource definition with its derived names. */
export interface Resource extends Readonly<ResourceDefinition> {
  /** `"v1"` or `"apps/v1"`. */
  readonly apiVersion: string;
  /** A key unique per resource: `"apps/v1/deployments"`. */
  readonly id: string;
}

/** The resources known without `addResource`. */
export const DEFAULT_RESOURCES: readonly ResourceDefinition[] = [
  { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true },
  { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true },
  { group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true },
  { group: "", version: "v1", resource: "namespaces", kind: "Namespace", namespaced: false },
  { group: "apps", version: "v1", resource: "deployments", kind: "Deployment", namespaced: true },
  { group: "coordination.k8s.io", version: "v1", resource: "leases", kind: "Lease", namespaced: true },
  { group: "events.k8s.io", version: "v1", resource: "events", kind: "Event", namespaced: true },
  { group: "", version: "v1", resource: "events", kind: "Event", namespaced: true },
];

/** The set of served resources. */
export class ResourceRegistry {
  #byId = new Map<string, Resource>();
  #byKind = new Map<string, Resource>();

  constructor(definitions: readonly ResourceDefinition[] = DEFAULT_RESOURCES) {
    for (const def of definitions) this.add(def);
  }

  /** Adds (or replaces) a resource; throws `TypeError` on a malformed definition. */
  add(def: ResourceDefinition): Resource {
    const { group, version, resource, kind, namespaced } = def;
    if (typeof group !== "string" || !/^[a-z0-9.-]*$/.test(group)) {
      throw new TypeError(`addResource: invalid group ${JSON.stringify(group)}`);
    }
    for (const [name, value] of [["version", version], ["resource", resource], ["kind", kind]]) {
      if (typeof value !== "string" || !/^[A-Za-z0-9.-]+$/.test(value)) {
        throw new TypeError(`addResource: invalid ${name} ${JSON.stringify(value)}`);
      }
    }
    if (typeof namespaced !== "boolean") {
      throw new TypeError("addResource: namespaced must be a boolean");
    }
    const apiVersion = group ? `${group}/${version}` : version;
    const entry: Resource = Object.freeze({
      group,
      version,
      resource,
      kind,
      namespaced,
      apiVersion,
      id: `${apiVersion}/${resource}`,
    });
    this.#byId.set(entry.id, entry);
    this.#byKind.set(`${apiVersion}/${kind}`, entry);
    return entry;
  }

  /** The resource served at `/api(s)/<group>/<version>/<resource>`. */
  byPath(group: string, version: string, resource: string): Resource | undefined {
    return this.#byId.get(`${group ? `${group}/${version}` : version}/${resource}`);
  }

  /** The resource of objects with this `apiVersion` and `kind`. */
  byKind(apiVersion: string | undefined, kind: string | undefined): Resource | undefined {
    return this.#byKind.get(`${apiVersion}/${kind}`);
  }

  /** The first resource with this plural name (and group, when given). */
  byName(resource: string, group?: string): Resource | undefined {
    for (const entry of this.#byId.values()) {
      if (entry.resource === resource && (group === undefined || entry.group === group)) {
        return entry;
      }
    }
    return undefined;
  }
}
