#!/usr/bin/env node
// The README's test command: prepares the real kube-apiserver for the e2e
// suite (cached), type-checks the entry points with no config (as a URL
// importer would) and every JSDoc example, lints the entry points' public
// documentation (deno doc --lint), runs every test on Deno, then
// builds the npm package and runs the same tests in Node against it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = join(root, "node_modules/.bin/deno");
const steps = [
  ["deno check --no-config (what a URL importer gets)", deno, ["check", "--no-config", "mod.ts", "testkit.ts", "kubeconfig.ts", "kubeconfig_edge.ts", "checkpoint.ts", "checkpoint_file.ts", "checkpoint_deno_kv.ts"]],
  ["deno check (all, with JSDoc examples)", deno, ["check", "--doc", "mod.ts", "testkit.ts", "metrics.ts", "kubeconfig.ts", "kubeconfig_edge.ts", "checkpoint.ts", "checkpoint_file.ts", "checkpoint_deno_kv.ts", "src/", "tests/", "examples/", "benchmarks/"]],
  // Runs every JSDoc example: each asserts its result, against the test kit's fake API server on loopback.
  // (--unstable-kv: the Deno KV checkpoint examples open Deno.openKv(":memory:"); TMPDIR: the file ones use os.tmpdir().)
  // (src/kubeconfig and kubeconfig.ts join once their examples run too.)
  ["deno test --doc (JSDoc examples run)", deno, ["test", "--doc", "--unstable-kv", "--allow-net=127.0.0.1", "--allow-read", "--allow-write", "--allow-env=TMPDIR,TMP,TEMP", "mod.ts", "testkit.ts", "metrics.ts", "kubeconfig.ts", "kubeconfig_edge.ts", "checkpoint.ts", "checkpoint_file.ts", "checkpoint_deno_kv.ts", "src/"]],
  // Every public name documented, no public signature naming a private type (exit 1 on any problem).
  ["deno doc --lint (the entry points' public API)", deno, ["doc", "--lint", "mod.ts", "testkit.ts", "kubeconfig.ts", "metrics.ts", "kubeconfig_edge.ts", "checkpoint.ts", "checkpoint_file.ts", "checkpoint_deno_kv.ts"]],
  // --unstable-kv: tests/checkpoint's Deno KV storage tests (Deno.openKv is unstable in Deno 2).
  ["deno test", deno, ["test", "--unstable-kv", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-run", "--allow-sys", "tests/"]],
  ["npm build + node test", process.execPath, [join(root, "scripts/build_npm.mjs")]],
  // The packed tarball's types in fresh projects: strict, skipLibCheck false, nodenext and bundler, lib ES2023
  // + @types/node / no types at all (Workers-like) / DOM, TypeScript 7, 5.x and 4.7 (cached; about 25 s).
  ["consumer type check (packed tarball, TypeScript 7 / 5 / 4.7)", process.execPath, [join(root, "scripts/check_consumer_types.mjs")]],
  // The packed tarball in a fresh project (require/import of every entry point, metadata,
  // LICENSE, undici an optional peer) and the npm and JSR publish dry runs (about 5-10 s).
  ["package check (npm tarball, npm and JSR publish dry runs)", process.execPath, [join(root, "scripts/check_package.mjs")]],
  // Every ts/js code block of the README and of the docs pages that have any, run as a program on
  // Node (the npm build) and Deno against the test API server (blocks fenced `ts ignore` are listed, not run).
  ["README examples (Node and Deno)", process.execPath, [join(root, "scripts/check_readme.mjs"), "README.md", "docs/controllers.md", "docs/discovery.md", "docs/testkit.md", "docs/checkpoints.md", "docs/connecting.md", "docs/edge.md", "docs/informers.md", "docs/install.md", "docs/metrics.md", "docs/typescript.md"]],
  // Bun (devDependency @oven/bun-linux-x64, binary inside the package) against the npm build; no binary = failure.
  ["bun smoke (npm build on Bun)", join(root, "node_modules/@oven/bun-linux-x64/bin/bun"), ["tests/bun/bun_smoke.mjs"]],
  // workerd (devDependency @cloudflare/workerd-linux-64, binary inside the package) runs the npm build's core unbundled; Node drives it.
  ["workerd smoke (npm build on workerd)", process.execPath, ["tests/workerd/workerd_smoke.mjs"]],
  // kubeconfig/edge + core bundled by esbuild for the browser platform (no warning, no node:*, no undici; sizes
  // printed), then run on workerd: a kubeconfig from text syncs a Reflector against the FakeApiServer (about 1 s).
  ["edge bundle (kubeconfig/edge with esbuild, on workerd)", process.execPath, ["tests/workerd/edge_bundle_smoke.mjs"]],
  // examples/edge_worker.ts bundled by esbuild, on workerd with a kvNamespace binding (an in-memory KV service on
  // Node): the first request lists, later ones and scheduled() catch up with no list and write only their
  // changes, concurrent requests write the head once, head writes 1 s apart (about 10 s: those 1 s waits).
  ["edge worker example (catch-up from KV, on workerd)", process.execPath, ["tests/workerd/edge_worker_example_smoke.mjs"]],
  // The runtime matrix (npm run matrix): the packed tarball in a fresh project on Node 20/22/24, Deno by URL,
  // Bun, workerd and edge-runtime; rewrites docs/runtimes.md's table; a runtime that cannot install is skipped.
  ["runtime matrix (packed tarball on every runtime)", process.execPath, ["scripts/runtime_matrix.mjs"]],
];
// The real-API-server suite (tests/e2e) needs kube-apiserver 1.20.2, built
// once from Debian's source package and cached outside the repository.
// Prepare it when it is missing (needs root and apt, as on these machines);
// if that is impossible the e2e tests skip with a message saying why.
if (process.env.KUBE_REFLECTOR_SKIP_APISERVER !== "1") {
  console.log("\n=== prepare the real kube-apiserver for tests/e2e (cached after the first run)");
  const r = spawnSync("bash", [join(root, "scripts/kube_apiserver/ensure.sh")], { stdio: "inherit", cwd: root });
  if (r.status !== 0) {
    if (process.env.CI) {
      console.error("test_all: could not prepare kube-apiserver, and CI must run the e2e suite");
      process.exit(r.status ?? 1);
    }
    console.warn("test_all: could not prepare kube-apiserver; tests/e2e will be skipped");
  }
}

for (const [label, cmd, argv] of steps) {
  console.log(`\n=== ${label}`);
  const r = spawnSync(cmd, argv, { stdio: "inherit", cwd: root });
  if (r.status !== 0) {
    console.error(`test_all: step "${label}" failed (${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}
console.log("\ntest_all: every step passed");
