#!/usr/bin/env node
// Checks the packages as people install them (issue 10, items 1-4):
//   - packs npm/ (built by scripts/build_npm.mjs; built here with --no-test when missing),
//     checks the `kube-reflector` bin (in the tarball with Node's shebang, linked, and running
//     with the documented exit codes),
//     installs the tarball into a fresh temporary project and there checks that every entry
//     point loads with `require` (Node 20.19+/22.12+ require ESM) and with `import`, that
//     Node without require(esm) gets ERR_REQUIRE_ESM (what the docs promise older Node), that
//     undici is not installed (an optional peer) while yaml is;
//   - the packed metadata (licence, repository, homepage, bugs, keywords, ./package.json
//     export, engines no lower than any dependency's or peer's own engines), LICENSE in the
//     tarball, no tests or tooling in it;
//   - `npm publish --dry-run` from npm/ and `deno publish --dry-run` from the repository
//     (offline: the library imports nothing from JSR; --allow-dirty because a working tree or
//     CI checkout may carry build output; --no-check, see below), publishing only the
//     library's files.
// Prints PASS/FAIL per check and exits 1 when any fails. `--keep` keeps the temporary project.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npmDir = join(root, "npm");
const deno = join(root, "node_modules/.bin/deno");
const keep = process.argv.includes("--keep");
const started = performance.now();
const results = [];

function check(name, ok, detail = "") {
  results.push({ name, ok });
  console.log(`${ok ? "PASS" : "FAIL"}  ${name}${detail ? `: ${detail}` : ""}`);
}

/** Runs a command without blocking the event loop; resolves with its status and output. */
function run(cmd, argv, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: root, ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on(
      "error",
      (error) => resolve({ status: -1, stdout, stderr: `${stderr}${error.message}` }),
    );
    child.on("close", (status, signal) => resolve({ status: status ?? signal, stdout, stderr }));
  });
}

/** A child's JSON output, or null when it failed. */
const parse = (r) => {
  try {
    return r.status === 0 ? JSON.parse(r.stdout) : null;
  } catch {
    return null;
  }
};
const tail = (text, lines = 6) => text.trim().split("\n").slice(-lines).join("\n      ");
// deno colours its output even into a pipe unless NO_COLOR is set.
const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, "");

// ---- build (standalone use) -------------------------------------------------------------
if (!existsSync(join(npmDir, "package.json"))) {
  console.log("check_package: npm/ is missing, building it (node scripts/build_npm.mjs --no-test)");
  const r = spawnSync(process.execPath, [join(root, "scripts/build_npm.mjs"), "--no-test"], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const denoJson = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const builtPkg = JSON.parse(readFileSync(join(npmDir, "package.json"), "utf8"));
const entryKeys = Object.keys(builtPkg.exports).filter((k) => k !== "./package.json");
const specifiers = [
  ...entryKeys.map((k) => builtPkg.name + k.slice(1)),
  `${builtPkg.name}/package.json`,
];

// The JSR dry run and the npm dry run do not depend on the temporary project: start them now.
// --no-check: test_all.mjs type-checks these entry points already (same config); the slow-types
// check and the file selection still run.
const denoPublish = run(deno, ["publish", "--dry-run", "--allow-dirty", "--no-check"], {
  env: { ...process.env, NO_COLOR: "1" },
});
const npmPublish = run("npm", ["publish", "--dry-run", "--ignore-scripts"], { cwd: npmDir });

// ---- pack and install into a fresh project -----------------------------------------------
const work = mkdtempSync(join(tmpdir(), "kube-reflector-pkg-"));
const project = join(work, "consumer");
let exitCode = 0;
try {
  const pack = await run(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", work],
    { cwd: npmDir },
  );
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const packed = JSON.parse(pack.stdout)[0];
  const tarball = join(work, packed.filename);
  const tarFiles = new Set(packed.files.map((f) => f.path));
  check(
    "npm pack",
    true,
    `${packed.filename}, ${packed.files.length} files, ${
      (packed.size / 1024).toFixed(0)
    } KiB packed`,
  );

  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", version: "0.0.0", private: true }) + "\n",
  );
  const install = await run("npm", [
    "install",
    tarball,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ], { cwd: project });
  check(
    "fresh install of the tarball",
    install.status === 0,
    install.status === 0 ? "" : tail(install.stderr),
  );
  if (install.status !== 0) throw new Error("cannot go on without the install");
  const installedDir = join(project, "node_modules", builtPkg.name);
  const pkg = JSON.parse(readFileSync(join(installedDir, "package.json"), "utf8"));

  // ---- licence and contents ----
  const licence = readFileSync(join(root, "LICENSE"), "utf8");
  check(
    "LICENSE (Apache-2.0, full text) at the repository root and in the tarball",
    /Apache License\s+Version 2\.0, January 2004/.test(licence) &&
      licence.includes("END OF TERMS AND CONDITIONS") &&
      tarFiles.has("LICENSE") && readFileSync(join(installedDir, "LICENSE"), "utf8") === licence,
  );
  const targets = Object.values(pkg.exports).flatMap((e) =>
    typeof e === "string" ? [e] : Object.values(e)
  );
  const missing = targets.map((t) => t.replace(/^\.\//, "")).filter((t) => !tarFiles.has(t));
  check("every export target is in the tarball", missing.length === 0, missing.join(", "));
  const binTargets = Object.values(pkg.bin ?? {}).map((t) => t.replace(/^\.\//, ""));
  const stray = [...tarFiles].filter((f) =>
    !/^(LICENSE|README\.md|package\.json)$/.test(f) && !f.startsWith("esm/src/") &&
    !binTargets.includes(f) &&
    !targets.some((t) =>
      f.replace(/\.(js|d\.ts)$/, "") === t.replace(/^\.\//, "").replace(/\.(js|d\.ts)$/, "")
    )
  );
  check(
    "the tarball holds only the library (no tests, examples, benchmarks, scripts)",
    stray.length === 0,
    stray.slice(0, 5).join(", "),
  );

  // ---- the command-line program (the `kube-reflector` bin) ----
  const binPath = join(project, "node_modules/.bin/kube-reflector");
  const binTarget = binTargets.length === 1 ? join(installedDir, binTargets[0]) : "";
  check(
    "bin kube-reflector: in the tarball, Node's shebang, linked into node_modules/.bin",
    pkg.bin?.["kube-reflector"] === "./esm/cli.js" && tarFiles.has("esm/cli.js") &&
      existsSync(binTarget) && readFileSync(binTarget, "utf8").startsWith("#!/usr/bin/env node\n") &&
      existsSync(binPath),
    JSON.stringify(pkg.bin),
  );
  const [binHelp, binFail, binUsage] = await Promise.all([
    run(binPath, ["--help"], { cwd: project }),
    run(binPath, ["get", "configmaps", "--server", "http://127.0.0.1:9"], { cwd: project }),
    run(binPath, ["get", "configmaps", "--no-such-flag"], { cwd: project }),
  ]);
  const oneLine = (r) => /^kube-reflector: /.test(r.stderr) && !/\n\s+at /.test(r.stderr);
  check(
    "the installed bin runs: --help exits 0, an unreachable server 1, a bad flag 2, errors without stack",
    binHelp.status === 0 && /^kube-reflector: watch, get/.test(binHelp.stdout) &&
      binFail.status === 1 && oneLine(binFail) && binUsage.status === 2 && oneLine(binUsage),
    `--help ${binHelp.status}, unreachable ${binFail.status}: ${tail(binFail.stderr, 2)}, ` +
      `bad flag ${binUsage.status}: ${tail(binUsage.stderr, 2)}`,
  );

  // ---- metadata ----
  const repo = "https://github.com/kube-reflector/kube-reflector";
  const metaProblems = [];
  if (pkg.license !== "Apache-2.0") metaProblems.push(`license ${pkg.license}`);
  if (pkg.repository?.url !== `git+${repo}.git`) {
    metaProblems.push(`repository ${JSON.stringify(pkg.repository)}`);
  }
  if (!pkg.homepage?.startsWith(repo)) metaProblems.push(`homepage ${pkg.homepage}`);
  if (pkg.bugs?.url !== `${repo}/issues`) metaProblems.push(`bugs ${JSON.stringify(pkg.bugs)}`);
  if (!Array.isArray(pkg.keywords) || pkg.keywords.length === 0) {
    metaProblems.push("keywords missing");
  }
  if (pkg.exports["./package.json"] !== "./package.json") {
    metaProblems.push("no ./package.json export");
  }
  for (const k of entryKeys) {
    const e = pkg.exports[k];
    if (!e.types || !e.default) metaProblems.push(`export ${k} lacks types/default`);
  }
  check(
    "metadata: license, repository, homepage, bugs, keywords, exports",
    metaProblems.length === 0,
    metaProblems.join("; "),
  );
  check(
    "one name story: npm kube-reflector, JSR @kube-reflector/kube-reflector, same version and licence",
    pkg.name === "kube-reflector" && denoJson.name === `@kube-reflector/${pkg.name}` &&
      denoJson.version === pkg.version && denoJson.license === pkg.license,
    `npm ${pkg.name}@${pkg.version}, JSR ${denoJson.name}@${denoJson.version}`,
  );

  // ---- dependencies ----
  check(
    "undici only an optional peer; yaml a dependency",
    !pkg.dependencies?.undici && !!pkg.peerDependencies?.undici &&
      pkg.peerDependenciesMeta?.undici?.optional === true &&
      !!pkg.dependencies?.yaml,
    `dependencies ${JSON.stringify(pkg.dependencies)}, peers ${
      JSON.stringify(pkg.peerDependencies)
    }`,
  );
  check(
    "a fresh install does not install undici (and does install yaml)",
    !existsSync(join(project, "node_modules/undici")) &&
      existsSync(join(project, "node_modules/yaml")),
  );
  // engines: our minimum must satisfy each dependency's and peer's own `engines.node`
  // (dependencies from the consumer's install, peers from the repository's devDependencies).
  const ourMin = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(pkg.engines?.node ?? "")?.[1]?.concat(".0.0")
    .split(".").slice(0, 3).join(".");
  const engineProblems = ourMin
    ? []
    : [`engines.node ${JSON.stringify(pkg.engines?.node)} is not ">=X.Y.Z"`];
  const engineNotes = [];
  for (
    const [name, from] of [
      ...Object.keys(pkg.dependencies ?? {}).map((n) => [n, project]),
      ...Object.keys(pkg.peerDependencies ?? {}).map((n) => [n, root]),
    ]
  ) {
    const file = join(from, "node_modules", name, "package.json");
    if (!existsSync(file)) {
      engineProblems.push(`${name} not found in ${relative(root, from) || "."}/node_modules`);
      continue;
    }
    const dep = JSON.parse(readFileSync(file, "utf8"));
    const range = dep.engines?.node;
    engineNotes.push(`${name}@${dep.version} ${range ?? "(none)"}`);
    if (ourMin && range && !satisfies(ourMin, range)) {
      engineProblems.push(`${name}@${dep.version} needs node ${range}`);
    }
  }
  check(
    `engines.node ${pkg.engines?.node} covers every dependency and peer`,
    engineProblems.length === 0,
    [...engineProblems, ...engineNotes].join("; "),
  );

  // ---- require / import of every entry point ----
  writeFileSync(
    join(project, "require.cjs"),
    `const out = {};\nfor (const s of ${
      JSON.stringify(specifiers)
    }) out[s] = Object.keys(require(s)).sort();\n` +
      `console.log(JSON.stringify(out));\n`,
  );
  writeFileSync(
    join(project, "import.mjs"),
    `const out = {};\nfor (const s of ${JSON.stringify(specifiers)}) {\n` +
      `  const m = s.endsWith("/package.json") ? await import(s, { with: { type: "json" } }) : await import(s);\n` +
      `  out[s] = Object.keys(s.endsWith("/package.json") ? m.default : m).sort();\n}\nconsole.log(JSON.stringify(out));\n`,
  );
  // CommonJS on a Node without require(esm) (simulated by the flag that turns it off).
  writeFileSync(
    join(project, "old_node.cjs"),
    `let code = "loaded";\ntry { require(${
      JSON.stringify(builtPkg.name)
    }); } catch (e) { code = e.code; }\n` +
      `import(${
        JSON.stringify(builtPkg.name)
      }).then((m) => console.log(JSON.stringify({ code, importKeys: Object.keys(m).length })));\n`,
  );
  const [req, imp, old] = await Promise.all([
    run(process.execPath, ["require.cjs"], { cwd: project }),
    run(process.execPath, ["import.mjs"], { cwd: project }),
    run(process.execPath, ["--no-experimental-require-module", "old_node.cjs"], { cwd: project }),
  ]);
  const reqOut = parse(req), impOut = parse(imp);
  const describe = (o) => o && Object.entries(o).map(([s, k]) => `${s} (${k.length})`).join(", ");
  check(
    `require() of every entry point on Node ${process.versions.node}`,
    !!reqOut && specifiers.every((s) => reqOut[s]?.length > 0),
    reqOut ? describe(reqOut) : tail(req.stderr),
  );
  const warnings = req.stderr.split("\n").filter((l) => /Warning/.test(l));
  if (warnings.length) console.log(`      note (not a failure): ${warnings.join(" / ")}`);
  check(
    "import of every entry point, same names as require()",
    !!impOut && specifiers.every((s) => impOut[s]?.length > 0) &&
      JSON.stringify(impOut) === JSON.stringify(reqOut),
    impOut ? "" : tail(imp.stderr),
  );
  const oldOut = parse(old);
  check(
    "Node without require(esm): require() throws ERR_REQUIRE_ESM, import() works (as the docs say)",
    oldOut?.code === "ERR_REQUIRE_ESM" && oldOut.importKeys > 0,
    oldOut ? JSON.stringify(oldOut) : tail(old.stderr),
  );

  // The optional peer, as a user meets it: custom TLS on Node without undici fails with an error
  // naming the package; after `npm install undici@<peer range>` the same call uses it.
  writeFileSync(
    join(project, "tls.mjs"),
    `import { createTlsFetch } from "${builtPkg.name}/kubeconfig";\n` +
      `try {\n  const t = await createTlsFetch({ insecure: true });\n  await t.close();\n  console.log(JSON.stringify({ via: t.via }));\n` +
      `} catch (e) {\n  console.log(JSON.stringify({ name: e.name, message: e.message }));\n}\n`,
  );
  const tlsRun = async () => parse(await run(process.execPath, ["tls.mjs"], { cwd: project }));
  const without = await tlsRun();
  check(
    "without undici, custom TLS on Node fails with a MissingPackageError naming undici",
    without?.name === "MissingPackageError" && /"undici"/.test(without.message) &&
      /npm install undici/.test(without.message),
    JSON.stringify(without),
  );
  const addUndici = await run("npm", [
    "install",
    `undici@${pkg.peerDependencies.undici}`,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
  ], { cwd: project });
  const withUndici = addUndici.status === 0 ? await tlsRun() : null;
  check(
    `after npm install undici@${pkg.peerDependencies.undici}, custom TLS on Node uses it`,
    withUndici?.via === "undici",
    addUndici.status === 0 ? JSON.stringify(withUndici) : tail(addUndici.stderr),
  );
} catch (error) {
  check("package check could not finish", false, error.message);
} finally {
  // ---- npm publish --dry-run ----
  const np = await npmPublish;
  const npText = np.stdout + np.stderr;
  check(
    "npm publish --dry-run (from npm/)",
    np.status === 0 && npText.includes(`+ ${builtPkg.name}@${builtPkg.version}`),
    np.status === 0 ? "" : tail(npText),
  );
  // ---- deno publish --dry-run ----
  const dp = await denoPublish;
  const dpText = plain(dp.stdout + dp.stderr);
  const published = [...dpText.matchAll(/^\s+file:\/\/(\S+)/gm)].map((m) => relative(root, m[1]));
  const entryFiles = Object.values(denoJson.exports).map((f) => f.replace(/^\.\//, ""));
  const allowed = (f) =>
    ["LICENSE", "README.md", "deno.json", ...entryFiles].includes(f) ||
    (f.startsWith("src/") && !f.endsWith("_test.ts"));
  const notLibrary = published.filter((f) => !allowed(f));
  const absent = ["LICENSE", "README.md", ...entryFiles].filter((f) => !published.includes(f));
  check(
    `deno publish --dry-run (${denoJson.name}, offline)`,
    dp.status === 0 && /Dry run complete/.test(dpText),
    dp.status === 0 ? `${published.length} files` : tail(dpText, 10),
  );
  check(
    "JSR package holds only the library (entry points, src/, LICENSE, README.md)",
    dp.status === 0 && notLibrary.length === 0 && absent.length === 0,
    [
      notLibrary.length ? `not library: ${notLibrary.slice(0, 5).join(", ")}` : "",
      absent.length ? `missing: ${absent.join(", ")}` : "",
    ]
      .filter(Boolean).join("; "),
  );
  if (keep) console.log(`check_package: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  const failed = results.filter((r) => !r.ok);
  console.log(
    `\ncheck_package: ${results.length - failed.length}/${results.length} checks passed in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
  exitCode = failed.length ? 1 : 0;
}
process.exit(exitCode);

/** Whether version X.Y.Z satisfies an engines range such as ">=20.18.1", ">= 14.6" or "^16 || ^18 || >=20". */
function satisfies(version, range) {
  const v = version.split(".").map(Number);
  const parse = (s) => {
    const p = s.split(".").map((x) => (/^\d+$/.test(x) ? Number(x) : 0));
    while (p.length < 3) p.push(0);
    return p;
  };
  const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  return range.split("||").some((alt) =>
    alt.trim().replace(/([<>=^~]+)\s+/g, "$1").split(/\s+/).filter(Boolean).every((c) => {
      const [, op = "", ver] = /^([<>=^~]*)v?(.+)$/.exec(c) ?? [];
      if (ver === undefined || ver === "*" || ver === "x") return true;
      const w = parse(ver), d = cmp(v, w);
      switch (op) {
        case ">=":
          return d >= 0;
        case ">":
          return d > 0;
        case "<=":
          return d <= 0;
        case "<":
          return d < 0;
        case "^":
          return d >= 0 && v[0] === w[0];
        case "~":
          return d >= 0 && v[0] === w[0] && v[1] === w[1];
        default:
          return d === 0 ||
            (ver.split(".").length < 3 && v[0] === w[0] &&
              (ver.split(".").length < 2 || v[1] === w[1]));
      }
    })
  );
}
