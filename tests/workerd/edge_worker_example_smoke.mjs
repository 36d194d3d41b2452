#!/usr/bin/env node
// examples/edge_worker.ts, bundled as a user would and run on workerd with a genuine KV
// namespace binding (run by scripts/test_all.mjs after the npm build):
//   node scripts/build_npm.mjs --no-test && node tests/workerd/edge_worker_example_smoke.mjs
// 1. esbuild bundles the BUILT example (npm/esm/examples/edge_worker.js, which imports the
//    built core and checkpoint entry point) for `--platform=browser`: no warning, no `node:*`.
// 2. workerd runs it with `CHECKPOINTS` a `kvNamespace` binding: workerd turns each KV call into
//    an HTTP request (GET/PUT/DELETE https://fake-host/<key>) to a service, here a tiny
//    in-memory KV server on Node (what miniflare does); outbound network limited to loopback.
// 3. Against the testkit's FakeApiServer: the first GET /objects?labelSelector=… lists once
//    (no checkpoint yet) and answers the matching ConfigMaps; the driver then adds a matching
//    one and deletes one; the second request answers the new state with no full list (only the
//    `limit=1` list and watches) and the KV store holds the checkpoint. Bad selectors give 400.
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
 */
function startKvService() {
  const values = new Map();
  const calls = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://kv");
    const key = decodeURIComponent(url.pathname.slice(1));
    calls.push(`${req.method} ${key}`);
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET") {
        const value = values.get(key);
        if (value === undefined) res.writeHead(404).end();
        else res.writeHead(200, { "content-type": "application/octet-stream" }).end(value);
      } else if (req.method === "PUT") {
        values.set(key, Buffer.concat(chunks));
        res.writeHead(200).end();
      } else if (req.method === "DELETE") {
        values.delete(key);
        res.writeHead(200).end();
      } else res.writeHead(405).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, values, calls }))
  );
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
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "edge"),
    (name = "cron", address = "127.0.0.1:${cronPort}", http = (), service = "cron"),
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

  if (started) {
    let seq = server.requestCount;
    await check("request 1 (no checkpoint): one full list, the objects matching app=web", async () => {
      const r = await query("app=web");
      expect(same(r.items, ["edge/web-1", "edge/web-2"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === "no-checkpoint" && r.complete === true && r.changes === 4, JSON.stringify(r));
      const reqs = kubeRequests(seq);
      expect(reqs.filter((q) => q === "list").length === 1, `requests: ${reqs.join(", ")}`);
      expect(reqs.every((q) => q !== "watch"), `requests: ${reqs.join(", ")}`);
      return `${JSON.stringify(r)}; requests: ${reqs.join(", ")}`;
    });
    await check("the checkpoint is in the KV service, written through the binding", () => {
      const keys = [...kv.values.keys()];
      expect(keys.includes("kube-reflector/v1/configmaps/edge"), `KV keys: ${keys.join(", ")}`);
      const text = kv.values.get("kube-reflector/v1/configmaps/edge").toString("utf8");
      for (const name of ["web-1", "web-2", "db-1", "plain"]) expect(text.includes(`"${name}"`), `${name} not saved`);
      expect(!text.includes("edge-token"), "the token is in the checkpoint");
      return `${keys.length} key(s), ${kv.values.get(keys[0]).length} bytes; KV calls: ${kv.calls.join(", ")}`;
    });

    server.create(cm("web-3", { app: "web", tier: "front" }));
    server.delete(cm("web-1"));
    server.update({ ...server.get(cm("plain")), data: { x: "1" } });
    seq = server.requestCount;
    const putsBefore = kv.calls.filter((c) => c.startsWith("PUT")).length;
    await check("request 2 (changes in between): the new state, with no full list", async () => {
      const r = await query("app=web,tier=front");
      expect(same(r.items, ["edge/web-2", "edge/web-3"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === null && r.complete === true && r.changes === 3, JSON.stringify(r));
      expect(r.resourceVersion === server.resourceVersion, `rv ${r.resourceVersion} ≠ ${server.resourceVersion}`);
      const reqs = kubeRequests(seq);
      expect(!reqs.includes("list"), `a full list: ${reqs.join(", ")}`);
      expect(reqs.includes("list(limit=1)") && reqs.includes("watch"), `requests: ${reqs.join(", ")}`);
      const puts = kv.calls.filter((c) => c.startsWith("PUT")).length - putsBefore;
      expect(puts >= 1, "no new checkpoint was written");
      return `${JSON.stringify(r)}; requests: ${reqs.join(", ")}`;
    });
    seq = server.requestCount;
    await check("request 3 (nothing changed): the same state, no list, no change", async () => {
      const r = await query("app");
      expect(same(r.items, ["edge/db-1", "edge/web-2", "edge/web-3"]), `items ${JSON.stringify(r.items)}`);
      expect(r.listed === null && r.changes === 0 && r.complete === true, JSON.stringify(r));
      const reqs = kubeRequests(seq);
      expect(!reqs.includes("list"), `a full list: ${reqs.join(", ")}`);
      return `requests: ${reqs.join(", ")}`;
    });
    server.create(cm("web-4", { app: "web" }));
    seq = server.requestCount;
    await check("scheduled() catches up and saves: the next request finds nothing new", async () => {
      const res = await fetch(`http://127.0.0.1:${cronPort}/`);
      const outcome = await res.json();
      expect(outcome.outcome === "ok", `scheduled outcome ${JSON.stringify(outcome)}`);
      const reqs = kubeRequests(seq);
      expect(reqs.includes("list(limit=1)") && reqs.includes("watch") && !reqs.includes("list"), `requests: ${reqs}`);
      const r = await query("app=web");
      expect(same(r.items, ["edge/web-2", "edge/web-3", "edge/web-4"]), `items ${JSON.stringify(r.items)}`);
      expect(r.changes === 0 && r.listed === null, JSON.stringify(r));
      return `scheduled requests: ${reqs.join(", ")}`;
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
