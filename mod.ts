/**
 * A Kubernetes reflector on web-standard APIs: list, then watch from the
 * list's resourceVersion, forever, keeping a local store exactly equal to
 * the server's objects and recovering from every fault a real cluster and
 * network produce. Runs unchanged on Deno, Node (20.18+), Bun and edge
 * runtimes; imports nothing but web standards.
 *
 * @example Keep a store equal to the server's objects
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Indexer,
 *   KubeClient,
 *   metaNamespaceKeyFunc,
 *   namespaceIndexFunc,
 *   Reflector,
 *   resourceListerWatcher,
 * } from "./mod.ts";
 * import { FakeApiServer } from "./testkit.ts";
 *
 * // A stand-in for your API server (`kubectl proxy` serves one at http://127.0.0.1:8001).
 * const server = await FakeApiServer.start({ streamingList: true });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "app", namespace: "default" },
 * });
 *
 * const client = new KubeClient({ server: server.url });
 * const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
 * const store = new Indexer(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
 * const reflector = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * assert.deepEqual(store.byIndex("namespace", "default").map((cm) => cm.metadata.name), ["app"]);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 *
 * @module
 */
// Every public name, by module (no `export *`: a helper exported from a
// module for another module's use stays internal). tests/public_names_test.ts
// pins the list.
export {
  INITIAL_EVENTS_END_ANNOTATION,
  type KubeList,
  type KubeObject,
  type KubeObjectLike,
  type ListMeta,
  type ObjectMeta,
  type ObjectMetaLike,
  type Status,
  type StatusCause,
  type WatchEvent,
  type WatchEventType,
} from "./src/api/types.ts";
export { KubeStatusError, type KubeStatusErrorOptions } from "./src/api/kube_status_error.ts";
export {
  isAlreadyExists,
  isExpired,
  isNotFound,
  isRetriable,
  isTooLargeResourceVersion,
} from "./src/api/predicates.ts";
export { isConflict, KubeConflictError } from "./src/api/kube_conflict_error.ts";
export {
  KubeNetworkError,
  KubeRedirectError,
  ListTimeoutError,
  ShortWatchError,
  StreamingListUnsupportedError,
  UnexpectedKindError,
  WatchDecodeError,
  type WatchDecodeProblem,
  WatchIdleTimeoutError,
} from "./src/api/errors.ts";
export { DecodeError } from "./src/api/decode_error.ts";
export { ListDecodeError, type ListDecodeProblem } from "./src/api/list_decode_error.ts";
export { MalformedResponseError } from "./src/api/malformed_response_error.ts";
export { RequestRefusedError } from "./src/api/request_refused_error.ts";
export { type DeniedPermission, PermissionDeniedError } from "./src/api/permission_denied_error.ts";
export {
  retryAfterMsFromHeader,
  retryAfterMsFromSeconds,
  retryAfterMsFromStatus,
} from "./src/api/retry_after.ts";
export { KeyError } from "./src/cache/key_error.ts";
export { DeletedFinalStateUnknown } from "./src/cache/deleted_final_state_unknown.ts";
export {
  deletionHandlingMetaNamespaceKeyFunc,
  type KeyFunc,
  metaNamespaceKeyFunc,
  type NamespacedName,
  splitMetaNamespaceKey,
} from "./src/cache/key_func.ts";
export { MemoryStore, type Store } from "./src/cache/store.ts";
export { Indexer, type IndexerLike, type Indexers, type IndexFunc } from "./src/cache/indexer.ts";
export { NAMESPACE_INDEX, namespaceIndexFunc } from "./src/cache/namespace_index.ts";
export { resourcePath, type ResourceRef } from "./src/transport/resource_path.ts";
export {
  KubeClient,
  type KubeClientOptions,
  type KubeRequestOptions,
  type ServerVersion,
  type TokenProvider,
} from "./src/transport/kube_client.ts";
export type { ListerWatcher, ListOptions, WatchOptions } from "./src/transport/lister_watcher.ts";
export {
  type ApplyConfiguration,
  type ApplyOptions,
  type DeleteOptions,
  type JsonPatchOperation,
  type ObjectCallOptions,
  type PartialObject,
  type PatchOptions,
  type PatchType,
  type ResourceCallOptions,
  type ResourceClient,
  resourceClient,
  type ResourceListOptions,
  type WriteOptions,
} from "./src/transport/resource_client.ts";
export {
  retryOnConflict,
  type RetryOnConflictAttempt,
  type RetryOnConflictBackoff,
  type RetryOnConflictOptions,
} from "./src/transport/retry_on_conflict.ts";
export { type ServerFeatures, serverFeatures } from "./src/transport/server_features.ts";
export {
  resourceListerWatcher,
  type ResourceListerWatcherOptions,
} from "./src/transport/resource_lister_watcher.ts";
export type { ApiResource, DiscoveryFailure } from "./src/discovery/api_resource.ts";
export {
  API_DISCOVERY_DEFAULTS,
  ApiDiscovery,
  type ApiDiscoveryOptions,
  type ResolveOptions,
} from "./src/discovery/api_discovery.ts";
export { discover, type DiscoverOptions } from "./src/discovery/discover.ts";
export { UnknownResourceError } from "./src/discovery/unknown_resource_error.ts";
export { ResourceVerbError } from "./src/discovery/resource_verb_error.ts";
export {
  watchBatches,
  watchStream,
  type WatchStreamOptions,
} from "./src/transport/watch_stream.ts";
export { decodeListStream, type DecodeListStreamOptions } from "./src/transport/list_stream.ts";
export { type Clock, systemClock, type TimerHandle } from "./src/async/clock.ts";
export { Backoff, type BackoffOptions } from "./src/async/backoff.ts";
export {
  listAllPages,
  type ListPagerOptions,
  type ListResult,
} from "./src/reflector/list_pager.ts";
export type {
  ErrorContext,
  ErrorHandler,
  ErrorPhase,
  RelistReason,
  WatcherObserver,
  WatcherOptions,
  WatcherState,
} from "./src/reflector/watcher_options.ts";
export { WATCHER_DEFAULTS } from "./src/reflector/watcher_defaults.ts";
export { watcher, watcherBatches, type WatcherEvent } from "./src/reflector/watcher.ts";
export {
  Reflector,
  type ReflectorOptions,
  type ReflectorStatus,
  type RunOptions,
} from "./src/reflector/reflector.ts";
export {
  ReflectorStateError,
  type ReflectorStateErrorReason,
} from "./src/reflector/reflector_state_error.ts";
export { CheckpointResumeError } from "./src/reflector/checkpoint_resume_error.ts";
export { CheckpointSaveTimeoutError } from "./src/reflector/checkpoint_save_timeout_error.ts";
export { newNamespaceKeyedIndexerAndReflector } from "./src/reflector/namespace_keyed_indexer_and_reflector.ts";
export type {
  CheckpointSaved,
  ReflectorCheckpointOptions,
  SyncedFrom,
} from "./src/reflector/reflector_checkpoint.ts";
export { catchUp } from "./src/reflector/catch_up.ts";
export {
  CATCH_UP_DEFAULTS,
  type CatchUpChange,
  type CatchUpListReason,
  type CatchUpOptions,
  type CatchUpResult,
} from "./src/reflector/catch_up_options.ts";
export { CatchUpBudgetError } from "./src/reflector/catch_up_budget_error.ts";
export type { CheckpointStorage } from "./src/checkpoint/checkpoint_storage.ts";
export type { ResourceIdentity } from "./src/transport/resource_identity.ts";
export type {
  DeletedObject,
  HandlerOptions,
  ResourceEventHandler,
} from "./src/informer/resource_event_handler.ts";
export type { HandlerRegistration } from "./src/informer/handler_registration.ts";
export type { InformerChange } from "./src/informer/informer_change.ts";
export { InformerStore, type InformerStoreOptions } from "./src/informer/informer_store.ts";
export type { InformerOptions } from "./src/informer/informer_options.ts";
export { Informer } from "./src/informer/informer.ts";
export { dropManagedFields, type TransformFunc } from "./src/informer/transform.ts";
export {
  LabelSelector,
  labelSelector,
  type LabelSelectorRequirement,
  type LabelSelectorSpec,
} from "./src/informer/label_selector.ts";
export { Lister, type ListerListOptions, type ReadonlyIndexer } from "./src/informer/lister.ts";
export {
  type CacheSyncResult,
  type NotSynced,
  type Syncable,
  waitForCacheSync,
  waitForCacheSyncResult,
} from "./src/informer/wait_for_cache_sync.ts";
export type { Logger } from "./src/informer/logger.ts";
export {
  type InformerResource,
  SharedInformerFactory,
  type SharedInformerFactoryOptions,
} from "./src/informer/shared_informer_factory.ts";
export {
  type MetricsProvider,
  noopMetrics,
  type ReflectorMetrics,
  type ReflectorMetricsSources,
} from "./src/metrics/reflector_metrics.ts";
export type { WorkQueueMetrics } from "./src/metrics/workqueue_metrics.ts";
export type {
  ControllerMetrics,
  ControllerMetricsSources,
} from "./src/metrics/controller_metrics.ts";
export { ERROR_REASONS, type ErrorReason, errorReason } from "./src/metrics/error_reason.ts";
export { WorkQueue, type WorkQueueOptions } from "./src/workqueue/work_queue.ts";
export { Controller, type ControllerOptions } from "./src/controller/controller.ts";
export { type ControllerSource, controllerSource } from "./src/controller/controller_source.ts";
export {
  finalizer,
  FinalizerConflictError,
  type FinalizerContext,
  type FinalizerHandlers,
  type FinalizerOptions,
  type FinalizerResult,
} from "./src/controller/finalizer.ts";
export { ShardMembership } from "./src/shard/shard_membership.ts";
export { SHARD_DEFAULTS, type ShardOptions } from "./src/shard/shard_options.ts";
export type {
  ControllerLeaderElection,
  ControllerOwnership,
  OwnershipMode,
} from "./src/controller/controller_ownership.ts";
export { LeaderElector } from "./src/leader/leader_elector.ts";
export {
  LEADER_ELECTION_DEFAULTS,
  type LeaderElectionOptions,
} from "./src/leader/leader_election_options.ts";
export {
  type EventApi,
  EventRecorder,
  type EventRecorderStats,
} from "./src/events/event_recorder.ts";
export {
  EVENT_RECORDER_DEFAULTS,
  type EventRecorderOptions,
} from "./src/events/event_recorder_options.ts";
export type { EventDetails, EventType, ObjectReference } from "./src/events/event_details.ts";
export {
  type EventDropReason,
  type EventObjectRef,
  EventRecordError,
} from "./src/events/event_record_error.ts";
export { healthHandler } from "./src/health/health_handler.ts";
export {
  HEALTH_DEFAULTS,
  type HealthCheck,
  type HealthCheckResult,
  type HealthInformer,
  type HealthOptions,
} from "./src/health/health_options.ts";
export type { HealthCheckReport, HealthProbe, HealthReport } from "./src/health/health_report.ts";
export {
  type NodeIncomingMessageLike,
  nodeRequestListener,
  type NodeServerResponseLike,
} from "./src/health/node_request_listener.ts";
