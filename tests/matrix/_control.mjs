// The runtime matrix driver's side of the wire (Node): one testkit
// FakeApiServer per runtime run ("session"), seeded with 20 ConfigMaps, and
// one control endpoint on loopback through which the runtime under test
// changes objects, injects faults, reads the request log and posts its
// results (see _conformance.mjs). Every answer closes its connection, so no
// keep-alive socket to the driver can keep a runtime's process alive.
import { createServer } from "node:http";

const configMap = (name, data = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "fx", labels: { app: "matrix" } },
  data,
});
const ref = (name) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name });
const key = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;

/** Answers one control operation on `api` (a FakeApiServer). */
function operate(api, body, session) {
  switch (body.op) {
    case "state": {
      // A fresh list is a list request without a continue token (later pages carry one).
      const lists = api.requests.filter((r) => r.verb === "list" && !r.query.get("continue"));
      const watches = api.requests.filter((r) => r.verb === "watch");
      return {
        server: api.url,
        keys: api.objects({ resource: "configmaps" }).map(key).sort(),
        lists: lists.map((r) => ({ rv: r.query.get("resourceVersion") })),
        watches: watches.map((r) => ({ rv: r.query.get("resourceVersion") })),
        openWatches: api.openWatches,
      };
    }
    case "create":
      return { rv: api.create(configMap(body.name, body.data)).metadata.resourceVersion };
    case "update":
      return { rv: api.update(configMap(body.name, body.data)).metadata.resourceVersion };
    case "delete":
      api.delete(ref(body.name));
      return {};
    case "inject":
      api.inject(body.rule);
      return {};
    case "endWatches":
      api.endWatches();
      return {};
    case "result":
      session.resolve(body);
      return {};
    default:
      throw new Error(`unknown op ${JSON.stringify(body.op)}`);
  }
}

/**
 * Starts the control endpoint; `FakeApiServer` is the testkit's class (from
 * the installed package). Returns { session(), close() }; a session is
 * { id, api, control (its URL), result (a promise of the posted results), close() }.
 */
export async function startControl(FakeApiServer) {
  const sessions = new Map();
  const server = createServer(async (req, res) => {
    res.setHeader("connection", "close");
    let text = "";
    for await (const chunk of req) text += chunk;
    const session = sessions.get(req.url.slice(1));
    try {
      if (!session) throw new Error(`no session ${req.url}`);
      const out = operate(session.api, JSON.parse(text), session);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(out ?? {}));
    } catch (err) {
      res.statusCode = 400;
      res.end(String(err?.message ?? err));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  let n = 0;
  return {
    async session() {
      const api = await FakeApiServer.start({});
      for (let i = 0; i < 20; i++) api.create(configMap(`cm-${i}`, { i: String(i) }));
      const id = `s${++n}`;
      let resolve;
      const result = new Promise((r) => (resolve = r));
      const s = { id, api, control: `${base}/${id}`, result, resolve };
      sessions.set(id, s);
      s.close = async () => {
        sessions.delete(id);
        await api.close();
      };
      return s;
    },
    async close() {
      for (const s of sessions.values()) await s.close();
      await new Promise((r) => server.close(r));
      server.closeAllConnections?.();
    },
  };
}
