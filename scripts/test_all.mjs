#!/usr/bin/env node
// The README's test command: type-checks mod.ts with no config (as a URL
// importer would), runs every test on Deno, then builds the npm package and
// runs the same tests in Node against it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const deno = join(root, "node_modules/.bin/deno");
const steps = [
  ["deno check --no-config mod.ts", deno, ["check", "--no-config", "mod.ts"]],
  ["deno check (all, with JSDoc examples)", deno, ["check", "--doc", "mod.ts", "testkit.ts", "src/", "tests/", "examples/"]],
  ["deno test", deno, ["test", "--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-run", "--allow-sys", "tests/"]],
  ["npm build + node test", process.execPath, [join(root, "scripts/build_npm.mjs")]],
];
for (const [label, cmd, argv] of steps) {
  console.log(`\n=== ${label}`);
  const r = spawnSync(cmd, argv, { stdio: "inherit", cwd: root });
  if (r.status !== 0) {
    console.error(`test_all: step "${label}" failed (${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}
console.log("\ntest_all: every step passed");
