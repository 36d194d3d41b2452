import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "./_test.ts";

// No two modules import each other, directly or through others, counting
// type-only imports too: a circle makes the layers (design.md: data flows top
// to bottom, nothing flows back up) a matter of luck, and a change on one side
// of it can break the other's evaluation order. The graph is read from the
// .ts sources (the emitted JavaScript has lost its type-only imports).

/**
 * The repository's root: the nearest folder above this file holding `mod.ts`
 * and `src/` (tests/ on Deno; npm/esm/tests/ on Node, two levels further
 * down), or `undefined` when the sources are not there (an installed package).
 */
function sourceRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (true) {
    if (existsSync(join(dir, "mod.ts")) && existsSync(join(dir, "src"))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const REGEX_AFTER = new Set("(,=:[!&|?{};+-*%<>~^".split(""));
const REGEX_AFTER_WORD =
  /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|void|yield|await|throw|delete|new)$/;

/**
 * The source with its comments blanked out (newlines kept), so that an
 * `import` in a JSDoc example or a commented-out line is not read as one.
 * Strings, template literals and regular expression literals are skipped
 * whole, so that `//` or a quote inside them is not taken for a comment.
 */
function stripComments(src: string): string {
  let out = "";
  let i = 0;
  let last = ""; // the last significant code character, for the regex-or-division question
  let lastWordEnd = 0; // where `last` was written in `out`
  const braces: number[] = []; // open `{` counts of each template `${` we are inside
  const skipQuoted = (quote: string) => {
    const start = i++;
    while (i < src.length && src[i] !== quote && src[i] !== "\n") i += src[i] === "\\" ? 2 : 1;
    i++;
    out += src.slice(start, i);
  };
  const skipTemplate = () => {
    // from just after a backtick or a `}` closing `${`: to the closing backtick or the next `${`
    const start = i;
    while (i < src.length) {
      if (src[i] === "\\") i += 2;
      else if (src[i] === "`") {
        i++;
        out += src.slice(start, i);
        return;
      } else if (src[i] === "$" && src[i + 1] === "{") {
        i += 2;
        out += src.slice(start, i);
        braces.push(0);
        return;
      } else i++;
    }
    out += src.slice(start, i);
  };
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'") {
      skipQuoted(c);
      last = c;
      lastWordEnd = out.length;
    } else if (c === "`") {
      out += c;
      i++;
      skipTemplate();
      last = "`";
      lastWordEnd = out.length;
    } else if (c === "{" && braces.length > 0) {
      braces[braces.length - 1]++;
      out += c;
      i++;
      last = c;
    } else if (c === "}" && braces.length > 0 && braces[braces.length - 1] === 0) {
      braces.pop();
      out += c;
      i++;
      skipTemplate();
      last = "`";
    } else if (
      c === "/" &&
      (last === "" || REGEX_AFTER.has(last) || REGEX_AFTER_WORD.test(out.slice(0, lastWordEnd)))
    ) {
      const start = i++;
      let inClass = false;
      while (i < src.length && src[i] !== "\n") {
        if (src[i] === "\\") i++;
        else if (src[i] === "[") inClass = true;
        else if (src[i] === "]") inClass = false;
        else if (src[i] === "/" && !inClass) break;
        i++;
      }
      i++;
      out += src.slice(start, i);
      last = "/";
    } else {
      if (c === "}" && braces.length > 0) braces[braces.length - 1]--;
      out += c;
      i++;
      if (!/\s/.test(c)) {
        last = c;
        lastWordEnd = out.length;
      }
    }
  }
  return out;
}

/** Every module specifier a source imports or re-exports, type-only and dynamic ones included. */
function specifiersOf(source: string): string[] {
  const code = stripComments(source);
  const patterns = [
    // import x from "…", import type { … } from "…", export { … } from "…", export * as n from "…"
    /(?:^|[\n;])\s*(?:import|export)\s[^;"'`]*?\bfrom\s*(["'])([^"'\n]+)\1/g,
    // import "…" (for its effects)
    /(?:^|[\n;])\s*import\s*(["'])([^"'\n]+)\1/g,
    // import("…") with a literal, in code or in a type (`typeof import("…")`)
    /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*[,)]/g,
  ];
  return patterns.flatMap((re) => [...code.matchAll(re)].map((m) => m[2]));
}

/** Each file's relative imports that resolve to a .ts file, reachable from `seeds`. */
function importGraph(
  root: string,
  seeds: string[],
): { graph: Map<string, Set<string>>; unresolved: string[] } {
  const graph = new Map<string, Set<string>>();
  const unresolved: string[] = [];
  const visit = (file: string) => {
    if (graph.has(file)) return;
    const targets = new Set<string>();
    graph.set(file, targets);
    for (const s of specifiersOf(readFileSync(join(root, file), "utf8"))) {
      if (!s.startsWith("./") && !s.startsWith("../")) continue;
      const target = relative(root, resolve(root, dirname(file), s)).replaceAll("\\", "/");
      if (!existsSync(join(root, target))) {
        unresolved.push(`${file} imports ${s}, which is not there`);
        continue;
      }
      if (!target.endsWith(".ts")) continue; // a .json or .d.ts of the build: no edges out of it
      targets.add(target);
    }
    for (const t of targets) visit(t);
  };
  for (const f of seeds) visit(f);
  return { graph, unresolved };
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) connect(v);
  return found;
}

/** One circle through `start` inside `component`, as `a -> b -> … -> a`. */
function circleThrough(
  graph: Map<string, Set<string>>,
  component: string[],
  start: string,
): string {
  const inside = new Set(component);
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = from.get(at)!) path.splice(1, 0, at);
        return [...path, start].join(" -> ");
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return component.join(", ");
}

function tsFilesUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir)).sort().flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) return tsFilesUnder(root, path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

test("the import reader sees type-only, re-exported and dynamic imports, and not those in comments or strings", () => {
  const source = [
    'import { a } from "./a.ts";',
    'import type { B } from "./b.ts";',
    "import {",
    "  c,",
    "  type C,",
    '} from "./c.ts";',
    'export { d } from "./d.ts";',
    'export type { E } from "./e.ts";',
    'export * as f from "./f.ts";',
    'import "./g.ts";',
    'const h = await import("./h.ts");',
    'type I = typeof import("./i.ts");',
    "/**",
    " * @example",
    " * ```ts",
    ' * import { x } from "../../mod.ts";',
    " * ```",
    " */",
    '// import { y } from "./y.ts";',
    'const s = "// not a comment"; const r = /["\'/]/g; const t = `${s} /* nor this */`;',
    'export { j } from "./j.ts";',
  ].join("\n");
  assert.deepEqual(specifiersOf(source).sort(), [
    "./a.ts",
    "./b.ts",
    "./c.ts",
    "./d.ts",
    "./e.ts",
    "./f.ts",
    "./g.ts",
    "./h.ts",
    "./i.ts",
    "./j.ts",
  ]);
});

test("the circle finder finds a two-file circle, a longer one and a self-import, and nothing in a tree", () => {
  const g = (edges: Record<string, string[]>) =>
    new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]));
  assert.deepEqual(circles(g({ a: ["b"], b: ["c"], c: [] })), []);
  assert.deepEqual(
    circles(g({ a: ["b"], b: ["a"], c: ["d"], d: ["e"], e: ["c"], f: ["f"], h: ["a"] })),
    [["a", "b"], ["c", "d", "e"], ["f"]],
  );
});

test("no import cycles: no module of src/ or of an entry point imports itself through others, type-only imports included", () => {
  const root = sourceRoot();
  if (root === undefined) {
    console.log("import_cycles_test: the .ts sources are not reachable from here; skipped");
    return;
  }
  const entries = readdirSync(root).filter((n) => n.endsWith(".ts") && !n.endsWith(".d.ts")).sort();
  for (const expected of ["mod.ts", "testkit.ts", "metrics.ts", "kubeconfig.ts", "checkpoint.ts"]) {
    assert.ok(entries.includes(expected), `${expected} is an entry point at ${root}`);
  }
  const { graph, unresolved } = importGraph(root, [...entries, ...tsFilesUnder(root, "src")]);
  assert.ok(graph.size > 100, `read ${graph.size} modules`);
  assert.deepEqual(unresolved, [], "every relative import names a file that exists");
  const found = circles(graph).map((component) => {
    const ties = component.flatMap((a) =>
      [...graph.get(a)!].filter((b) => component.includes(b)).map((b) => `    ${a} imports ${b}`)
    );
    return [`  ${circleThrough(graph, component, component[0])}`, ...ties].join("\n");
  });
  assert.equal(
    found.length,
    0,
    `${found.length} import cycle(s) (a type-only import counts: move the shared type down a layer):\n${
      found.join("\n")
    }`,
  );
});
