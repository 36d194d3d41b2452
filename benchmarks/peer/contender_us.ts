/**
 * The peer benchmark's contenders from this library, one per process
 * (`--mode`):
 * - `reflector`: {@linkcode Reflector} into an {@linkcode Indexer} with the
 *   namespace index (no handlers: synced when `reflector.synced` resolves);
 * - `informer`: {@linkcode Informer} with the namespace index and one
 *   handler (synced when the cache has synced and the handler has seen
 *   every initial add); `--transform drop-managed-fields` adds the
 *   {@linkcode dropManagedFields} transform;
 * - `watcher`: the bare {@linkcode watcher} stream into a `Map`.
 *
 * Every mode lists in pages of 500 from `resourceVersion=0` (the reflector's
 * paginated list), unless `--streaming` is given: then it syncs by a
 * streaming list (`useStreamingList: true`: a watch with
 * `sendInitialEvents=true`, ADDED events until the initial-events-end
 * bookmark). Run by `scripts/bench_peer.mjs`; see `_driver.ts` for the
 * workloads.
 *
 * @module
 */
import {
  dropManagedFields,
  Indexer,
  Informer,
  KubeClient,
  type KubeObject,
  metaNamespaceKeyFunc,
  namespaceIndexFunc,
  Reflector,
  resourceListerWatcher,
  watcher,
} from "../../mod.ts";
import process from "node:process";
import { runContender, type Subject, type SubjectContext } from "./_driver.ts";

const common = {
  useStreamingList: process.argv.includes("--streaming"),
  onError: (err: unknown, phase: string) =>
    console.error(`[us] ${phase}: ${err instanceof Error ? err.message : String(err)}`),
};

function listerWatcher(ctx: SubjectContext) {
  const client = new KubeClient({ server: ctx.server });
  return resourceListerWatcher<KubeObject>(client, { apiVersion: "v1", resource: ctx.resource });
}

function reflectorSubject(ctx: SubjectContext): Subject {
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
  const reflector = new Reflector(listerWatcher(ctx), store, { name: "bench", ...common });
  const ac = new AbortController();
  return {
    async start() {
      void reflector.run({ signal: ac.signal });
      await reflector.synced;
    },
    size: () => store.list().length,
    resourceVersion: (ns, name) => store.getByKey(`${ns}/${name}`)?.metadata.resourceVersion,
  };
}

function informerSubject(ctx: SubjectContext): Subject {
  const transform = ctx.args.transform === "drop-managed-fields" ? dropManagedFields : undefined;
  const informer = new Informer<KubeObject>(listerWatcher(ctx), {
    name: "bench",
    ...common,
    indexers: { namespace: namespaceIndexFunc },
    transform,
  });
  let adds = 0;
  let allAdded: (() => void) | undefined;
  informer.addEventHandler({
    onAdd: () => {
      if (++adds === ctx.objects) allAdded?.();
    },
    onUpdate: (_old, obj) => ctx.onModified(obj),
    onDelete: () => {},
  });
  const ac = new AbortController();
  return {
    async start() {
      const added = new Promise<void>((resolve) => (allAdded = resolve));
      void informer.run({ signal: ac.signal });
      await informer.waitForSync();
      if (adds < ctx.objects) await added;
    },
    size: () => informer.indexer.listKeys().length,
    resourceVersion: (ns, name) =>
      informer.indexer.getByKey(`${ns}/${name}`)?.metadata.resourceVersion,
  };
}

function watcherSubject(ctx: SubjectContext): Subject {
  let map = new Map<string, KubeObject>();
  const ac = new AbortController();
  return {
    async start() {
      let synced: (() => void) | undefined;
      const first = new Promise<void>((resolve) => (synced = resolve));
      void (async () => {
        for await (
          const ev of watcher<KubeObject>(listerWatcher(ctx), { signal: ac.signal, ...common })
        ) {
          if (ev.type === "LIST") {
            const next = new Map<string, KubeObject>();
            for (const o of ev.items) next.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
            map = next;
            synced?.();
          } else if (ev.type === "ADDED" || ev.type === "MODIFIED") {
            map.set(`${ev.object.metadata.namespace}/${ev.object.metadata.name}`, ev.object);
            if (ev.type === "MODIFIED") ctx.onModified(ev.object);
          } else if (ev.type === "DELETED") {
            map.delete(`${ev.object.metadata.namespace}/${ev.object.metadata.name}`);
          }
        }
      })();
      await first;
    },
    size: () => map.size,
    resourceVersion: (ns, name) => map.get(`${ns}/${name}`)?.metadata.resourceVersion,
  };
}

const mode = process.argv[process.argv.indexOf("--mode") + 1];
await runContender(`us:${mode}`, (ctx) => {
  if (mode === "reflector") return reflectorSubject(ctx);
  if (mode === "informer") return informerSubject(ctx);
  if (mode === "watcher") return watcherSubject(ctx);
  throw new Error(`unknown mode ${mode}`);
});
