#!/usr/bin/env node
// examples/edge_worker.ts, bundled as a user would and run on workerd with a genuine KV
// namespace binding (run by scripts/test_all.mjs after the npm build):
//   node scripts/build_npm.mjs --no-test && node tests/workerd/edge_worker_example_smoke.mjs
// 1. esbuild bundles the BUILT example (npm/esm/examples/edge_worker.js, which imports the
//    built core and checkpoint entry point) for `--platform=browser`: no warning, no `node:*`.
// 2. workerd runs it with `CHECKPOINTS` a `kvNamespace` binding: workerd turns each KV call into
//    an HTTP request (GET/PUT/DELETE https://fake-host/<key>) to a service, here a tiny
//    in-memory KV server on Node (what miniflare does); outbound network limited to loopback.
// 3. Against the testkit's FakeApiServer (4 named ConfigMaps and 100 bulk ones, about 60 KB):
//    the first GET /objects?labelSelector=… lists once (no checkpoint yet) and answers the
//    matching ConfigMaps; the KV service then holds the checkpoint in format 2 (a head at the
//    key naming a snapshot piece `<key>/base/<gen>`, later log pieces `<key>/log/<gen>`, each
//    value a split-value manifest line, then the value inline or in `<key>/parts/<gen>/<i>`),
//    decoded here and compared with the server. Later requests answer the new state with no
//    full list (only the `limit=1` list and watches) and write only what changed: a log piece
//    and the head (bytes far below the snapshot's) after changes, nothing with no change.
//    5 concurrent requests after one change give 5 equal, complete answers and one head write;
//    every write of the head key over the run comes at least 1000 ms after the one before
//    (Workers KV's one write per second per key), as the KV service saw them. A probe worker
//    checks that workerd hands every request the same `env` binding objects (the per-binding
//    lock and write spacing rely on it). Bad selectors give 400.
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const esm = join(root, "npm/esm");
const example = join(esm, "examples/edge_worker.js");
const esbuildBin = join(root, "node_modules/.bin/esbuild");
const workerdBin = join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd");
for (
  const [path, hint] of [
    [example, "run `node scripts/build_npm.mjs --no-test` first"],
    [esbuildBin, "run `npm ci` (devDependency esbuild)"],
    [workerdBin, "run `npm ci` (devDependency @cloudflare/workerd-linux-64)"],
  ]
) {
  if (!existsSync(path)) {
    console.error(`edge worker example smoke: ${path} is missing; ${hint}`);
    process.exit(1);
  }
}

const results = { passed: 0, failed: 0 };
async function check(name, fn) {
  const start = performance.now();
  try {
    const note = await fn();
    results.passed++;
    console.log(`ok    ${name} (${Math.round(performance.now() - start)} ms)${note ? ` — ${note}` : ""}`);
    return true;
  } catch (err) {
    results.failed++;
    console.log(`FAIL  ${name}\n      ${String(err?.stack ?? err).split("\n").join("\n      ")}`);
    return false;
  }
}
function expect(cond, message) {
  if (!cond) throw new Error(message);
}

const tmp = mkdtempSync(join(tmpdir(), "edge-example-"));
let workerd;
const log = [];
const watchdog = setTimeout(() => {
  console.log("FAIL  global timeout: still running after 60 s");
  workerd?.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, 60_000);

/** A free loopback port. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The service behind workerd's `kvNamespace` binding: workerd sends
 * GET/PUT/DELETE to `/<urlencoded key>` (plus query parameters such as
 * `urlencoded=true`); a missing key is a 404. Values are kept as bytes.
 * `ops` records every call: method, key, when it arrived (`performance.now()`,
 * as its headers came in) and the bytes of the value written or read.
 */
function startKvService() {
  const values = new Map();
  const calls = [];
  const ops = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://kv");
    const key = decodeURIComponent(url.pathname.slice(1));
    const op = { method: req.method, key, t: performance.now(), bytes: 0 };
    calls.push(`${req.method} ${key}`);
    ops.push(op);
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET") {
        const value = values.get(key);
        if (value === undefined) res.writeHead(404).end();
        else {
          op.bytes = value.length;
          res.writeHead(200, { "content-type": "application/octet-stream" }).end(value);
        }
      } else if (req.method === "PUT") {
        const value = Buffer.concat(chunks);
        op.bytes = value.length;
        values.set(key, value);
        res.writeHead(200).end();
      } else if (req.method === "DELETE") {
        values.delete(key);
        res.writeHead(200).end();
      } else res.writeHead(405).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, values, calls, ops }))
  );
}

/** The checkpoint's key in the KV namespace: the example's prefix and key. */
const HEAD_KEY = "kube-reflector/v1/configmaps/edge";

/**
 * A value as kvCheckpointStorage stores it (src/checkpoint/kv_checkpoint_storage.ts): a
 * manifest line (`{"format":"kube-reflector-split-value",…,"generation","parts","bytes"}`),
 * then the value itself when `parts` is 0, else the value in `<key>/parts/<generation>/<i>`.
 * Returns the value's bytes and the KV keys that hold it.
 */
function storedValue(values, key) {
  const raw = values.get(key);
  if (raw === undefined) throw new Error(`no value at ${key}`);
  const newline = raw.indexOf(10);
  expect(newline > 0, `${key}: no manifest line`);
  const manifest = JSON.parse(raw.subarray(0, newline).toString("utf8"));
  expect(manifest.format === "kube-reflector-split-value", `${key}: not a split-value manifest`);
  const keys = [key];
  let bytes;
  if (manifest.parts === 0) bytes = raw.subarray(newline + 1);
  else {
    const parts = [];
    for (let i = 0; i < manifest.parts; i++) {
      const partKey = `${key}/parts/${manifest.generation}/${i}`;
      const part = values.get(partKey);
      expect(part !== undefined, `${key}: part ${partKey} is missing`);
      parts.push(part);
      keys.push(partKey);
    }
    bytes = Buffer.concat(parts);
  }
  expect(bytes.length === manifest.bytes, `${key}: ${bytes.length} bytes, the manifest says ${manifest.bytes}`);
  return { bytes, keys, parts: manifest.parts };
}

/** JSON lines of a text that ends with a newline. */
const jsonLines = (text, what) => {
  expect(text.endsWith("\n"), `${what} does not end with a newline`);
  return text.slice(0, -1).split("\n").map((l) => JSON.parse(l));
};

/**
 * The checkpoint in the KV service, decoded as the library stores it (format 2, see
 * src/checkpoint/_head.ts): the head at HEAD_KEY, its base piece (a version 1 checkpoint:
 * header, one object per line, end marker) and its log pieces (header, `{k, o?}` per change,
 * end marker), applied in order. Returns the head, the object keys (`namespace/name`), the
 * sizes of the pieces and every KV key the checkpoint uses.
 */
function storedCheckpoint(values) {
  const head = storedValue(values, HEAD_KEY);
  const [first, end] = jsonLines(head.bytes.toString("utf8"), "the head");
  expect(
    first.format === "kube-reflector-checkpoint" && first.version === 2 && end?.end === "kube-reflector-checkpoint",
    `the head is not a format 2 head: ${head.bytes.toString("utf8").slice(0, 200)}`,
  );
  expect(first.base && /^[0-9a-f]{16}$/.test(first.base.gen), `the head names no base: ${JSON.stringify(first)}`);
  const keys = new Set(head.keys);
  const base = storedValue(values, `${HEAD_KEY}/base/${first.base.gen}`);
  base.keys.forEach((k) => keys.add(k));
  const baseLines = jsonLines(base.bytes.toString("utf8"), "the base");
  const [header, ...rest] = baseLines;
  const trailer = rest.pop();
  expect(header.format === "kube-reflector-checkpoint" && header.version === 1, "the base is not a v1 checkpoint");
  expect(trailer?.end === "kube-reflector-checkpoint" && trailer.count === rest.length, "the base's end marker");
  expect(base.bytes.length === first.base.bytes, `the base: ${base.bytes.length} bytes, the head says ${first.base.bytes}`);
  const objects = new Map(rest.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  const logs = [];
  for (const entry of first.log) {
    const piece = storedValue(values, `${HEAD_KEY}/log/${entry.gen}`);
    piece.keys.forEach((k) => keys.add(k));
    const [h, ...changes] = jsonLines(piece.bytes.toString("utf8"), `log ${entry.gen}`);
    const t = changes.pop();
    expect(h.format === "kube-reflector-checkpoint-log" && t?.end === "kube-reflector-checkpoint-log", "a log piece");
    expect(changes.length === entry.count && h.from === entry.from && h.to === entry.to, `log ${entry.gen}`);
    for (const c of changes) c.o === undefined ? objects.delete(c.k) : objects.set(c.k, c.o);
    logs.push({ ...entry, keys: changes.map((c) => `${c.o === undefined ? "-" : "+"}${c.k}`) });
  }
  return {
    head: first,
    headBytes: head.bytes.length,
    baseBytes: base.bytes.length,
    baseParts: base.parts,
    names: [...objects.keys()].sort(),
    logs,
    keys,
  };
}

const { FakeApiServer } = await import(`${esm}/testkit.js`);
const server = await FakeApiServer.start({ tokens: ["edge-token"] });
const kv = await startKvService();
const cm = (name, labels) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "edge", labels } });
try {
  server.create(cm("web-1", { app: "web" }));
  server.create(cm("web-2", { app: "web", tier: "front" }));
  server.create(cm("db-1", { app: "db" }));
  server.create(cm("plain"));
  // the bulk of the snapshot (no `app` label: no query below matches them), so that what a
  // save of a few changes writes can be told from what a save of everything writes
  const BULK = 100;
  for (let i = 0; i < BULK; i++) {
    server.create({ ...cm(`bulk-${String(i).padStart(3, "0")}`, { bulk: "yes" }), data: { payload: "x".repeat(400) } });
  }
  const serverNames = () => server.objects({ resource: "configmaps", namespace: "edge" }).map((o) => `edge/${o.metadata.name}`).sort();

  let bundleFile;
  const bundled = await check("esbuild bundles the built example for --platform=browser: no warning, no node:*", () => {
    bundleFile = join(tmp, "worker.js");
    const metafile = join(tmp, "meta.json");
    const r = spawnSync(esbuildBin, [
      example,
      "--bundle",
      "--platform=browser",
      "--format=esm",
      "--minify",
      `--metafile=${metafile}`,
      `--outfile=${bundleFile}`,
      "--log-level=warning",
    ], { encoding: "utf8" });
    expect(r.status === 0, `esbuild failed (${r.status ?? r.error}):\n${r.stderr}`);
    expect(r.stderr.trim() === "", `esbuild printed warnings:\n${r.stderr}`);
    const meta = JSON.parse(readFileSync(metafile, "utf8"));
    const imports = Object.values(meta.inputs).flatMap((i) => i.imports.map((x) => x.path));
    const node = imports.filter((p) => p.startsWith("node:"));
    expect(node.length === 0, `imports of node:* modules: ${node.join(", ")}`);
    const code = readFileSync(bundleFile, "utf8");
    return `${(code.length / 1024).toFixed(1)} KB minified, ${Object.keys(meta.inputs).length} modules`;
  });

  const port = await freePort();
  const cronPort = await freePort();
  const probePort = await freePort();
  const version = /workerd (\d{4}-\d{2}-\d{2})/.exec(
    spawnSync(workerdBin, ["--version"], { encoding: "utf8" }).stdout ?? "",
  )?.[1];
  const url = `http://127.0.0.1:${port}`;
  const started = bundled && await check(`workerd ${version} starts the example with a kvNamespace binding`, async () => {
    expect(version, "workerd --version failed");
    writeFileSync(join(tmp, "edge.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "edge", worker = .edgeWorker),
    # the KV namespace's backing service: the in-memory KV server on Node
    (name = "kv", external = (address = "127.0.0.1:${kv.port}", http = ())),
    # workerd's default outbound blocks local addresses; the FakeApiServer is on 127.0.0.1.
    (name = "loopback", network = (allow = ["local"])),
    # test-only: fires the example's scheduled() through a service binding (an experimental
    # flag of this driver alone; the example itself runs with none)
    (name = "cron", worker = (
      modules = [(name = "cron.js", esModule = embed "cron.js")],
      compatibilityDate = "${version}",
      compatibilityFlags = ["service_binding_extra_handlers"],
      bindings = [(name = "EXAMPLE", service = "edge")],
    )),
    # test-only: tells whether a request gets the same env and binding objects as the ones before
    (name = "probe", worker = (
      modules = [(name = "probe.js", esModule = embed "probe.js")],
      compatibilityDate = "${version}",
      bindings = [(name = "CHECKPOINTS", kvNamespace = "kv"), (name = "NAMESPACE", text = "edge")],
    )),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "edge"),
    (name = "cron", address = "127.0.0.1:${cronPort}", http = (), service = "cron"),
    (name = "probe", address = "127.0.0.1:${probePort}", http = (), service = "probe"),
  ],
);
const edgeWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${version}",
  globalOutbound = "loopback",
  bindings = [
    (name = "KUBE_SERVER", text = "${server.url}"),
    (name = "KUBE_TOKEN", text = "edge-token"),
    (name = "NAMESPACE", text = "edge"),
    (name = "CHECKPOINTS", kvNamespace = "kv"),
  ],
);
`);
    writeFileSync(
      join(tmp, "cron.js"),
      `export default { fetch: async (_req, env) => Response.json(await env.EXAMPLE.scheduled({ cron: "* * * * *" })) };`,
    );
    // every request: whether its env and env.CHECKPOINTS are objects seen before (a WeakSet
    // per isolate), after a turn of I/O so that concurrent requests overlap
    writeFileSync(
      join(tmp, "probe.js"),
      `const envs = new WeakSet(), kvs = new WeakSet();
export default { fetch: async (_req, env) => {
  const seen = { env: envs.has(env), kv: kvs.has(env.CHECKPOINTS) };
  envs.add(env); kvs.add(env.CHECKPOINTS);
  await env.CHECKPOINTS.get("probe/none", "arrayBuffer");
  return Response.json(seen);
} };`,
    );
    workerd = spawn(workerdBin, ["serve", "--experimental", join(tmp, "edge.capnp")], { stdio: ["ignore", "pipe", "pipe"] });
    workerd.stdout.on("data", (d) => log.push(String(d)));
    workerd.stderr.on("data", (d) => log.push(String(d)));
    for (const start = Date.now();;) {
      if (workerd.exitCode !== null) throw new Error(`workerd exited (${workerd.exitCode}):\n${log.join("")}`);
      try {
        await fetch(url);
        return;
      } catch {
        if (Date.now() - start > 15_000) throw new Error(`workerd did not answer in 15 s:\n${log.join("")}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  const query = async (selector, status = 200) => {
    const res = await fetch(`${url}/objects?labelSelector=${encodeURIComponent(selector)}`);
    const text = await res.text();
    expect(res.status === status, `the worker answered ${res.status} (wanted ${status}): ${text}`);
    return JSON.parse(text);
  };
  /** The requests the FakeApiServer got since `from`: `list`, `list(limit=1)`, `watch` (ConfigMaps), `get PATH`. */
  const kubeRequests = (from) =>
    server.requests.filter((q) => q.seq > from).map((q) =>
      q.resource !== "configmaps"
        ? `${q.verb} ${q.path}`
        : `${q.verb}${q.query.get("limit") === "1" ? "(limit=1)" : ""}`
    );
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  /** What the KV service got since op `from`: its puts, gets and deletes, bytes written and read. */
  const kvSince = (from) => {
    const ops = kv.ops.slice(from);
    const puts = ops.filter((o) => o.method === "PUT");
    const gets = ops.filter((o) => o.method === "GET");
    return {
      puts,
      gets,
      deletes: ops.filter((o) => o.method === "DELETE"),
      written: puts.reduce((n, o) => n + o.bytes, 0),
      read: gets.reduce((n, o) => n + o.bytes, 0),
    };
  };
  /** A KV key with the checkpoint's key and generations elided: `<key>/log/<gen>`. */
  const shortKey = (k) =>
    k.startsWith(HEAD_KEY) ? `<key>${k.slice(HEAD_KEY.length)}`.replace(/[0-9a-f]{16}/g, "<gen>") : k;
  const putList = (puts) => puts.map((o) => `${shortKey(o.key)} ${o.bytes} B`).join(", ") || "none";
  /** Asserts that `w` wrote one log piece (inline, no parts) then the head, and nothing else. */
  const expectLogAndHead = (w) => {
    expect(
      same(w.puts.map((o) => shortKey(o.key)), ["<key>/log/<gen>", "<key>"]),
      `puts: ${putList(w.puts)} (wanted a log piece, then the head)`,
    );
    expect(w.deletes.length === 0, `deletes: ${w.deletes.map((o) => o.key).join(", ")}`);
  };
  const headPuts = () => kv.ops.filter((o) => o.method === "PUT" && o.key === HEAD_KEY);
  /** The snapshot's size after request 1, in bytes. */
  let snapshotBytes = 0;

  if (started) {
    await check("workerd hands every request (also concurrent ones) the same env.CHECKPOINTS object", async () => {
      // the per-binding lock (saveCheckpoint) and write spacing (kvCheckpointStorage) key on it
      const probe = async () => (await fetch(`http://127.0.0.1:${probePort}/`)).json();
      const seen = [await probe(), ...await Promise.all([probe(), probe(), probe(), probe(), probe()]), await probe()];
      expect(!seen[0].kv, `the first request saw a known binding: ${JSON.stringify(seen)}`);
      expect(seen.slice(1).every((s) => s.kv), `a request got another binding object: ${JSON.stringify(seen)}`);
      return `7 requests (5 concurrent): env.CHECKPOINTS the same object each time; env itself ${
        seen.slice(1).every((s) => s.env) ? "the same" : seen.slice(1).some((s) => s.env) ? "sometimes the same" : "a new object each time"
      }`;
    });

    let seq = server.requestCount;
    let ops = kv.ops.length;
    await check("request 1 (no checkpoint): one full list, the objects matching app=web", async () => {
      const r = await query("app=web");
      expect(same(r.items, ["edge/web-1", "edge/web-2"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === "no-checkpoint" && r.complete === true && r.changes === 4 + BULK, JSON.stringify(r));
      const reqs = kubeRequests(seq);
      expect(reqs.filter((q) => q === "list").length === 1, `requests: ${reqs.join(", ")}`);
      expect(reqs.every((q) => q !== "watch"), `requests: ${reqs.join(", ")}`);
      return `${JSON.stringify({ ...r, items: r.items.length })}; requests: ${reqs.join(", ")}`;
    });
    await check("the checkpoint is in the KV service: a head naming a snapshot piece of every object", () => {
      const keys = [...kv.values.keys()];
      expect(keys.includes(HEAD_KEY), `KV keys: ${keys.join(", ")}`);
      const c = storedCheckpoint(kv.values);
      expect(c.head.log.length === 0 && !c.head.partial, `head: ${JSON.stringify(c.head)}`);
      expect(c.head.resourceVersion === server.resourceVersion, `head at ${c.head.resourceVersion}`);
      expect(same(c.names, serverNames()), `stored ${c.names.length} objects, the server has ${serverNames().length}`);
      for (const name of ["web-1", "web-2", "db-1", "plain"]) expect(c.names.includes(`edge/${name}`), `${name} not saved`);
      for (const [k, v] of kv.values) expect(!v.includes("edge-token"), `the token is in ${k}`);
      snapshotBytes = c.baseBytes;
      const w = kvSince(ops);
      expect(w.puts.at(-1)?.key === HEAD_KEY, `the head was not written last: ${putList(w.puts)}`);
      return `head ${c.headBytes} B → base ${c.baseBytes} B (${c.head.base.count} objects, ${
        c.baseParts ? `${c.baseParts} parts` : "inline"
      }); request 1 wrote ${putList(w.puts)}`;
    });

    server.create(cm("web-3", { app: "web", tier: "front" }));
    server.delete(cm("web-1"));
    server.update({ ...server.get(cm("plain")), data: { x: "1" } });
    seq = server.requestCount;
    ops = kv.ops.length;
    await check("request 2 (3 changes in between): the new state, with no full list; writes a log piece and the head", async () => {
      const r = await query("app=web,tier=front");
      expect(same(r.items, ["edge/web-2", "edge/web-3"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === null && r.complete === true && r.changes === 3, JSON.stringify(r));
      expect(r.resourceVersion === server.resourceVersion, `rv ${r.resourceVersion} ≠ ${server.resourceVersion}`);
      const reqs = kubeRequests(seq);
      expect(!reqs.includes("list"), `a full list: ${reqs.join(", ")}`);
      expect(reqs.includes("list(limit=1)") && reqs.includes("watch"), `requests: ${reqs.join(", ")}`);
      const w = kvSince(ops);
      expectLogAndHead(w);
      expect(w.written * 10 < snapshotBytes, `${w.written} B written, the snapshot is ${snapshotBytes} B`);
      const c = storedCheckpoint(kv.values);
      expect(same(c.names, serverNames()), `stored ${c.names.join(",")}`);
      expect(same(c.logs.at(-1).keys.sort(), ["+edge/plain", "+edge/web-3", "-edge/web-1"]), `log ${c.logs.at(-1).keys}`);
      return `${JSON.stringify(r)}; requests: ${reqs.join(", ")}; wrote ${putList(w.puts)} (snapshot ${snapshotBytes} B)`;
    });
    seq = server.requestCount;
    ops = kv.ops.length;
    await check("request 3 (nothing changed): the same state, no list, no change, nothing written", async () => {
      const r = await query("app");
      expect(same(r.items, ["edge/db-1", "edge/web-2", "edge/web-3"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === null && r.changes === 0 && r.complete === true, JSON.stringify(r));
      const reqs = kubeRequests(seq);
      expect(!reqs.includes("list"), `a full list: ${reqs.join(", ")}`);
      const w = kvSince(ops);
      expect(w.puts.length === 0 && w.deletes.length === 0, `puts: ${putList(w.puts)}; deletes: ${w.deletes.length}`);
      return `requests: ${reqs.join(", ")}; KV: 0 puts, ${w.gets.length} gets (${w.read} B read)`;
    });

    server.update({ ...server.get(cm("db-1")), data: { y: "2" } });
    seq = server.requestCount;
    ops = kv.ops.length;
    await check("request 4 (one change): writes only a small log piece and the head", async () => {
      const r = await query("app=db");
      expect(same(r.items, ["edge/db-1"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === null && r.changes === 1 && r.complete === true, JSON.stringify(r));
      expect(r.resourceVersion === server.resourceVersion, `rv ${r.resourceVersion} ≠ ${server.resourceVersion}`);
      const w = kvSince(ops);
      expectLogAndHead(w);
      expect(w.written * 20 < snapshotBytes, `${w.written} B written, the snapshot is ${snapshotBytes} B`);
      const c = storedCheckpoint(kv.values);
      expect(same(c.logs.at(-1).keys, ["+edge/db-1"]), `log ${c.logs.at(-1).keys}`);
      expect(same(c.names, serverNames()), `stored ${c.names.join(",")}`);
      return `wrote ${putList(w.puts)}: ${w.written} B in all, ${(snapshotBytes / w.written).toFixed(0)}× less than the ${snapshotBytes} B snapshot; the request took ${
        Math.round(w.puts.at(-1).t - kv.ops[ops].t)
      } ms of KV from first call to head write`;
    });

    server.create(cm("web-4", { app: "web" }));
    seq = server.requestCount;
    ops = kv.ops.length;
    await check("scheduled() catches up and saves: the next request finds nothing new", async () => {
      const res = await fetch(`http://127.0.0.1:${cronPort}/`);
      const outcome = await res.json();
      expect(outcome.outcome === "ok", `scheduled outcome ${JSON.stringify(outcome)}`);
      const reqs = kubeRequests(seq);
      expect(reqs.includes("list(limit=1)") && reqs.includes("watch") && !reqs.includes("list"), `requests: ${reqs}`);
      const w = kvSince(ops);
      expectLogAndHead(w);
      const r = await query("app=web");
      expect(same(r.items, ["edge/web-2", "edge/web-3", "edge/web-4"]), `items ${JSON.stringify(r.items)}`);
      expect(r.changes === 0 && r.listed === null, JSON.stringify(r));
      return `scheduled requests: ${reqs.join(", ")}; wrote ${putList(w.puts)}`;
    });

    server.create(cm("web-5", { app: "web" }));
    ops = kv.ops.length;
    await check("5 concurrent requests after one change: 5 equal, complete answers; one log piece, one head write", async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => query("app=web")));
      const want = { resourceVersion: server.resourceVersion, complete: true, items: ["edge/web-2", "edge/web-3", "edge/web-4", "edge/web-5"] };
      for (const a of answers) {
        expect(same({ resourceVersion: a.resourceVersion, complete: a.complete, items: a.items }, want), `answers: ${JSON.stringify(answers)}`);
      }
      const w = kvSince(ops);
      const heads = w.puts.filter((o) => o.key === HEAD_KEY);
      const times = heads.map((o) => `${Math.round(o.t - kv.ops[ops].t)} ms`);
      expect(heads.length === 1, `${heads.length} head writes (at ${times.join(", ")} after the first KV call): ${putList(w.puts)}`);
      expectLogAndHead(w);
      const all = headPuts();
      const gap = all.length > 1 ? Math.round(all.at(-1).t - all.at(-2).t) : undefined;
      return `1 head write of ${heads[0].bytes} B (${gap} ms after the previous head write, from scheduled()); changes seen per answer: ${
        answers.map((a) => a.changes).join(", ")
      }; KV: ${w.gets.length} gets (${w.read} B read), ${w.puts.length} puts`;
    });

    await check("a refused token gives a JSON 500 that names the failure, not the token", async () => {
      server.setTokens(["another-token"]);
      try {
        const r = await query("app=web", 500);
        expect(/^catch-up failed: /.test(r.error) && /401|Unauthorized/i.test(r.error), r.error);
        expect(!JSON.stringify(r).includes("edge-token"), `the token leaked: ${r.error}`);
        return r.error;
      } finally {
        server.setTokens(["edge-token"]);
      }
    });
    await check("a bad selector gives a JSON 400; another path a JSON 404", async () => {
      const r = await query("app=(web", 400);
      expect(/^bad labelSelector: /.test(r.error), r.error);
      const res = await fetch(`${url}/nope`);
      expect(res.status === 404 && typeof (await res.json()).error === "string", `status ${res.status}`);
      return r.error;
    });

    await check("every write of the head key came at least 1000 ms after the one before (as the KV service saw them)", () => {
      const all = headPuts();
      const gaps = all.slice(1).map((o, i) => o.t - all[i].t);
      const short = gaps.filter((g) => g < 1000);
      expect(short.length === 0, `${all.length} head writes, gaps ${gaps.map((g) => g.toFixed(1)).join(", ")} ms`);
      return `${all.length} head writes, gaps ${gaps.map((g) => g.toFixed(1)).join(", ")} ms`;
    });
    await check("the stored checkpoint is the server's state, and every KV key is one of its pieces", () => {
      const c = storedCheckpoint(kv.values);
      expect(same(c.names, serverNames()), `stored ${c.names.length} objects, the server has ${serverNames().length}`);
      expect(c.head.resourceVersion === server.resourceVersion, `head at ${c.head.resourceVersion} ≠ ${server.resourceVersion}`);
      const stray = [...kv.values.keys()].filter((k) => !c.keys.has(k));
      expect(stray.length === 0, `keys no head names: ${stray.join(", ")}`);
      return `${c.keys.size} keys: the head, the base and ${c.logs.length} log pieces (${c.logs.map((l) => l.count).join(" + ")} changes)`;
    });
  }
} catch (err) {
  results.failed++;
  console.log(`FAIL  setup or teardown: ${err?.stack ?? err}`);
} finally {
  if (workerd && workerd.exitCode === null) {
    const exited = new Promise((r) => workerd.once("exit", r));
    workerd.kill("SIGTERM");
    await exited;
  }
  await server.close();
  await new Promise((r) => kv.server.close(r));
  rmSync(tmp, { recursive: true, force: true });
}
if (results.failed > 0 && log.length > 0) console.log(`--- workerd output:\n${log.join("").trimEnd()}`);
clearTimeout(watchdog);
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exitCode = results.failed > 0 ? 1 : 0;
