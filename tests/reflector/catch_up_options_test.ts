import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "../_test.ts";
import { CATCH_UP_DEFAULTS, resolveCatchUpOptions } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";

// Deno runs this from tests/, Node from npm/esm/tests/ (the options' JSDoc is in the emitted .d.ts).
const root = new URL("../../", import.meta.url);
const ts = import.meta.url.endsWith(".ts");
const source = readFileSync(
  fileURLToPath(new URL(`src/reflector/catch_up_options.${ts ? "ts" : "d.ts"}`, root)),
  "utf8",
);

/** The `Default:` of the JSDoc right before `name?:` in CatchUpOptions. */
function documentedDefault(name: string): string | undefined {
  const at = source.search(new RegExp(`\\n\\s*(readonly )?${name}\\?:`));
  assert.ok(at > 0, `${name} is declared`);
  const before = source.slice(0, at);
  const doc = before.slice(before.lastIndexOf("/**"));
  return doc.match(/Default:[\s*]*`([^`]+)`/)?.[1]?.replaceAll("_", "");
}

test("every catchUp default is the same in CATCH_UP_DEFAULTS, the resolver and the options' JSDoc", () => {
  const resolved = resolveCatchUpOptions({ storage: memoryCheckpointStorage(), key: "k" });
  for (const name of ["budgetMs", "saveTimeoutMs", "watchTimeoutSeconds"] as const) {
    assert.equal(resolved[name], CATCH_UP_DEFAULTS[name], `resolver: ${name}`);
    assert.equal(documentedDefault(name), String(CATCH_UP_DEFAULTS[name]), `JSDoc of ${name}`);
  }
  assert.ok(Object.isFrozen(CATCH_UP_DEFAULTS));
});

test("absurd catchUp options are refused with a TypeError or RangeError", () => {
  const storage = memoryCheckpointStorage();
  const bad: Array<[Record<string, unknown>, ErrorConstructor]> = [
    [{ budgetMs: Infinity }, RangeError],
    [{ budgetMs: -1 }, RangeError],
    [{ saveTimeoutMs: 0 }, RangeError],
    [{ saveTimeoutMs: NaN }, RangeError],
    [{ budgetMs: 2 ** 40 }, RangeError],
    [{ watchTimeoutSeconds: 2.5 }, RangeError],
    [{ watchTimeoutSeconds: 3601 }, RangeError],
    [{ onError: "log" }, TypeError],
    [{ random: 4 }, TypeError],
  ];
  for (const [extra, kind] of bad) {
    assert.throws(
      () => resolveCatchUpOptions({ storage, key: "k", ...extra }),
      kind,
      JSON.stringify(extra),
    );
  }
});
