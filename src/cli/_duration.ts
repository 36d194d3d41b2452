/**
 * Durations as Go's `time.ParseDuration` writes the common ones (and
 * kubectl's flags take them): `1500ms`, `30s`, `2m`, `1m30s`, `1h`.
 *
 * @module
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The duration in ms, or undefined when `text` is not one. */
export function parseDuration(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, n, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * UNIT_MS[unit];
  }
  return total;
}
