/**
 * Label selectors: the string syntax of `kubectl -l` and `?labelSelector=`,
 * and the structured `metav1.LabelSelector` of workload specs.
 *
 * @module
 */

/**
 * One `matchExpressions` entry of a structured selector.
 */
export interface LabelSelectorRequirement {
  /** The label's key. */
  key: string;
  /** How the label is tested: its value among `values`, not among them, the label present, or absent. */
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  /** The values for `In` and `NotIn` (at least one); none for `Exists` and `DoesNotExist`. */
  values?: string[];
}

/**
 * A structured selector (`metav1.LabelSelector`); both parts must match.
 */
export interface LabelSelectorSpec {
  /** Labels that must be present with exactly these values. Default: none. */
  matchLabels?: Record<string, string>;
  /** Requirements that must all hold. Default: none. */
  matchExpressions?: LabelSelectorRequirement[];
}

type Op = "in" | "notin" | "exists" | "!exists" | "gt" | "lt";
interface Requirement {
  key: string;
  op: Op;
  values: string[];
}

const TOKEN = /\s*(!=|==|=|!|>|<|\(|\)|,|[A-Za-z0-9._\/-]+)/y;

/**
 * A compiled label selector. Semantics are Kubernetes': every requirement
 * must hold; `!=` and `notin` also match objects without the label; an
 * empty selector matches everything.
 *
 * Accepted syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
 * `k` (exists), `!k` (does not exist), `k>1`, `k<1` (integer values),
 * separated by commas.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LabelSelector } from "../../mod.ts";
 *
 * const sel = LabelSelector.parse("app=web,tier in (front,edge),!canary");
 * assert.ok(sel.matches({ app: "web", tier: "edge" }));
 * assert.ok(!sel.matches({ app: "web", tier: "edge", canary: "1" }));
 * const spec = {
 *   matchLabels: { app: "web" },
 *   matchExpressions: [{ key: "env", operator: "NotIn" as const, values: ["prod", "staging"] }],
 * };
 * assert.equal(LabelSelector.from(spec).toString(), "app=web,env notin (prod,staging)");
 * assert.throws(() => LabelSelector.parse("app=(web"), TypeError);
 * ```
 */
export class LabelSelector {
  readonly #requirements: Requirement[];

  private constructor(requirements: Requirement[]) {
    this.#requirements = requirements;
  }

  /** The selector matching everything. */
  static readonly everything: LabelSelector = new LabelSelector([]);

  /**
   * Compiles a selector string (the syntax above; `""` matches everything).
   *
   * @throws {TypeError} when `selector` is not valid syntax.
   */
  static parse(selector: string): LabelSelector {
    if (typeof selector !== "string") {
      throw new TypeError("LabelSelector.parse: selector must be a string");
    }
    const tokens: string[] = [];
    TOKEN.lastIndex = 0;
    while (TOKEN.lastIndex < selector.length) {
      const start = TOKEN.lastIndex;
      const m = TOKEN.exec(selector);
      if (!m) {
        if (selector.slice(start).trim() === "") break;
        throw invalid(selector, `unexpected character at offset ${start}`);
      }
      tokens.push(m[1]);
    }
    return new LabelSelector(parseTokens(tokens, selector));
  }

  /**
   * Compiles a structured selector (`metav1.LabelSelector`); an empty one matches everything.
   *
   * @throws {TypeError} when an operator is unknown or values do not fit it.
   */
  static from(spec: LabelSelectorSpec): LabelSelector {
    const reqs: Requirement[] = [];
    for (const [key, value] of Object.entries(spec?.matchLabels ?? {})) {
      reqs.push({ key, op: "in", values: [value] });
    }
    for (const e of spec?.matchExpressions ?? []) {
      const op = ({ In: "in", NotIn: "notin", Exists: "exists", DoesNotExist: "!exists" } as const)[
        e.operator
      ];
      const values = e.values ?? [];
      if (!op) {
        throw new TypeError(`LabelSelector.from: unknown operator ${JSON.stringify(e.operator)}`);
      }
      if ((op === "in" || op === "notin") !== values.length > 0) {
        throw new TypeError(
          `LabelSelector.from: operator ${e.operator} of "${e.key}" has the wrong number of values`,
        );
      }
      reqs.push({ key: e.key, op, values });
    }
    return new LabelSelector(reqs);
  }

  /** True when the selector has no requirement (it matches everything). */
  get empty(): boolean {
    return this.#requirements.length === 0;
  }

  /** True when `labels` satisfy every requirement. */
  matches(labels: Record<string, string> | undefined): boolean {
    const ls = labels ?? {};
    return this.#requirements.every(({ key, op, values }) => {
      const has = Object.hasOwn(ls, key);
      const v = ls[key];
      switch (op) {
        case "in":
          return has && values.includes(v);
        case "notin":
          return !has || !values.includes(v);
        case "exists":
          return has;
        case "!exists":
          return !has;
        case "gt":
        case "lt": {
          if (!has || !/^-?\d+$/.test(v)) return false;
          return op === "gt" ? Number(v) > Number(values[0]) : Number(v) < Number(values[0]);
        }
      }
    });
  }

  /**
   * The same selector in a canonical form: requirements sorted by key (then
   * operator and values), the values of `in` and `notin` sorted, duplicates
   * dropped. Equivalent selectors (`x=1,y=2` and `y=2, x=1`, `k in (a,b)`
   * and `k in (b,a)`) give equal {@linkcode LabelSelector.toString}s.
   */
  normalized(): LabelSelector {
    const seen = new Map<string, Requirement>();
    for (const r of this.#requirements) {
      const values = [...new Set(r.values)].sort(compare);
      const req = { key: r.key, op: r.op, values };
      seen.set(JSON.stringify([req.key, req.op, values]), req);
    }
    const reqs = [...seen.values()].sort((a, b) =>
      compare(a.key, b.key) || compare(a.op, b.op) ||
      compare(a.values.join(","), b.values.join(","))
    );
    return new LabelSelector(reqs);
  }

  /** The selector in string syntax (what the API server's `labelSelector` takes). */
  toString(): string {
    return this.#requirements.map(({ key, op, values }) => {
      if (op === "exists") return key;
      if (op === "!exists") return `!${key}`;
      if (op === "gt" || op === "lt") return `${key}${op === "gt" ? ">" : "<"}${values[0]}`;
      if (values.length === 1) return `${key}${op === "in" ? "=" : "!="}${values[0]}`;
      return `${key} ${op} (${values.join(",")})`;
    }).join(",");
  }
}

/**
 * Compiles a selector given as a string, a {@linkcode LabelSelectorSpec}
 * or a {@linkcode LabelSelector} (returned as is).
 */
export function labelSelector(selector: string | LabelSelectorSpec | LabelSelector): LabelSelector {
  if (selector instanceof LabelSelector) return selector;
  return typeof selector === "string"
    ? LabelSelector.parse(selector)
    : LabelSelector.from(selector);
}

function parseTokens(tokens: string[], source: string): Requirement[] {
  const reqs: Requirement[] = [];
  let i = 0;
  const isName = (t: string | undefined) => t !== undefined && /^[A-Za-z0-9._\/-]+$/.test(t);
  const name = (what: string): string => {
    const t = tokens[i];
    if (!isName(t)) {
      throw invalid(source, `expected ${what}, got ${t === undefined ? "the end" : `"${t}"`}`);
    }
    i++;
    return t;
  };
  const optionalValue = (): string => (isName(tokens[i]) ? tokens[i++] : "");
  while (i < tokens.length) {
    if (tokens[i] === "!") {
      i++;
      reqs.push({ key: name("a label key"), op: "!exists", values: [] });
    } else {
      const key = name("a label key");
      const t = tokens[i];
      if (t === undefined || t === ",") reqs.push({ key, op: "exists", values: [] });
      else if (t === "=" || t === "==" || t === "!=") {
        i++;
        reqs.push({ key, op: t === "!=" ? "notin" : "in", values: [optionalValue()] });
      } else if (t === ">" || t === "<") {
        i++;
        const v = name("an integer");
        if (!/^-?\d+$/.test(v)) throw invalid(source, `"${v}" is not an integer`);
        reqs.push({ key, op: t === ">" ? "gt" : "lt", values: [v] });
      } else if (t === "in" || t === "notin") {
        i++;
        if (tokens[i++] !== "(") throw invalid(source, `expected "(" after ${t}`);
        const values = [optionalValue()];
        while (tokens[i] === ",") {
          i++;
          values.push(optionalValue());
        }
        if (tokens[i++] !== ")") throw invalid(source, `expected ")" to close the ${t} list`);
        reqs.push({ key, op: t, values });
      } else throw invalid(source, `unexpected "${t}" after "${key}"`);
    }
    if (i < tokens.length && tokens[i++] !== ",") {
      throw invalid(source, `expected "," before "${tokens[i - 1]}"`);
    }
    if (i === tokens.length && tokens[i - 1] === ",") {
      throw invalid(source, `expected a requirement after the last ","`);
    }
  }
  return reqs;
}

/** Code-unit order: the same on every runtime and locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function invalid(source: string, why: string): TypeError {
  return new TypeError(`invalid label selector ${JSON.stringify(source)}: ${why}`);
}
