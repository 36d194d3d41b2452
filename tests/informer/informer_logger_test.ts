import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { KubeList } from "../../src/api/types.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { Logger } from "../../src/informer/logger.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import type { ErrorContext, ErrorPhase } from "../../src/reflector/watcher_options.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { FakeListerWatcher, FAST, obj, until } from "./_fake_lister_watcher.ts";

/** A lister-watcher whose first `failures` lists are forbidden. */
class ForbiddenFirst extends FakeListerWatcher {
  constructor(public failures = 1) {
    super([obj("a")]);
  }
  override list(options: ListOptions): Promise<KubeList> {
    if (this.failures-- > 0) {
      return Promise.reject(
        new KubeStatusError({
          code: 403,
          status: { reason: "Forbidden", code: 403, message: "no" },
        }),
      );
    }
    return super.list(options);
  }
}

function recordingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    debug: (m) => void lines.push(`debug ${m}`),
    info: (m) => void lines.push(`info ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m) => void lines.push(`error ${m}`),
  };
  return { lines, logger };
}

test("informer passes its name to onError as a third argument; two-argument handlers still work", async () => {
  const seen: [ErrorPhase, ErrorContext | undefined][] = [];
  const twoArgs: ErrorPhase[] = [];
  const a = new Informer(new ForbiddenFirst(), {
    ...FAST,
    name: "pods.prod",
    onError: (_err, phase, context) => void seen.push([phase, context]),
  });
  const b = new Informer(new ForbiddenFirst(), {
    ...FAST,
    name: "b",
    onError: (_err, phase) => void twoArgs.push(phase),
  });
  const ac = new AbortController();
  const runs = [a.run({ signal: ac.signal }), b.run({ signal: ac.signal })];
  await a.waitForSync({ signal: AbortSignal.timeout(3000) });
  await b.waitForSync({ signal: AbortSignal.timeout(3000) });
  ac.abort();
  await Promise.all(runs);
  assert.deepEqual(seen, [["list", { name: "pods.prod" }]]);
  assert.deepEqual(twoArgs, ["list"]);
});

test("informer logger: handled errors to warn without onError, first sync and relists to info", async () => {
  const { lines, logger } = recordingLogger();
  const lw = new ForbiddenFirst();
  const informer = new Informer(lw, { ...FAST, name: "cms", logger });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  await informer.waitForSync({ signal: AbortSignal.timeout(3000) });
  await until(() => lw.liveWatches === 1, "the watch");
  lw.expire();
  await until(() => lw.lists === 2, "the relist");
  ac.abort();
  await done;
  assert.deepEqual(lines.slice(0, 2), [
    "warn [cms] list: 403 Forbidden: no",
    "info [cms] synced: 1 objects",
  ]);
});

test("informer logger: an onError takes the errors, the logger keeps the rest", async () => {
  const { lines, logger } = recordingLogger();
  const errors: ErrorPhase[] = [];
  const informer = new Informer(new ForbiddenFirst(), {
    ...FAST,
    name: "cms",
    logger,
    onError: (_e, phase) => void errors.push(phase),
  });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  await informer.waitForSync({ signal: AbortSignal.timeout(3000) });
  ac.abort();
  await done;
  assert.deepEqual(errors, ["list"]);
  assert.deepEqual(lines, ["info [cms] synced: 1 objects"]);
});

test("informer logger: a logger missing a level is a TypeError; a throwing logger is ignored", async () => {
  assert.throws(
    () => new Informer(new FakeListerWatcher(), { logger: { warn() {} } as unknown as Logger }),
    (err: unknown) => err instanceof TypeError && /logger\.debug/.test(err.message),
  );
  const boom = () => {
    throw new Error("boom");
  };
  const informer = new Informer(new ForbiddenFirst(), {
    ...FAST,
    logger: { debug: boom, info: boom, warn: boom, error: boom },
  });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  await informer.waitForSync({ signal: AbortSignal.timeout(3000) });
  ac.abort();
  await done;
});

test("factory logger: every informer's default, informers created at debug, errors named", async () => {
  const { lines, logger } = recordingLogger();
  const factory = new SharedInformerFactory({
    listerWatcher: () => new ForbiddenFirst(),
    defaults: FAST,
    logger,
  });
  factory.informerFor({ apiVersion: "v1", resource: "pods", labelSelector: "app=web" });
  const ac = new AbortController();
  const done = factory.start({ signal: ac.signal });
  assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(3000)), true);
  ac.abort();
  await done;
  assert.deepEqual(lines, [
    "debug [pods[app=web]] informer created",
    "warn [pods[app=web]] list: 403 Forbidden: no",
    "info [pods[app=web]] synced: 1 objects",
  ]);
  assert.throws(
    () =>
      new SharedInformerFactory({
        listerWatcher: () => new FakeListerWatcher(),
        logger: {} as Logger,
      }),
    TypeError,
  );
});

test("factory onError default gets the informer's name", async () => {
  const seen: (string | undefined)[] = [];
  const factory = new SharedInformerFactory({
    listerWatcher: () => new ForbiddenFirst(),
    defaults: { ...FAST, onError: (_e, _p, context) => void seen.push(context?.name) },
  });
  factory.informerFor({ apiVersion: "v1", resource: "pods" });
  factory.informerFor({ apiVersion: "v1", resource: "configmaps", namespace: "x" });
  const ac = new AbortController();
  const done = factory.start({ signal: ac.signal });
  assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(3000)), true);
  ac.abort();
  await done;
  assert.deepEqual(seen.sort(), ["configmaps.x", "pods"]);
});

/** A lister-watcher whose first list at a specific version is gone (a routine 410). */
class ExpiredFirst extends FakeListerWatcher {
  gone = 1;
  constructor() {
    super([obj("a")]);
  }
  override list(options: ListOptions): Promise<KubeList> {
    if (this.gone-- > 0) {
      return Promise.reject(
        new KubeStatusError({
          code: 410,
          status: { reason: "Expired", code: 410, message: "too old" },
        }),
      );
    }
    return super.list(options);
  }
}

test("a routine 410 that is recovered is not logged as a warning (debug), other errors are", async () => {
  const { lines, logger } = recordingLogger();
  const informer = new Informer(new ExpiredFirst(), { ...FAST, name: "cms", logger });
  const ac = new AbortController();
  const run = informer.run({ signal: ac.signal });
  await informer.waitForSync({ signal: AbortSignal.timeout(3000) });
  ac.abort();
  await run;
  assert.ok(
    lines.some((l) => l.startsWith("debug [cms] list:") && l.includes("410")),
    lines.join("\n"),
  );
  assert.ok(!lines.some((l) => l.startsWith("warn") && l.includes("410")), lines.join("\n"));
});

test("the reflector's default error handler prints nothing for a routine 410 and warns for the rest", async () => {
  const { resolveWatcherOptions } = await import("../../src/reflector/_resolve_watcher_options.ts");
  const warned: string[] = [];
  const original = console.warn;
  console.warn = (m: string) => void warned.push(m);
  try {
    const o = resolveWatcherOptions({}, "cms");
    o.onError(
      new KubeStatusError({ code: 410, status: { reason: "Expired", code: 410 } }),
      "watch",
    );
    o.onError(new KubeStatusError({ code: 500 }), "watch");
  } finally {
    console.warn = original;
  }
  assert.equal(warned.length, 1);
  assert.match(warned[0], /^\[cms\] watch: 500/);
});
