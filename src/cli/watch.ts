/**
 * `kube-reflector watch RESOURCE [NAME]`: runs an informer on the resource
 * and prints each change as it happens (the objects first, as ADDED), in
 * `-o table|wide|json|ndjson|name`, until Ctrl-C (exit 0). The informer
 * recovers from every fault the library knows (dropped connections,
 * expired versions, relists); a request refused before the first sync
 * (401, 403, 404) ends it with exit code 1. `--metrics-port` serves the
 * informer's Prometheus metrics.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { StreamingListUnsupportedError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { PermissionDeniedError } from "../api/permission_denied_error.ts";
import { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";
import { Informer } from "../informer/informer.ts";
import type { Logger } from "../informer/logger.ts";
import { prometheusMetrics } from "../metrics/prometheus_metrics.ts";
import type { MetricsProvider } from "../metrics/reflector_metrics.ts";
import { resourceListerWatcher } from "../transport/resource_lister_watcher.ts";
import type { CliEnv, Command } from "./cli_env.ts";
import { parseFlags } from "./_flags.ts";
import { WATCH_HELP } from "./_help.ts";
import { loadPromClient, type MetricsServer, serveMetrics } from "./_metrics_server.ts";
import {
  eventLine,
  type EventType,
  jsonText,
  nameLine,
  type OutputFormat,
  outputFormat,
} from "./_output.ts";
import { errorMessage, EXIT, printError, runCommand } from "./_run_command.ts";
import { openTarget, type ResolveResource, resourceLabel, TARGET_FLAGS } from "./_target.ts";
import { UsageError } from "./_usage_error.ts";
import { WatchRows } from "./_watch_rows.ts";
import { defaultResolve } from "./_default_resolve.ts";
import { withKindOf } from "./_with_kind.ts";

/** Internals tests set. */
export interface WatchInternals {
  /** The clock for AGE. Default: `Date.now`. */
  now?: () => number;
  /** The resolver. Default: discovery. */
  resolve?: ResolveResource;
  /** Imports prom-client's module. Default: `npm:prom-client` (Deno), `prom-client` (Node). */
  importPromClient?: () => Promise<unknown>;
  /** Called once the metrics server listens, with its URL. */
  onMetricsServer?: (url: string) => void;
}

const FLAGS = [
  ...TARGET_FLAGS,
  { name: "output", short: "o", switch: false },
  { name: "metrics-port", switch: false },
];

/** The `watch` command. */
export const watch: Command = (env) => runWatch(env);

/** True for a refusal that retrying will not cure, before the first sync. */
function isRefusal(err: unknown): boolean {
  return err instanceof PermissionDeniedError ||
    (err instanceof KubeStatusError && [401, 403, 404].includes(err.code));
}

/** `watch`, with internals for tests. */
export function runWatch(env: CliEnv, internals: WatchInternals = {}): Promise<number> {
  return runCommand(env, { interruptedCode: EXIT.ok }, async () => {
    const parsed = parseFlags(env.args, FLAGS, "watch");
    if (parsed.values.get("help") === "true") {
      env.stdout(WATCH_HELP);
      return EXIT.ok;
    }
    const format: OutputFormat = outputFormat(parsed.values.get("output"), "watch");
    const portText = parsed.values.get("metrics-port");
    const port = portText === undefined ? undefined : Number(portText);
    if (port !== undefined && !(/^\d+$/.test(portText!) && port <= 65535)) {
      throw new UsageError(`--metrics-port: not a port number: "${portText}"`, "watch");
    }
    const prom = port === undefined ? undefined : await loadPromClient(internals.importPromClient);
    const target = await openTarget(env, parsed, {
      command: "watch",
      verb: "watch",
      allowName: true,
      resolve: internals.resolve ?? defaultResolve,
    });
    const { conn, resource } = target;
    let server: MetricsServer | undefined;
    const ac = new AbortController();
    const stop = () => ac.abort(env.signal.reason);
    env.signal.addEventListener("abort", stop, { once: true });
    try {
      const label = resourceLabel(resource);
      let metrics: MetricsProvider | undefined;
      if (prom && port !== undefined) {
        const registry = new prom.Registry();
        metrics = prometheusMetrics({ client: prom, registry });
        server = await serveMetrics(port, registry);
        env.stderr(`metrics: ${server.url}\n`);
        internals.onMetricsServer?.(server.url);
      }
      const rows = format === "table" || format === "wide"
        ? await WatchRows.open({
          client: conn.client,
          resource,
          namespace: target.namespace,
          labelSelector: target.labelSelector,
          fieldSelector: target.fieldSelector,
          wide: format === "wide",
          namespaceColumn: target.allNamespaces,
          now: internals.now ?? Date.now,
          signal: ac.signal,
        })
        : undefined;
      const lw = resourceListerWatcher(conn.client, {
        apiVersion: resource.apiVersion,
        resource: resource.resource,
        namespace: target.namespace,
        labelSelector: target.labelSelector,
        fieldSelector: target.fieldSelector,
      });
      let refusal: unknown;
      const warn = (message: string) => printError(env, `warning: ${message}`);
      const logger: Logger = {
        debug() {},
        info() {},
        warn: (message) => warn(message),
        error: (message) => warn(message),
      };
      const informer: Informer<KubeObject> = new Informer(lw, {
        name: label,
        metrics,
        logger,
        onError: (err) => {
          if (!informer.hasSynced() && isRefusal(err)) {
            refusal ??= err;
            ac.abort();
          } else if (!(err instanceof StreamingListUnsupportedError)) {
            // (a server without streaming lists is a fallback, not news)
            warn(errorMessage(err));
          }
        },
      });
      const print = async (type: EventType, object: KubeObjectLike) => {
        const full = withKindOf(resource, object);
        switch (format) {
          case "json":
            return env.stdout(jsonText(full));
          case "ndjson":
            return env.stdout(eventLine(type, full));
          case "name":
            return env.stdout(nameLine(resource, full));
          default:
            return env.stdout(await rows!.line(type, full));
        }
      };
      const changes = informer.changes({ signal: ac.signal });
      const done = informer.run({ signal: ac.signal });
      try {
        for await (const change of changes) {
          if (change.type === "add") await print("ADDED", change.object);
          else if (change.type === "update") {
            if (change.oldObject !== change.object) await print("MODIFIED", change.object);
          } else if (change.type === "delete") {
            const object = change.object instanceof DeletedFinalStateUnknown
              ? change.object.obj
              : change.object;
            await print("DELETED", object);
          }
        }
      } finally {
        ac.abort();
        await done;
      }
      if (refusal !== undefined) throw refusal;
      return EXIT.ok;
    } finally {
      env.signal.removeEventListener("abort", stop);
      await server?.close();
      await conn.close();
    }
  });
}
