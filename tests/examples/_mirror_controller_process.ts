/**
 * Runs examples/mirror_controller as a child process, as it runs in
 * production: its output lines kept, stopped by a signal (SIGTERM for a
 * clean stop, SIGKILL for a crash).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

// Deno runs examples/mirror_controller.ts, Node the npm build's .js next to this test's build.
const ts = import.meta.url.endsWith(".ts");
const script = fileURLToPath(
  new URL(`../../examples/mirror_controller.${ts ? "ts" : "js"}`, import.meta.url),
);
const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;

/** A running mirror controller. */
export class MirrorControllerProcess {
  readonly child: ChildProcess;
  /** Every line it wrote (stdout and stderr), in order. */
  readonly lines: string[] = [];
  /** Resolves when it has exited, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  #partial = "";

  /** Starts the example with `args` (for example `["--server", url]`). */
  constructor(args: string[]) {
    const [cmd, argv] = deno
      ? [deno.execPath(), ["run", "--allow-net", "--allow-env", "--allow-read", script, ...args]]
      : [process.execPath, [script, ...args]];
    this.child = spawn(cmd, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KUBECONFIG: "", MIRROR_NAMESPACES: "", NO_COLOR: "1" },
    });
    const keep = (d: Uint8Array | string) => {
      const parts = (this.#partial + String(d)).split("\n");
      this.#partial = parts.pop() ?? "";
      this.lines.push(...parts);
    };
    this.child.stdout!.setEncoding("utf8").on("data", keep);
    this.child.stderr!.setEncoding("utf8").on("data", keep);
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        if (this.#partial) this.lines.push(this.#partial);
        resolve({ code, signal });
      });
    });
  }

  /** Its output so far, for a failing assertion's message. */
  get output(): string {
    return this.lines.join("\n");
  }

  /** Resolves once a line matches `pattern`; rejects after `timeoutMs` or if it exits first. */
  async waitForLine(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const line = this.lines.find((l) => pattern.test(l));
      if (line !== undefined) return line;
      if (exited || Date.now() > deadline) {
        throw new Error(
          `mirror controller: no line matching ${pattern} (${
            exited ? "it exited" : `${timeoutMs} ms`
          }); output:\n${this.output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends `signal` and waits for the exit. */
  async stop(
    signal: "SIGTERM" | "SIGINT" | "SIGKILL" = "SIGTERM",
  ): Promise<{ code: number | null; signal: string | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      // process.kill, not child.kill: after child.kill, Deno's node:child_process reports the
      // signal sent as the way the child ended, even when it handled it and exited with a code.
      try {
        process.kill(this.child.pid!, signal);
      } catch { /* already gone */ }
    }
    return await this.exited;
  }
}
