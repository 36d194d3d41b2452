/**
 * The command line's flag parser, kubectl's way: `--name value`,
 * `--name=value`, `-n value`, `-nvalue`, `-n=value`; switches (`-A`,
 * `--all-namespaces`) take no value, or `=true`/`=false`; `--` ends the
 * flags; a flag given twice keeps the last value. Anything else (an unknown
 * flag, a missing value) is a {@linkcode UsageError}: never ignored.
 *
 * @module
 */
import { UsageError } from "./_usage_error.ts";

/** One flag a command accepts. */
export interface FlagSpec {
  /** The long name, without `--` (`"namespace"`). */
  name: string;
  /** The one-letter short name, without `-` (`"n"`). */
  short?: string;
  /** True for a switch (no value); false for a flag that takes a value. */
  switch: boolean;
}

/** What {@linkcode parseFlags} found. */
export interface ParsedFlags {
  /** The value of each flag given, by long name (`"true"`/`"false"` for switches). */
  values: Map<string, string>;
  /** The arguments that are not flags, in order. */
  positionals: string[];
}

/** Parses `args` by `specs`; `command` names the command in errors. */
export function parseFlags(
  args: readonly string[],
  specs: readonly FlagSpec[],
  command: string,
): ParsedFlags {
  const byLong = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const values = new Map<string, string>();
  const positionals: string[] = [];
  const fail = (message: string): never => {
    throw new UsageError(message, command);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    let shown: string;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
      shown = `--${name}`;
      spec = byLong.get(name);
    } else {
      const letter = arg.slice(1, 2);
      shown = `-${letter}`;
      spec = byShort.get(letter);
      const rest = arg.slice(2);
      if (rest !== "") inline = rest.startsWith("=") ? rest.slice(1) : rest;
    }
    if (spec === undefined) fail(`unknown flag: ${shown}`);
    const flag = spec!;
    if (flag.switch) {
      if (inline === undefined) values.set(flag.name, "true");
      else if (inline === "true" || inline === "false") values.set(flag.name, inline);
      else fail(`${shown} takes no value, or =true or =false (got "${inline}")`);
      continue;
    }
    if (inline === undefined) {
      if (i + 1 >= args.length) fail(`flag needs an argument: ${shown}`);
      inline = args[++i];
    }
    values.set(flag.name, inline!);
  }
  return { values, positionals };
}
