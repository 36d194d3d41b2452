/**
 * The resources the fake API server knows, found by path segments or by
 * `apiVersion` and `kind`.
 *
 * @module
 */
import type { ResourceDefinition } from "./types.ts";

/** A resource definition with its derived names and defaults applied. */
export interface Resource extends Readonly<Required<ResourceDefinition>> {
  /** `"v1"` or `"apps/v1"`. */
  readonly apiVersion: string;
  /** A key unique per resource: `"apps/v1/deployments"`. */
  readonly id: string;
}

/** The verbs a resource serves unless its definition says otherwise. */
export const DEFAULT_VERBS: readonly string[] = [
  "create",
  "delete",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

/** The resources known without `addResource` (with kubectl's short names). */
export const DEFAULT_RESOURCES: readonly ResourceDefinition[] = [
  {
    group: "",
    version: "v1",
    resource: "configmaps",
    kind: "ConfigMap",
    namespaced: true,
    shortNames: ["cm"],
  },
  { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true },
  {
    group: "",
    version: "v1",
    resource: "pods",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    categories: ["all"],
  },
  {
    group: "",
    version: "v1",
    resource: "namespaces",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
  },
  {
    group: "apps",
    version: "v1",
    resource: "deployments",
    kind: "Deployment",
    namespaced: true,
    shortNames: ["deploy"],
    categories: ["all"],
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    resource: "leases",
    kind: "Lease",
    namespaced: true,
  },
  {
    group: "events.k8s.io",
    version: "v1",
    resource: "events",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
  },
  {
    group: "",
    version: "v1",
    resource: "events",
    kind: "Event",
    namespaced: true,
    shortNames: ["ev"],
  },
];

function names(label: string, value: unknown, fallback: readonly string[]): readonly string[] {
  if (value === undefined) return Object.freeze([...fallback]);
  if (
    !Array.isArray(value) || value.some((v) => typeof v !== "string" || !/^[a-z0-9.-]+$/.test(v))
  ) {
    throw new TypeError(
      `addResource: ${label} must be lower-case names, got ${JSON.stringify(value)}`,
    );
  }
  return Object.freeze([...value]);
}

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
    const singular = def.singular ?? kind.toLowerCase();
    if (typeof singular !== "string" || !/^[a-z0-9.-]+$/.test(singular)) {
      throw new TypeError(`addResource: invalid singular ${JSON.stringify(singular)}`);
    }
    const apiVersion = group ? `${group}/${version}` : version;
    const entry: Resource = Object.freeze({
      group,
      version,
      resource,
      kind,
      namespaced,
      singular,
      shortNames: names("shortNames", def.shortNames, []) as string[],
      categories: names("categories", def.categories, []) as string[],
      verbs: names("verbs", def.verbs, DEFAULT_VERBS) as string[],
      apiVersion,
      id: `${apiVersion}/${resource}`,
    });
    this.#byId.set(entry.id, entry);
    this.#byKind.set(`${apiVersion}/${kind}`, entry);
    return entry;
  }

  /** Every resource, in the order first added (a replaced one keeps its place). */
  all(): Resource[] {
    return [...this.#byId.values()];
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
