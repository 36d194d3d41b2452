/**
 * The test kit: a fake Kubernetes API server on loopback HTTP that answers
 * the way kube-apiserver 1.20 does (status codes, `Status` bodies, headers,
 * list pages, watch streams, bookmarks, 410s, 504 "too large resource
 * version", 422 for streaming lists) and produces every fault a reflector
 * must survive on demand: HTTP errors with or without `Retry-After`, short
 * and stalled watches, ERROR events, garbage bytes, events split at any
 * byte, connection resets, refused connections, expired continue tokens.
 *
 * Its own entry point: it uses `node:http`, which Node, Deno and Bun
 * provide (not edge runtimes), and nothing from the core imports it. Its
 * types need `@types/node` (unlike the other entry points').
 *
 * @example A watch that ends with a 410 ERROR event
 * ```ts
 * import assert from "node:assert/strict";
 * import { FakeApiServer } from "./testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * try {
 *   server.create({
 *     apiVersion: "v1",
 *     kind: "ConfigMap",
 *     metadata: { name: "cm1", namespace: "fx" },
 *   });
 *   server.inject({ verb: "watch", fault: { kind: "error-event", code: 410, afterEvents: 1 } });
 *   const res = await fetch(
 *     `${server.url}/api/v1/namespaces/fx/configmaps?watch=1&resourceVersion=0`,
 *   );
 *   const events = (await res.text()).trim().split("\n").map((line) => JSON.parse(line));
 *   assert.deepEqual(events.map((ev) => ev.type), ["ADDED", "ERROR"]);
 *   assert.equal(events[1].object.code, 410);
 * } finally {
 *   await server.close();
 * }
 * ```
 *
 * @module
 */
export { FakeApiServer } from "./src/testkit/fake_api_server.ts";
export type { FakeApiServerOptions } from "./src/testkit/fake_api_server_options.ts";
export type { ServerConnection } from "./src/testkit/server_connection.ts";
export type {
  ChunkedFault,
  CloseFault,
  ErrorEventFault,
  Fault,
  FaultRule,
  FaultVerb,
  InjectedFault,
  RawFault,
  ResetFault,
  StallFault,
  StatusFault,
} from "./src/testkit/fault.ts";
export type {
  ObjectRef,
  ObjectsQuery,
  RecordedRequest,
  RequestVerb,
  ResourceDefinition,
  WaitOptions,
} from "./src/testkit/types.ts";
export type {
  KubeObject,
  KubeObjectLike,
  ObjectMetaLike,
  Status,
  WatchEvent,
} from "./src/api/types.ts";
export { ManualClock } from "./src/testkit/manual_clock.ts";
export type { Clock, TimerHandle } from "./src/async/clock.ts";
