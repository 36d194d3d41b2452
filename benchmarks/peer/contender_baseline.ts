/**
 * The peer benchmark's baseline: what a hand-written client does with no
 * library at all, on the same bytes. Lists with plain `fetch` and
 * `JSON.parse(await res.text())`, 500 objects a page (`limit`/`continue`),
 * into a `Map` keyed by namespace/name; then watches from the list's
 * version, splitting the body on newlines and passing each line to
 * `JSON.parse`; an ERROR 410 relists (into a new `Map`, swapped in when
 * complete), a closed watch is reopened. No error handling beyond that.
 * Run by `scripts/bench_peer.mjs`.
 *
 * @module
 */
import { type BenchObject, runContender } from "./_driver.ts";

interface List {
  metadata: { resourceVersion: string; continue?: string };
  items: BenchObject[];
}

const keyOf = (o: BenchObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;

await runContender("baseline", (ctx) => {
  const base = `${ctx.server}/api/v1/${ctx.resource}`;
  let map = new Map<string, BenchObject>();
  let rv = "";

  async function list(): Promise<void> {
    const next = new Map<string, BenchObject>();
    let cont = "";
    let listRv = "";
    do {
      const res = await fetch(
        `${base}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      if (!res.ok) throw new Error(`list: ${res.status}`);
      const page: List = JSON.parse(await res.text());
      for (const item of page.items) next.set(keyOf(item), item);
      listRv ||= page.metadata.resourceVersion;
      cont = page.metadata.continue ?? "";
    } while (cont);
    map = next;
    rv = listRv;
  }

  async function watchOnce(): Promise<void> {
    const res = await fetch(`${base}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    let expired = false;
    while (!expired) {
      const { value, done } = await reader.read();
      if (done) break;
      const lines = (rest + value).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        if (!line) continue;
        const ev = JSON.parse(line);
        const obj = ev.object;
        switch (ev.type) {
          case "ADDED":
          case "MODIFIED":
            map.set(keyOf(obj), obj);
            if (ev.type === "MODIFIED") ctx.onModified(obj);
            rv = obj.metadata.resourceVersion;
            break;
          case "DELETED":
            map.delete(keyOf(obj));
            rv = obj.metadata.resourceVersion;
            break;
          case "BOOKMARK":
            rv = obj.metadata.resourceVersion;
            break;
          case "ERROR":
            if (obj.code === 410) expired = true;
            break;
        }
      }
    }
    await reader.cancel().catch(() => {});
    if (expired) await list();
  }

  return {
    async start() {
      await list();
      void (async () => {
        while (true) await watchOnce();
      })();
    },
    size: () => map.size,
    resourceVersion: (ns, name) => map.get(`${ns}/${name}`)?.metadata?.resourceVersion,
  };
});
