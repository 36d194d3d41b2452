/**
 * The {@linkcode CliEnv} of this process, on Deno or Node: its arguments,
 * stdout and stderr (a closed pipe, as under `| head`, ends the program
 * quietly, except under `writeStdout`, which reports it to the command),
 * the environment, and a signal that aborts on the first Ctrl-C
 * (SIGINT) or SIGTERM; a second one exits at once with 130. Only the
 * command line's entry point (cli.ts) uses it.
 *
 * @module
 */
import type { CliEnv } from "./cli_env.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/** Ends the process with `code`, once stdout's pending output is written (Node). */
export function exitProcess(code: number): void {
  if (g.Deno) g.Deno.exit(code);
  else g.process.stdout.write("", () => g.process.exit(code));
}

/** This process's environment for the commands. */
export function processCliEnv(): CliEnv {
  const ac = new AbortController();
  let signals = 0;
  const onSignal = () => {
    if (++signals > 1) exitProcess(130);
    else ac.abort(new DOMException("interrupted", "AbortError"));
  };
  if (g.Deno) {
    const Deno = g.Deno;
    const encoder = new TextEncoder();
    const writer = (stream: { writeSync(b: Uint8Array): number }) => (text: string) => {
      let bytes = encoder.encode(text);
      try {
        while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
      } catch {
        Deno.exit(0); // the reader went away (a closed pipe)
      }
    };
    const writeStdout = async (text: string) => {
      let bytes = encoder.encode(text);
      while (bytes.length > 0) bytes = bytes.subarray(await Deno.stdout.write(bytes));
    };
    for (const name of ["SIGINT", "SIGTERM"]) {
      try {
        Deno.addSignalListener(name, onSignal);
      } catch { /* SIGTERM on Windows */ }
    }
    return {
      args: Deno.args,
      stdout: writer(Deno.stdout),
      writeStdout,
      stderr: writer(Deno.stderr),
      stdoutIsTerminal: Deno.stdout.isTerminal(),
      stderrIsTerminal: Deno.stderr.isTerminal(),
      env: (name) => {
        try {
          return Deno.env.get(name);
        } catch {
          return undefined; // no --allow-env for it
        }
      },
      signal: ac.signal,
    };
  }
  const process = g.process;
  // once a command writes through writeStdout, stdout's failures are its to handle
  let stdoutChecked = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: { code?: string }) => {
      if (stream === process.stdout && stdoutChecked) return; // the write's callback has it
      if (err.code === "EPIPE") process.exit(0);
      throw err;
    });
  }
  const writeStdout = (text: string) =>
    new Promise<void>((resolve, reject) => {
      stdoutChecked = true;
      process.stdout.write(text, (err?: Error | null) => err ? reject(err) : resolve());
    });
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    args: process.argv.slice(2),
    stdout: (text) => void process.stdout.write(text),
    writeStdout,
    stderr: (text) => void process.stderr.write(text),
    stdoutIsTerminal: process.stdout.isTTY === true,
    stderrIsTerminal: process.stderr.isTTY === true,
    env: (name) => process.env[name],
    signal: ac.signal,
  };
}
