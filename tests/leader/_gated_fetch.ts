/**
 * A fetch that holds the requests a predicate picks until released or
 * aborted: a request that hangs, on demand.
 *
 * @module
 */
/** A fetch that holds the requests `hold` picks (until `release()`, or their abort). */
export function gatedFetch() {
  const pending: (() => void)[] = [];
  const gate = {
    hold: (_method: string, _url: string) => false,
    count: 0,
    release() {
      for (const r of pending.splice(0)) r();
    },
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const method = init?.method ?? "GET";
      gate.count++;
      if (gate.hold(method, String(input))) {
        await new Promise<void>((resolve, reject) => {
          if (init?.signal?.aborted) return reject(init.signal.reason);
          pending.push(resolve);
          init?.signal?.addEventListener("abort", () => reject(init.signal!.reason), {
            once: true,
          });
        });
      }
      return await fetch(input, init);
    }) as typeof fetch,
  };
  return gate;
}
