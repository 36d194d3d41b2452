/**
 * A role that may list but not watch (a common hand-written RBAC rule), on a
 * real API server with RBAC: every watch is answered 403. The reflector does
 * not retry the refused watch forever from the first list's version (the
 * store would freeze while `hasSynced()` is true): as client-go, it relists
 * after the backoff, so the store follows the server within one backoff,
 * and it reports a `RequestRefusedError` naming the verb and resource. The
 * 403 of a streaming list is never taken for "no streaming lists".
 */
import assert from "node:assert/strict";
import { type KubeClient, RequestRefusedError, StreamingListUnsupportedError } from "../../mod.ts";
import { kubeconfig, writeConfig } from "../kubeconfig/_helpers.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-list-only";

/** Lets user `listonly` get and list ConfigMaps in `ns`, and nothing else (no watch). */
async function grantListOnly(admin: KubeClient): Promise<void> {
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  const post = (path: string, body: Record<string, unknown>) =>
    admin.requestJson(path, { method: "POST", body });
  await post(`${rbac}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "list-only" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
  });
  await post(`${rbac}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "list-only" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "list-only" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "listonly" }],
  });
}

e2eTest(
  "a role with list but no watch: each watch is refused (403), reported as a refusal naming the verb and resource, and the reflector relists after the backoff, so the store follows the server",
  (release) =>
    withCluster(release, {
      apiserverArgs: ["--authorization-mode=RBAC"],
      users: { "tok-listonly": "listonly" },
    }, async ({ cluster, admin, namespaces, connect, reflect }) => {
      await namespaces(ns);
      await grantListOnly(admin);
      await churnConfigMaps(admin, ns, { ops: 10, seed: 23 });
      const listOnly = await connect({
        path: await writeConfig(
          cluster.dir,
          "listonly.yaml",
          kubeconfig(
            { server: cluster.server, "certificate-authority": "ca.crt" },
            { token: "tok-listonly" },
            { name: "listonly" },
          ),
        ),
      });
      // RBAC objects apply asynchronously: wait until the user may list
      await eventually(
        async () => {
          const res = await listOnly.client.request(`/api/v1/namespaces/${ns}/configmaps`)
            .catch(() => undefined);
          await res?.text();
          return res?.status === 200;
        },
        "the list-only role in force",
        30_000,
      );
      const target = { apiVersion: "v1", resource: "configmaps", kind: "ConfigMap", namespace: ns };
      const r = reflect(listOnly.client, target, { backoff: { initialMs: 200, capMs: 1_000 } });
      await r.reflector.synced;
      // Changes after the first list reach the store through relists.
      await churnConfigMaps(admin, ns, { ops: 10, seed: 24, prefix: "later" });
      await assertStoreEqualsServer(r, admin, target);
      const refusals = r.errors.filter((e) => e.error instanceof RequestRefusedError);
      assert.ok(refusals.length > 0, "the refused watch is reported");
      const watchRefusal = refusals.find((e) => (e.error as RequestRefusedError).verb === "watch");
      assert.ok(watchRefusal, `a refused watch: ${refusals.map((e) => String(e.error))}`);
      const err = watchRefusal.error as RequestRefusedError;
      assert.equal(err.code, 403);
      assert.equal(err.resource, "configmaps");
      assert.equal(err.namespace, ns);
      assert.match(err.message, /^forbidden: cannot watch configmaps in namespace e2e-list-only/);
      assert.ok(
        !r.errors.some((e) => e.error instanceof StreamingListUnsupportedError),
        "a 403 is not 'no streaming lists'",
      );
      // No hot loop: at most a few tries per second with a 200 ms..1 s backoff.
      assert.ok(r.errors.length < 200, `${r.errors.length} errors`);
    }),
);
