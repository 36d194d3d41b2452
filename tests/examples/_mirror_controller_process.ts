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

/** How a child process ended: its exit code, or the signal that ended it. */
export type Exit = { code: number | null; signal: string | null };

/** Options of {@linkcode MirrorControllerProcess}. */
export interface MirrorControllerProcessOptions {
  /** Deno's permission flags. Default: `--allow-net --allow-env --allow-read`. Ignored on Node. */
  denoPermissions?: string[];
  /** Environment variables besides the test's own. Default: none (`KUBECONFIG` and `MIRROR_NAMESPACES` empty). */
  env?: Record<string, string>;
}

/** A running mirror controller. */
export class MirrorControllerProcess {
  readonly child: ChildProcess;
  /** Every line it wrote (stdout and stderr), in order. */
  readonly lines: string[] = [];
  /** Resolves when it has exited, with its exit code or the signal that ended it. */
  readonly exited: Promise<Exit>;
  #partial = "";
  #done = false;

  /** Starts the example with `args` (for example `["--server", url]`). */
  constructor(args: string[], options: MirrorControllerProcessOptions = {}) {
    const {
      denoPermissions = ["--allow-net", "--allow-env", "--allow-read"],
      env = {},
    } = options;
    const [cmd, argv] = deno
      ? [deno.execPath(), ["run", ...denoPermissions, script, ...args]]
      : [process.execPath, [script, ...args]];
    this.child = spawn(cmd, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KUBECONFIG: "", MIRROR_NAMESPACES: "", NO_COLOR: "1", ...env },
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
        this.#done = true;
        resolve({ code, signal });
      });
    });
  }

  /** Its output so far, for a failing assertion's message. */
  get output(): string {
    return this.lines.join("\n");
  }

  /** The lines matching `pattern`. */
  matching(pattern: RegExp): string[] {
    return this.lines.filter((l) => pattern.test(l));
  }

  /** Resolves once a line matches `pattern`; rejects after `timeoutMs` or if it exits first. */
  async waitForLine(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.find((l) => pattern.test(l));
      if (line !== undefined) return line;
      if (this.#done || Date.now() > deadline) {
        throw new Error(
          `mirror controller: no line matching ${pattern} (${
            this.#done ? "it exited" : `${timeoutMs} ms`
          }); output:\n${this.output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends `signal`, unless it has exited. */
  kill(signal: "SIGTERM" | "SIGINT" | "SIGKILL"): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    // process.kill, not child.kill: after child.kill, Deno's node:child_process reports the
    // signal sent as the way the child ended, even when it handled it and exited with a code.
    try {
      process.kill(this.child.pid!, signal);
    } catch { /* already gone */ }
  }

  /**
   * Sends `signal` and waits for the exit. If it has not exited after
   * `timeoutMs`, kills it (SIGKILL) and rejects, saying so.
   */
  async stop(
    signal: "SIGTERM" | "SIGINT" | "SIGKILL" = "SIGTERM",
    { timeoutMs = 10_000 } = {},
  ): Promise<Exit> {
    this.kill(signal);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), timeoutMs)));
    try {
      const exit = await Promise.race([this.exited, late]);
      if (exit !== "late") return exit;
    } finally {
      clearTimeout(timer);
    }
    this.kill("SIGKILL");
    await this.exited;
    throw new Error(
      `mirror controller: still running ${timeoutMs} ms after ${signal}; killed (SIGKILL); output:\n${this.output}`,
    );
  }
}
