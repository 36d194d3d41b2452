#!/usr/bin/env node
// Runs every TypeScript/JavaScript code block of README.md (```ts, ```js)
// and of the docs pages given, as a program, on Node and on Deno, so that a
// snippet can never rot:
//
//   - the blocks import the package by its name (`kube-reflector`,
//     `kube-reflector/kubeconfig`, ...), as a user of the package does;
//     on Node they resolve to the built package in npm/ (run
//     `node scripts/build_npm.mjs --no-test` first; `npm test` does), after
//     esbuild strips the types, as a user's build would; on Deno an import
//     map points them at the entry points of deno.json, and `deno check`
//     type-checks the blocks first;
//   - `http://127.0.0.1:8001` (what `kubectl proxy` serves) is replaced by
//     the test API server's address (the testkit's FakeApiServer, seeded
//     with a few ConfigMaps, Pods and a Deployment in `default`), and KUBECONFIG points at
//     a kubeconfig for it, so snippets that load kubectl's configuration
//     connect to it too;
//   - a block passes when it exits 0 within 30 s (a snippet that never
//     ends, like a `for await` over an endless stream, fails), printed
//     something (a block of nothing but imports need not: it checks that
//     the names resolve), and wrote nothing to stderr;
//   - a block fenced ```ts worker is a Worker module (`export default {
//     fetch }`), called as workerd would (see asWorkerProgram);
//   - a block fenced ```ts ignore (or ```js ignore) is not run: only for
//     what cannot run here (a pod's service-account files, a registry, a
//     URL import, CommonJS); the text before it should say so. Every
//     skipped block is listed in the output.
//
// Usage: node scripts/check_readme.mjs [FILE.md ...]   (default README.md;
// CHECK_README_VERBOSE=1 also prints what each block printed)
// Shell blocks (```sh) are not run: the install commands are checked by
// scripts/check_package.mjs against the packed tarball.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const files = process.argv.slice(2).length ? process.argv.slice(2) : ["README.md"];
const deno = join(root, "node_modules/.bin/deno");
const npmDir = join(root, "npm");
const TIMEOUT_MS = 30_000;
const PROXY_URL = "http://127.0.0.1:8001";
// Lines on stderr that are not a snippet's fault: Deno reporting what it
// downloads, and the one warning a reflector gives when the server refuses
// streaming lists (the test API server answers as kube-apiserver 1.20 does).
const EXPECTED_STDERR =
  /^(Download |Check |Warning Implicitly using latest)|\] (list|watch): streaming lists refused by kube-apiserver /;

/** The ts/js blocks of a Markdown text: { line, lang, code, skip }. */
export function codeBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(\w*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, role] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].startsWith(indent + fence); j++) body.push(lines[j]);
    if (["ts", "typescript", "js", "javascript"].includes(lang)) {
      const code = body.map((l) => l.slice(indent.length)).join("\n") + "\n";
      if (role === "ignore") blocks.push({ line: i + 1, lang, code, skip: true });
      else blocks.push({ line: i + 1, lang, code: role === "worker" ? asWorkerProgram(code) : code });
    }
    i = j;
  }
  return blocks;
}

/** Whether a block is nothing but import declarations (and comments). */
function importsOnly(code) {
  return code
    .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
    .replace(/^\s*import\s[^;]*?from\s*["'][^"']+["'];?|^\s*import\s*["'][^"']+["'];?/gm, "")
    .trim() === "";
}

/** A kubeconfig for the test API server (kubectl proxy's address, replaced like any other). */
const KUBECONFIG_TEXT = [
  "apiVersion: v1",
  "kind: Config",
  "clusters:",
  `- name: test\n  cluster:\n    server: ${PROXY_URL}`,
  "users:",
  "- name: dev\n  user:\n    token: readme-example-token",
  "contexts:",
  "- name: test\n  context:\n    cluster: test\n    user: dev\n    namespace: default",
  "current-context: test",
  "",
].join("\n");

/**
 * A Worker module (a block fenced as ```ts worker) made a program: its default
 * export's `fetch` is called with a request for the test API server's
 * `app=web` objects (`GET /objects?labelSelector=app%3Dweb`, the route of
 * examples/edge_worker.ts, which README.md shows whole) and an env holding
 * the server's address (`KUBE_SERVER`), a kubeconfig for it as text
 * (`KUBECONFIG`), the namespace and an in-memory KV namespace (Workers KV's
 * get/put/delete); it prints the answer. The same worker as a file
 * (examples/edge_worker.ts) runs on workerd in CI.
 */
function asWorkerProgram(code) {
  if (!/^export default \{/m.test(code)) {
    throw new Error("a ```ts worker block must `export default {` a Worker");
  }
  return code.replace(/^export default \{/m, "const __worker = {") + `
// ---- appended by scripts/check_readme.mjs: call the Worker as workerd would ----
const __kv = new Map<string, ArrayBuffer>();
const __env = {
  KUBE_SERVER: "${PROXY_URL}",
  KUBECONFIG: ${JSON.stringify(KUBECONFIG_TEXT)},
  NAMESPACE: "default",
  CHECKPOINTS: {
    get: async (key: string, _type: "arrayBuffer") => __kv.get(key) ?? null,
    put: async (key: string, value: ArrayBuffer | Uint8Array) => {
      __kv.set(key, value instanceof Uint8Array ? value.slice().buffer : value);
    },
    delete: async (key: string) => void __kv.delete(key),
  },
};
for (let i = 0; i < 2; i++) {
  const res = await __worker.fetch(new Request("http://worker/objects?labelSelector=app%3Dweb"), __env);
  if (res.status !== 200) throw new Error(\`worker answered \${res.status}: \${await res.text()}\`);
  console.log(await res.text());
}
`;
}

function run(cmd, args, options) {
  return new Promise((resolveRun) => {
    const started = Date.now();
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, out, err, timedOut, ms: Date.now() - started });
    });
  });
}

async function main() {
  if (!existsSync(join(npmDir, "esm/mod.js"))) {
    console.error(
      "check_readme: npm/ is not built; run `node scripts/build_npm.mjs --no-test` first",
    );
    process.exit(2);
  }
  const { FakeApiServer } = await import(pathToFileURL(join(npmDir, "esm/testkit.js")).href);
  const { transform } = await import("esbuild");
  const server = await FakeApiServer.start({ maxWatchMs: 60_000 });
  const cm = (name, data, labels) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "default", labels },
    data,
  });
  server.create(cm("app-config", { mode: "production" }, { app: "web" }));
  server.create(cm("feature-flags", { beta: "true" }, { app: "flags" }));
  const pod = (name, labels) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels },
    spec: { containers: [{ name: "main", image: "nginx" }] },
    status: { phase: "Running" },
  });
  server.create(pod("web-0", { app: "web", tier: "front" }));
  server.create(pod("web-1", { app: "web", tier: "edge" }));
  server.create(pod("db-0", { app: "db" }));
  server.create({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", labels: { app: "web" } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "main", image: "nginx" }] },
      },
    },
  });

  const work = mkdtempSync(join(tmpdir(), "check-readme-"));
  const kubeconfig = join(work, "kubeconfig.yaml");
  writeFileSync(kubeconfig, KUBECONFIG_TEXT.replaceAll(PROXY_URL, server.url));
  // Node: a project with the built package installed under its name.
  const nodeDir = join(work, "node");
  mkdirSync(join(nodeDir, "node_modules"), { recursive: true });
  writeFileSync(join(nodeDir, "package.json"), JSON.stringify({ type: "module", private: true }));
  symlinkSync(npmDir, join(nodeDir, "node_modules/kube-reflector"), "dir");
  // The JSR name (docs/install.md) resolves to the same build: JSR publishes deno.json's exports.
  mkdirSync(join(nodeDir, "node_modules/@kube-reflector"));
  symlinkSync(npmDir, join(nodeDir, "node_modules/@kube-reflector/kube-reflector"), "dir");
  symlinkSync(
    join(root, "node_modules/prom-client"),
    join(nodeDir, "node_modules/prom-client"),
    "dir",
  );
  // Deno: an import map from the package's names to deno.json's entry points.
  const denoDir = join(work, "deno");
  mkdirSync(denoDir);
  const exportsMap = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).exports;
  // kubernetes-types (type imports only; its own imports have no extensions,
  // which only npm: resolution completes), at the version the repository pins.
  // @kubernetes/client-node: its model types (docs/typescript.md), at the version the repository pins.
  const devDependencies = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    .devDependencies;
  const imports = {
    "prom-client": "npm:prom-client@^15.1.3",
    "kubernetes-types/": `npm:/kubernetes-types@${devDependencies["kubernetes-types"]}/`,
    "@kubernetes/client-node": `npm:@kubernetes/client-node@${
      devDependencies["@kubernetes/client-node"]
    }`,
  };
  for (const [key, file] of Object.entries(exportsMap)) {
    imports[`kube-reflector${key.slice(1)}`] = pathToFileURL(join(root, file)).href;
    imports[`@kube-reflector/kube-reflector${key.slice(1)}`] = pathToFileURL(join(root, file)).href;
  }
  writeFileSync(join(denoDir, "import_map.json"), JSON.stringify({ imports }, null, 2));

  const env = { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: "1" };
  let failures = 0;
  let count = 0;
  let skipped = 0;
  try {
    for (const file of files) {
      const all = codeBlocks(readFileSync(resolve(root, file), "utf8"));
      for (const block of all.filter((b) => b.skip)) {
        skipped++;
        console.log(`skip ${file}:${block.line} (fenced ${block.lang} ignore)`);
      }
      const blocks = all.filter((b) => !b.skip);
      if (blocks.length === 0) {
        console.error(`check_readme: ${file} has no ts/js code blocks to run`);
        failures++;
        continue;
      }
      // Deno: type-check every block in one go (one compiler start), then run them unchecked.
      const denoFiles = blocks.map((block, i) =>
        join(denoDir, `block${i + 1}.${block.lang.startsWith("t") ? "ts" : "js"}`)
      );
      blocks.forEach((block, i) =>
        writeFileSync(denoFiles[i], block.code.replaceAll(PROXY_URL, server.url))
      );
      const check = await run(deno, [
        "check",
        "--no-config",
        `--import-map=${join(denoDir, "import_map.json")}`,
        ...denoFiles,
      ], {
        cwd: denoDir,
        env,
      });
      if (check.code !== 0) {
        failures++;
        console.log(`FAIL ${file}: deno check of its blocks failed`);
        console.log((check.out + check.err).trim().replace(/^/gm, "  ! "));
      } else {
        console.log(`ok   ${file}: deno check of ${blocks.length} block(s) (${check.ms} ms)`);
      }
      for (const [i, block] of blocks.entries()) {
        count++;
        const code = block.code.replaceAll(PROXY_URL, server.url);
        const name = `block${i + 1}`;
        const nodeFile = join(nodeDir, `${name}.mjs`);
        const js = await transform(code, {
          loader: block.lang.startsWith("t") ? "ts" : "js",
          format: "esm",
          target: "es2022",
        });
        writeFileSync(nodeFile, js.code);
        const denoFile = denoFiles[i];
        const runs = [
          ["node", await run(process.execPath, [nodeFile], { cwd: nodeDir, env })],
          [
            "deno",
            await run(deno, [
              "run",
              "--no-config",
              `--import-map=${join(denoDir, "import_map.json")}`,
              "--allow-net=127.0.0.1",
              "--allow-env",
              "--allow-read",
              `--allow-write=${denoDir}`,
              denoFile,
            ], { cwd: denoDir, env }),
          ],
        ];
        for (const [runtime, r] of runs) {
          const stderr = r.err.split("\n").filter((l) => l.trim() && !EXPECTED_STDERR.test(l)).join(
            "\n",
          );
          const problem = r.timedOut
            ? `did not finish within ${TIMEOUT_MS / 1000} s`
            : r.code !== 0
            ? `exited with ${r.code ?? r.signal}`
            : stderr
            ? "wrote to stderr"
            : !r.out.trim() && !importsOnly(block.code)
            ? "printed nothing"
            : "";
          const where = `${file}:${block.line}`;
          if (problem) {
            failures++;
            console.log(`FAIL ${where} on ${runtime}: ${problem} (${r.ms} ms)`);
            if (r.out.trim()) console.log(r.out.trim().replace(/^/gm, "  | "));
            if (r.err.trim()) console.log(r.err.trim().replace(/^/gm, "  ! "));
          } else {
            console.log(`ok   ${where} on ${runtime} (${r.ms} ms)`);
            if (process.env.CHECK_README_VERBOSE) console.log(r.out.trim().replace(/^/gm, "  | "));
          }
        }
      }
    }
  } finally {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `check_readme: ${count} block(s) x 2 runtimes, ${failures} failure(s), ${skipped} skipped`,
  );
  process.exit(failures ? 1 : 0);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
