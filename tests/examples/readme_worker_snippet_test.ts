import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "../_test.ts";

// README.md and docs/edge.md show the Worker of examples/edge_worker.ts whole: its code after the
// module doc comment, with the package's names in place of the repository's paths. The example
// runs on workerd in CI (tests/workerd/edge_worker_example_smoke.mjs), the snippets on Node and
// Deno (scripts/check_readme.mjs); this test keeps them the same code, so that what a reader
// copies is what was run.

/**
 * The repository's root: the nearest folder above this file holding examples/edge_worker.ts and
 * README.md (tests/examples/ on Deno; npm/esm/tests/examples/ on Node, two levels further down),
 * or `undefined` when the sources are not there (an installed package).
 */
function repositoryRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (true) {
    if (existsSync(join(dir, "examples/edge_worker.ts")) && existsSync(join(dir, "README.md"))) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** The example's code after its module doc comment, imported as a user of the package would. */
function exampleCode(root: string): string {
  const text = readFileSync(join(root, "examples/edge_worker.ts"), "utf8");
  const end = text.indexOf("\n */\n");
  assert.ok(text.startsWith("/**") && end > 0, "examples/edge_worker.ts starts with a doc comment");
  return text.slice(end + 4)
    .replaceAll('"../mod.ts"', '"kube-reflector"')
    .replaceAll('"../checkpoint.ts"', '"kube-reflector/checkpoint"')
    .trim();
}

/** The bodies of the blocks fenced ```ts worker in a Markdown text. */
function workerBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts worker\n([\s\S]*?)^```/gm)].map((m) => m[1].trim());
}

/** Where two texts first differ, line by line, for the failure message. */
function firstDifference(a: string, b: string): string {
  const al = a.split("\n");
  const bl = b.split("\n");
  for (let i = 0; i < Math.max(al.length, bl.length); i++) {
    if (al[i] !== bl[i]) {
      return `line ${i + 1} of the snippet:\n  snippet: ${bl[i] ?? "(none)"}\n  example: ${
        al[i] ?? "(none)"
      }`;
    }
  }
  return "no difference";
}

for (const doc of ["README.md", "docs/edge.md"]) {
  test(`the catch-up Worker in ${doc} is examples/edge_worker.ts's code, with the package's import names`, () => {
    const root = repositoryRoot();
    if (root === undefined) {
      console.log("readme_worker_snippet_test: the sources are not reachable from here; skipped");
      return;
    }
    const example = exampleCode(root);
    const snippets = workerBlocks(readFileSync(join(root, doc), "utf8"))
      .filter((code) => code.includes("catchUp("));
    assert.equal(snippets.length, 1, `${doc} has one \`\`\`ts worker block calling catchUp`);
    assert.ok(
      snippets[0] === example,
      `${doc} differs from examples/edge_worker.ts at ${firstDifference(example, snippets[0])}`,
    );
  });
}
