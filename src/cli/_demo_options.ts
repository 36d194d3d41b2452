/**
 * The `demo` command's flags: their defaults (one place), parsing and
 * validation. A bad value is a {@linkcode UsageError} (exit code 2).
 *
 * @module
 */
import { type FlagSpec, parseFlags } from "./_flags.ts";
import { UsageError } from "./_usage_error.ts";
import { parseDuration } from "./_duration.ts";

/** What the demo runs with, every default applied. */
export interface DemoOptions {
  /** ConfigMaps created before the informer starts; churn keeps the count near it. */
  objects: number;
  /** Namespaces the objects are spread over. */
  namespaces: number;
  /** Creates, updates and deletes per second. */
  rate: number;
  /** How long the churn runs, in ms; `undefined`: until Ctrl-C. */
  durationMs: number | undefined;
  /** Seed of the churn and of the fault schedule. */
  seed: number;
  /** A fault every this many ms; `0`: no faults. */
  faultEveryMs: number;
}

/** The demo's defaults. */
export const DEMO_DEFAULTS = {
  objects: 3000,
  namespaces: 5,
  rate: 200,
  /** The duration when neither stdout nor stderr is a terminal (CI): the run ends by itself. */
  nonTerminalDurationMs: 20_000,
  faultEveryMs: 2_000,
} as const;

/** The flags `demo` accepts. */
export const DEMO_FLAGS: readonly FlagSpec[] = [
  { name: "objects", switch: false },
  { name: "namespaces", switch: false },
  { name: "rate", switch: false },
  { name: "duration", switch: false },
  { name: "seed", switch: false },
  { name: "fault-every", switch: false },
  { name: "help", short: "h", switch: true },
];

/**
 * Parses a duration as the other commands do (`500ms`, `30s`, `1.5s`,
 * `2m`, `1h`, `1m30s`); a bare number is seconds. Returns whole ms, or
 * `undefined` when it is not a duration.
 */
export function demoDuration(text: string): number | undefined {
  const t = text.trim();
  const ms = /^\d+(\.\d+)?$/.test(t) ? Number(t) * 1_000 : parseDuration(t);
  return ms === undefined ? undefined : Math.round(ms);
}

/**
 * Parses the demo's arguments. `"help"` when `--help` is given.
 * `terminal`: whether a terminal shows the run (then it lasts until Ctrl-C
 * by default). `randomSeed`: the seed when `--seed` is not given.
 */
export function parseDemoArgs(
  args: readonly string[],
  context: { terminal: boolean; randomSeed: () => number },
): DemoOptions | "help" {
  const { values, positionals } = parseFlags(args, DEMO_FLAGS, "demo");
  if (values.get("help") === "true") return "help";
  if (positionals.length > 0) {
    throw new UsageError(`demo takes no arguments (got "${positionals[0]}")`, "demo");
  }
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const text = values.get(name);
    if (text === undefined) return fallback;
    const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(
        `--${name} must be a whole number from ${min} to ${max} (got "${text}")`,
        "demo",
      );
    }
    return n;
  };
  const duration = (name: string): number | undefined => {
    const text = values.get(name);
    if (text === undefined) return undefined;
    const ms = demoDuration(text);
    if (ms === undefined) {
      throw new UsageError(
        `--${name} must be a duration such as 30s, 500ms or 2m (got "${text}")`,
        "demo",
      );
    }
    return ms;
  };
  const durationMs = duration("duration");
  if (durationMs !== undefined && (durationMs <= 0 || durationMs > 7 * 24 * 3_600_000)) {
    throw new UsageError(
      `--duration must be more than 0 and at most 168h (got "${values.get("duration")}")`,
      "demo",
    );
  }
  const faultEveryMs = duration("fault-every") ?? DEMO_DEFAULTS.faultEveryMs;
  if (faultEveryMs !== 0 && faultEveryMs < 10) {
    throw new UsageError(
      `--fault-every must be 0 (no faults) or at least 10ms (got "${values.get("fault-every")}")`,
      "demo",
    );
  }
  return {
    objects: int("objects", DEMO_DEFAULTS.objects, 0, 1_000_000),
    namespaces: int("namespaces", DEMO_DEFAULTS.namespaces, 1, 1_000),
    rate: int("rate", DEMO_DEFAULTS.rate, 0, 100_000),
    durationMs: durationMs ?? (context.terminal ? undefined : DEMO_DEFAULTS.nonTerminalDurationMs),
    seed: values.has("seed") ? int("seed", 0, 0, 2 ** 32 - 1) : context.randomSeed(),
    faultEveryMs,
  };
}
