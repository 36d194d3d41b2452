#!/usr/bin/env node
// The edge-safe kubeconfig entry point, bundled as an edge user's bundler would and run on
// workerd (run by scripts/test_all.mjs after the npm build):
//   node scripts/build_npm.mjs --no-test && node tests/workerd/edge_bundle_smoke.mjs
// 1. esbuild (devDependency) bundles tests/workerd/_edge_worker.js, which imports the BUILT core
//    (npm/esm/mod.js) and npm/esm/kubeconfig_edge.js, for `--platform=browser` with no
//    externals: the bundle must build with no warning, import no `node:*` module and contain
//    no undici; its size is printed next to the core's alone.
// 2. workerd (no compatibility flags, outbound network limited to local addresses) runs the
//    bundle: it parses a kubeconfig from text, connects with its inline token and syncs a
//    Reflector against the testkit's FakeApiServer (on Node); a kubeconfig asking for a custom
//    CA gets a TlsUnsupportedError naming the field, one with a tokenFile a KubeConfigError.
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const esm = join(root, "npm/esm");
const esbuildBin = join(root, "node_modules/.bin/esbuild");
const workerdBin = join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd");
for (
  const [path, hint] of [
    [join(esm, "kubeconfig_edge.js"), "run `node scripts/build_npm.mjs --no-test` first"],
    [esbuildBin, "run `npm ci` (devDependency esbuild)"],
    [workerdBin, "run `npm ci` (devDependency @cloudflare/workerd-linux-64)"],
  ]
) {
  if (!existsSync(path)) {
    console.error(`edge bundle smoke: ${path} is missing; ${hint}`);
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
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

const tmp = mkdtempSync(join(tmpdir(), "edge-bundle-"));
let workerd;
const log = [];
const watchdog = setTimeout(() => {
  console.log("FAIL  global timeout: still running after 60 s");
  workerd?.kill("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
}, 60_000);

/** Bundles `entry` for the browser platform; returns the output, the metafile and esbuild's stderr. */
function bundle(entry, name) {
  const outfile = join(tmp, `${name}.js`);
  const metafile = join(tmp, `${name}.meta.json`);
  const r = spawnSync(esbuildBin, [
    entry,
    "--bundle",
    "--platform=browser",
    "--format=esm",
    "--minify",
    `--metafile=${metafile}`,
    `--outfile=${outfile}`,
    "--log-level=warning",
  ], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`esbuild failed (${r.status ?? r.error}):\n${r.stderr}`);
  return {
    file: outfile,
    code: readFileSync(outfile, "utf8"),
    meta: JSON.parse(readFileSync(metafile, "utf8")),
    stderr: r.stderr.trim(),
  };
}

const server = await (await import(`${esm}/testkit.js`)).FakeApiServer.start({ tokens: ["edge-token"] });
try {
  for (let i = 0; i < 20; i++) {
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `cm-${i}`, namespace: "edge" },
      data: { i: String(i) },
    });
  }
  server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "elsewhere", namespace: "other" } });

  let worker;
  const bundled = await check(
    "esbuild bundles kubeconfig/edge + core for --platform=browser: no warning, no node:*, no undici",
    () => {
      worker = bundle(join(root, "tests/workerd/_edge_worker.js"), "worker");
      expect(worker.stderr === "", `esbuild printed warnings:\n${worker.stderr}`);
      const inputs = Object.keys(worker.meta.inputs);
      const bad = inputs.filter((p) => /undici|^node:/.test(p));
      expect(bad.length === 0, `bundled inputs that are not edge-safe: ${bad.join(", ")}`);
      const imports = Object.values(worker.meta.inputs).flatMap((i) => i.imports.map((x) => x.path));
      const nodeImports = imports.filter((p) => p.startsWith("node:"));
      expect(nodeImports.length === 0, `imports of node:* modules: ${nodeImports.join(", ")}`);
      const inCode = worker.code.match(/(?:from|import|require)\s*\(?\s*["']node:[^"']*["']/g) ?? [];
      expect(inCode.length === 0, `node:* imports in the output: ${inCode.join(", ")}`);
      // undici may appear only in the two error messages that tell Node and Deno users where it is.
      const mentions = worker.code
        .replace("custom TLS goes through the undici package", "")
        .replace("does it with npm:undici.", "")
        .match(/.{0,40}undici.{0,40}/gi) ?? [];
      expect(mentions.length === 0, `the output mentions undici outside its error messages: ${mentions}`);
      const core = bundle(join(esm, "mod.js"), "core");
      const size = (b) => `${kb(b.code.length)} (${kb(gzipSync(b.code).length)} gzip)`;
      const yaml = inputs.filter((p) => p.includes("node_modules/yaml/"))
        .reduce((n, p) => n + worker.meta.inputs[p].bytes, 0);
      return `${size(worker)} minified with kubeconfig/edge, the core alone ${size(core)}; ` +
        `${inputs.length} modules, yaml's sources ${kb(yaml)}`;
    },
  );

  const port = await new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
  const version = /workerd (\d{4}-\d{2}-\d{2})/.exec(
    spawnSync(workerdBin, ["--version"], { encoding: "utf8" }).stdout ?? "",
  )?.[1];
  let url;
  const started = bundled && await check(`workerd ${version} starts with the bundle (no compatibility flags)`, async () => {
    expect(version, "workerd --version failed");
    writeFileSync(join(tmp, "edge.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "edge", worker = .edgeWorker),
    # workerd's default outbound blocks local addresses; the FakeApiServer is on 127.0.0.1.
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "edge")],
);
const edgeWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${version}",
  globalOutbound = "loopback",
);
`);
    workerd = spawn(workerdBin, ["serve", join(tmp, "edge.capnp")], { stdio: ["ignore", "pipe", "pipe"] });
    workerd.stdout.on("data", (d) => log.push(String(d)));
    workerd.stderr.on("data", (d) => log.push(String(d)));
    url = `http://127.0.0.1:${port}`;
    for (const start = Date.now();;) {
      if (workerd.exitCode !== null) throw new Error(`workerd exited (${workerd.exitCode}):\n${log.join("")}`);
      try {
        await fetch(url);
        return url;
      } catch {
        if (Date.now() - start > 15_000) throw new Error(`workerd did not answer in 15 s:\n${log.join("")}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });

  const kubeconfig = ({ cluster = {}, user = { token: "edge-token" } } = {}) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "edge",
      clusters: [{ name: "fake", cluster: { server: server.url, ...cluster } }],
      users: [{ name: "worker", user }],
      contexts: [{ name: "edge", context: { cluster: "fake", user: "worker", namespace: "edge" } }],
    });
  const post = async (body) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the worker answered ${res.status}: ${text}`);
    return JSON.parse(text);
  };

  if (started) {
    await check("on workerd: a kubeconfig from text with an inline token syncs a Reflector", async () => {
      const r = await post({ kubeconfig: kubeconfig() });
      const want = server.objects({ resource: "configmaps", namespace: "edge" })
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
      expect(r.namespace === "edge" && r.via === "native", `namespace ${r.namespace}, via ${r.via}`);
      expect(JSON.stringify(r.keys) === JSON.stringify(want), `store ${r.keys} ≠ server ${want}`);
      const auth = server.requests.filter((q) => q.verb === "list").map((q) => q.authorization);
      expect(auth.length > 0 && auth.every((a) => a === "Bearer edge-token"), `authorization: ${auth}`);
      return `${r.keys.length} ConfigMaps of namespace edge at resourceVersion ${r.lastSyncResourceVersion}`;
    });
    await check("on workerd: a custom CA gives a TlsUnsupportedError naming the field", async () => {
      const ca = Buffer.from(readFileSync(join(root, "tests/workerd/_test_ca.pem"))).toString("base64");
      const r = await post({ kubeconfig: kubeconfig({ cluster: { "certificate-authority-data": ca } }), expectError: true });
      expect(r.name === "TlsUnsupportedError", `${r.name}: ${r.message}`);
      expect(r.message.includes("workerd") && r.message.includes("clusters[fake].cluster.certificate-authority-data"), r.message);
      return r.message.slice(0, 100) + "…";
    });
    await check("on workerd: a tokenFile gives a KubeConfigError naming the field", async () => {
      const r = await post({ kubeconfig: kubeconfig({ user: { tokenFile: "/var/run/token" } }), expectError: true });
      expect(r.name === "KubeConfigError" && r.field === "users[worker].user.tokenFile", `${r.name} ${r.field}: ${r.message}`);
      return r.message;
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
  rmSync(tmp, { recursive: true, force: true });
}
if (results.failed > 0 && log.length > 0) console.log(`--- workerd output:\n${log.join("").trimEnd()}`);
clearTimeout(watchdog);
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exitCode = results.failed > 0 ? 1 : 0;
