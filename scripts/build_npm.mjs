#!/usr/bin/env node
// Builds the npm package into npm/ (the job dnt does for Deno projects; JSR
// is unreachable here, so this uses the TypeScript compiler from npm):
//   1. tsc type-checks the package (mod.ts, the entry points and src/) and
//      emits its ESM JavaScript and .d.ts into npm/esm/ (`.ts` imports
//      rewritten to `.js`; scripts/tsconfig.npm.json);
//   2. tsc emits tests/, examples/ and benchmarks/ as JavaScript only, without
//      type-checking them (scripts/tsconfig.npm_tests.json, `noCheck`: `deno
//      check` type-checks them), into a scratch folder whose tests/, examples/
//      and benchmarks/ move into npm/esm/ (none of them is published);
//   3. writes npm/package.json with an `exports` map, README and fixtures;
//   4. unless --no-test, runs the test suite in Node against that output.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
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
// The tests, examples and benchmarks: JavaScript only, unchecked. Their imports of src/ are
// emitted into the scratch folder too and dropped there: the package's files come from step 1 only.
const scratch = join(out, ".tests-build");
run(join(root, "node_modules/.bin/tsc"), ["-p", "scripts/tsconfig.npm_tests.json"]);
for (const dir of ["tests", "examples", "benchmarks"]) {
  if (existsSync(join(scratch, dir))) renameSync(join(scratch, dir), join(out, "esm", dir));
}
rmSync(scratch, { recursive: true, force: true });

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

// Declarations that any consumer's TypeScript can read:
//  - tsc rewrites `.ts` import specifiers to `.js` in JavaScript but keeps them in declarations,
//    which TypeScript before 5.0 cannot resolve: rewrite relative `.ts` specifiers to `.js`
//    (code lines only; JSDoc examples keep the source paths);
//  - the web types the declarations name (AbortSignal, URL, fetch, HeadersInit...) must not
//    depend on the consumer's `lib` (DOM) or `types`: each declaration naming one imports it from
//    `src/_web_types.d.ts` (scripts/web_types.d.ts), which is the consumer's global type where
//    it has one and a structural stand-in otherwise. scripts/check_consumer_types.mjs proves it.
const WEB_TYPES = ["AbortSignal", "URL", "URLSearchParams", "ReadableStream", "Request", "Response", "Headers", "HeadersInit", "fetch"];
const webTypesFile = join(out, "esm/src/_web_types.d.ts");
cpSync(join(root, "scripts/web_types.d.ts"), webTypesFile);
const isCommentLine = (line) => /^\s*(\*|\/\*|\/\/)/.test(line);
const fixDeclarations = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      fixDeclarations(p);
      continue;
    }
    if (!name.endsWith(".d.ts") || p === webTypesFile) continue;
    const lines = readFileSync(p, "utf8").split("\n");
    const code = lines.map((line) =>
      isCommentLine(line) ? line : line.replace(/(["'])(\.{1,2}\/[^"']*?)\.ts\1/g, "$1$2.js$1")
    );
    const body = code.filter((line) => !isCommentLine(line)).join("\n").replace(/\/\*[\s\S]*?\*\//g, "");
    const used = WEB_TYPES.filter((t) => new RegExp(`(?<![\\w$.])${t}\\b(?!\\s*:)`).test(body));
    if (used.length > 0) {
      let rel = relative(dirname(p), webTypesFile).replace(/\.d\.ts$/, ".js").replaceAll("\\", "/");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      code.unshift(`import type { ${used.join(", ")} } from "${rel}";`);
    }
    writeFileSync(p, code.join("\n"));
  }
};
fixDeclarations(join(out, "esm"));

const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const devDependencies = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies;
const entries = Object.entries(deno.exports);
const exportsMap = {};
for (const [key, file] of entries) {
  const base = file.replace(/^\.\//, "").replace(/\.ts$/, "");
  // `default` serves `import` and `require` alike: Node 20.19+/22.12+ can require() this ESM
  // (no top-level await anywhere); older Node throws ERR_REQUIRE_ESM there (use import()).
  exportsMap[key] = { types: `./esm/${base}.d.ts`, default: `./esm/${base}.js` };
}
// The kubeconfig entry point (until deno.json lists it).
if (existsSync(join(root, "kubeconfig.ts")) && !exportsMap["./kubeconfig"]) {
  exportsMap["./kubeconfig"] = { types: "./esm/kubeconfig.d.ts", default: "./esm/kubeconfig.js" };
}
exportsMap["./package.json"] = "./package.json";
const repository = "https://github.com/kube-reflector/kube-reflector";
const pkg = {
  name: "kube-reflector",
  version: deno.version,
  description: "A Kubernetes reflector (list, watch, store, recover) on web-standard APIs for Node, Deno, Bun and edge runtimes.",
  license: "Apache-2.0",
  repository: { type: "git", url: `git+${repository}.git` },
  homepage: `${repository}#readme`,
  bugs: { url: `${repository}/issues` },
  keywords: ["kubernetes", "k8s", "reflector", "informer", "watch", "list-watch", "client-go", "deno", "bun", "edge", "cloudflare-workers"],
  type: "module",
  main: "./esm/mod.js",
  // The command-line program (cli.ts): `npx kube-reflector get deploy -A`.
  bin: { "kube-reflector": "./esm/cli.js" },
  types: "./esm/mod.d.ts",
  exports: exportsMap,
  files: [
    ...Object.values(exportsMap).flatMap((e) => e.default ? [e.default.replace(/^\.\/|\.js$/g, "") + ".*"] : []),
    "esm/src/",
    "esm/cli.js",
    "README.md",
    "LICENSE",
  ],
  // Optional peers: the metrics entry point adapts to the user's own prom-client (one registry
  // per process); undici (2 MB) serves only custom TLS (CA, client certificates) on Node and
  // Deno, so only those who need it install it.
  peerDependencies: { "prom-client": ">=14", undici: devDependencies.undici },
  peerDependenciesMeta: { "prom-client": { optional: true }, undici: { optional: true } },
  // Used only by the kubeconfig entry point (YAML parsing).
  dependencies: { yaml: devDependencies.yaml },
  // undici 7 (the optional peer) needs Node >= 20.18.1; scripts/check_package.mjs checks this
  // against every dependency's and peer's own engines.
  engines: { node: ">=20.18.1" },
  sideEffects: false,
};
writeFileSync(join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
// The bin: Node's shebang instead of cli.ts's Deno one, and executable.
const cliJs = join(out, "esm/cli.js");
const cliText = readFileSync(cliJs, "utf8").replace(/^#!.*\n/, "");
writeFileSync(cliJs, `#!/usr/bin/env node\n${cliText}`);
chmodSync(cliJs, 0o755);
cpSync(join(root, "README.md"), join(out, "README.md"));
cpSync(join(root, "LICENSE"), join(out, "LICENSE"));
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
