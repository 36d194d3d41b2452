/**
 * The demo's final check: the store holds exactly the server's objects,
 * each at the server's resourceVersion.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";

/** One object that differs between the store and the server. */
export interface Difference {
  /** `namespace/name`. */
  key: string;
  /** `missing`: on the server, not in the store; `extra`: in the store only; `stale`: at another version. */
  kind: "missing" | "extra" | "stale";
  /** The store's resourceVersion (absent when missing). */
  store?: string;
  /** The server's resourceVersion (absent when extra). */
  server?: string;
}

/** What {@linkcode compareStore} found. */
export interface Comparison {
  /** True when the store equals the server. */
  equal: boolean;
  /** Objects in the store. */
  storeCount: number;
  /** Objects on the server. */
  serverCount: number;
  /** Every difference, sorted by key. */
  differences: Difference[];
}

function keyOf(o: KubeObjectLike): string {
  const { namespace, name } = o.metadata ?? {};
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/** Compares the store's objects with the server's: same keys, same resourceVersion for each. */
export function compareStore(
  store: Iterable<KubeObjectLike>,
  server: Iterable<KubeObjectLike>,
): Comparison {
  const want = new Map<string, string | undefined>();
  for (const o of server) want.set(keyOf(o), o.metadata?.resourceVersion);
  const differences: Difference[] = [];
  let storeCount = 0;
  const seen = new Set<string>();
  for (const o of store) {
    storeCount++;
    const key = keyOf(o);
    seen.add(key);
    const rv = o.metadata?.resourceVersion;
    if (!want.has(key)) differences.push({ key, kind: "extra", store: rv });
    else if (want.get(key) !== rv) {
      differences.push({ key, kind: "stale", store: rv, server: want.get(key) });
    }
  }
  for (const [key, rv] of want) {
    if (!seen.has(key)) differences.push({ key, kind: "missing", server: rv });
  }
  differences.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { equal: differences.length === 0, storeCount, serverCount: want.size, differences };
}

/** The differences in words: counts by kind, then the first `max` keys (one a line). */
export function describeDifferences(c: Comparison, max = 5): string[] {
  const count = (kind: Difference["kind"]) => c.differences.filter((d) => d.kind === kind).length;
  const lines = [
    `store != server: ${c.storeCount} objects in the store, ${c.serverCount} on the server; ` +
    `${count("missing")} missing, ${count("extra")} extra, ${
      count("stale")
    } at another resourceVersion`,
  ];
  for (const d of c.differences.slice(0, max)) {
    if (d.kind === "missing") lines.push(`  missing ${d.key} (server at ${d.server})`);
    else if (d.kind === "extra") {
      lines.push(`  extra   ${d.key} (store at ${d.store}, gone from the server)`);
    } else lines.push(`  stale   ${d.key} (store at ${d.store}, server at ${d.server})`);
  }
  if (c.differences.length > max) lines.push(`  ... and ${c.differences.length - max} more`);
  return lines;
}
