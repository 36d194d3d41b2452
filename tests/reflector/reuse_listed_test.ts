// A relist hands on the store's own copy of each unchanged object (same key,
// uid and resourceVersion) as each item is decoded: the decoder, the pager,
// the watcher (LIST and streaming list), the Reflector and the Informer.
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  Changes,
  configMap,
  FAST,
  NotifyingIndexer,
  requestsAtLeast,
  requestsOf,
  settles,
  withReflector,
} from "../_harness.ts";
import { UnexpectedKindError } from "../../src/api/errors.ts";
import type { KubeList, KubeObject, KubeObjectLike } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import type { Store } from "../../src/cache/store.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Informer } from "../../src/informer/informer.ts";
import { listAllPages } from "../../src/reflector/list_pager.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { watcher } from "../../src/reflector/watcher.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import type { ListerWatcher } from "../../src/transport/lister_watcher.ts";
import { decodeListStream } from "../../src/transport/list_stream.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

const enc = new TextEncoder();
const nameOf = (item: unknown) => (item as KubeObject).metadata.name;

/** A body whose chunks the test enqueues itself. */
function controlledBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { body, controller };
}

test("decodeListStream puts what reuse returns in each item's place, whatever the body's size", async () => {
  for (const filler of [10, 3000]) { // 2,000 items: a small body parsed whole, and 6 MB scanned
    const items = Array.from({ length: 2000 }, (_, i) => ({
      metadata: { name: `cm-${i}` },
      data: { x: "y".repeat(filler) },
    }));
    const held = new Map(items.map((item, i) => [item.metadata.name, { held: i }]));
    const seen: unknown[] = [];
    const bytes = enc.encode(JSON.stringify({ kind: "List", metadata: {}, items: [...items, 5] }));
    const chunks = controlledBody();
    for (let at = 0; at < bytes.length; at += 65536) {
      chunks.controller.enqueue(bytes.slice(at, at + 65536));
    }
    chunks.controller.close();
    const list = await decodeListStream(chunks.body, {
      reuse: (item) => {
        seen.push(item);
        const name = (item as { metadata?: { name?: string } }).metadata?.name;
        return name !== undefined && Number(name.slice(3)) % 2 === 0 ? held.get(name) : undefined;
      },
    });
    assert.equal(seen.length, 2001, `every item, once (${filler})`);
    assert.equal(seen[2000], 5, "items are passed whatever they are");
    assert.equal(list.items.length, 2001);
    for (let i = 0; i < 2000; i++) {
      if (i % 2 === 0) assert.equal(list.items[i], held.get(`cm-${i}`), `item ${i} reused`);
      else assert.deepEqual(list.items[i], items[i], `item ${i} kept`);
    }
    assert.equal(list.items[2000], 5);
  }
});

test("decodeListStream calls reuse on a large body's items as they arrive, not once the body has ended", async () => {
  const item = (i: number) =>
    JSON.stringify({ metadata: { name: `cm-${i}` }, data: { x: "y".repeat(3000) } });
  const head = `{"kind":"List","metadata":{},"items":[`;
  const first = Array.from({ length: 2000 }, (_, i) => item(i)).join(","); // 6 MB: past whole-body parsing
  const chunks = controlledBody();
  let calls = 0;
  let reached!: () => void;
  const reused1900 = new Promise<void>((resolve) => (reached = resolve));
  const decoded = decodeListStream(chunks.body, {
    reuse: () => {
      if (++calls === 1900) reached();
      return undefined;
    },
  });
  chunks.controller.enqueue(enc.encode(head + first + ","));
  await settles(reused1900, "1,900 items reused before the body's end");
  chunks.controller.enqueue(enc.encode(item(2000) + "]}"));
  chunks.controller.close();
  const list = await decoded;
  assert.equal(list.items.length, 2001);
  assert.equal(calls, 2001);
});

test("decodeListStream rejects with what reuse throws and cancels the body", async () => {
  const bytes = enc.encode(JSON.stringify({ metadata: {}, items: [{ metadata: { name: "a" } }] }));
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(bytes),
    cancel: () => void (cancelled = true),
  });
  const boom = new Error("boom");
  await assert.rejects(
    decodeListStream(body, {
      reuse: () => {
        throw boom;
      },
    }),
    (e) => e === boom,
  );
  assert.ok(cancelled, "the body is cancelled");
});

test("listAllPages hands reuse to every page's list call, including a list redone after an expired continue token", async () => {
  const server = await FakeApiServer.start({ paginateResourceVersionZero: true });
  try {
    for (let i = 0; i < 23; i++) server.create(configMap(`cm-${String(i).padStart(2, "0")}`));
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const held = new Map<string, KubeObject>();
    const reuse = (listed: KubeObjectLike) => {
      const item = listed as KubeObject;
      let copy = held.get(item.metadata.name!);
      if (!copy) held.set(item.metadata.name!, copy = { ...item });
      return copy;
    };
    const result = await listAllPages(lw, { resourceVersion: "0", pageSize: 10, reuse });
    assert.equal(result.items.length, 23);
    for (const item of result.items) assert.equal(item, held.get(item.metadata.name!));
    let pages = 0;
    const again = await listAllPages(lw, {
      resourceVersion: "0",
      pageSize: 10,
      reuse,
      onPage: () => {
        if (++pages === 1) server.expireContinueTokens();
      },
    });
    assert.equal(pages, 2, "one page, then the expired continue token, then one full list");
    assert.equal(requestsOf(server, "list").at(-1)!.query.get("limit"), null);
    assert.equal(again.items.length, 23);
    for (const item of again.items) assert.equal(item, held.get(item.metadata.name!));
  } finally {
    await server.close();
  }
});

/** Every stored object, by key. */
function snapshot(store: Indexer<KubeObject>): Map<string, KubeObject> {
  return new Map(store.listKeys().map((k) => [k, store.getByKey(k)!]));
}

/** Forces a relist (a 410 on the running watch) and changes cm-1 before the relist lists. */
async function relistWithChange(server: FakeApiServer): Promise<void> {
  const since = server.requestCount;
  server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
  server.endWatches();
  server.update(configMap("cm-1", "fx", { changed: "during the relist" }));
  await server.waitForRequests(
    (r) => r.verb === "list" || (r.verb === "watch" && r.query.get("sendInitialEvents") === "true"),
    { since },
  );
}

for (const streaming of [false, true]) {
  const how = streaming ? "a streaming list" : "a LIST";
  test(`Reflector: a relist by ${how} keeps the stored object of every unchanged object and takes the new copy of a changed one`, async () => {
    await withReflector(
      {
        seed: 30,
        server: { streamingList: streaming },
        reflector: { useStreamingList: streaming },
      },
      async ({ server, store, reflector, until, converged }) => {
        await reflector.synced;
        await server.waitForWatch();
        const before = snapshot(store);
        await relistWithChange(server);
        await until(
          () => (store.getByKey("fx/cm-1")?.data as { changed?: string })?.changed !== undefined,
          "the change",
        );
        await converged();
        for (const [key, obj] of before) {
          if (key === "fx/cm-1") assert.notEqual(store.getByKey(key), obj, "changed: the new copy");
          else assert.equal(store.getByKey(key), obj, `${key}: the stored object`);
        }
      },
    );
  });
}

test("Reflector: reuseListed () => undefined turns reuse off (every object is the listed copy); a non-function is a TypeError", async () => {
  await withReflector(
    { seed: 10, reflector: { reuseListed: () => undefined } },
    async ({ server, store, reflector, until, converged }) => {
      await reflector.synced;
      await server.waitForWatch();
      const before = snapshot(store);
      await relistWithChange(server);
      await converged();
      await until(() => [...before].every(([k, o]) => store.getByKey(k) !== o), "all new");
      for (const [key, obj] of before) {
        if (key !== "fx/cm-1") assert.deepEqual(store.getByKey(key), obj);
      }
    },
  );
  const lw: ListerWatcher = { list: () => Promise.reject(new Error()), watch: () => ({}) as never };
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  assert.throws(
    () => new Reflector(lw, store, { reuseListed: 5 as never }),
    (e) => e instanceof TypeError && /reuseListed must be a function/.test(e.message),
  );
  await assert.rejects(
    watcher(lw, { reuseListed: "x" as never }).next(),
    (e) => e instanceof TypeError && /reuseListed/.test(e.message),
  );
});

test("Reflector: a store without unchanged still relists (every object the listed copy)", async () => {
  const server = await FakeApiServer.start();
  const abort = new AbortController();
  try {
    for (let i = 0; i < 5; i++) server.create(configMap(`cm-${i}`));
    const changes = new Changes();
    const inner = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
    const store = storeMethodsOf(inner); // only the Store methods, no unchanged
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const reflector = new Reflector(lw, store, {
      ...FAST,
      onError: () => {},
    });
    const done = reflector.run({ signal: abort.signal });
    await reflector.synced;
    await server.waitForWatch();
    const before = snapshot(inner);
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.endWatches();
    await requestsAtLeast(server, "list", 2); // the relist
    await changes.until(() => [...before].every(([k, o]) => inner.getByKey(k) !== o), "all new");
    assert.equal(requestsOf(server, "list").length, 2);
    abort.abort();
    await done;
  } finally {
    abort.abort();
    await server.close();
  }
});

for (const withTransform of [false, true]) {
  const how = withTransform ? "with a transform" : "without a transform";
  test(`Informer ${how}: a relist keeps the cached copy of an unchanged object (without a transform) or transforms each object once (with one), and announces only the changed one`, async () => {
    const server = await FakeApiServer.start();
    const abort = new AbortController();
    try {
      for (let i = 0; i < 5; i++) server.create(configMap(`cm-${i}`));
      const lw = resourceListerWatcher<KubeObject>(new KubeClient({ server: server.url }), {
        apiVersion: "v1",
        resource: "configmaps",
      });
      const transformed: string[] = [];
      const informer = new Informer(lw, {
        ...FAST,
        onError: () => {},
        transform: withTransform
          ? (obj) => {
            transformed.push(obj.metadata.name!);
            return { ...obj, metadata: { ...obj.metadata, labels: { wrapped: "once" } } };
          }
          : undefined,
      });
      const updates: string[] = [];
      const changes = new Changes();
      informer.addEventHandler({
        onUpdate: (_old, obj) => {
          updates.push(obj.metadata.name!);
          changes.notify();
        },
      });
      const done = informer.run({ signal: abort.signal });
      await informer.waitForSync();
      await server.waitForWatch();
      transformed.length = 0;
      const before = informer.indexer.list();
      server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
      server.endWatches();
      server.update(configMap("cm-1", "fx", { changed: "yes" }));
      await changes.until(() => updates.includes("cm-1"), "cm-1's update announced");
      assert.deepEqual(updates, ["cm-1"], "no update for the unchanged");
      if (withTransform) {
        assert.deepEqual(transformed.sort(), ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"], "each once");
        for (const obj of informer.indexer.list()) {
          assert.deepEqual(obj.metadata.labels, { wrapped: "once" });
        }
      } else {
        for (const obj of before) {
          if (obj.metadata.name !== "cm-1") {
            assert.equal(informer.indexer.getByKey(`fx/${obj.metadata.name}`), obj);
          }
        }
      }
      abort.abort();
      await done;
    } finally {
      abort.abort();
      await server.close();
    }
  });
}

test("Informer: reuseListed is not an informer option (its cache decides): a TypeError", () => {
  const lw: ListerWatcher = { list: () => Promise.reject(new Error()), watch: () => ({}) as never };
  assert.throws(
    () => new Informer(lw, { reuseListed: () => undefined } as never),
    (e) => e instanceof TypeError && /reuseListed/.test(e.message),
  );
});

// Items typed as the lister-watcher's: a custom ListerWatcher may ignore reuse.
test("a custom lister-watcher that ignores ListOptions.reuse still lists", async () => {
  const items: KubeObjectLike[] = [{ metadata: { name: "a", uid: "u", resourceVersion: "1" } }];
  const lw: ListerWatcher = {
    list: () =>
      Promise.resolve({ metadata: { resourceVersion: "1" }, items } as unknown as KubeList),
    watch: () => ({}) as never,
  };
  const result = await listAllPages(lw, {
    reuse: () => ({ metadata: { name: "other" } }) as never,
  });
  assert.deepEqual(result.items.map(nameOf), ["a"]);
});

/**
 * A ListerWatcher serving `state.items` through the real list decoder (so
 * `ListOptions.reuse` applies), whose watch stays open until `expire()`
 * ends it with an ERROR 410 event.
 */
function decodingListerWatcher(
  state: { items: Array<KubeObject | string>; rv: string },
  changes = new Changes(),
) {
  let lists = 0;
  let expire: (() => void) | undefined;
  const lw: ListerWatcher = {
    list(opts) {
      lists++;
      changes.notify();
      // an item given as text is sent as it is (JSON.stringify overflows Node's stack on deep ones)
      const items = state.items.map((i) => typeof i === "string" ? i : JSON.stringify(i));
      const bytes = enc.encode(
        `{"kind":"ConfigMapList","metadata":{"resourceVersion":${
          JSON.stringify(state.rv)
        }},"items":[${items.join(",")}]}`,
      );
      return decodeListStream(new Response(bytes).body!, {
        signal: opts.signal,
        reuse: opts.reuse as ((item: unknown) => unknown) | undefined,
      });
    },
    async *watch(opts) {
      opts.onConnected?.();
      const expired = new Promise<boolean>((resolve) => {
        expire = () => resolve(true);
        opts.signal?.addEventListener("abort", () => resolve(false), { once: true });
      });
      changes.notify();
      if (await expired) {
        yield {
          type: "ERROR",
          object: {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: 410,
            reason: "Expired",
          },
        } as never;
      }
    },
  };
  return {
    lw,
    lists: () => lists,
    expire: () => expire?.(),
    /** Resolves once a watch is open (its first call is the first list's). */
    watch: () => changes.until(() => expire !== undefined, "a watch"),
  };
}

const item = (name: string, data: Record<string, string>): KubeObject => ({
  metadata: { name, namespace: "ns", uid: `uid-${name}`, resourceVersion: "5" },
  data,
});

test("Reflector: a relist takes the new content of an object served changed at the same uid and resourceVersion (a default applied on read), and keeps the stored copy of the others", async () => {
  const state = { items: [item("a", { x: "1" }), item("b", { x: "2" })], rv: "10" };
  const changes = new Changes();
  const server = decodingListerWatcher(state, changes);
  const store = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
  const reflector = new Reflector(server.lw, store, { ...FAST, onError: () => {} });
  const abort = new AbortController();
  const done = reflector.run({ signal: abort.signal });
  try {
    await reflector.synced;
    await server.watch();
    const [a, b] = [store.getByKey("ns/a"), store.getByKey("ns/b")];
    state.items = [item("a", { x: "1", defaulted: "yes" }), item("b", { x: "2" })];
    server.expire();
    await changes.until(() => store.getByKey("ns/a") !== a, "a replaced");
    assert.equal(server.lists(), 2, "by one relist");
    assert.deepEqual(store.getByKey("ns/a")!.data, { x: "1", defaulted: "yes" });
    assert.equal(store.getByKey("ns/b"), b, "b unchanged: the stored copy");
  } finally {
    abort.abort();
    await done;
  }
});

test("Reflector and Informer: an object nested deeper than the comparison goes (20,000 levels) is relisted as a new copy, and the relist completes", async () => {
  const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
  const a = JSON.stringify(item("a", {})).slice(0, -1) + `,"spec":${deep}}`;
  for (const kind of ["reflector", "informer"] as const) {
    const state = { items: [a, item("b", { x: "2" })], rv: "10" };
    const changes = new Changes();
    const server = decodingListerWatcher(state, changes);
    const errors: unknown[] = [];
    const onError = (e: unknown) => void errors.push(e);
    const store = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
    const informer = kind === "informer"
      ? new Informer<KubeObject>(server.lw, { ...FAST, onError })
      : undefined;
    // an informer's cache is its own: its announcements say when it changed
    informer?.addEventHandler({ onUpdate: () => changes.notify() });
    const reflector = informer ? undefined : new Reflector(server.lw, store, { ...FAST, onError });
    const read = (key: string) => informer ? informer.indexer.getByKey(key) : store.getByKey(key);
    const abort = new AbortController();
    const done = informer
      ? informer.run({ signal: abort.signal })
      : reflector!.run({ signal: abort.signal });
    try {
      await (informer ? informer.waitForSync() : reflector!.synced);
      await server.watch();
      const [a, b] = [read("ns/a"), read("ns/b")];
      server.expire();
      await changes.until(
        () => read("ns/a") !== a,
        `${kind}: a, too deep to compare, is the new copy`,
      );
      assert.equal(server.lists(), 2, `${kind}: by one relist`);
      assert.equal(read("ns/b"), b, `${kind}: b reused`);
      assert.ok(
        errors.every((e) => e instanceof Error && /410|Expired|gone/i.test(e.message)),
        `${kind}: only the 410 reported`,
      );
    } finally {
      abort.abort();
      await done;
    }
  }
});

test("Reflector: a reuseListed returning null keeps the listed item; reuseListed: null is a TypeError", async () => {
  const state = { items: [item("a", { x: "1" }), item("b", { x: "2" })], rv: "10" };
  const server = decodingListerWatcher(state);
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  const errors: unknown[] = [];
  const reflector = new Reflector(server.lw, store, {
    ...FAST,
    onError: (e) => void errors.push(e),
    reuseListed: () => null as never,
  });
  const abort = new AbortController();
  const done = reflector.run({ signal: abort.signal });
  try {
    await reflector.synced;
    assert.deepEqual(store.listKeys().sort(), ["ns/a", "ns/b"]);
    assert.deepEqual(errors, []);
  } finally {
    abort.abort();
    await done;
  }
  assert.throws(
    () => new Reflector(server.lw, store, { reuseListed: null as never }),
    (e) => e instanceof TypeError && /reuseListed must be a function/.test(e.message),
  );
});

test("Reflector: a relisted item of the wrong kind is reported and left out, never swapped for the stored copy it matches", async () => {
  const state = { items: [item("a", { x: "1" }), item("b", { x: "2" })], rv: "10" };
  const changes = new Changes();
  const server = decodingListerWatcher(state, changes);
  const store = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
  const errors: unknown[] = [];
  const reflector = new Reflector(server.lw, store, {
    ...FAST,
    expectedKind: "ConfigMap",
    onError: (e) => void errors.push(e),
  });
  const abort = new AbortController();
  const done = reflector.run({ signal: abort.signal });
  try {
    await reflector.synced;
    await server.watch();
    const b = store.getByKey("ns/b");
    // the same uid, version and content as the stored a, but of another kind
    state.items = [{ kind: "Secret", ...item("a", { x: "1" }) }, item("b", { x: "2" })];
    server.expire();
    await changes.until(() => store.getByKey("ns/a") === undefined, "a left out");
    assert.equal(server.lists(), 2, "by one relist");
    assert.equal(store.getByKey("ns/b"), b, "b reused");
    const wrong = errors.filter((e) => e instanceof UnexpectedKindError);
    assert.equal(wrong.length, 1, "the wrong kind reported");
    assert.match((wrong[0] as Error).message, /Secret/);
  } finally {
    abort.abort();
    await done;
  }
});

test("watcher: a reuseListed answer that is not a usable item of the expected kind keeps the listed item", async () => {
  const answers: unknown[] = [
    false,
    0,
    "",
    true,
    [],
    { metadata: null },
    { kind: "Secret", metadata: { name: "x" } },
  ];
  for (const answer of answers) {
    const state = { items: [item("a", { x: "1" })], rv: "10" };
    const server = decodingListerWatcher(state);
    const events = watcher(server.lw, {
      ...FAST,
      expectedKind: "ConfigMap",
      onError: () => {},
      reuseListed: () => answer as never,
    });
    const first = await events.next();
    await events.return(undefined);
    assert.ok(!first.done);
    const ev = first.value as { type: string; items?: KubeObject[] };
    assert.equal(ev.type, "LIST", `answer ${JSON.stringify(answer)}`);
    assert.deepEqual(ev.items, [item("a", { x: "1" })], `answer ${JSON.stringify(answer)}`);
  }
});

for (const answer of ["false", "a throw"] as const) {
  test(`Reflector: a store whose unchanged answers ${answer} relists every item (its listed copy), losing none`, async () => {
    const state = { items: [item("a", { x: "1" }), item("b", { x: "2" })], rv: "10" };
    const changes = new Changes();
    const server = decodingListerWatcher(state, changes);
    const inner = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
    let asked = 0;
    // a store of someone else's, with its own idea of what unchanged means
    const store = {
      ...storeMethodsOf(inner),
      unchanged: (_o: KubeObject): boolean => {
        asked++;
        if (answer === "a throw") throw new Error("not that kind of unchanged");
        return false;
      },
    };
    const errors: unknown[] = [];
    const reflector = new Reflector(server.lw, store as never, {
      ...FAST,
      onError: (e) => void errors.push(e),
    });
    const abort = new AbortController();
    const done = reflector.run({ signal: abort.signal });
    try {
      await reflector.synced;
      await server.watch();
      const before = snapshot(inner);
      server.expire();
      await changes.until(() => [...before].every(([k, o]) => inner.getByKey(k) !== o), "relisted");
      assert.equal(server.lists(), 2, "by one relist");
      assert.ok(asked >= 2, "unchanged was asked");
      assert.deepEqual(inner.listKeys().sort(), ["ns/a", "ns/b"]);
      assert.deepEqual(inner.getByKey("ns/a")!.data, { x: "1" });
      assert.ok(
        errors.every((e) => e instanceof Error && /410|Expired|gone/i.test(e.message)),
        "only the 410 reported",
      );
    } finally {
      abort.abort();
      await done;
    }
  });
}

for (const withTransform of [false, true]) {
  const how = withTransform ? "with a transform it is stored, not announced" : "announced";
  test(`Informer: an object relisted changed at the same uid and resourceVersion is ${how}`, async () => {
    const state = { items: [item("a", { x: "1" }), item("b", { x: "2" })], rv: "10" };
    const changes = new Changes();
    const server = decodingListerWatcher(state, changes);
    const informer = new Informer<KubeObject>(server.lw, {
      ...FAST,
      onError: () => {},
      transform: withTransform ? (obj) => ({ ...obj }) : undefined,
    });
    const updates: string[] = [];
    informer.addEventHandler({
      onUpdate: (_old, obj) => {
        updates.push(obj.metadata.name!);
        changes.notify();
      },
    });
    const abort = new AbortController();
    const done = informer.run({ signal: abort.signal });
    try {
      await informer.waitForSync();
      await server.watch();
      const a = informer.indexer.getByKey("ns/a");
      // a at the same version with a default applied on read; b really changed
      const b = { ...item("b", { x: "3" }) };
      b.metadata = { ...b.metadata, resourceVersion: "6" };
      state.items = [item("a", { x: "1", defaulted: "yes" }), b];
      server.expire();
      // announced in the cache's order, a before b, once the relist is in the cache
      await changes.until(() => updates.includes("b"), "b's update delivered");
      assert.equal(server.lists(), 2, "by one relist");
      assert.notEqual(informer.indexer.getByKey("ns/a"), a, "a replaced");
      assert.deepEqual(informer.indexer.getByKey("ns/a")!.data, { x: "1", defaulted: "yes" });
      assert.deepEqual(updates, withTransform ? ["b"] : ["a", "b"]);
    } finally {
      abort.abort();
      await done;
    }
  });
}

/** A store of someone else's: the Store methods of `inner`, and no `unchanged`. */
function storeMethodsOf(inner: Indexer<KubeObject>): Store<KubeObject> {
  return {
    add: (o: KubeObject) => inner.add(o),
    update: (o: KubeObject) => inner.update(o),
    delete: (o: KubeObject) => inner.delete(o),
    list: () => inner.list(),
    listKeys: () => inner.listKeys(),
    get: (o: KubeObject) => inner.get(o),
    getByKey: (k: string) => inner.getByKey(k),
    replace: (items: KubeObject[], rv: string) => inner.replace(items, rv),
    resync: () => {},
  };
}
