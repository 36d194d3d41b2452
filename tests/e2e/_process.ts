/**
 * Process and polling helpers of the e2e cluster: a child process with its
 * output tail kept, a free loopback port, and an async `eventually`.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/** A started process whose output tail is kept for diagnostics. */
export class Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly tail: string[] = [];
  constructor(readonly name: string, cmd: string, args: string[]) {
    this.child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const keep = (d: Uint8Array) => {
      this.tail.push(new TextDecoder().decode(d));
      if (this.tail.length > 40) this.tail.shift();
    };
    this.child.stdout!.on("data", keep);
    this.child.stderr!.on("data", keep);
    this.exited = new Promise((resolve) => this.child.on("close", () => resolve()));
    this.child.on("error", (err) => this.tail.push(`spawn error: ${err.message}`));
  }
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
  async stop(): Promise<void> {
    if (this.running) this.child.kill("SIGKILL");
    await this.exited;
  }
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** An error that stops {@linkcode eventually} at once. */
export class Fatal extends Error {}

/** Polls `cond` (async) every 100 ms until it returns true; fails after `timeoutMs`. */
export async function eventually(
  cond: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const start = Date.now();
  for (;;) {
    const ok = await Promise.resolve().then(cond).catch((err) => {
      if (err instanceof Fatal) throw err;
      return false;
    });
    if (ok) return;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
