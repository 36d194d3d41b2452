/**
 * The objects the peer benchmark's API server serves: ConfigMaps of about
 * 1 KB and realistic Pods of about 5 KB with `managedFields`, each
 * serialized once into a template whose `resourceVersion` and
 * `bench/sent` annotation (the emission time of a watch event, for
 * latency) are filled in when it is written out. Deterministic: object
 * `i` is the same in every run.
 *
 * @module
 */

/** Objects spread over this many namespaces (`ns-0` ... `ns-49`). */
export const NAMESPACES = 50;
/** The annotation carrying a watch event's emission time (epoch ms). */
export const SENT_ANNOTATION = "bench/sent";

/** JSON text of one object, cut around its resourceVersion and its sent time: `a + rv + b + sent + c`. */
export interface Template {
  a: string;
  b: string;
  c: string;
}

const RV = "@@RV@@";
const SENT = "@@SENT@@";

function cut(obj: unknown): Template {
  const json = JSON.stringify(obj);
  const [a, rest] = json.split(RV);
  const [b, c] = rest.split(SENT);
  return { a, b, c };
}

/** The two hex digits of each byte (`toString(16)` per word made generating an object cost 30 µs). */
const BYTE_HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Deterministic pseudo-random hex of `n` characters, seeded by `seed`. */
function hex(seed: number, n: number): string {
  let x = (seed * 2654435761) >>> 0;
  let out = "";
  while (out.length < n) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    // x.toString(16).padStart(8, "0"), four table lookups
    out += BYTE_HEX[x >>> 24] + BYTE_HEX[(x >>> 16) & 255] + BYTE_HEX[(x >>> 8) & 255] +
      BYTE_HEX[x & 255];
  }
  return out.slice(0, n);
}

function uid(i: number): string {
  const h = hex(i + 1, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Namespace and name of object `i` of `resource`. */
export function nameOf(resource: string, i: number): { namespace: string; name: string } {
  return { namespace: `ns-${i % NAMESPACES}`, name: resource === "pods" ? `pod-${i}` : `cm-${i}` };
}

/** A ConfigMap of about 1 KB as JSON (several keys, like a real application config). */
export function configMapTemplate(i: number): Template {
  const { namespace, name } = nameOf("configmaps", i);
  return cut({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace,
      uid: uid(i),
      resourceVersion: RV,
      creationTimestamp: "2025-06-01T12:00:00Z",
      labels: { app: `app-${i % 97}`, tier: "backend", shard: String(i % 7) },
      annotations: { [SENT_ANNOTATION]: SENT },
    },
    data: {
      "application.properties": `server.port=8080\nserver.name=${name}\ncache.ttl=${
        i % 600
      }s\nlog.level=info\nfeature.flags=${hex(i + 7, 48)}\n`,
      "endpoints.json": JSON.stringify({
        primary: `https://svc-${i % 97}.${namespace}.svc.cluster.local:8443/api`,
        fallback: `https://svc-${(i + 1) % 97}.${namespace}.svc.cluster.local:8443/api`,
        timeoutMs: 1500 + (i % 100),
      }),
      "checksum": hex(i + 3, 64),
      "notes": `generated for the peer benchmark; object ${i}; ${hex(i + 11, 250)}`,
      "replicas": String(1 + (i % 5)),
      "owner": `team-${i % 13}@example.com`,
    },
  });
}

/** A realistic Pod of about 5 KB, with the `managedFields` a real API server records. */
export function podTemplate(i: number): Template {
  const { namespace, name } = nameOf("pods", i);
  const app = `app-${i % 97}`;
  const rs = `${app}-${hex(i % 97, 10)}`;
  const node = `node-${i % 40}`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const t = "2025-06-01T12:00:00Z";
  const container = (cname: string, image: string, port: number) => ({
    name: cname,
    image,
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "APP_NAME", value: app },
      {
        name: "POD_NAME",
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } },
      },
      { name: "LOG_LEVEL", value: "info" },
    ],
    resources: {
      limits: { cpu: "500m", memory: "256Mi" },
      requests: { cpu: "100m", memory: "128Mi" },
    },
    volumeMounts: [
      { name: "config", mountPath: "/etc/app", readOnly: true },
      {
        name: `kube-api-access-${hex(i, 5)}`,
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      },
    ],
    livenessProbe: {
      httpGet: { path: "/healthz", port, scheme: "HTTP" },
      initialDelaySeconds: 10,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    },
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  });
  const fieldsContainer = {
    ".": {},
    "f:env": { ".": {}, 'k:{"name":"APP_NAME"}': { ".": {}, "f:name": {}, "f:value": {} } },
    "f:image": {},
    "f:imagePullPolicy": {},
    "f:livenessProbe": {
      ".": {},
      "f:failureThreshold": {},
      "f:httpGet": { ".": {}, "f:path": {}, "f:port": {} },
    },
    "f:name": {},
    "f:ports": {
      ".": {},
      'k:{"containerPort":8080,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} },
    },
    "f:resources": { ".": {}, "f:limits": { ".": {}, "f:cpu": {}, "f:memory": {} } },
    "f:volumeMounts": { ".": {}, 'k:{"mountPath":"/etc/app"}': { ".": {}, "f:mountPath": {} } },
  };
  return cut({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      generateName: `${rs}-`,
      namespace,
      uid: uid(i + 1_000_000),
      resourceVersion: RV,
      creationTimestamp: t,
      labels: { app, "pod-template-hash": hex(i % 97, 10), tier: "backend" },
      annotations: { [SENT_ANNOTATION]: SENT, "kubectl.kubernetes.io/restartedAt": t },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: rs,
        uid: uid(i % 97 + 2_000_000),
        controller: true,
        blockOwnerDeletion: true,
      }],
      managedFields: [
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "v1",
          time: t,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:generateName": {},
              "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {} },
              "f:ownerReferences": { ".": {}, [`k:{"uid":"${uid(i % 97 + 2_000_000)}"}`]: {} },
            },
            "f:spec": {
              "f:containers": {
                'k:{"name":"app"}': fieldsContainer,
                'k:{"name":"sidecar"}': { ".": {}, "f:image": {}, "f:name": {}, "f:resources": {} },
              },
              "f:dnsPolicy": {},
              "f:enableServiceLinks": {},
              "f:restartPolicy": {},
              "f:schedulerName": {},
              "f:securityContext": {},
              "f:terminationGracePeriodSeconds": {},
              "f:volumes": {
                ".": {},
                'k:{"name":"config"}': {
                  ".": {},
                  "f:configMap": { ".": {}, "f:name": {} },
                  "f:name": {},
                },
              },
            },
          },
        },
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time: t,
          fieldsType: "FieldsV1",
          subresource: "status",
          fieldsV1: {
            "f:status": {
              "f:conditions": {
                'k:{"type":"ContainersReady"}': {
                  ".": {},
                  "f:lastProbeTime": {},
                  "f:lastTransitionTime": {},
                  "f:status": {},
                  "f:type": {},
                },
                'k:{"type":"Initialized"}': {
                  ".": {},
                  "f:lastProbeTime": {},
                  "f:lastTransitionTime": {},
                  "f:status": {},
                  "f:type": {},
                },
                'k:{"type":"Ready"}': {
                  ".": {},
                  "f:lastProbeTime": {},
                  "f:lastTransitionTime": {},
                  "f:status": {},
                  "f:type": {},
                },
              },
              "f:containerStatuses": {},
              "f:hostIP": {},
              "f:phase": {},
              "f:podIP": {},
              "f:podIPs": { ".": {}, [`k:{"ip":"${ip}"}`]: { ".": {}, "f:ip": {} } },
              "f:startTime": {},
            },
          },
        },
      ],
    },
    spec: {
      volumes: [
        { name: "config", configMap: { name: `${app}-config`, defaultMode: 420 } },
        {
          name: `kube-api-access-${hex(i, 5)}`,
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              {
                configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        container("app", `registry.example.com/${app}:1.${i % 20}.3`, 8080),
        {
          name: "sidecar",
          image: "registry.example.com/proxy:2.4.1",
          ports: [{ name: "metrics", containerPort: 15090, protocol: "TCP" }],
          resources: { requests: { cpu: "10m", memory: "32Mi" } },
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          imagePullPolicy: "IfNotPresent",
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
      nodeName: node,
      securityContext: {},
      schedulerName: "default-scheduler",
      tolerations: [
        {
          key: "node.kubernetes.io/unreachable",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Running",
      conditions: ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({
        type,
        status: "True",
        lastProbeTime: null,
        lastTransitionTime: t,
      })),
      hostIP: `192.168.${i % 40}.10`,
      podIP: ip,
      podIPs: [{ ip }],
      startTime: t,
      containerStatuses: ["app", "sidecar"].map((cname) => ({
        name: cname,
        state: { running: { startedAt: t } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: `registry.example.com/${cname === "app" ? app : "proxy"}:1.0`,
        imageID: `registry.example.com/${cname}@sha256:${hex(i + (cname === "app" ? 5 : 6), 64)}`,
        containerID: `containerd://${hex(i + 9, 64)}`,
        started: true,
      })),
      qosClass: "Burstable",
    },
  });
}

/** The template of object `i` of `resource` (`configmaps` or `pods`). */
export function templateOf(resource: string, i: number): Template {
  return resource === "pods" ? podTemplate(i) : configMapTemplate(i);
}
