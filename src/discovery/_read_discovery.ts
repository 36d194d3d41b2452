/**
 * Reads the API server's discovery: the aggregated documents when the
 * server has them (1.26+ with v2beta1, 1.30+ with v2), else the legacy
 * documents, one per group version, all at once.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import type { ApiResource, DiscoveryFailure } from "./api_resource.ts";
import {
  type DiscoveredPart,
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  parseApiVersions,
} from "./_discovery_documents.ts";

/**
 * The `Accept` header of `/api` and `/apis`, as kubectl sends it: the
 * aggregated form (v2, then v2beta1), else the legacy JSON.
 */
export const AGGREGATED_ACCEPT =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
  "application/json";

/** What a discovery found. */
export interface Discovered {
  /** Every resource, in priority order (core first, then the groups as listed, preferred versions first). */
  resources: ApiResource[];
  /** The group versions that could not be read. */
  failures: DiscoveryFailure[];
  /** Which form the server answered `/apis` in. */
  form: "aggregated" | "legacy";
}

function notDiscovery(path: string, expected: string): KubeStatusError {
  return new KubeStatusError({
    code: 200,
    request: `GET ${path}`,
    bodyDescription: `response body is not a discovery document (expected ${expected})`,
  });
}

/** The values, or the first reason. */
function valuesOf<T>(results: PromiseSettledResult<T>[]): T[] {
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Reads one legacy `APIResourceList`; a failure is reported, not thrown (except an abort). */
async function readGroupVersion(
  client: KubeClient,
  group: string,
  version: string,
  signal: AbortSignal | undefined,
): Promise<ApiResource[] | DiscoveryFailure> {
  const groupVersion = group ? `${group}/${version}` : version;
  const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
  try {
    const doc = await client.requestJson<unknown>(path, { signal });
    const resources = parseApiResourceList(doc, group, version);
    if (!resources) throw notDiscovery(path, "APIResourceList");
    return resources;
  } catch (err) {
    signal?.throwIfAborted();
    return { groupVersion, error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/**
 * Reads the discovery through `client`. `/api` and `/apis` failing (or not
 * being discovery documents) rejects with the request's typed error; a
 * group version that fails is reported in `failures`.
 */
export async function readDiscovery(
  client: KubeClient,
  signal: AbortSignal | undefined,
): Promise<Discovered> {
  // settled, both: no request is left running unawaited when the other fails
  const [core, groups] = valuesOf(
    await Promise.allSettled(
      ["/api", "/apis"].map((path) =>
        client.requestJson<unknown>(path, { accept: AGGREGATED_ACCEPT, signal })
      ),
    ),
  );
  const parts: Array<DiscoveredPart | Promise<ApiResource[] | DiscoveryFailure>> = [];
  const aggregatedCore = parseAggregatedDiscovery(core);
  if (aggregatedCore) parts.push(aggregatedCore);
  else {
    const versions = parseApiVersions(core);
    if (!versions) throw notDiscovery("/api", "APIGroupDiscoveryList or APIVersions");
    for (const v of versions) parts.push(readGroupVersion(client, "", v, signal));
  }
  const aggregatedGroups = parseAggregatedDiscovery(groups);
  if (aggregatedGroups) parts.push(aggregatedGroups);
  else {
    const list = parseApiGroupList(groups);
    if (!list) throw notDiscovery("/apis", "APIGroupDiscoveryList or APIGroupList");
    for (const g of list) {
      for (const v of g.versions) parts.push(readGroupVersion(client, g.name, v, signal));
    }
  }
  const settled = valuesOf(await Promise.allSettled(parts));
  const found: Discovered = {
    resources: [],
    failures: [],
    form: aggregatedGroups ? "aggregated" : "legacy",
  };
  for (const part of settled) {
    if (Array.isArray(part)) found.resources.push(...part);
    else if ("groupVersion" in part) found.failures.push(part);
    else {
      found.resources.push(...part.resources);
      found.failures.push(...part.failures);
    }
  }
  return found;
}
