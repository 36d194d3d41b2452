/**
 * Many informers over one connection, on a real kube-apiserver: 50
 * informers (ConfigMaps, one per namespace) connected through
 * `loadKubeConfig` with the cluster's TLS kubeconfig sync, each sees a
 * change, and this process's TCP connections to the API server are counted
 * by the kernel (tests/e2e/_connections.ts: /proc/self/fd against
 * /proc/net/tcp{,6}), not by the library:
 *
 * - `http2` default: the lists and every watch share one h2 connection for
 *   their whole life (Node: undici `allowH2`, writes over HTTP/1.1
 *   keep-alive connections that close when idle; Deno:
 *   `Deno.createHttpClient`, writes on the same connection);
 * - `http2: false`: HTTP/1.1, at least one connection per watch.
 *
 * On Node it also records the `SETTINGS_MAX_CONCURRENT_STREAMS` the release
 * advertises (read with `node:http2`). Figures are printed with the prefix
 * `http2-e2e:`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { connect as h2connect } from "node:http2";
import { loadKubeConfig } from "../../kubeconfig.ts";
import {
  Informer,
  type KubeObject,
  resourceClient,
  resourceListerWatcher,
  StreamingListUnsupportedError,
} from "../../mod.ts";
import { runtime, test } from "../_test.ts";
import { type Cluster, e2eTest, eventually, type Release } from "./_cluster.ts";
import { canCountConnections, ownConnectionsTo, ownSocketInodes } from "./_connections.ts";
import { withCluster } from "./_with_cluster.ts";

const N = 50;
const NAMESPACES = Array.from({ length: N }, (_, i) => `h2-${i}`);
const cm = (namespace: string, name: string): KubeObject =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: {} }) as KubeObject;

/**
 * `p`, or an error naming `what` after `ms` (a failure bound, so that a hang fails the test with
 * the step it hung in rather than stalling the run); logs the step when done.
 */
async function bounded<T>(what: string, p: Promise<T>, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = performance.now();
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not done after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    console.log(`http2-e2e:   ${what} (${Math.round(performance.now() - started)} ms)`);
  }
}

/** What one phase saw: connections not open before it, at each point. */
interface Counts {
  label: string;
  /** The connections' socket inodes at each point. */
  atSync: number[];
  afterChanges: number[];
  settled: number[];
  /** The most connections seen at once (polled every 100 ms until settled). */
  peak: number;
  afterClose: number;
  ms: number;
}

/**
 * Connects with `http2` (undefined: the default), runs 50 informers until
 * synced, changes one ConfigMap in each namespace through the same
 * connection and waits until each informer saw its change; counts this
 * process's connections to the API server that were not open before.
 */
async function phase(
  cluster: Cluster,
  port: number,
  label: string,
  http2: boolean | undefined,
  settledWhen: (n: number) => boolean,
): Promise<Counts> {
  const start = performance.now();
  const before = ownSocketInodes();
  let peak = 0; // the most seen at any count (counts are polled: a connection open briefly may be missed)
  const ours = () => {
    const inodes = ownConnectionsTo(port).filter((c) => !before.has(c.inode)).map((c) => c.inode);
    peak = Math.max(peak, inodes.length);
    return inodes.sort();
  };
  const conn = await loadKubeConfig({
    path: cluster.kubeconfigs.token,
    env: {},
    ...(http2 === undefined ? {} : { http2 }),
  });
  const ac = new AbortController();
  const errors: string[] = [];
  const runs: Promise<void>[] = [];
  let closed = false;
  try {
    const informers = NAMESPACES.map((namespace) => {
      const informer = new Informer(
        resourceListerWatcher(conn.client, { apiVersion: "v1", resource: "configmaps", namespace }),
        {
          name: namespace,
          expectedKind: "ConfigMap",
          backoff: { initialMs: 100, capMs: 1000 },
          // 1.20 refuses streaming lists (expected: the informer lists and watches instead)
          onError: (error, where) => {
            if (!(error instanceof StreamingListUnsupportedError)) {
              errors.push(`${namespace} ${where}: ${error}`);
            }
          },
        },
      );
      runs.push(informer.run({ signal: ac.signal }));
      return informer;
    });
    await eventually(
      () => ours() && informers.every((i) => i.hasSynced()),
      `${label}: 50 informers synced`,
    );
    console.log(`http2-e2e:   ${label}: 50 informers synced`);
    for (const [i, informer] of informers.entries()) {
      assert.equal(
        informer.lister().list().length,
        2,
        `${label}: ${NAMESPACES[i]} synced 2 objects`,
      );
    }
    const atSync = ours();
    console.log(`http2-e2e:   ${label}: ${atSync.length} connections at sync`);

    // One change per namespace, through the same connection (one after another: on HTTP/1.1 a
    // write then takes one more connection, not one per write).
    await bounded(
      `${label}: 50 changes written`,
      (async () => {
        for (const namespace of NAMESPACES) {
          await resourceClient(conn.client, { apiVersion: "v1", resource: "configmaps", namespace })
            .patch("cm-0", { data: { phase: label } }, { type: "merge" });
        }
      })(),
    );
    await eventually(
      () =>
        informers.every((i, n) =>
          (i.lister().get(NAMESPACES[n], "cm-0")?.data as { phase?: string } | undefined)?.phase ===
            label
        ),
      `${label}: every informer saw its change`,
    );
    const afterChanges = ours();
    console.log(
      `http2-e2e:   ${label}: every informer saw its change; ${afterChanges.length} connections`,
    );
    // Spare connections a client may have opened for the first burst and closes by itself:
    // wait (bounded) for the count the runtime settles at; the assertions below judge it.
    await eventually(() => settledWhen(ours().length), `${label}: connections settle`, 10_000)
      .catch(
        () => {},
      );
    const settled = ours();
    assert.deepEqual(errors, [], `${label}: no informer reported an error`);

    ac.abort();
    await bounded(`${label}: informers stopped`, Promise.all(runs));
    runs.length = 0;
    closed = true;
    await bounded(`${label}: connection closed`, conn.close());
    await eventually(() => ours().length === 0, `${label}: its connections closed`, 10_000);
    return {
      label,
      atSync,
      afterChanges,
      settled,
      peak,
      afterClose: ours().length,
      ms: Math.round(performance.now() - start),
    };
  } finally {
    ac.abort();
    await bounded(`${label}: informers stopped`, Promise.all(runs));
    if (!closed) await bounded(`${label}: connection closed`, conn.close());
  }
}

/** The server's SETTINGS_MAX_CONCURRENT_STREAMS, read with node:http2 (trusting the cluster's CA). */
async function advertisedMaxStreams(cluster: Cluster): Promise<number | undefined> {
  const session = h2connect(cluster.server, { ca: cluster.pki.ca.cert });
  try {
    const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve, reject) => {
      session.once("remoteSettings", resolve);
      session.once("error", reject);
    });
    return settings.maxConcurrentStreams;
  } finally {
    await new Promise<void>((resolve) => session.close(() => resolve()));
  }
}

function e2e(release: Release): Promise<void> {
  return withCluster(release, async ({ cluster, admin }) => {
    const started = performance.now();
    const where = `[kube-apiserver ${release.name}, ${runtime}]`;
    const port = Number(new URL(cluster.server).port);

    // 50 namespaces, two ConfigMaps in each (through the admin connection, before any count).
    await Promise.all(NAMESPACES.map(async (namespace) => {
      await admin.requestJson("/api/v1/namespaces", {
        method: "POST",
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      });
      const cms = resourceClient(admin, { apiVersion: "v1", resource: "configmaps", namespace });
      await cms.create(cm(namespace, "cm-0"));
      await cms.create(cm(namespace, "cm-1"));
    }));
    const setupMs = Math.round(performance.now() - started);

    if (runtime === "node") {
      const streams = await advertisedMaxStreams(cluster);
      console.log(`http2-e2e: ${where} SETTINGS_MAX_CONCURRENT_STREAMS = ${streams}`);
      assert.ok(typeof streams === "number" && streams > 0, `advertised ${streams}`);
    }

    // h2: wait (bounded) until only one connection is left: Node's HTTP/1.1 write connections closing
    // after undici's keep-alive (4 s), or spare connections Deno's client may open in the first burst.
    const h2 = await phase(cluster, port, "h2", undefined, (n) => n <= 1);
    const h1 = await phase(cluster, port, "http1", false, () => true);
    for (const c of [h2, h1]) {
      console.log(
        `http2-e2e: ${where} ${c.label}: ${N} informers: connections at sync ${c.atSync.length}, after the changes ${c.afterChanges.length}, settled ${c.settled.length}, most seen ${c.peak}, after close ${c.afterClose} (${c.ms} ms)`,
      );
    }
    console.log(
      `http2-e2e: ${where} setup ${setupMs} ms, test body ${
        Math.round(performance.now() - started)
      } ms`,
    );

    // The watches (and the lists before them) share one connection, which carries them to the end.
    assert.equal(h2.atSync.length, 1, `h2: ${h2.atSync.length} connections at sync`);
    assert.ok(h2.afterChanges.includes(h2.atSync[0]), "h2: the watches' connection is still open");
    if (runtime === "node") {
      // Writes go over a separate HTTP/1.1 agent (undici's h2 client starts a request with a body only
      // on an otherwise idle connection): the 50 patches, one after another, took one or two HTTP/1.1
      // connections (undici's pool alternates between two when the next request follows at once), which
      // close after its 4 s keep-alive; the watches' connection stays.
      assert.ok(
        h2.afterChanges.length <= 3,
        `Node h2: ${h2.afterChanges.length} after the changes`,
      );
    } else {
      // Deno: writes share the h2 connection.
      assert.equal(
        h2.afterChanges.length,
        1,
        `Deno h2: ${h2.afterChanges.length} after the changes`,
      );
    }
    assert.deepEqual(h2.settled, h2.atSync, "h2: settled on the watches' one connection");
    // HTTP/1.1: each watch holds its connection, and the writes (one at a time) took one or two more
    // (see above). On 1.20 each informer first tries a streaming list (refused: 422), then lists,
    // then watches; a request made right after the previous answer finds that connection not yet back
    // in the pool and opens another, and those stay open idle: up to 3 per informer, plus the writes.
    const h1n = h1.afterChanges.length;
    assert.ok(h1n >= N, `HTTP/1.1: ${h1n} connections for ${N} watches`);
    const most = release.current ? N + 2 : 3 * N + 2;
    assert.ok(
      h1n <= most,
      `HTTP/1.1: ${h1n} connections (at most ${most})`,
    );
  });
}

if (canCountConnections()) {
  e2eTest(
    `${N} informers over a TLS kubeconfig share one HTTP/2 connection (counted by the kernel); HTTP/1.1 takes one per watch`,
    e2e,
  );
} else {
  test(`[SKIPPED: no /proc to count connections] ${N} informers over one HTTP/2 connection`, () => {});
}
