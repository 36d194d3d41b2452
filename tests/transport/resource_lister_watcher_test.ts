import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { WatchDecodeError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isExpired } from "../../src/api/predicates.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import type { ListerWatcher } from "../../src/transport/lister_watcher.ts";
import { bomOffsets, cutAt, startHttpServer, writeChunks } from "./_http_server.ts";

const enc = new TextEncoder();

/** Runs `fn` with a lister-watcher of configmaps on a server answering every request with `body`. */
async function answering(
  body: string | Uint8Array | ((url: string) => Uint8Array[]),
  fn: (lw: ListerWatcher) => Promise<void>,
): Promise<void> {
  const server = await startHttpServer(async (req, res) => {
    const chunks = typeof body === "function"
      ? body(req.url ?? "")
      : [typeof body === "string" ? enc.encode(body) : body];
    await writeChunks(res, chunks);
  });
  try {
    const client = new KubeClient({ server: server.url });
    await fn(resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" }));
  } finally {
    await server.close();
  }
}

async function listError(body: string): Promise<unknown> {
  let error: unknown;
  await answering(body, async (lw) => {
    error = await lw.list({ resourceVersion: "0" }).then(
      (list) => assert.fail(`decoded as a list: ${JSON.stringify(list).slice(0, 200)}`),
      (e) => e,
    );
  });
  return error;
}

async function watchAll(
  lw: ListerWatcher,
): Promise<{ events: WatchEvent[]; error: unknown }> {
  const events: WatchEvent[] = [];
  try {
    for await (const ev of lw.watch({ resourceVersion: "1" })) events.push(ev);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

test("a list answer whose body is a Status is the KubeStatusError it stands for, never an empty list", async () => {
  const cases: Array<[Record<string, unknown>, number]> = [
    [{ status: "Failure", reason: "Expired", message: "too old", code: 410 }, 410],
    [{ status: "Failure", reason: "InternalError", message: "etcd down", code: 500 }, 500],
    [
      {
        status: "Failure",
        reason: "TooManyRequests",
        code: 429,
        details: { retryAfterSeconds: 2 },
      },
      429,
    ],
    [{ status: "Failure", reason: "Weird", code: "503" }, 500],
    [{ status: "Failure", code: 200 }, 500],
    [{ status: "Failure" }, 500],
    [{ status: "Success", code: 200 }, 500],
    [{ status: "Failure", code: 504, details: null, reason: 7, message: {} }, 504],
  ];
  for (const [fields, code] of cases) {
    const status = { kind: "Status", apiVersion: "v1", metadata: {}, ...fields };
    const err = await listError(JSON.stringify(status));
    assert.ok(err instanceof KubeStatusError, `${JSON.stringify(fields)}: ${err}`);
    assert.equal(err.code, code, JSON.stringify(fields));
    assert.deepEqual(err.status, status, "the Status is carried as received");
    assert.match(err.message, /^GET \/api\/v1\/configmaps: /);
    if (code === 410) assert.ok(isExpired(err));
    if (code === 429) assert.equal(err.retryAfterMs, 2000);
  }
});

test("a list whose metadata.resourceVersion or continue is not a string is rejected as malformed", async () => {
  for (
    const metadata of [
      { resourceVersion: 42 },
      { resourceVersion: { v: "1" } },
      { resourceVersion: ["1"] },
      { resourceVersion: true },
      { resourceVersion: "1", continue: 5 },
      { resourceVersion: "1", continue: {} },
    ]
  ) {
    const err = await listError(
      JSON.stringify({ kind: "ConfigMapList", apiVersion: "v1", metadata, items: [] }),
    );
    assert.ok(err instanceof KubeStatusError, `${JSON.stringify(metadata)}: ${err}`);
    assert.equal(err.code, 200);
    assert.match(
      err.message,
      /^GET \/api\/v1\/configmaps: 200: response body is not a Kubernetes list \(metadata\.(resourceVersion|continue) is not a string\)$/,
    );
  }
  for (const metadata of [5, "x", [1], true]) {
    const err = await listError(JSON.stringify({ kind: "ConfigMapList", metadata, items: [] }));
    assert.ok(err instanceof KubeStatusError, `${JSON.stringify(metadata)}: ${err}`);
    assert.match(err.message, /metadata is not an object/);
  }
});

test("a list whose items is not an array is rejected as malformed", async () => {
  for (const items of ['{"a":1}', '"x"', "5", "true", '{"0":{"metadata":{}}}']) {
    const err = await listError(
      `{"kind":"ConfigMapList","metadata":{"resourceVersion":"1"},"items":${items}}`,
    );
    assert.ok(err instanceof KubeStatusError, `${items}: ${err}`);
    assert.equal(err.code, 200);
    assert.match(err.message, /response body is not a Kubernetes list/);
  }
  for (const text of ["[]", '[{"metadata":{}}]', "", "null", "5", '"list"']) {
    const err = await listError(text);
    assert.ok(err instanceof KubeStatusError, `${JSON.stringify(text)}: ${err}`);
  }
});

test("a list keeps items that are not objects for the watcher to judge", async () => {
  const text = '{"kind":"ConfigMapList","metadata":{"resourceVersion":"3"},' +
    '"items":[null,1,"two",[3],{"metadata":{"name":"ok"}},true]}';
  await answering(text, async (lw) => {
    const list = await lw.list({});
    assert.deepEqual(list.items, [null, 1, "two", [3], { metadata: { name: "ok" } }, true]);
    assert.equal(list.metadata.resourceVersion, "3");
  });
  await answering(
    '{"metadata":{"resourceVersion":null,"continue":null},"items":[]}',
    async (lw) => {
      const list = await lw.list({});
      assert.equal(list.metadata.resourceVersion, null, "null reads as absent, as in Go");
    },
  );
});

test("a body without metadata is not a list: {}, a watch event, a list missing it", async () => {
  for (
    const text of [
      "{}",
      '{"kind":"ConfigMapList","items":[]}',
      '{"metadata":null,"items":[]}',
      '{"type":"ADDED","object":{"metadata":{"name":"a"}}}',
    ]
  ) {
    const err = await listError(text);
    assert.ok(err instanceof KubeStatusError, `${text}: ${err}`);
    assert.match(err.message, /response body is not a Kubernetes list \(no metadata\)$/);
  }
});

test("a watch line that is a bare Status is the KubeStatusError it stands for", async () => {
  const added = '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\n';
  const cases: Array<[Record<string, unknown>, number]> = [
    [{ status: "Failure", reason: "Expired", message: "too old", code: 410 }, 410],
    [{ status: "Failure", reason: "InternalError", code: 500 }, 500],
    [{ status: "Failure", reason: "Odd", code: "410" }, 500],
    [{ status: "Success" }, 500],
  ];
  for (const [fields, code] of cases) {
    const status = { kind: "Status", apiVersion: "v1", metadata: {}, ...fields };
    await answering(added + JSON.stringify(status) + "\n" + added, async (lw) => {
      const { events, error } = await watchAll(lw);
      assert.equal(events.length, 1);
      assert.ok(error instanceof KubeStatusError, `${JSON.stringify(fields)}: ${error}`);
      assert.equal(error.code, code);
      assert.deepEqual(error.status, status);
      assert.match(error.message, /^GET \/api\/v1\/configmaps: /);
    });
  }
});

test("a watch event whose object's metadata.resourceVersion is not a string is a WatchDecodeError shape", async () => {
  for (const rv of ["42", '{"v":1}', "[]", "true"]) {
    const line = `{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":${rv}}}}\n`;
    await answering(line, async (lw) => {
      const { events, error } = await watchAll(lw);
      assert.equal(events.length, 0);
      assert.ok(error instanceof WatchDecodeError, `${rv}: ${error}`);
      assert.equal(error.problem, "shape");
    });
  }
  const metaArray = '{"type":"ADDED","object":{"metadata":[]}}\n';
  await answering(metaArray, async (lw) => {
    const { error } = await watchAll(lw);
    assert.ok(error instanceof WatchDecodeError && error.problem === "shape", String(error));
  });
});

/** ConfigMap values holding U+FEFF at the start, the end, alone, twice, next to astral characters. */
const BOM_VALUES = {
  lead: "\uFEFFvalue",
  tail: "value\uFEFF",
  only: "\uFEFF",
  twice: "\uFEFF\uFEFF",
  mixed: "a\uFEFF😀\uFEFFé",
};

function bomConfigMap(name: string, rv: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "x", resourceVersion: rv },
    data: BOM_VALUES,
  };
}

test("U+FEFF in object content survives list and watch bodies cut right before each EF BB BF, over HTTP", async () => {
  const list: KubeList = {
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "9" },
    items: [bomConfigMap("a", "8"), bomConfigMap("b", "9")],
  };
  const listBytes = enc.encode(JSON.stringify(list, null, 1));
  const events: WatchEvent[] = [
    { type: "ADDED", object: bomConfigMap("c", "10") },
    { type: "MODIFIED", object: bomConfigMap("c", "11") },
  ];
  const watchBytes = enc.encode(events.map((e) => JSON.stringify(e) + "\n").join(""));
  const listCuts = bomOffsets(listBytes);
  const watchCuts = bomOffsets(watchBytes);
  assert.ok(listCuts.length >= 14 && watchCuts.length >= 14);
  // Every chunk starts with a BOM: before each, and also after its first and second byte.
  for (const shift of [0, 1, 2]) {
    await answering(
      (url) =>
        url.includes("watch=1")
          ? cutAt(watchBytes, watchCuts.map((c) => c + shift))
          : cutAt(listBytes, listCuts.map((c) => c + shift)),
      async (lw) => {
        assert.deepEqual(await lw.list({}), list, `list, cut ${shift} bytes into each BOM`);
        const got = await watchAll(lw);
        assert.equal(got.error, undefined, String(got.error));
        assert.deepEqual(got.events, events, `watch, cut ${shift} bytes into each BOM`);
      },
    );
  }
});

test("a byte order mark at the very start of a list or watch body is skipped", async () => {
  const list = { kind: "ConfigMapList", metadata: { resourceVersion: "1" }, items: [] };
  const line = '{"type":"ADDED","object":{"metadata":{"name":"\uFEFF"}}}\n';
  await answering(
    (url) => [enc.encode("\uFEFF" + (url.includes("watch=1") ? line : JSON.stringify(list)))],
    async (lw) => {
      assert.deepEqual(await lw.list({}), list);
      const { events, error } = await watchAll(lw);
      assert.equal(error, undefined);
      assert.equal(events[0].object.metadata?.name, "\uFEFF", "only the leading one is skipped");
    },
  );
});

test("list and watch bodies that are not valid UTF-8 give typed errors, never U+FFFD content", async () => {
  const bad = new Uint8Array([0xc3, 0x28]); // a lead byte followed by ASCII
  const head = enc.encode('{"kind":"ConfigMapList","items":[{"metadata":{"name":"');
  const tail = enc.encode('"}}]}');
  const listBody = new Uint8Array([...head, ...bad, ...tail]);
  await answering(listBody, async (lw) => {
    const err = await lw.list({}).catch((e) => e);
    assert.ok(err instanceof KubeStatusError, String(err));
    assert.match(err.message, /response body is not valid UTF-8/);
  });
  const line = enc.encode('{"type":"ADDED","object":{"metadata":{"name":"');
  const watchBody = new Uint8Array([...line, 0xff, ...enc.encode('"}}}\n')]);
  await answering(watchBody, async (lw) => {
    const { events, error } = await watchAll(lw);
    assert.equal(events.length, 0);
    assert.ok(error instanceof WatchDecodeError, String(error));
    assert.equal(error.problem, "encoding");
  });
});
