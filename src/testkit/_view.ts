/**
 * What one list or watch request sees: the objects its namespace, label
 * selector and field selector match, shown whole or as metadata only
 * (`Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`).
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { parseFieldSelector } from "./_field_selector.ts";
import { parseLabelSelector } from "./_label_selector.ts";
import type { Resource } from "./_resources.ts";

/** Which objects a request sees, and how they are shown. */
export interface View {
  matches: (object: KubeObject) => boolean;
  /** The object as a watch event carries it (with `kind` and `apiVersion`). */
  show: (object: KubeObject) => KubeObject;
  /** The object as a list item (full objects lose `kind` and `apiVersion`, as the real server sends them). */
  item: (object: KubeObject) => KubeObject;
  /** `kind` and `apiVersion` of bookmark objects. */
  kind: string;
  apiVersion: string;
  /** `kind` and `apiVersion` of list responses. */
  listKind: string;
  listApiVersion: string;
  /** True when a selector narrows the view (the server then omits `remainingItemCount`). */
  selective: boolean;
}

/** True when the Accept header asks for `PartialObjectMetadata` or `PartialObjectMetadataList`. */
export function wantsMetadataOnly(accept: string | undefined): boolean {
  return /;\s*as=PartialObjectMetadata(List)?\b/.test(accept ?? "");
}

/** Builds the view of a request; throws `SelectorError` on a malformed selector. */
export function makeView(
  resource: Resource,
  namespace: string | undefined,
  query: URLSearchParams,
  metadataOnly: boolean,
): View {
  const labelSelector = query.get("labelSelector") ?? "";
  const fieldSelector = query.get("fieldSelector") ?? "";
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector);
  const matches = (object: KubeObject) =>
    (namespace === undefined || object.metadata.namespace === namespace) &&
    labels(object.metadata.labels) && fields(object);
  const selective = labelSelector.trim() !== "" || fieldSelector.trim() !== "";
  if (metadataOnly) {
    const show = (object: KubeObject): KubeObject => ({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: object.metadata,
    });
    return {
      matches,
      show,
      item: show,
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      listKind: "PartialObjectMetadataList",
      listApiVersion: "meta.k8s.io/v1",
      selective,
    };
  }
  return {
    matches,
    show: (object) => object,
    item: ({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest as KubeObject,
    kind: resource.kind,
    apiVersion: resource.apiVersion,
    listKind: `${resource.kind}List`,
    listApiVersion: resource.apiVersion,
    selective,
  };
}
