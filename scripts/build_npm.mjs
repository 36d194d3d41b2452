#!/usr/bin/env node
// Builds the npm package into npm/ (the job dnt does for Deno projects; JSR
// is unreachable here, so this uses the TypeScript compiler from npm):
//   1. tsc emits ESM JavaScript and .d.ts for mod.ts, the entry points,
//      src/ and tests/ into npm/esm/ (`.ts` imports rewritten to `.js`);
//   2. writes npm/package.json with an `exports` map, README and fixtures;
//   3. unless --no-test, runs the test suite in Node against that output.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "npm");
const args = process.argv.slice(2);

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { stdio: "inherit", cwd: root, ...opts });
  if (r.status !== 0) {
    console.error(`build_npm: ${cmd} ${argv.join(" ")} failed (${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

rmSync(out, { recursive: true, force: true });
run(join(root, "node_modules/.bin/tsc"), ["-p", "scripts/tsconfig.npm.json"]);

// tsc resolved `npm:pkg@range` through tsconfig `paths`; Node needs the bare
// name: rewrite `"npm:yaml@^2"` to `"yaml"` (and `npm:@s/p@1/sub` to `@s/p/sub`)
// in the emitted JavaScript and declarations, as dnt does.
const NPM_SPECIFIER = /(["'])npm:((?:@[^/"'@]+\/)?[^/"'@]+)(?:@[^/"']*)?(\/[^"']*)?\1/g;
const rewriteNpmSpecifiers = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) rewriteNpmSpecifiers(p);
    else if (/\.(js|d\.ts)$/.test(name)) {
      const text = readFileSync(p, "utf8");
      const next = text.replace(NPM_SPECIFIER, (_m, q, pkg, sub = "") => `${q}${pkg}${sub}${q}`);
      if (next !== text) writeFileSync(p, next);
    }
  }
};
rewriteNpmSpecifiers(join(out, "esm"));

const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const devDependencies = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies;
const entries = Object.entries(deno.exports);
const exportsMap = {};
for (const [key, file] of entries) {
  const base = file.replace(/^\.\//, "").replace(/\.ts$/, "");
  exportsMap[key] = { types: `./esm/${base}.d.ts`, import: `./esm/${base}.js` };
}
// The kubeconfig entry point (until deno.json lists it).
if (existsSync(join(root, "kubeconfig.ts")) && !exportsMap["./kubeconfig"]) {
  exportsMap["./kubeconfig"] = { types: "./esm/kubeconfig.d.ts", import: "./esm/kubeconfig.js" };
}
const pkg = {
  name: "kube-reflector",
  version: deno.version,
  description: "A Kubernetes reflector (list, watch, store, recover) on web-standard APIs for Node, Deno, Bun and edge runtimes.",
  license: "Apache-2.0",
  type: "module",
  main: "./esm/mod.js",
  types: "./esm/mod.d.ts",
  exports: exportsMap,
  files: ["esm/mod.*", "esm/testkit.*", "esm/metrics.*", "esm/kubeconfig.*", "esm/src/", "README.md"],
  // The metrics entry point adapts to the user's own prom-client (one registry per process).
  peerDependencies: { "prom-client": ">=14" },
  peerDependenciesMeta: { "prom-client": { optional: true } },
  // Used only by the kubeconfig entry point (YAML parsing; TLS on Node).
  dependencies: { yaml: devDependencies.yaml, undici: devDependencies.undici },
  engines: { node: ">=20.18" },
  sideEffects: false,
};
writeFileSync(join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
cpSync(join(root, "README.md"), join(out, "README.md"));
if (existsSync(join(root, "tests/kubeconfig/fixtures"))) {
  cpSync(join(root, "tests/kubeconfig/fixtures"), join(out, "esm/tests/kubeconfig/fixtures"), { recursive: true });
}
if (existsSync(join(root, "tests/fixtures"))) {
  cpSync(join(root, "tests/fixtures"), join(out, "esm/tests/fixtures"), { recursive: true });
}

if (!args.includes("--no-test")) {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith("_test.js") && name !== "_test.js") files.push(p);
    }
  };
  walk(join(out, "esm/tests"));
  const filter = args.find((a) => a.startsWith("--filter="))?.slice(9);
  const selected = filter ? files.filter((f) => f.includes(filter)) : files;
  run(process.execPath, ["--test", "--test-concurrency=1", ...selected]);
}
