#!/usr/bin/env bun
// Smoke test of the BUILT npm package (npm/esm) on Bun, run by
// scripts/test_all.mjs after the npm build:
//   node scripts/build_npm.mjs --no-test && node_modules/@oven/bun-linux-x64/bin/bun tests/bun/bun_smoke.mjs
// (a) a Reflector against the testkit's FakeApiServer: sync, changes, a 410
//     ERROR event (relist), a connection reset (rewatch), abort;
// (b) each kubeconfig credential type over TLS, and the failures that must fail.
// Prints one line per check, then `N passed, N failed`; exits 1 on any failure.
// Everything is closed at the end, so Bun exits on its own.
import { results } from "./_check.mjs";

if (!globalThis.Bun) {
  console.error("bun smoke: run this with Bun (node_modules/@oven/bun-linux-x64/bin/bun)");
  process.exit(1);
}
console.log(`bun smoke: Bun ${Bun.version} (${process.platform}-${process.arch})`);

const summary = () => `${results.passed} passed, ${results.failed} failed`;
const GLOBAL_TIMEOUT_MS = 60_000;
const watchdog = setTimeout(() => {
  results.failed++;
  console.log(`FAIL  global timeout: still running after ${GLOBAL_TIMEOUT_MS / 1000} s`);
  console.log(summary());
  process.exit(1);
}, GLOBAL_TIMEOUT_MS);

const { reflectorChecks } = await import("./_reflector_checks.mjs");
const { kubeconfigChecks } = await import("./_kubeconfig_checks.mjs");
for (const group of [reflectorChecks, kubeconfigChecks]) {
  try {
    await group();
  } catch (err) {
    results.failed++;
    console.log(`FAIL  ${group.name} setup or teardown: ${err?.stack ?? err}`);
  }
}

clearTimeout(watchdog);
console.log(summary());
process.exitCode = results.failed > 0 ? 1 : 0;
// Every server and process is closed by now, so Bun should exit on its own;
// if a handle leaked, fail instead of hanging (unref: this timer alone keeps nothing alive).
setTimeout(() => {
  results.failed++;
  console.log("FAIL  Bun did not exit within 5 s of the last check: a handle was left open");
  console.log(summary());
  process.exit(1);
}, 5_000).unref();
