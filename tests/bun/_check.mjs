// The smoke test's tiny runner: named checks with one line of output each,
// and the paths of the built npm package.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (tests/bun/../..). */
export const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
/** The npm build's ESM output, which these checks import. */
export const esm = join(root, "npm/esm");
if (!existsSync(join(esm, "mod.js"))) {
  console.error(
    `bun smoke: ${esm}/mod.js is missing; run \`node scripts/build_npm.mjs --no-test\` first`,
  );
  process.exit(1);
}

export const results = { passed: 0, failed: 0 };

/** Runs one check, printing `ok`/`FAIL`, its name and duration. */
export async function check(name, fn) {
  const start = performance.now();
  try {
    const note = await fn();
    results.passed++;
    const ms = Math.round(performance.now() - start);
    console.log(`ok    ${name} (${ms} ms)${note ? ` — ${note}` : ""}`);
  } catch (err) {
    results.failed++;
    console.log(`FAIL  ${name}\n      ${String(err?.stack ?? err).split("\n").join("\n      ")}`);
  }
}

/** Throws `message` unless `cond`. */
export function expect(cond, message) {
  if (!cond) throw new Error(message);
}
