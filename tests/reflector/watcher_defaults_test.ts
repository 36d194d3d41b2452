import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "../_test.ts";
import { WATCHER_DEFAULTS } from "../../src/reflector/watcher_defaults.ts";
import { resolveWatcherOptions } from "../../src/reflector/_resolve_watcher_options.ts";

// Deno runs this from tests/, Node from npm/esm/tests/ (where the repository
// sits two levels up and the options' JSDoc lives in the emitted .d.ts). The
// options table is in docs/reflector.md.
const root = new URL("../../", import.meta.url);
const ts = import.meta.url.endsWith(".ts");
const readme = readFileSync(
  fileURLToPath(
    [new URL("docs/reflector.md", root), new URL("../../docs/reflector.md", root)].find((u) =>
      existsSync(fileURLToPath(u))
    )!,
  ),
  "utf8",
);
const optionsSource = readFileSync(
  fileURLToPath(new URL(`src/reflector/watcher_options.${ts ? "ts" : "d.ts"}`, root)),
  "utf8",
);

const SCALARS = [
  "pageSize",
  "minWatchTimeoutMs",
  "idleGraceMs",
  "shortWatchMs",
  "listTimeoutMs",
  "maxRetryAfterMs",
  "streamingListAttempts",
  "useStreamingList",
] as const;

/** The JSDoc comment right before `name?:` in the options interface. */
function jsdocOf(name: string): string {
  const at = optionsSource.search(new RegExp(`\\n\\s*(readonly )?${name}\\?:`));
  assert.ok(at > 0, `${name} is declared`);
  const before = optionsSource.slice(0, at);
  return before.slice(before.lastIndexOf("/**"));
}

const plain = (s: string) => s.replaceAll("_", "");

test("every scalar default is the same in WATCHER_DEFAULTS, the resolver, the JSDoc and the options table of docs/reflector.md", () => {
  const resolved = resolveWatcherOptions({}) as unknown as Record<string, unknown>;
  for (const name of SCALARS) {
    const value = WATCHER_DEFAULTS[name];
    assert.equal(resolved[name], value, `resolver: ${name}`);
    const doc = jsdocOf(name).match(/Default:[\s*]*`([^`]+)`/);
    assert.ok(doc, `JSDoc of ${name} names its default`);
    assert.equal(plain(doc[1]), String(value), `JSDoc of ${name}`);
    const row = readme.match(new RegExp(`\\n\\| \`${name}\` +\\| \`([^\`]+)\``));
    assert.ok(row, `README row of ${name}`);
    assert.equal(plain(row[1]), String(value), `README of ${name}`);
  }
  const resync = readme.match(/\n\| `resyncPeriodMs` +\| `([^`]+)`/);
  assert.equal(resync?.[1], String(WATCHER_DEFAULTS.resyncPeriodMs));
});

test("both backoffs' defaults are the same in WATCHER_DEFAULTS, the JSDoc and the options table of docs/reflector.md", () => {
  for (const name of ["backoff", "reconnectBackoff"] as const) {
    const d = WATCHER_DEFAULTS[name];
    const row = readme.match(new RegExp(`\\n\\| \`${name}\` +\\| \`\\{ ([^}]+) \\}\``));
    assert.ok(row, `README row of ${name}`);
    const fields = Object.fromEntries(
      row[1].split(",").map((kv) => kv.trim().split(/:\s*/)).map(([k, v]) => [k, Number(v)]),
    );
    assert.deepEqual(fields, { ...d }, `README of ${name}`);
    const doc = plain(jsdocOf(name));
    for (const key of ["initialMs", "factor", "capMs", "resetAfterMs"] as const) {
      assert.ok(doc.includes(`\`${d[key]}\``), `JSDoc of ${name} names ${key} = ${d[key]}`);
    }
  }
});

test("WATCHER_DEFAULTS cannot be changed at run time", () => {
  assert.ok(Object.isFrozen(WATCHER_DEFAULTS));
  assert.ok(Object.isFrozen(WATCHER_DEFAULTS.backoff));
  assert.ok(Object.isFrozen(WATCHER_DEFAULTS.reconnectBackoff));
});
