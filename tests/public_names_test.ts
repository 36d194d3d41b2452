import assert from "node:assert/strict";
import { test } from "./_test.ts";
import * as core from "../mod.ts";
import * as testkit from "../testkit.ts";
import * as kubeconfig from "../kubeconfig.ts";
import * as kubeconfigEdge from "../kubeconfig_edge.ts";
import * as metrics from "../metrics.ts";
import * as checkpoint from "../checkpoint.ts";
import * as checkpointFile from "../checkpoint_file.ts";
import * as checkpointDenoKv from "../checkpoint_deno_kv.ts";

// The run-time names each entry point exports, pinned: a name appears here
// only on purpose (a helper exported from its module for another module's
// use must not reach a user). Adding or removing a public name means
// changing the entry point's export list and this list together. Type-only
// exports leave no run-time trace; the entry points name them explicitly.

const CORE = [
  "API_DISCOVERY_DEFAULTS",
  "ApiDiscovery",
  "ResourceVerbError",
  "UnknownResourceError",
  "discover",
  "Backoff",
  "CATCH_UP_DEFAULTS",
  "CatchUpBudgetError",
  "CheckpointResumeError",
  "CheckpointSaveTimeoutError",
  "Controller",
  "controllerSource",
  "DecodeError",
  "DeletedFinalStateUnknown",
  "ERROR_REASONS",
  "EVENT_RECORDER_DEFAULTS",
  "EventRecordError",
  "EventRecorder",
  "FinalizerConflictError",
  "HEALTH_DEFAULTS",
  "INITIAL_EVENTS_END_ANNOTATION",
  "Indexer",
  "Informer",
  "InformerStore",
  "KeyError",
  "KubeClient",
  "KubeConflictError",
  "KubeNetworkError",
  "KubeRedirectError",
  "KubeStatusError",
  "LEADER_ELECTION_DEFAULTS",
  "LabelSelector",
  "LeaderElector",
  "ListDecodeError",
  "ListTimeoutError",
  "Lister",
  "MalformedResponseError",
  "MemoryStore",
  "NAMESPACE_INDEX",
  "PermissionDeniedError",
  "Reflector",
  "ReflectorStateError",
  "RequestRefusedError",
  "SHARD_DEFAULTS",
  "ShardMembership",
  "SharedInformerFactory",
  "ShortWatchError",
  "StreamingListUnsupportedError",
  "UnexpectedKindError",
  "WATCHER_DEFAULTS",
  "WatchDecodeError",
  "WatchIdleTimeoutError",
  "WorkQueue",
  "catchUp",
  "decodeListStream",
  "deletionHandlingMetaNamespaceKeyFunc",
  "dropManagedFields",
  "errorReason",
  "finalizer",
  "healthHandler",
  "isAlreadyExists",
  "isConflict",
  "isExpired",
  "isNotFound",
  "isRetriable",
  "isTooLargeResourceVersion",
  "labelSelector",
  "listAllPages",
  "metaNamespaceKeyFunc",
  "namespaceIndexFunc",
  "newNamespaceKeyedIndexerAndReflector",
  "nodeRequestListener",
  "noopMetrics",
  "resourceClient",
  "resourceListerWatcher",
  "resourcePath",
  "retryAfterMsFromHeader",
  "retryAfterMsFromSeconds",
  "retryAfterMsFromStatus",
  "retryOnConflict",
  "serverFeatures",
  "splitMetaNamespaceKey",
  "systemClock",
  "waitForCacheSync",
  "waitForCacheSyncResult",
  "watchBatches",
  "watchStream",
  "watcher",
  "watcherBatches",
];

const TESTKIT = ["FakeApiServer", "ManualClock"];

const KUBECONFIG = [
  "KubeConfig",
  "KubeConfigError",
  "KubeConnection",
  "MissingPackageError",
  "SERVICE_ACCOUNT_DIR",
  "TlsUnsupportedError",
  "createTlsFetch",
  "execCredentialProvider",
  "inClusterConfig",
  "loadKubeConfig",
  "readKubeConfig",
  "tokenFileProvider",
];

// The edge-safe subset (kubeconfig from text, inline credentials): the same classes.
const KUBECONFIG_EDGE = [
  "KubeConfig",
  "KubeConfigError",
  "KubeConnection",
  "TlsUnsupportedError",
  "connectKubeConfig",
  "parseKubeConfig",
];

const METRICS = [
  "ERROR_REASONS",
  "errorReason",
  "metricsResponse",
  "noopMetrics",
  "prometheusMetrics",
];

const CHECKPOINT = [
  "CHECKPOINT_DEFAULTS",
  "CheckpointCache",
  "CheckpointError",
  "checkpointCache",
  "clusterIdentity",
  "deleteCheckpoint",
  "identityMismatch",
  "kvCheckpointStorage",
  "loadCheckpoint",
  "memoryCheckpointStorage",
  "saveCheckpoint",
];

const CHECKPOINT_FILE = ["fileCheckpointStorage"];

const CHECKPOINT_DENO_KV = ["denoKvCheckpointStorage"];

const names = (ns: object) => Object.keys(ns).sort();

test("mod.ts exports exactly the pinned public names (no internal helper such as throwRejected)", () => {
  assert.deepEqual(names(core), [...CORE].sort());
  assert.ok(!("throwRejected" in core));
});

test("testkit.ts exports exactly the pinned public names", () => {
  assert.deepEqual(names(testkit), [...TESTKIT].sort());
});

test("kubeconfig.ts exports exactly the pinned public names", () => {
  assert.deepEqual(names(kubeconfig), [...KUBECONFIG].sort());
});

test("kubeconfig_edge.ts exports exactly the pinned public names, sharing kubeconfig.ts's classes", () => {
  assert.deepEqual(names(kubeconfigEdge), [...KUBECONFIG_EDGE].sort());
  for (
    const name of [
      "KubeConfig",
      "KubeConfigError",
      "KubeConnection",
      "TlsUnsupportedError",
    ] as const
  ) {
    assert.equal(kubeconfigEdge[name], kubeconfig[name], name);
  }
});

test("metrics.ts exports exactly the pinned public names", () => {
  assert.deepEqual(names(metrics), [...METRICS].sort());
});

test("checkpoint.ts, checkpoint_file.ts and checkpoint_deno_kv.ts export exactly the pinned public names", () => {
  assert.deepEqual(names(checkpoint), [...CHECKPOINT].sort());
  assert.deepEqual(names(checkpointFile), [...CHECKPOINT_FILE].sort());
  assert.deepEqual(names(checkpointDenoKv), [...CHECKPOINT_DENO_KV].sort());
});

test("every exported name is defined, and no entry point exports an underscore-prefixed name", () => {
  for (
    const [entry, ns] of Object.entries({
      core,
      testkit,
      kubeconfig,
      kubeconfigEdge,
      metrics,
      checkpoint,
      checkpointFile,
      checkpointDenoKv,
    })
  ) {
    for (const [name, value] of Object.entries(ns)) {
      assert.notEqual(value, undefined, `${entry}: ${name}`);
      assert.ok(!name.startsWith("_"), `${entry}: ${name}`);
    }
  }
});
