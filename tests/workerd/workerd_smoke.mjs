#!/usr/bin/env node
// Smoke test of the BUILT npm package's core (npm/esm/mod.js) on workerd,
// Cloudflare's runtime (devDependency @cloudflare/workerd-linux-64, binary
// inside the package), run by scripts/test_all.mjs after the npm build:
//   node scripts/build_npm.mjs --no-test && node tests/workerd/workerd_smoke.mjs
// Node runs the testkit's FakeApiServer (node:http) with 50 ConfigMaps and a
// control endpoint; workerd runs tests/workerd/_worker.js, which imports the
// core module by module, unbundled, with no compatibility flags (no
// nodejs_compat), and drives a Reflector against the FakeApiServer: list +
// sync, live changes, a 410 ERROR event (relist), abort. The worker's
// outbound network allows only local addresses (workerd blocks them by
// default). The kubeconfig entry point is not loaded: it needs `yaml` from
// npm and, for files, exec and TLS, Node modules.
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const esm = join(root, "npm/esm");
const workerdBin = join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd");
const workerFile = join(root, "tests/workerd/_worker.js");
for (
  const [path, hint] of [
    [join(esm, "mod.js"), "run `node scripts/build_npm.mjs --no-test` first"],
    [workerdBin, "run `npm ci` (devDependency @cloudflare/workerd-linux-64)"],
  ]
) {
  if (!existsSync(path)) {
    console.error(`workerd smoke: ${path} is missing; ${hint}`);
    process.exit(1);
  }
}

const results = { passed: 0, failed: 0 };
const summary = () => `${results.passed} passed, ${results.failed} failed`;

/** Runs one check, printing `ok`/`FAIL`, its name and duration. */
async function check(name, fn) {
  const start = performance.now();
  try {
    const note = await fn();
    results.passed++;
    const ms = Math.round(performance.now() - start);
    console.log(`ok    ${name} (${ms} ms)${note ? ` — ${note}` : ""}`);
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
/** Resolves `promise`, or rejects with `what` after `ms`. */
async function within(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((
        _,
        reject,
      ) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- workerd, its version, and the module graph it loads --------------------------------------

const versionRun = spawnSync(workerdBin, ["--version"], { encoding: "utf8" });
const version = /workerd (\d{4}-\d{2}-\d{2})/.exec(versionRun.stdout ?? "")?.[1];
if (!version) {
  console.error(
    `workerd smoke: \`${workerdBin} --version\` failed: ${versionRun.error ?? versionRun.stderr}`,
  );
  process.exit(1);
}
console.log(
  `workerd smoke: workerd ${version} (compatibilityDate ${version}, no compatibility flags); Node ${process.version} drives it`,
);

let workerd; // the child process, once started
let tmp; // the directory holding the generated config
const cleanup = async () => {
  if (workerd && workerd.exitCode === null && workerd.signalCode === null) {
    const exited = new Promise((r) => workerd.once("exit", r));
    workerd.kill("SIGTERM");
    const t = setTimeout(() => workerd.kill("SIGKILL"), 2_000);
    await exited;
    clearTimeout(t);
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
};

const GLOBAL_TIMEOUT_MS = 60_000;
const watchdog = setTimeout(async () => {
  results.failed++;
  console.log(`FAIL  global timeout: still running after ${GLOBAL_TIMEOUT_MS / 1000} s`);
  console.log(summary());
  workerd?.kill("SIGKILL");
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, GLOBAL_TIMEOUT_MS);

/**
 * The ES modules reachable from `entry` through relative imports (static and
 * dynamic), as repository-relative paths; `bare` collects every other
 * specifier (node:*, npm packages), which a web-standard core must not have.
 */
function moduleGraph(entry) {
  const seen = new Set();
  const bare = new Set();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    // tsc output: drop block comments (JSDoc examples contain imports) and whole-line comments.
    const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(
      /^\s*\/\/.*$/gm,
      "",
    );
    const specifiers = [
      ...code.matchAll(
        /(?:^|[;}\n])\s*(?:import|export)\s+(?:[\w$*{},\s]+?\s+from\s*)?["']([^"']+)["']/g,
      ),
      ...code.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1]);
    for (const s of specifiers) {
      if (s.startsWith("./") || s.startsWith("../")) todo.push(join(dirname(file), s));
      else bare.add(`${relative(root, file)} → ${s}`);
    }
  }
  return { files: [...seen].map((f) => relative(root, f)), bare: [...bare] };
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Writes the capnp config: the worker's modules, and an outbound network that allows local addresses. */
function writeConfig(dir, modules, port) {
  const capnpString = (s) => JSON.stringify(s); // paths here are plain ASCII
  const list = modules
    .map((m) =>
      `      (name = ${capnpString(m)}, esModule = embed ${
        capnpString(relative(dir, join(root, m)))
      }),`
    )
    .join("\n");
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "smoke", worker = .smokeWorker),
    # workerd's default outbound blocks private and local addresses; the FakeApiServer is on 127.0.0.1.
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "smoke")],
);
const smokeWorker :Workerd.Worker = (
  modules = [
${list}
  ],
  compatibilityDate = "${version}",
  globalOutbound = "loopback",
);
`;
  const file = join(dir, "workerd_smoke.capnp");
  writeFileSync(file, config);
  return file;
}

/** Starts workerd on a free loopback port; resolves with its URL once it answers HTTP. */
async function startWorkerd(modules, log) {
  for (let attempt = 1;; attempt++) {
    const port = await freePort();
    const config = writeConfig(tmp, modules, port);
    workerd = spawn(workerdBin, ["serve", config], { stdio: ["ignore", "pipe", "pipe"] });
    workerd.stdout.on("data", (d) => log.push(String(d)));
    workerd.stderr.on("data", (d) => log.push(String(d)));
    const exited = new Promise((r) =>
      workerd.once("exit", (code, signal) => r(`exited (${code ?? signal})`))
    );
    const url = `http://127.0.0.1:${port}`;
    const start = Date.now();
    for (;;) {
      const state = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r(undefined), 50)),
      ]);
      if (state) {
        if (attempt < 3 && /address.*in use/i.test(log.join(""))) break; // the port was taken meanwhile: retry
        throw new Error(`workerd ${state}:\n${log.join("")}`);
      }
      try {
        await fetch(url, { method: "GET" });
        return url;
      } catch {
        if (Date.now() - start > 15_000) {
          throw new Error(`workerd did not answer on ${url} in 15 s:\n${log.join("")}`);
        }
      }
    }
  }
}

// ---- the control endpoint the worker posts to between phases ---------------------------------

function controlServer() {
  const posts = [];
  const waiters = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const post = {
      body: JSON.parse(body),
      reply: (order) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(order));
      },
    };
    const waiter = waiters.shift();
    if (waiter) waiter(post);
    else posts.push(post);
  });
  return {
    server,
    next:
      () => (posts.length > 0
        ? Promise.resolve(posts.shift())
        : new Promise((r) => waiters.push(r))),
  };
}

// ---- the run -----------------------------------------------------------------------------------

const { FakeApiServer } = await import(`${esm}/testkit.js`);
const configMap = (name, data = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "fx", labels: { app: "demo" } },
  data,
});
const ref = (name) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name });
const serverKeys = (server) =>
  server
    .objects({ resource: "configmaps" })
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`)
    .sort();
// A fresh list is a list request without a continue token (later pages carry one).
const freshLists = (server) =>
  server.requests.filter((r) => r.verb === "list" && !r.query.get("continue"));
const sameList = (a, b) => a.length === b.length && a.every((k, i) => k === b[i]);
const diff = (have, want) =>
  `missing ${JSON.stringify(want.filter((k) => !have.includes(k)))}, extra ${
    JSON.stringify(have.filter((k) => !want.includes(k)))
  }`;

const server = await FakeApiServer.start({});
const control = controlServer();
const log = [];
try {
  for (let i = 0; i < 50; i++) server.create(configMap(`cm-${i}`, { i: String(i) }));
  await new Promise((r) => control.server.listen(0, "127.0.0.1", r));
  const controlUrl = `http://127.0.0.1:${control.server.address().port}/control`;
  tmp = mkdtempSync(join(tmpdir(), "workerd-smoke-"));

  const graph = moduleGraph(workerFile);
  const graphOk = await check(
    "module graph: the worker + npm/esm/mod.js import only relative modules",
    () => {
      expect(
        graph.bare.length === 0,
        `non-relative imports (not loadable on workerd without nodejs_compat):\n${
          graph.bare.join("\n")
        }`,
      );
      return `${graph.files.length - 1} core modules, loaded unbundled`;
    },
  );

  let url;
  const started = graphOk &&
    (await check(
      "workerd starts with the worker (outbound network: local addresses only)",
      async () => {
        url = await startWorkerd(graph.files, log);
        return url;
      },
    ));

  if (started) {
    const response = fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ server: server.url, control: controlUrl }),
    }).then(async (r) => ({ status: r.status, body: await r.text() }));
    // Whichever comes first: the worker's next phase report, or its final answer (on failure).
    const nextPost = async (what) => {
      const post = await within(
        Promise.race([control.next(), response.then((r) => ({ final: r }))]),
        15_000,
        what,
      );
      if (post.final) {
        throw new Error(`the worker answered ${post.final.status} instead: ${post.final.body}`);
      }
      return post;
    };
    let syncedRv;
    let post;

    const okSynced = await check(
      "reflector on workerd: lists and syncs from the FakeApiServer (fetch to 127.0.0.1)",
      async () => {
        post = await nextPost("the worker to report sync");
        const b = post.body;
        expect(b.phase === "synced" && b.hasSynced, `phase ${b.phase}, hasSynced ${b.hasSynced}`);
        expect(
          sameList(b.store, serverKeys(server)),
          `store ≠ server: ${diff(b.store, serverKeys(server))}`,
        );
        expect(b.namespaceIndexSize === 50, `namespace index has ${b.namespaceIndexSize}, want 50`);
        const lists = freshLists(server).length;
        expect(lists === 1, `${lists} lists, want 1`);
        return `50 objects, server ${server.url}`;
      },
    );

    const okChanges = okSynced &&
      (await check(
        "reflector on workerd: applies adds, updates and deletes from the watch",
        async () => {
          await server.waitForWatch({ timeoutMs: 5_000 });
          server.create(configMap("new"));
          server.update(configMap("cm-1", { changed: "yes" }));
          server.update(configMap("cm-7", { changed: "too" }));
          server.delete(ref("cm-2"));
          post.reply({ action: "expect", expect: serverKeys(server), next: "changes" });
          post = await nextPost("the worker's store to take the changes");
          expect(post.body.phase === "changes", `phase ${post.body.phase}`);
          expect(
            sameList(post.body.store, serverKeys(server)),
            `store ≠ server: ${diff(post.body.store, serverKeys(server))}`,
          );
          expect(
            freshLists(server).length === 1,
            `${freshLists(server).length} fresh lists, want 1 (no relist yet)`,
          );
          syncedRv = post.body.lastSyncResourceVersion;
          return `${post.body.store.length} objects`;
        },
      ));

    const okRelist = okChanges &&
      (await check("reflector on workerd: relists after a 410 ERROR event mid-watch", async () => {
        server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
        server.endWatches();
        server.create(configMap("after-410"));
        server.delete(ref("cm-3"));
        post.reply({ action: "expect", expect: serverKeys(server), next: "after-410" });
        post = await nextPost("the worker's store after the 410");
        expect(
          sameList(post.body.store, serverKeys(server)),
          `store ≠ server: ${diff(post.body.store, serverKeys(server))}`,
        );
        const relists = freshLists(server).slice(1);
        expect(relists.length === 1, `${relists.length} relists, want 1`);
        const rv = relists[0].query.get("resourceVersion");
        expect(rv === syncedRv, `relist at resourceVersion ${rv}, want ${syncedRv}`);
        expect(
          post.body.errors.some((e) => e.name === "KubeStatusError" && e.status === 410),
          `no KubeStatusError 410 reported: ${JSON.stringify(post.body.errors)}`,
        );
        return `relisted at resourceVersion ${rv}`;
      }));

    if (okRelist) post.reply({ action: "abort" });
    else if (post) post.reply({ action: "abort" }); // let the worker finish either way

    await check(
      "reflector on workerd: abort makes run() resolve; answer = FakeApiServer.objects()",
      async () => {
        const final = await within(response, 10_000, "the worker's answer");
        expect(final.status === 200, `worker answered ${final.status}: ${final.body}`);
        const result = JSON.parse(final.body);
        expect(result.runOutcome === "resolved", `run() ${result.runOutcome}`);
        const have = result.items.map((o) => `${o.key}@${o.resourceVersion}`).sort();
        const want = serverKeys(server);
        expect(sameList(have, want), `store ≠ server: ${diff(have, want)}`);
        await server.waitFor(() => server.openWatches === 0, { timeoutMs: 5_000 });
        return `${have.length} keys with resourceVersions equal, 0 open watches`;
      },
    );
  }
} catch (err) {
  results.failed++;
  console.log(`FAIL  setup or teardown: ${err?.stack ?? err}`);
} finally {
  await cleanup();
  await new Promise((r) => control.server.close(r));
  control.server.closeAllConnections?.();
  await server.close();
}
if (results.failed > 0 && log.length > 0) {
  console.log(`--- workerd output:\n${log.join("").trimEnd()}`);
}

clearTimeout(watchdog);
console.log(summary());
process.exitCode = results.failed > 0 ? 1 : 0;
