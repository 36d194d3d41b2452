/**
 * Process and polling helpers of the e2e cluster: a child process with its
 * output tail kept, a free loopback port, and an async `eventually`.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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

/** Ports handed out by {@linkcode freePort} in this process: never given twice. */
const handedOut = new Set<number>();

/** The lowest port of the kernel's ephemeral range (what it gives to `bind(0)` and outgoing connections). */
function ephemeralLow(): number {
  try {
    const text = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
    const low = Number(text.trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // not Linux, or not readable: the usual low end
  }
  return 32_768;
}

/**
 * A free loopback port for a child process to listen on, chosen below the
 * kernel's ephemeral range: a port from that range (what `listen(0)` gives)
 * can be taken by any outgoing connection on the machine between our check
 * and the child's `bind`, or while a test has the API server or proxy down
 * and restarts it on the same port. Below the range only a process that
 * names the port itself can take it.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = high - 10_000;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port)) continue;
    const srv = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      srv.once("error", () => resolve(false));
      srv.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!ok) continue;
    await new Promise<void>((r) => srv.close(() => r()));
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found in ${low}-${high - 1}`);
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
