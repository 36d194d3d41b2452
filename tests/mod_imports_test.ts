import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "./_test.ts";

/** Every module reachable from `entry` by static or dynamic imports, with the specifiers each imports. */
function importGraph(entry: URL): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (url: URL) => {
    if (seen.has(url.href)) return;
    const text = readFileSync(url, "utf8");
    const specifiers = [
      ...text.matchAll(
        /(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g,
      ),
    ]
      .map((m) => m[1] ?? m[2] ?? m[3]);
    seen.set(url.href, specifiers);
    for (const s of specifiers) if (s.startsWith(".")) visit(new URL(s, url));
  };
  visit(entry);
  return seen;
}

// The tests run from tests/ on Deno and from npm/esm/tests/ on Node: find the
// entry next to this file's parent either way.
const root = new URL("../", import.meta.url);
const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

test("mod.ts imports nothing but web standards: no node:, npm: or bare specifiers anywhere in its graph", () => {
  const graph = importGraph(new URL(`mod${ext}`, root));
  assert.ok(graph.size > 20, `walked ${graph.size} modules`);
  for (const [file, specifiers] of graph) {
    for (const s of specifiers) {
      assert.ok(s.startsWith("."), `${file.slice(root.href.length)} imports ${s}`);
    }
  }
});

test("the core never reaches the runtime-specific entry points (testkit, kubeconfig, metrics adapter)", () => {
  const files = [...importGraph(new URL(`mod${ext}`, root)).keys()];
  for (const f of files) {
    assert.ok(!/\/(testkit|kubeconfig)\//.test(f), f);
    assert.ok(!/prometheus_metrics|metrics_response/.test(f), f);
  }
});
