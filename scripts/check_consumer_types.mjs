#!/usr/bin/env node
// Type-checks the npm package as its users' TypeScript sees it: packs npm/ (`npm pack`),
// installs the tarball into a fresh temporary project (with @types/node, and without the
// optional peers undici and prom-client), and runs tsc with `strict` and `skipLibCheck: false`
// over the consumer programs in scripts/consumer_types/ in these setups:
//   node     lib ES2023 + @types/node, no DOM lib: every entry point (node.ts)
//   workers  lib ES2023, `types: []`, no web types at all: the core + kubeconfig/edge (edge.ts)
//   dom      lib ES2023 + DOM, `types: []`: edge.ts against the DOM's own web types
//   models   lib ES2023 + @types/node: objects typed with the `kubernetes-types` interfaces and
//            `@kubernetes/client-node`'s model classes (models.ts), in a second project that
//            also has those two packages (client-node held to @types/node 22 by an override)
// each with module/moduleResolution `nodenext` and with `bundler` under the repository's
// TypeScript (7, native: fast), and the usual pairs (node + nodenext, workers + bundler) under
// the latest 5.x and the minimum version docs/typescript.md states (4.7, which has no `bundler`
// resolution and no ES2023 lib: nodenext and lib ES2022 there).
// TypeScript versions are installed once into $KUBE_REFLECTOR_CACHE (default
// ~/.cache/kube-reflector)/consumer-types. Builds npm/ first if it is missing.
// Prints one line per check; exits 1 on any failure.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cache = join(
  process.env.KUBE_REFLECTOR_CACHE || join(homedir(), ".cache/kube-reflector"),
  "consumer-types",
);
const MIN_TS = "4.7";
const start = performance.now();

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { encoding: "utf8", ...opts });
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${argv.join(" ")} failed (${r.status ?? r.signal ?? r.error}):\n${r.stdout ?? ""}${
        r.stderr ?? ""
      }`,
    );
  }
  return r.stdout;
}
/** The version range of a devDependency in the repository's package.json (the one tests use). */
function devVersion(name) {
  const range = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies
    ?.[name];
  if (!range) throw new Error(`package.json has no devDependency ${name}`);
  return range;
}
const npm = (argv, cwd) =>
  run("npm", ["--no-audit", "--no-fund", "--loglevel=error", ...argv], { cwd });

/** The tsc of TypeScript `version`, installed into the cache on first use. */
function typescript(version) {
  const dir = join(cache, `ts-${version}`);
  const tsc = join(dir, "node_modules/typescript/bin/tsc");
  if (!existsSync(tsc)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), '{ "private": true }\n');
    console.log(`check_consumer_types: installing typescript@${version} into ${dir}`);
    npm(["install", "--ignore-scripts", `typescript@${version}`], dir);
  }
  const label = run(process.execPath, [tsc, "--version"]).trim().replace(/^Version /, "");
  return { label, argv: [process.execPath, tsc] };
}

if (!existsSync(join(root, "npm/package.json"))) {
  console.log(
    "check_consumer_types: npm/ is missing; building it (node scripts/build_npm.mjs --no-test)",
  );
  run(process.execPath, [join(root, "scripts/build_npm.mjs"), "--no-test"], { stdio: "inherit" });
}

const toolchains = [
  {
    label: `${
      run(join(root, "node_modules/.bin/tsc"), ["--version"]).trim().replace(/^Version /, "")
    } (repository)`,
    argv: [join(root, "node_modules/.bin/tsc")],
    native: true,
  },
  typescript("5"),
  { ...typescript(MIN_TS), min: true },
];

const tmp = mkdtempSync(join(tmpdir(), "consumer-types-"));
let failed = 0;
try {
  const tarball = npm(["pack", "--silent", "--pack-destination", tmp, join(root, "npm")], root)
    .trim().split("\n").pop();
  /** A fresh consumer project: the tarball, @types/node 22 and `extra` packages, the consumer files. */
  const makeProject = (name, extra = [], overrides = undefined) => {
    const dir = join(tmp, name);
    mkdirSync(dir);
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ private: true, type: "module", ...(overrides ? { overrides } : {}) }) + "\n",
    );
    // --prefer-offline: the npm cache serves yaml and @types/node after the first run.
    npm(
      [
        "install",
        "--ignore-scripts",
        "--prefer-offline",
        join(tmp, tarball),
        "@types/node@22",
        ...extra,
      ],
      dir,
    );
    for (const f of readdirSync(join(root, "scripts/consumer_types"))) {
      copyFileSync(join(root, "scripts/consumer_types", f), join(dir, f));
    }
    console.log(`check_consumer_types: ${tarball} installed into ${dir}`);
    return dir;
  };
  const project = makeProject("project");
  for (const peer of ["undici", "prom-client"]) {
    if (existsSync(join(project, "node_modules", peer))) {
      throw new Error(`optional peer ${peer} was installed`);
    }
  }
  // Objects typed by the two usual packages, in a project of their own: client-node brings
  // undici, which the first project must not have. One @types/node for the whole program
  // (client-node asks for a newer one; two copies clash when skipLibCheck is false).
  const modelsProject = makeProject(
    "models",
    [
      `kubernetes-types@${devVersion("kubernetes-types")}`,
      `@kubernetes/client-node@${devVersion("@kubernetes/client-node")}`,
      "@types/ws@8", // client-node's declarations name `ws`, whose types are separate
    ],
    { "@kubernetes/client-node": { "@types/node": "22" } },
  );

  const setups = [
    { name: "node", file: "node.ts", lib: ["ES2023"], types: ["node"] },
    { name: "workers", file: "edge.ts", lib: ["ES2023"], types: [] },
    { name: "dom", file: "edge.ts", lib: ["ES2023", "DOM", "DOM.Iterable"], types: [] },
    {
      name: "models",
      file: "models.ts",
      lib: ["ES2023"],
      types: ["node"],
      project: modelsProject,
      skipMin: true,
    },
  ];
  const resolutions = [
    { name: "nodenext", module: "nodenext", moduleResolution: "nodenext" },
    { name: "bundler", module: "esnext", moduleResolution: "bundler" },
  ];
  for (const ts of toolchains) {
    for (const setup of setups) {
      // client-node's declarations (js-yaml's) need TypeScript 5.7+: not checked under the minimum.
      if (ts.min && setup.skipMin) continue;
      const cwd = setup.project ?? project;
      for (const res of resolutions) {
        // TypeScript before 5.0 has no ES2023 lib; nothing here needs more than ES2022.
        const lib = ts.min ? setup.lib.map((l) => l === "ES2023" ? "ES2022" : l) : setup.lib;
        const label = `TypeScript ${ts.label}, ${setup.name} (lib ${
          lib.join("+")
        }, types [${setup.types}]), ${res.name}`;
        // The JS compilers take seconds per run: they check node with nodenext and workers with
        // bundler (the usual pairs); the repository's native tsc checks every combination.
        // (TypeScript before 5.0 has no `bundler` resolution: nodenext for both there.)
        const usual =
          (setup.name !== "workers" && setup.name !== "dom" && res.name === "nodenext") ||
          (setup.name === "workers" && res.name === (ts.min ? "nodenext" : "bundler"));
        if (!ts.native && !usual) continue;
        const config = `tsconfig.${setup.name}.${res.name}.json`;
        writeFileSync(
          join(cwd, config),
          JSON.stringify(
            {
              compilerOptions: {
                strict: true,
                skipLibCheck: false,
                noEmit: true,
                target: "ES2022",
                module: res.module,
                moduleResolution: res.moduleResolution,
                lib,
                types: setup.types,
              },
              files: [setup.file],
            },
            null,
            2,
          ),
        );
        const t0 = performance.now();
        const r = spawnSync(ts.argv[0], [...ts.argv.slice(1), "-p", config], {
          cwd,
          encoding: "utf8",
        });
        const ms = Math.round(performance.now() - t0);
        if (r.status === 0) console.log(`ok    ${label} (${ms} ms)`);
        else {
          failed++;
          console.log(
            `FAIL  ${label}\n${
              `${r.stdout}${r.stderr}${r.error ?? ""}`.trimEnd().replace(/^/gm, "      ")
            }`,
          );
        }
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const seconds = ((performance.now() - start) / 1000).toFixed(1);
console.log(
  `check_consumer_types: ${
    failed === 0 ? "every setup type-checks" : `${failed} setup(s) failed`
  } (${seconds} s)`,
);
process.exitCode = failed === 0 ? 0 : 1;
