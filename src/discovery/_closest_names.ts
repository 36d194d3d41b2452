/**
 * The names closest to a mistyped one, for "did you mean" hints.
 *
 * @module
 */

/**
 * The edit distance of `a` and `b` counting an insertion, a deletion, a
 * substitution or a swap of two neighbours as one edit (the optimal string
 * alignment distance: `deplyo` is one edit from `deploy`).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0].push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2][j - 2] + 1);
      }
      rows[i].push(d);
    }
  }
  return rows[a.length][b.length];
}

/**
 * The `names` close to `input` (compared lower-cased), best first: those
 * within `max(1, floor(length / 3))` edits of it, and those it begins (at
 * least 3 characters typed) or that begin it; ties keep the order of
 * `names`. Each name appears once; at most `limit` (default 5).
 */
export function closestNames(input: string, names: readonly string[], limit = 5): string[] {
  const typed = input.toLowerCase();
  if (typed === "") return [];
  const maxEdits = Math.max(1, Math.floor(typed.length / 3));
  const scored: Array<{ name: string; score: number; index: number }> = [];
  const seen = new Set<string>();
  names.forEach((name, index) => {
    const lower = name.toLowerCase();
    if (seen.has(lower) || lower === typed) return;
    seen.add(lower);
    const distance = editDistance(typed, lower);
    const prefix = (typed.length >= 3 && lower.startsWith(typed)) ||
      (lower.length >= 3 && typed.startsWith(lower));
    if (distance <= maxEdits) scored.push({ name, score: distance, index });
    else if (prefix) scored.push({ name, score: maxEdits + 1, index });
  });
  scored.sort((x, y) => x.score - y.score || x.index - y.index);
  return scored.slice(0, limit).map((s) => s.name);
}
