/**
 * One test API for both runtimes: on Deno each test is a `Deno.test` with
 * the op and resource sanitizers on (they catch leaked timers, sockets and
 * bodies); on Node it is a `node:test` test.
 *
 * @module
 */
import { test as nodeTest } from "node:test";

type TestFn = () => void | Promise<void>;

// deno-lint-ignore no-explicit-any
const deno = (globalThis as any).Deno;

/** Registers a test named after the behaviour it checks. */
export function test(name: string, fn: TestFn): void {
  if (deno?.test) {
    deno.test({ name, fn, sanitizeOps: true, sanitizeResources: true, sanitizeExit: true });
  } else {
    nodeTest(name, fn);
  }
}

/** The runtime running the tests, for the rare test that must know. */
export const runtime: "deno" | "node" = deno ? "deno" : "node";
