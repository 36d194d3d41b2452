/**
 * Label selectors as the API server parses them: comma-separated
 * requirements, each one of `a=b`, `a==b`, `a!=b`, `a` (exists), `!a`
 * (does not exist), `a in (x,y)`, `a notin (x)`, `a>1`, `a<1`.
 *
 * @module
 */

type Labels = Record<string, string> | undefined;
type Requirement = (labels: Record<string, string>) => boolean;

const KEY = String.raw`(?:[A-Za-z0-9][-A-Za-z0-9_.]*\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const EXISTS = new RegExp(`^(${KEY})$`);
const NOT_EXISTS = new RegExp(`^!\\s*(${KEY})$`);
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const COMPARE = new RegExp(`^(${KEY})\\s*(>|<)\\s*(-?[0-9]+)$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const SET_VALUE = new RegExp(`^${VALUE}$`);

/** A selector string that does not parse; the server answers 400 BadRequest. */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SelectorError";
  }
}

/** Parses a label selector into a predicate over an object's labels; `""` matches everything. */
export function parseLabelSelector(selector: string): (labels: Labels) => boolean {
  const requirements = splitTopLevel(selector).map(parseRequirement);
  return (labels) => requirements.every((req) => req(labels ?? {}));
}

/** Splits at commas that are not inside parentheses; drops empty terms. */
function splitTopLevel(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if ((c === "," && depth === 0) || i === selector.length) {
      const term = selector.slice(start, i).trim();
      if (term) terms.push(term);
      start = i + 1;
    }
  }
  return terms;
}

function parseRequirement(term: string): Requirement {
  let m = NOT_EXISTS.exec(term);
  if (m) {
    const key = m[1];
    return (labels) => !(key in labels);
  }
  m = EXISTS.exec(term);
  if (m) {
    const key = m[1];
    return (labels) => key in labels;
  }
  m = EQUALITY.exec(term);
  if (m) {
    const [, key, op, value] = m;
    if (op === "!=") return (labels) => labels[key] !== value;
    return (labels) => labels[key] === value;
  }
  m = COMPARE.exec(term);
  if (m) {
    const [, key, op, bound] = m;
    const limit = Number(bound);
    return (labels) => {
      if (!(key in labels) || !/^-?[0-9]+$/.test(labels[key])) return false;
      return op === ">" ? Number(labels[key]) > limit : Number(labels[key]) < limit;
    };
  }
  m = SET.exec(term);
  if (m) {
    const [, key, op, list] = m;
    const values = new Set(list.split(",").map((v) => v.trim()));
    for (const v of values) {
      if (!SET_VALUE.test(v)) throw new SelectorError(`invalid label value: "${v}"`);
    }
    if (op === "in") return (labels) => key in labels && values.has(labels[key]);
    return (labels) => !(key in labels) || !values.has(labels[key]);
  }
  throw new SelectorError(`unable to parse requirement: "${term}"`);
}
