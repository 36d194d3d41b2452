/**
 * Custom resources, and a resourceVersion too large for the server (504).
 */
import assert from "node:assert/strict";
import { isTooLargeResourceVersion, type KubeClient } from "../../mod.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-edges";

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: { type: "object", properties: { size: { type: "integer" } } },
            status: { type: "object", properties: { ready: { type: "boolean" } } },
          },
        },
      },
    }],
  },
};

async function establishCrd(admin: KubeClient): Promise<void> {
  await admin.requestJson("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    method: "POST",
    body: crd,
  });
  await eventually(
    async () => {
      const c = await admin.requestJson<
        { status?: { conditions?: Array<{ type: string; status: string }> } }
      >(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
      );
      return c.status?.conditions?.some((x) => x.type === "Established" && x.status === "True") ??
        false;
    },
    "the CRD established",
    30_000,
  );
  // the resource is served once discovery has it
  await eventually(
    async () => {
      try {
        await admin.requestJson(`/apis/example.com/v1/namespaces/${ns}/widgets`);
        return true;
      } catch {
        return false;
      }
    },
    "widgets served",
    30_000,
  );
}

e2eTest(
  "custom resources: a CRD with a status subresource is reflected; the CRD deleted mid-watch is reported, without a hot loop",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces(ns);
      await establishCrd(admin);
      const base = `/apis/example.com/v1/namespaces/${ns}/widgets`;
      for (let i = 0; i < 5; i++) {
        await admin.requestJson(base, {
          method: "POST",
          body: {
            apiVersion: "example.com/v1",
            kind: "Widget",
            metadata: { name: `w${i}` },
            spec: { size: i },
          },
        });
      }
      const conn = await connect("token");
      const target = {
        apiVersion: "example.com/v1",
        resource: "widgets",
        kind: "Widget",
        namespace: ns,
      };
      // fast backoff: 100 ms doubling, capped at 1 s
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      await assertStoreEqualsServer(r, admin, target);
      // a status update through the subresource reaches the store
      const w0 = await admin.requestJson<Record<string, unknown>>(`${base}/w0`);
      await admin.requestJson(`${base}/w0/status`, {
        method: "PUT",
        body: { ...w0, status: { ready: true } },
      });
      await eventually(
        () =>
          (r.store.getByKey(`${ns}/w0`) as { status?: { ready?: boolean } })?.status?.ready ===
            true,
        "the status in the store",
      );
      // the CRD goes away mid-watch
      const seen = r.errors.length;
      await admin.requestJson(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        { method: "DELETE" },
      );
      await eventually(() => r.errors.length > seen, "the loss reported", 60_000);
      // Now every try fails. A hot loop would fail hundreds of times in 3 s; the backoff
      // (100 ms doubling to a 1 s cap, plus up to as much again) allows at most 6 tries in
      // any 3 s (waits of 0.1, 0.2, 0.4, 0.8, 1 s with no jitter drawn), and a try may be
      // reported twice (a refused streaming list, then its list): a bound of 14 holds
      // however the server and the scheduler time them.
      const at = r.errors.length;
      await new Promise((res) => setTimeout(res, 3_000));
      const rate = r.errors.length - at;
      assert.ok(rate <= 14, `${rate} errors in 3 s: backing off, not spinning`);
    }),
);

e2eTest(
  "a resourceVersion newer than the server has seen: 504 ResourceVersionTooLarge, then a consistent list",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces(ns);
      await churnConfigMaps(admin, ns, { ops: 10, seed: 61 });
      const conn = await connect("token");
      const target = { apiVersion: "v1", resource: "configmaps", kind: "ConfigMap", namespace: ns };
      const r = reflect(conn.client, target, {
        initialResourceVersion: "999999999",
        useStreamingList: false,
        backoff: { initialMs: 100, capMs: 1000 },
      });
      await r.reflector.synced;
      assert.ok(
        r.errors.some((e) => isTooLargeResourceVersion(e.error)),
        `a 504 too-large: ${r.errors.map((e) => String(e.error)).join("; ")}`,
      );
      await assertStoreEqualsServer(r, admin, target);
    }),
);
