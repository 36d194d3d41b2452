/**
 * Heap measurement for leak tests: a forced full GC when the runtime allows
 * it (`--expose-gc`, or V8's flag set at run time through `node:v8`, which
 * both Node and Deno support), then `heapUsed`.
 *
 * @module
 */
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";

function findGc(): (() => void) | undefined {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === "function") return g;
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as unknown;
    return typeof gc === "function" ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

const gc = findGc();

/** True when {@linkcode heapUsed} collects garbage first. */
export const canForceGc: boolean = gc !== undefined;

/** Bytes of heap in use, after a full GC when possible. */
export async function heapUsed(): Promise<number> {
  if (gc) {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  return process.memoryUsage().heapUsed;
}
