/**
 * Internals of the informer factory: canonical selector strings, so that
 * equivalent selectors share one informer and name it the same way.
 *
 * @module
 */
import { LabelSelector } from "./label_selector.ts";

/**
 * A label selector in canonical form (see {@linkcode LabelSelector.normalized}):
 * `"y=2, x=1"` and `"x=1,y=2"` both give `"x=1,y=2"`; `""` stays `""`.
 *
 * @throws {TypeError} when `selector` is not a valid label selector.
 */
export function normalizeLabelSelector(selector: string): string {
  return LabelSelector.parse(selector).normalized().toString();
}

/**
 * A field selector in canonical form: its terms (split at commas not
 * escaped with `\`) sorted, duplicates and empty terms dropped, `==`
 * written `=`. Spaces are kept: the API server does not trim field
 * selectors, so `a = b` and `a=b` differ there too.
 */
export function normalizeFieldSelector(selector: string): string {
  const terms = new Set<string>();
  for (const term of splitTerms(selector)) {
    if (term === "") continue;
    const at = operatorAt(term);
    terms.add(
      at && term.startsWith("==", at) ? `${term.slice(0, at)}=${term.slice(at + 2)}` : term,
    );
  }
  return [...terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(",");
}

/** Splits at commas not escaped with a backslash (the API server's `splitTerms`). */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (escaped) escaped = false;
    else if (c === "\\") escaped = true;
    else if (c === ",") {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** Where a term's operator (`!=`, `==` or `=`) starts, skipping escaped characters; 0 if none. */
function operatorAt(term: string): number {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === "\\") i++;
    else if (term[i] === "=" || (term[i] === "!" && term[i + 1] === "=")) return i;
  }
  return 0;
}
