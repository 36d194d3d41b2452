/**
 * A fake `CliEnv` for running commands in-process: it collects stdout and
 * stderr, reads a given environment, and aborts on `interrupt()` (Ctrl-C).
 */
import type { CliEnv } from "../../src/cli/cli_env.ts";

/** A CliEnv whose output is kept. */
export interface FakeEnv extends CliEnv {
  out: string;
  err: string;
  /** Aborts the signal, as Ctrl-C does. */
  interrupt(): void;
}

/** Makes one: `args` after the command name. */
export function fakeEnv(
  args: readonly string[],
  options: { vars?: Record<string, string>; stderrIsTerminal?: boolean } = {},
): FakeEnv {
  const ac = new AbortController();
  const env: FakeEnv = {
    args,
    out: "",
    err: "",
    stdout: (text) => void (env.out += text),
    stderr: (text) => void (env.err += text),
    stdoutIsTerminal: false,
    stderrIsTerminal: options.stderrIsTerminal ?? false,
    env: (name) => options.vars?.[name],
    signal: ac.signal,
    interrupt: () => ac.abort(new DOMException("interrupted", "AbortError")),
  };
  return env;
}

/** Waits (polling every few ms, at most `ms`) until `check` holds. */
export async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
