/**
 * Unhandled rejections, recorded the same way on Deno and Node.
 *
 * @module
 */
import process from "node:process";

/**
 * Records the unhandled rejections of `fn` (and of two macrotasks after
 * it) on either runtime: Deno's `unhandledrejection` event on `globalThis`
 * (cancelled, so the test reports it rather than dying), Node's
 * `unhandledRejection` process event.
 */
export async function unhandledRejections<R>(
  fn: () => Promise<R>,
): Promise<{ value: R; rejections: unknown[] }> {
  const seen: unknown[] = [];
  const g = globalThis as unknown as {
    addEventListener?: (type: string, fn: (e: PromiseRejectionEvent) => void) => void;
    removeEventListener?: (type: string, fn: (e: PromiseRejectionEvent) => void) => void;
  };
  const onEvent = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    seen.push(e.reason);
  };
  const onProcess = (reason: unknown) => void seen.push(reason);
  const web = typeof g.addEventListener === "function";
  if (web) g.addEventListener!("unhandledrejection", onEvent);
  else process.on("unhandledRejection", onProcess);
  try {
    const value = await fn();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    return { value, rejections: seen };
  } finally {
    if (web) g.removeEventListener!("unhandledrejection", onEvent);
    else process.off("unhandledRejection", onProcess);
  }
}
