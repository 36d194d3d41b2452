#!/usr/bin/env node
// Installs the npm toolchain (Deno, TypeScript, test dependencies) when it
// is missing, so that `npm start` and `npm test` work on a fresh clone.
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const needed = [
  "node_modules/.bin/deno",
  "node_modules/.bin/tsc",
  "node_modules/prom-client/package.json",
  "node_modules/kubernetes-types/package.json",
  "node_modules/@kubernetes/client-node/package.json",
];
if (!needed.every((p) => existsSync(join(root, p)))) {
  console.log("ensure_toolchain: installing the npm toolchain (npm ci)...");
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
