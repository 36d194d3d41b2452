/**
 * A small seeded random number generator (mulberry32), so that one `--seed`
 * gives one churn and one fault schedule.
 *
 * @module
 */

/** Random numbers in [0, 1) from `seed` (an unsigned 32-bit integer): the same seed, the same numbers. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number in [0, n) drawn from `random`. */
export function randomInt(random: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}
